"""Every registered sampler side by side on real data, on a CPU-time basis.

Five tables, each also written to ``benchmarks/results/real_<table>.txt``
(``real_<table>_quick.txt`` with ``--quick``) with the command line at the top
(the first four run by default; ``alice_words_hcrp`` on request, with
``--tables alice_words_hcrp``):

``alice_chars``
    Alice in Wonderland, characters (31 symbols): train on the first 1,000
    characters of chapter I, test on the next 4,000. Held-out log predictive
    likelihood (``InfiniteHMM.score``), mean +- sd over ``--runs`` runs (one
    chain each, seeds 0, 1, ...), beside the PGAS paper's figures.
``alice_words``
    Alice in Wonderland, words (``load_alice_words``: the last 1,000 tokens
    held out, ~1.5k symbols, T ~ 27k). Held-out perplexity after a fixed CPU
    budget (``--words-budget``), one chain per sampler.
``alice_words_hcrp``
    The same split and protocol, each sampler fitted twice, with
    ``Categorical(n_symbols=V)`` (as in ``alice_words``) and with
    ``HCRPCategorical(n_symbols=V)`` (Makino et al.'s hierarchical emission
    prior, concentrations resampled), each on ``--words-budget`` CPU seconds
    (sweeps calibrated per family: the cost per sweep differs); adds the
    posterior means of the HCRP concentrations alpha_e and gamma_e. Not in
    the default list: it repeats the Categorical fits of ``alice_words`` and
    costs about twice that table (~20 min CPU).
``welllog`` / ``ion``
    The well-log series (4,050 values), standardised ``(x - mean) / sd``, and
    2,000 values of the ion-channel trace ``sctrace_test2_sub100``
    preprocessed as the PGAS paper does (Section 4.2: subsampled by 100,
    truncated to 2,000, log-transformed, normalised; :func:`paper_log_transform`;
    ``--ion-preprocess standardise`` gives the plain standardisation instead).
    Number of states (posterior median and range over the kept samples of
    ``--runs`` chains, and split R-hat of K) per sampler; a plot of the
    observations coloured by the least-squares point estimate
    (``InfiniteHMM.point_estimate``) goes to ``benchmarks/results/`` when
    matplotlib is installed.

Budgets. A run gets a fixed CPU budget for *sampling* (the ``seconds`` trace
of the estimator, i.e. ``time.process_time`` over the sweeps; the particle
filter initialisation and scoring are not counted). The estimator takes sweep
counts, not seconds, so the number of sweeps is calibrated once per (table,
sampler) by a short pilot fit (same seed as run 0, 10 % of the budget, its
second half timed) and then fixed for every run: half burn-in, half kept
(thinned to at most 100 kept samples). Cost per sweep changes as K changes,
so the CPU actually used is reported beside the budget.

hmmlearn (optional, ``pip install hmmlearn``) gives a familiar reference row:
``CategoricalHMM`` (add-0.5 smoothing: ``emissionprob_prior = transmat_prior
= 1.5``, which makes the M-step the posterior mean under the iHMM's
Dirichlet(0.5) emission prior) or ``GaussianHMM`` (diagonal), with K chosen
by held-out log-likelihood over a small grid (best of 3 EM restarts per K; a
single EM run for words and with ``--quick``, which also shrinks the grids):

* Alice chars: fit on characters 1-800, validate on 801-1000, refit the
  chosen K on all 1,000 and score the 4,000 test characters (mean +- sd over
  ``--runs`` EM seeds);
* Alice words: fit on the first 90 % of the training tokens, validate on the
  last 10 %, refit on all training tokens, perplexity of the test tokens;
* well-log / ion: the series cut into 10 contiguous blocks; fit on the even
  blocks, validate on the odd ones (as separate sequences), refit on the
  whole series.

Data come from :mod:`sk_ihmm.datasets`; a table whose data are not available
prints ``skipped (data not available)``.

``--quick`` (smoke run, ~40 s): 0.5 s budget, one run, 30 scoring
particles for the characters, words on the last 5,000 training tokens with a
1 s budget, smaller hmmlearn grids; results go to ``*_quick`` files so the
full tables are kept.

Usage::

    python benchmarks/bench_real.py [--quick] [--budget 20] [--words-budget 80]
        [--runs 3] [--samplers rcd_gibbs pgas ...]
        [--tables alice_chars alice_words welllog ion alice_words_hcrp]
"""

import argparse
import os
import shlex
import sys
import time
import traceback
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from sk_ihmm import InfiniteHMM  # noqa: E402
from sk_ihmm import datasets  # noqa: E402
from sk_ihmm.datasets import DataNotAvailable  # noqa: E402
from sk_ihmm.emissions import Categorical, HCRPCategorical  # noqa: E402
from sk_ihmm.samplers import SAMPLERS  # noqa: E402

RESULTS = os.path.join(HERE, "results")
TABLES = ("alice_chars", "alice_words", "welllog", "ion", "alice_words_hcrp")
#: Tables run when ``--tables`` is not given (alice_words_hcrp repeats alice_words' Categorical
#: fits beside HCRP ones, ~2 x the words table's CPU, so it is run on request only).
DEFAULT_TABLES = ("alice_chars", "alice_words", "welllog", "ion")
#: Every sampler at its defaults: results/real_*.txt made before 2026-12-07 ran
#: split_merge on base_sampler="rcd_beam", its default then (now rcd_blocked).
ORDER = ("rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge", "pgas")
#: Tripuraneni et al. (2015), Alice chars (1,000 train / 4,000 test), held-out log-likelihood.
PAPER_ALICE_CHARS = (("PGAS paper: PG (N=10)", -5918.4, 123.8), ("PGAS paper: beam", -6099.0, 106.0))
MAX_KEPT = 100


def registered_samplers():
    return [s for s in ORDER if s in SAMPLERS] + sorted(s for s in SAMPLERS if s not in ORDER)


class Report:
    """Collects the lines of one table: printed as they come, saved at the end."""

    def __init__(self, name, args):
        self.name, self.args, self.lines = name, args, []

    def __call__(self, line=""):
        print(line, flush=True)
        self.lines.append(line)

    def save(self):
        os.makedirs(RESULTS, exist_ok=True)
        suffix = "_quick" if self.args.quick else ""
        path = os.path.join(RESULTS, f"real_{self.name}{suffix}.txt")
        with open(path, "w") as fh:
            fh.write(f"# {self.args.command}\n")
            fh.write("\n".join(self.lines) + "\n")
        print(f"[written to {os.path.relpath(path, os.path.dirname(HERE))}]", flush=True)


# --------------------------------------------------------------------------
# Budgeted fits of the estimator
# --------------------------------------------------------------------------
def _sweep_cost(model_kwargs, X, n_sweeps):
    """Fit ``n_sweeps`` sweeps (one chain); return CPU seconds per sweep of the second half."""
    m = InfiniteHMM(**{**model_kwargs, "n_chains": 1, "n_burnin": n_sweeps - 1, "n_samples": 1,
                       "thin": 1, "max_time": 0}).fit(X)
    secs = m.trace_["seconds"][0]
    h = n_sweeps // 2
    return (secs[-1] - secs[h - 1]) / (n_sweeps - h), float(secs[-1])


def calibrate(model_kwargs, X, budget):
    """Sweeps that fill ``budget`` CPU seconds, from a pilot of ~10 % of it.

    The first pilot (4 sweeps, the first of which may include JIT compilation
    or loading) gives a rough cost; the second runs ~10 % of the budget.
    """
    c0, _ = _sweep_cost(model_kwargs, X, 4)
    n = int(min(5000, 0.1 * budget / max(c0, 1e-6)))
    c = c0
    if n >= 8:
        c, _ = _sweep_cost(model_kwargs, X, n)
    return max(4, int(budget / max(c, 1e-6))), c


def schedule(n_sweeps):
    """``(n_burnin, n_samples, thin)``: half burn-in, at most MAX_KEPT kept samples."""
    n_burnin = n_sweeps // 2
    rest = n_sweeps - n_burnin
    n_samples = min(MAX_KEPT, rest)
    return n_burnin, n_samples, rest // n_samples


def budget_fit(model_kwargs, X, n_sweeps, n_chains=1, seed=0):
    n_burnin, n_samples, thin = schedule(n_sweeps)
    t0 = time.process_time()
    model = InfiniteHMM(**{**model_kwargs, "n_burnin": n_burnin, "n_samples": n_samples,
                           "thin": thin, "n_chains": n_chains, "random_state": seed,
                           "max_time": 0}).fit(X)
    fit_cpu = time.process_time() - t0
    return model, fit_cpu


def kept_n_states(model):
    """Number of states of every kept sample, all chains pooled."""
    ks = model.trace_["n_states"][:, model.n_burnin:][:, model.thin - 1::model.thin]
    return ks


def k_summary(ks):
    """``median [min, max]`` of numbers of states (the traces are float arrays)."""
    return f"{np.median(ks):g} [{ks.min():g}, {ks.max():g}]"


FAILURES = []


def sampler_failed(out, name, exc):
    FAILURES.append((out.name, name))
    msg = " ".join(str(exc).split())
    out(f"{name:24} FAILED: {type(exc).__name__}: {msg[:120]}")
    traceback.print_exc(limit=-3, file=sys.stderr)


def sampler_kwargs(name, emission, extra=None):
    kw = {"sampler": name, "emission": emission}
    kw.update(extra or {})
    return kw


# --------------------------------------------------------------------------
# hmmlearn reference
# --------------------------------------------------------------------------
def _hmmlearn():
    try:
        from hmmlearn import hmm
    except ImportError:
        return None
    import logging
    logging.getLogger("hmmlearn").setLevel(logging.ERROR)
    return hmm


def _hmm_model(hmm, kind, K, seed, n_features=None, n_iter=100):
    if kind == "categorical":
        return hmm.CategoricalHMM(n_components=K, n_features=n_features, emissionprob_prior=1.5,
                                  transmat_prior=1.5, startprob_prior=1.5, n_iter=n_iter,
                                  tol=1e-3, random_state=seed)
    return hmm.GaussianHMM(n_components=K, covariance_type="diag", n_iter=n_iter, tol=1e-3,
                           random_state=seed)


def hmm_fit(hmm, kind, K, X, lengths=None, seed=0, n_restarts=3, n_features=None, n_iter=100):
    """Best of ``n_restarts`` EM runs (by training log-likelihood)."""
    best, best_ll = None, -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(n_restarts):
            m = _hmm_model(hmm, kind, K, seed * 1000 + r, n_features, n_iter)
            try:
                m.fit(X, lengths)
                ll = m.score(X, lengths)
            except (ValueError, np.linalg.LinAlgError):
                continue
            if np.isfinite(ll) and ll > best_ll:
                best, best_ll = m, ll
    return best


def hmm_select(hmm, kind, grid, X_fit, X_val, fit_lengths=None, val_lengths=None,
               n_features=None, n_iter=100, n_restarts=3):
    """K of ``grid`` with the best held-out log-likelihood; returns (K, {K: val ll})."""
    scores = {}
    for K in grid:
        m = hmm_fit(hmm, kind, K, X_fit, fit_lengths, 0, n_restarts, n_features, n_iter)
        scores[K] = -np.inf if m is None else m.score(X_val, val_lengths)
    return max(scores, key=scores.get), scores


def block_split(T, n_blocks=10):
    """Even / odd contiguous blocks of ``0..T-1`` as (indices, lengths) pairs."""
    edges = np.linspace(0, T, n_blocks + 1).round().astype(int)
    blocks = [np.arange(a, b) for a, b in zip(edges[:-1], edges[1:])]
    even, odd = blocks[0::2], blocks[1::2]
    return ((np.concatenate(even), [len(b) for b in even]),
            (np.concatenate(odd), [len(b) for b in odd]))


def _fmt_val(scores):
    return ", ".join(f"{k}:{v:.0f}" for k, v in scores.items())


# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------
def table_alice_chars(args, out):
    X_tr, X_te, alphabet = datasets.load_alice_chars(1000, 4000)
    emission = Categorical(n_symbols=len(alphabet))
    out(f"Alice in Wonderland, characters: train 1,000 / test 4,000 (31 symbols); "
        f"{args.runs} run(s) x 1 chain per sampler, CPU budget {args.budget:g} s of sampling per run;")
    out(f"score = InfiniteHMM.score (n_score_particles={args.score_particles}, n_score_samples=20); "
        "K = median [min, max] of kept samples")
    out()
    head = (f"{'method':24} {'sweeps':>7} {'CPU s':>7} {'K':>12} {'test log-lik':>20} "
            f"{'nats/char':>9}")
    out(head)
    out("-" * len(head))
    for name in args.samplers:
        try:
            kw = sampler_kwargs(name, emission, {"n_score_particles": args.score_particles})
            n_sweeps, cost = calibrate({**kw, "random_state": 0}, X_tr, args.budget)
            scores, cpus, ks = [], [], []
            for r in range(args.runs):
                model, _ = budget_fit(kw, X_tr, n_sweeps, seed=r)
                scores.append(model.score(X_te))
                cpus.append(model.trace_["seconds"][0, -1])
                ks.append(kept_n_states(model).ravel())
            ks = np.concatenate(ks)
            kstr = k_summary(ks)
            sd = np.std(scores, ddof=1) if len(scores) > 1 else float("nan")
            out(f"{name:24} {n_sweeps:7d} {np.mean(cpus):7.1f} {kstr:>12} "
                f"{np.mean(scores):11.1f} +- {sd:6.1f} {-np.mean(scores) / len(X_te):9.3f}")
        except Exception as exc:  # one broken sampler must not sink the table
            sampler_failed(out, name, exc)
    hmm = _hmmlearn()
    if hmm is None:
        out(f"{'hmmlearn CategoricalHMM':24} skipped (hmmlearn not installed)")
    else:
        grid = (2, 5, 10) if args.quick else (1, 2, 5, 10, 15, 20, 30)
        t0 = time.process_time()
        K, val = hmm_select(hmm, "categorical", grid, X_tr[:800], X_tr[800:],
                            n_features=len(alphabet), n_iter=20 if args.quick else 200,
                            n_restarts=1 if args.quick else 3)
        scores = []
        for r in range(args.runs):
            m = hmm_fit(hmm, "categorical", K, X_tr, seed=r + 1, n_features=len(alphabet),
                        n_iter=20 if args.quick else 200, n_restarts=1 if args.quick else 3)
            scores.append(m.score(X_te))
        sd = np.std(scores, ddof=1) if len(scores) > 1 else float("nan")
        out(f"{'hmmlearn CategoricalHMM':24} {'EM':>7} {time.process_time() - t0:7.1f} "
            f"{'K=' + str(K):>12} {np.mean(scores):11.1f} +- {sd:6.1f} "
            f"{-np.mean(scores) / len(X_te):9.3f}")
    for label, mean, sd in PAPER_ALICE_CHARS:
        out(f"{label:24} {'':>7} {'':>7} {'':>12} {mean:11.1f} +- {sd:6.1f} "
            f"{-mean / len(X_te):9.3f}")
    out()
    out("sweeps: per run (calibrated by a pilot fit, then fixed); CPU s: sampling CPU per run "
        "(mean), to compare with the budget.")
    if hmm is not None:
        out(f"hmmlearn: K chosen on characters 801-1000 after fitting 1-800 "
            f"(validation log-lik {_fmt_val(val)}), refit on 1-1000; best of "
            f"{1 if args.quick else 3} EM restart(s), "
            f"add-0.5 smoothing; CPU s = whole selection + refits.")
    out("Uniform over 31 symbols would score -13,736; a unigram model about -11,400.")
    out("The PGAS paper's figures are ~1.5 nats/char, well below every row measured here "
        "(hmmlearn included); its alphabet, text span and scoring protocol are not given in "
        "enough detail to reproduce, so they are printed for orientation, not as a like-for-like "
        "target.")


def _alice_words_data(args):
    """``(X_tr, X_te, V, note)``: the words split (the last 5,000 training tokens with --quick)."""
    X_tr, X_te, vocab = datasets.load_alice_words(1000)
    note = ""
    if args.quick:
        X_tr = X_tr[-5000:]
        note = " (--quick: last 5,000 training tokens only)"
    return X_tr, X_te, len(vocab), note


def _unigram_perplexity(X_tr, X_te, V):
    counts = np.bincount(X_tr.ravel(), minlength=V) + 0.5
    uni = float(np.sum(np.log(counts[X_te.ravel()] / counts.sum())))
    return np.exp(-uni / len(X_te))


def table_alice_words(args, out):
    X_tr, X_te, V, note = _alice_words_data(args)
    emission = Categorical(n_symbols=V)
    extra = {"n_score_particles": args.words_score_particles, "n_score_samples": 10}
    out(f"Alice in Wonderland, words: train {len(X_tr):,} tokens{note} / test {len(X_te):,}, "
        f"{V:,} symbols; 1 chain per sampler, CPU budget {args.words_budget:g} s of sampling;")
    out(f"perplexity = exp(-score / 1000), scored with n_score_particles="
        f"{args.words_score_particles}, n_score_samples=10; K = median [min, max] of kept samples")
    out()
    head = f"{'method':24} {'sweeps':>7} {'CPU s':>7} {'K':>12} {'test log-lik':>12} {'perplexity':>10}"
    out(head)
    out("-" * len(head))
    for name in args.samplers:
        try:
            kw = sampler_kwargs(name, emission, extra)
            n_sweeps, _ = calibrate({**kw, "random_state": 0}, X_tr, args.words_budget)
            model, _ = budget_fit(kw, X_tr, n_sweeps, seed=0)
            score = model.score(X_te)
            ks = kept_n_states(model).ravel()
            kstr = k_summary(ks)
            out(f"{name:24} {n_sweeps:7d} {model.trace_['seconds'][0, -1]:7.1f} {kstr:>12} "
                f"{score:12.1f} {np.exp(-score / len(X_te)):10.1f}")
        except Exception as exc:  # one broken sampler must not sink the table
            sampler_failed(out, name, exc)
    hmm = _hmmlearn()
    if hmm is None:
        out(f"{'hmmlearn CategoricalHMM':24} skipped (hmmlearn not installed)")
    else:
        grid = (5, 10) if args.quick else (5, 10, 20, 40)
        n_iter = 10 if args.quick else 50
        split = int(0.9 * len(X_tr))
        t0 = time.process_time()
        K, val = hmm_select(hmm, "categorical", grid, X_tr[:split], X_tr[split:], n_features=V,
                            n_iter=n_iter, n_restarts=1)
        m = hmm_fit(hmm, "categorical", K, X_tr, seed=1, n_features=V, n_iter=n_iter,
                    n_restarts=1)
        score = m.score(X_te)
        out(f"{'hmmlearn CategoricalHMM':24} {'EM':>7} {time.process_time() - t0:7.1f} "
            f"{'K=' + str(K):>12} {score:12.1f} {np.exp(-score / len(X_te)):10.1f}")
    out()
    out("sweeps: calibrated by a pilot fit; CPU s: sampling CPU actually used.")
    if hmm is not None:
        out(f"hmmlearn: K chosen on the last 10 % of the training tokens after fitting the first "
            f"90 % (validation log-lik {_fmt_val(val)}), refit on all training tokens; one EM "
            f"run of <= {n_iter} iterations per K, add-0.5 smoothing; CPU s = selection + refit.")
    out(f"Unigram reference (add-0.5 counts of the training tokens): perplexity "
        f"{_unigram_perplexity(X_tr, X_te, V):.1f}.")


def _hyp_means(model, idx=(1, 2)):
    """Mean over the kept snapshots (all chains) of the emission hyperparameters ``hyp[idx]``."""
    hyps = [s.hyp for snaps in model.snapshots_ for s in snaps if s.hyp is not None]
    if not hyps:
        return None
    return np.mean(np.array([[h[i] for i in idx] for h in hyps]), axis=0)


def table_alice_words_hcrp(args, out):
    """alice_words with both emission families: Categorical(0.5) and HCRPCategorical."""
    X_tr, X_te, V, note = _alice_words_data(args)
    families = (("categorical", Categorical(n_symbols=V)),
                ("hcrp", HCRPCategorical(n_symbols=V)))
    extra = {"n_score_particles": args.words_score_particles, "n_score_samples": 10}
    out(f"Alice in Wonderland, words: train {len(X_tr):,} tokens{note} / test {len(X_te):,}, "
        f"{V:,} symbols; 1 chain per (sampler, emission), CPU budget {args.words_budget:g} s of "
        "sampling each;")
    out("emission: categorical = Categorical(concentration=0.5, n_symbols=V) (as in alice_words); "
        "hcrp = HCRPCategorical(n_symbols=V), defaults: theta_k ~ Dir(alpha_e beta), "
        "beta ~ Dir(gamma_e / V), alpha_e, gamma_e ~ Gamma(1, 1), all resampled each sweep;")
    out(f"perplexity = exp(-score / 1000), scored with n_score_particles="
        f"{args.words_score_particles}, n_score_samples=10; K = median [min, max] of kept samples; "
        "alpha_e, gamma_e = posterior means over the kept samples")
    out()
    head = (f"{'method':24} {'emission':>11} {'sweeps':>7} {'CPU s':>7} {'ms/sweep':>8} "
            f"{'K':>16} {'test log-lik':>12} {'perplexity':>10} {'alpha_e':>8} {'gamma_e':>8}")
    out(head)
    out("-" * len(head))
    for name in args.samplers:
        for fam, emission in families:
            try:
                kw = sampler_kwargs(name, emission, extra)
                n_sweeps, _ = calibrate({**kw, "random_state": 0}, X_tr, args.words_budget)
                model, _ = budget_fit(kw, X_tr, n_sweeps, seed=0)
                score = model.score(X_te)
                ks = kept_n_states(model).ravel()
                kstr = k_summary(ks)
                cpu = model.trace_["seconds"][0, -1]
                hyp = _hyp_means(model) if fam == "hcrp" else None
                hstr = (f"{hyp[0]:8.3g} {hyp[1]:8.3g}" if hyp is not None
                        else f"{'':>8} {'':>8}")
                out(f"{name:24} {fam:>11} {n_sweeps:7d} {cpu:7.1f} "
                    f"{1000 * cpu / n_sweeps:8.2f} {kstr:>16} {score:12.1f} "
                    f"{np.exp(-score / len(X_te)):10.1f} {hstr}".rstrip())
            except Exception as exc:  # one broken sampler must not sink the table
                sampler_failed(out, f"{name} ({fam})", exc)
    out()
    out("sweeps: calibrated by a pilot fit per (sampler, emission), since the cost per sweep "
        "differs; CPU s: sampling CPU actually used; ms/sweep = CPU s / sweeps.")
    out(f"Unigram reference (add-0.5 counts of the training tokens): perplexity "
        f"{_unigram_perplexity(X_tr, X_te, V):.1f}.")


def _standardise(X):
    return (X - X.mean()) / X.std()


def paper_log_transform(X):
    """``log(x - min(x) + sd(x))``: the PGAS paper log-transforms its ion-channel
    current before normalising it (Section 4.2). Its alamethicin current is
    positive; ours crosses zero (closed about -1.2 pA), so it is shifted to
    start at ``sd(x)`` first. With the shift and the offset in units of the
    data, the normalised result does not depend on the units (``a x + b``,
    ``a > 0``, gives the same series)."""
    X = np.asarray(X, dtype=np.float64)
    return np.log(X - X.min() + X.std())


def _plot_states(path, X, panels, title):
    """One panel per (label, states): observations coloured by state."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 1.9 * len(panels) + 0.5),
                             sharex=True, squeeze=False)
    t = np.arange(X.shape[0])
    for ax, (label, states) in zip(axes[:, 0], panels):
        _, codes = np.unique(states, return_inverse=True)
        K = codes.max() + 1
        cmap = matplotlib.colormaps["tab10" if K <= 10 else "tab20" if K <= 20 else "turbo"]
        colors = cmap(codes % cmap.N) if K <= 20 else cmap(codes / max(K - 1, 1))
        ax.plot(t, X[:, 0], color="0.7", lw=0.5, zorder=1)
        ax.scatter(t, X[:, 0], c=colors, s=3, zorder=2)
        ax.set_ylabel("std. value")
        ax.set_title(f"{label}: {K} states", fontsize="small", loc="left")
    axes[-1, 0].set_xlabel("time step")
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _table_series(args, out, name, X_raw, description, transform=None):
    X = _standardise(X_raw if transform is None else transform(X_raw))
    T = X.shape[0]
    how = ("log(x - min + sd), then standardised" if transform is paper_log_transform
           else "standardised (x - mean) / sd")
    out(f"{description}, T={T:,}, {how}; Gaussian emission (NIG prior "
        f"mu0=0, lambda0=1, a0=1, b0=1); {args.runs} chain(s) per sampler, CPU budget "
        f"{args.budget:g} s of sampling per chain;")
    out("K = posterior median [min, max] of the kept samples of all chains; R-hat = split R-hat "
        "of K (InfiniteHMM.diagnostics); K_pe = states of the least-squares point estimate")
    out()
    head = f"{'method':24} {'sweeps':>7} {'CPU s':>7} {'K median [range]':>17} {'R-hat':>6} {'K_pe':>5}"
    out(head)
    out("-" * len(head))
    panels = []
    for sampler in args.samplers:
        try:
            kw = sampler_kwargs(sampler, "gaussian")
            n_sweeps, _ = calibrate({**kw, "random_state": 0}, X, args.budget)
            model, _ = budget_fit(kw, X, n_sweeps, n_chains=args.runs, seed=0)
            ks = kept_n_states(model).ravel()
            rhat = np.nan
            if args.runs > 1:
                rhat = model.diagnostics(keys=["n_states"])["n_states"]["r_hat"]
            pe = model.point_estimate()
            k_pe = len(np.unique(pe))
            panels.append((f"{sampler} (point estimate)", pe))
            kstr = k_summary(ks)
            out(f"{sampler:24} {n_sweeps:7d} {model.trace_['seconds'][:, -1].mean():7.1f} "
                f"{kstr:>17} {rhat:6.2f} {k_pe:5d}")
        except Exception as exc:  # one broken sampler must not sink the table
            sampler_failed(out, sampler, exc)
    hmm = _hmmlearn()
    val = None
    if hmm is None:
        out(f"{'hmmlearn GaussianHMM':24} skipped (hmmlearn not installed)")
    else:
        grid = (2, 4) if args.quick else (1, 2, 3, 4, 5, 6, 8, 10, 12, 15)
        (i_fit, l_fit), (i_val, l_val) = block_split(T)
        t0 = time.process_time()
        n_iter, n_restarts = (30, 1) if args.quick else (200, 3)
        K, val = hmm_select(hmm, "gaussian", grid, X[i_fit], X[i_val], l_fit, l_val,
                            n_iter=n_iter, n_restarts=n_restarts)
        m = hmm_fit(hmm, "gaussian", K, X, seed=1, n_iter=n_iter, n_restarts=n_restarts)
        panels.append((f"hmmlearn GaussianHMM, K={K} (Viterbi)", m.predict(X)))
        out(f"{'hmmlearn GaussianHMM':24} {'EM':>7} {time.process_time() - t0:7.1f} "
            f"{'K=' + str(K):>17} {'':>6} {K:5d}")
    out()
    out("sweeps: per chain (calibrated by a pilot fit); CPU s: sampling CPU per chain (mean).")
    if val is not None:
        out(f"hmmlearn: K chosen by held-out log-lik, fit on the even of 10 contiguous blocks, "
            f"validated on the odd ones ({_fmt_val(val)}); refit on the whole series.")
    suffix = "_quick" if args.quick else ""
    path = _plot_states(os.path.join(RESULTS, f"real_{name}_states{suffix}.png"), X, panels,
                        f"{description} ({how}): observations coloured by inferred state")
    out("plot: " + (os.path.relpath(path, os.path.dirname(HERE)) if path else
                    "skipped (matplotlib not installed)"))


def table_welllog(args, out):
    _table_series(args, out, "welllog", datasets.load_well_log(), "Well-log")


def table_ion(args, out):
    X = datasets.load_ion_channel("sctrace_test2_sub100", n=2000)
    paper = args.ion_preprocess == "paper"
    _table_series(args, out, "ion" if paper else "ion_standardised", X,
                  "Ion channel sctrace_test2_sub100[:2000]",
                  transform=paper_log_transform if paper else None)


TABLE_FUNCS = {"alice_chars": table_alice_chars, "alice_words": table_alice_words,
               "welllog": table_welllog, "ion": table_ion,
               "alice_words_hcrp": table_alice_words_hcrp}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny budgets for a smoke run")
    ap.add_argument("--ion-preprocess", choices=("paper", "standardise"), default="paper",
                    help="ion table: the PGAS paper's log transform then standardisation "
                         "(default), or standardisation only")
    ap.add_argument("--budget", type=float, default=None,
                    help="CPU seconds of sampling per run/chain (default 20; 0.5 with --quick)")
    ap.add_argument("--words-budget", type=float, default=None,
                    help="CPU seconds per sampler for alice_words (default 4 x budget; 1 with --quick)")
    ap.add_argument("--score-particles", type=int, default=None,
                    help="n_score_particles for alice_chars (default 100; 30 with --quick)")
    ap.add_argument("--words-score-particles", type=int, default=50)
    ap.add_argument("--runs", type=int, default=None,
                    help="runs (chains) per sampler (default 3; 1 with --quick)")
    ap.add_argument("--samplers", nargs="+", default=None,
                    help=f"default: every registered sampler ({' '.join(registered_samplers())})")
    ap.add_argument("--tables", nargs="+", default=list(DEFAULT_TABLES), choices=TABLES,
                    help=f"default: {' '.join(DEFAULT_TABLES)}")
    args = ap.parse_args(argv)
    args.command = "python benchmarks/bench_real.py " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    if args.budget is None:
        args.budget = 0.5 if args.quick else 20.0
    if args.words_budget is None:
        args.words_budget = 1.0 if args.quick else 4 * args.budget
    if args.score_particles is None:
        args.score_particles = 30 if args.quick else 100
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.samplers is None:
        args.samplers = registered_samplers()
    unknown = [s for s in args.samplers if s not in SAMPLERS]
    if unknown:
        print(f"# not registered, skipped: {' '.join(unknown)}")
        args.samplers = [s for s in args.samplers if s in SAMPLERS]
    print(f"# {args.command.strip()}")
    print(f"# samplers: {' '.join(args.samplers)}; os.cpu_count()={os.cpu_count()}")
    for name in args.tables:
        print(f"\n== real_{name} ==", flush=True)
        standardised_ion = name == "ion" and args.ion_preprocess != "paper"
        out = Report("ion_standardised" if standardised_ion else name, args)
        t0 = time.perf_counter()
        try:
            TABLE_FUNCS[name](args, out)
        except DataNotAvailable:
            print("skipped (data not available)", flush=True)
            continue
        out(f"(table wall time {time.perf_counter() - t0:.0f} s)")
        out.save()
    if FAILURES:
        print("\nFAILED (table, sampler): " + ", ".join(f"{t}/{s}" for t, s in FAILURES))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
