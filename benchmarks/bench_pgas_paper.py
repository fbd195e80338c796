"""The PGAS paper's synthetic experiments, PG against the RCD samplers.

Tripuraneni, Gu, Ge & Ghahramani (2015), "Particle Gibbs for infinite hidden
Markov models", Section 4.1 (Figures 2-4): Gaussian HMMs with T=4000 steps,
4 and 10 states, self-transition 0.75 (the rest spread uniformly), emission
sd 0.5, means (-2, -0.5, 1, 4) and (-9, -7, ..., 9)
(:func:`sk_ihmm.datasets.make_gaussian_hmm`, ``random_state=0``).

For every data set, initial number of states ``K_init`` (uniformly random
labels), model (sticky: ``kappa`` resampled, ``kappa0 = 1``, Gamma(1, 1)
prior; non-sticky: ``kappa = 0``) and sampler (``pgas`` with N=10 particles
and the posterior proposal, ``rcd_beam``, ``rcd_gibbs``; ``--samplers`` can
add ``rcd_blocked`` and ``split_merge``), one chain runs for
``--iters`` sweeps or ``--budget`` CPU seconds, whichever comes first.
``alpha`` and ``gamma`` are always resampled (Gamma(1, 1) priors, start 1).

Emission prior (``--prior``): ``weak`` (default) is
``Gaussian(mu0=0, lambda0=0.01, a0=1, b0=1)``, a weak prior on the means with
unknown variances, fixed in the units of the standardised data (the package
default scales ``mu0`` and ``b0`` to the data instead). The paper's model has
a known sd 0.5 and a N(0, 2^2) base measure on the means, which the
Normal-Inverse-Gamma family can only approximate: ``paper`` is
``Gaussian(mu0=0, lambda0=0.0625, a0=1000, b0=250)`` (variance ~ 0.25 with sd
0.008, means ~ N(0, 4)); its outputs carry the suffix ``_paperprior``.

Per sweep the script records K (number of used states), the joint
log-likelihood (``state.log_joint`` and the count-level value below) and the
cumulative CPU seconds of the sweeps (``time.process_time``; JIT compilation
is done on a throw-away chain beforehand, the per-sweep bookkeeping is not
counted). The summary table:

* ``ms/sw``: mean CPU ms per sweep over the second half of the run;
* ``FFBS``: one numba FFBS pass at the final K, T=4000, median CPU ms of 21
  passes; ``FFBSw``: the same by :func:`bench_ffbs_reference.ffbs_ms_per_pass`
  (median wall ms, inflated when other processes share the cores); both
  measured in the same process as the chain; ``ratio`` = ms/sw / FFBS;
* ``settle``: first sweep (CPU seconds) from which K stays within one of the
  truth for the rest of the run (``-``: never);
* ``first``: first sweep (CPU seconds) with K equal to the truth; ``atK``:
  fraction of the second half's sweeps with K equal to the truth;
* ``K@100``, ``K@200``: K after 100 and 200 sweeps; ``K_end``: final K;
* ``NMI``: normalised mutual information of the final labels with the truth;
* ``JLL_end``, ``JLL_2h``: ``log p(x, m, o, y | alpha, gamma, kappa)`` at
  the level of table *counts* (seatings summed out; beta, pi and the
  emission parameters integrated out), computed for every sampler with
  :func:`sk_ihmm._joint.count_log_joint` (pgas's ``log_joint``) -- the final value and the mean
  over the second half. ``native``: ``state.log_joint`` at the end, which for
  the RCD samplers is ``log p(x, tables, y)`` of one particular seating and
  so lower than the count-level value (not comparable with pgas's);
* ``kappa``: final kappa; ``accept``: mean acceptance rate (pgas: fraction
  of labels changed) over the second half.

Reference rows (``K_init`` = ``truth``; ``--no-truth-ref`` skips them): the
first sampler (pgas) started at the true labels, one per data set and model,
to show where the posterior mass is (its K and JLL) independently of the
start.

Plots (matplotlib, optional) go to ``benchmarks/results/``:
``pgas_paper{_quick}_K_<k>state.png`` (K per sweep and per CPU second),
``pgas_paper{_quick}_jll_<k>state.png`` (count-level joint log-likelihood per
sweep) and
``pgas_paper{_quick}_trans_<k>state.png`` (learned transition matrices from
the final state's transition counts, rows normalised, states ordered by
posterior mean, beside the true matrix). The traces are saved to
``pgas_paper{_quick}_traces.npz``.

``--figure5``: the paper's Figure 5 (Section 3.2), the infinite-state PG
sampler with the "prior" against the "posterior" proposal and N=10 against
N=50 particles (rows ``pgas-n10-post``, ``pgas-n10-pri``, ``pgas-n50-post``,
``pgas-n50-pri``), non-sticky as in the figure's legend (``--models`` can add
the sticky model), the same data, initial labels, table and plots; the jll
plot then has a second row against CPU seconds. Outputs are named
``pgas_figure5{_quick}{_paperprior}*`` instead of ``pgas_paper*``.

``--seeds N``: N chains per row, chain seeds ``--seed`` .. ``--seed + N - 1``
(a seed fixes the initial labels, shared by the samplers of a setting, and
each sampler's random stream). Default 5 with ``--figure5`` (1 with
``--quick``), 1 otherwise. With N > 1 the table gives, per row, the mean
± sd over seeds (and the min/max) of JLL_2h, K_end and ms/sw, how many
seeds reach and how many settle at the true K, the mean atK and NMI; per
setting, with ``--figure5``, paired by seed:

* how many seeds the posterior proposal beats the prior one (N=10 and N=50),
  by JLL_2h (per sweep: both chains ran the same sweeps) and by JLL_cpu
  (per CPU second: the mean joint log-likelihood over the second half of the
  CPU time the cheaper chain of the pair spent, ``(t/2, t]``);
* how many seeds N=50 beats N=10 (posterior and prior proposal), the same
  two ways.

The per-chain rows (the one-seed table's columns) go to
``{prefix}{suffix}_runs.csv``. The K and JLL plots then draw every seed's
chain as a thin line and the median over seeds (per sweep; per CPU second on
a grid up to the shortest chain's CPU time) as a thick one; the transition
matrices are the first seed's; the reference line is the mean of the
reference chains' JLL_2h.

Usage::

    python benchmarks/bench_pgas_paper.py [--iters 1000] [--budget S] [--jobs 2]
        [--quick] [--figure5] [--data 4 10] [--k-init 3 30] [--models nonsticky sticky]
        [--prior weak|paper] [--samplers pgas rcd_beam rcd_gibbs] [--seed 0] [--seeds N]
        [--no-plots]
"""

import argparse
import csv
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_ffbs_reference import (  # noqa: E402
    _gaussian_log_emission, ffbs, ffbs_ms_per_pass, random_gaussian_hmm)
from sk_ihmm import _chain  # noqa: E402
from sk_ihmm.datasets import make_gaussian_hmm  # noqa: E402
from sk_ihmm.emissions import Gaussian  # noqa: E402
from sk_ihmm.metrics import normalized_mutual_information  # noqa: E402
from sk_ihmm.samplers import get_sampler  # noqa: E402
from sk_ihmm._hcrp import log_stirling_cover  # noqa: E402
from sk_ihmm._joint import count_log_joint  # noqa: E402

RESULTS = os.path.join(HERE, "results")
T = 4000
PRIORS = {
    # the brief's choice: weak prior on the means, unknown variances
    "weak": dict(mu0=0.0, lambda0=0.01, a0=1.0, b0=1.0),
    # ~ the paper's model: variance fixed at 0.5^2 (IG(1000, 250): mean 0.25, sd 0.008)
    # and mu ~ N(0, 2^2) (sigma^2 / lambda0 = 0.25 / 0.0625 = 4)
    "paper": dict(mu0=0.0, lambda0=0.0625, a0=1000.0, b0=250.0),
}
SAMPLER_OPTIONS = {
    "pgas": {"n_particles": 10, "proposal": "posterior"},
    "rcd_beam": {},   # default block_size
    "rcd_gibbs": {},
    # not run by default (--samplers adds them); listed last so the samplers
    # above keep their chain seeds
    "rcd_blocked": {},
    "split_merge": {"base_sampler": "rcd_beam"},   # the base its recorded results used
    # --figure5: pgas with the prior or the posterior proposal, N=10 or 50
    "pgas-n10-post": {"n_particles": 10, "proposal": "posterior"},
    "pgas-n10-pri": {"n_particles": 10, "proposal": "prior"},
    "pgas-n50-post": {"n_particles": 50, "proposal": "posterior"},
    "pgas-n50-pri": {"n_particles": 50, "proposal": "prior"},
}
DEFAULT_SAMPLERS = ["pgas", "rcd_beam", "rcd_gibbs"]
FIGURE5_SAMPLERS = ["pgas-n10-post", "pgas-n10-pri", "pgas-n50-post", "pgas-n50-pri"]
COLORS = {"pgas": "tab:blue", "rcd_beam": "tab:orange", "rcd_gibbs": "tab:green",
          "rcd_blocked": "tab:red", "split_merge": "tab:purple",
          "pgas-n10-post": "tab:blue", "pgas-n50-post": "tab:cyan",
          "pgas-n10-pri": "tab:red", "pgas-n50-pri": "tab:orange"}


def sampler_of(name):
    """Registered sampler behind a row name (``pgas-n50-pri`` -> ``pgas``)."""
    return name.split("-")[0]


def make_problem(X, sticky, options, prior="weak"):
    """Problem for 1-d Gaussian data; sticky: kappa0=1 resampled, else kappa=0."""
    return _chain.make_problem(Gaussian(**PRIORS[prior]), X, 1,
                               conc0=(1.0, 1.0, 1.0 if sticky else 0.0),
                               resample=(True, True, bool(sticky)), options=options)


def ffbs_cpu_ms_per_pass(n, K, n_repeat=21, seed=0):
    """:func:`bench_ffbs_reference.ffbs_ms_per_pass` timed on the CPU clock.

    The same pass (emission matrix + numba FFBS) and the same random HMM; the
    median of ``process_time`` deltas, which other processes on a shared
    machine do not inflate the way they inflate the wall clock.
    """
    y, log_init, log_trans, means, sds = random_gaussian_hmm(n, K, seed)
    log_emit = np.empty((n, K))
    log_final = np.zeros(K)
    out = np.empty(n, dtype=np.int64)
    rng = np.random.default_rng(seed + 1)

    def one_pass():
        _gaussian_log_emission(y, means, sds, log_emit)
        return ffbs(log_init, log_trans, log_emit, log_final, rng, out)

    one_pass()
    times = np.empty(n_repeat)
    for r in range(n_repeat):
        t0 = time.process_time()
        one_pass()
        times[r] = time.process_time() - t0
    return 1e3 * float(np.median(times))


def learned_transitions(state, fam, hyp):
    """Row-normalised transition counts of the used states, ordered by mean."""
    labels = np.unique(state.x)
    counts = np.asarray(state.n, float)[np.ix_(labels, labels)]
    means = fam.summary(np.asarray(state.stats)[labels], hyp)["means_"][:, 0]
    order = np.argsort(means)
    counts = counts[np.ix_(order, order)]
    rows = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, rows, out=np.zeros_like(counts), where=rows > 0), means[order]


def run_one(cfg):
    """One chain; returns traces and summary numbers (runs in a worker)."""
    k_true, k_init, sticky, name, iters, budget, seed, prior = cfg
    X, z = make_gaussian_hmm(T, n_states=k_true, random_state=0)
    prob = make_problem(X, sticky, SAMPLER_OPTIONS[name], prior)
    smp = get_sampler(sampler_of(name))
    # same initial labels for every sampler of a setting
    if k_init == 0:  # reference chain started at the true labels
        x0 = z.astype(np.int64) + 1
    else:
        x0 = np.random.default_rng([seed, k_true, k_init, int(sticky)]).integers(
            1, k_init + 1, T).astype(np.int64)
    # JIT warm-up on a throw-away chain. Saving numba's cache can fail when
    # another process writes the same cache entry at the same moment
    # (ReferenceError from numba's caching); the compiled code is fine then,
    # so try again.
    for attempt in range(3):
        try:
            wrng = np.random.default_rng(12345)
            smp.step(smp.init(prob, x0.copy(), wrng), prob, wrng)
            break
        except ReferenceError:
            if attempt == 2:
                raise

    rng = np.random.default_rng([seed, k_true, k_init, int(sticky), 1 + list(SAMPLER_OPTIONS).index(name)])
    t0 = time.process_time()
    state = smp.init(prob, x0.copy(), rng)
    t_init = time.process_time() - t0
    ks, jll, jllc, secs, acc, kap = [], [], [], [], [], []
    table = None    # Stirling table of the count-level joint, grown on demand
    cpu = 0.0
    for _ in range(iters):
        t0 = time.process_time()
        info = smp.step(state, prob, rng)
        cpu += time.process_time() - t0
        secs.append(cpu)  # sweeps only, bookkeeping below excluded
        ks.append(len(np.unique(state.x)))
        jll.append(float(state.log_joint))
        table = log_stirling_cover(table, state.n, state.m, state.o)
        jllc.append(count_log_joint(state.n, state.m, state.o, state.stats, state.conc,
                                    prob.fam, prob.hyp, table))
        acc.append(float(info.get("accept_rate", np.nan)))
        kap.append(float(state.conc[2]))
        if budget is not None and secs[-1] >= budget:
            break
    ks, jll, jllc, secs = np.array(ks), np.array(jll), np.array(jllc), np.array(secs)
    n = len(ks)
    h = n // 2
    ms = (secs[-1] - secs[h - 1]) / (n - h) * 1e3 if h >= 1 else secs[-1] / n * 1e3
    ok = np.abs(ks - k_true) <= 1
    bad = np.flatnonzero(~ok)
    settle = (0 if bad.size == 0 else int(bad[-1]) + 1)  # 0-based index of first good sweep
    settle = None if settle >= n else settle
    hit = np.flatnonzero(ks == k_true)
    trans, means = learned_transitions(state, prob.emission, prob.hyp)
    k_end = int(ks[-1])
    return {
        "cfg": cfg, "k": ks, "jll": jll, "jllc": jllc, "secs": secs, "k0": int(len(np.unique(x0))),
        "sweeps": n, "ms": ms, "t_init": t_init,
        "ffbs_wall": ffbs_ms_per_pass(T, k_end, n_repeat=21),
        "ffbs": ffbs_cpu_ms_per_pass(T, k_end, n_repeat=21),
        "settle": None if settle is None else settle + 1,  # sweeps are counted from 1
        "settle_s": None if settle is None else float(secs[settle]),
        "first": None if hit.size == 0 else int(hit[0]) + 1,
        "first_s": None if hit.size == 0 else float(secs[hit[0]]),
        "at_k": float(np.mean(ks[h:] == k_true)) if n > 1 else float(ks[-1] == k_true),
        "k100": int(ks[99]) if n >= 100 else None, "k200": int(ks[199]) if n >= 200 else None,
        "k_end": k_end, "nmi": float(normalized_mutual_information(z, state.x)),
        "jll_end": float(jll[-1]), "jllc_end": float(jllc[-1]),
        "jllc_2nd": float(jllc[h:].mean()) if n > 1 else float(jllc[-1]), "kappa": float(kap[-1]),
        "accept": float(np.nanmean(acc[h:])) if n > 1 else float(acc[0]),
        "trans": trans, "means": means,
    }


def true_transitions(k):
    P = np.full((k, k), 0.25 / (k - 1))
    np.fill_diagonal(P, 0.75)
    return P


def fmt_row(r):
    k_true, k_init, sticky, name = r["cfg"][:4]
    settle = "-" if r["settle"] is None else f"{r['settle']} ({r['settle_s']:.1f}s)"
    first = "-" if r["first"] is None else f"{r['first']} ({r['first_s']:.1f}s)"
    opt = lambda v: "-" if v is None else str(v)  # noqa: E731
    return (f"{k_true:>4} {k_init if k_init else 'truth':>6} {'yes' if sticky else 'no':>6} {name:13} {r['sweeps']:>6} "
            f"{r['ms']:7.2f} {r['ffbs']:6.2f} {r['ffbs_wall']:6.2f} {r['ms'] / r['ffbs']:6.1f} {settle:>14} {first:>14} {r['at_k']:5.2f} "
            f"{opt(r['k100']):>5} {opt(r['k200']):>5} {r['k_end']:>5} {r['nmi']:5.3f} "
            f"{r['jllc_end']:9.1f} {r['jllc_2nd']:9.1f} {r['jll_end']:9.1f} {r['kappa']:6.2f} {r['accept']:6.3f}")


HEADER = (f"{'data':>4} {'K_init':>6} {'sticky':>6} {'sampler':13} {'sweeps':>6} "
          f"{'ms/sw':>7} {'FFBS':>6} {'FFBSw':>6} {'ratio':>6} {'settle':>14} {'first':>14} {'atK':>5} {'K@100':>5} {'K@200':>5} "
          f"{'K_end':>5} {'NMI':>5} {'JLL_end':>9} {'JLL_2h':>9} {'native':>9} {'kappa':>6} {'accept':>6}")


def setting_label(k_init, sticky):
    return f"K_init={k_init}, {'sticky' if sticky else 'non-sticky'}"


CSV_FIELDS = ["data", "k_init", "sticky", "sampler", "seed", "sweeps", "cpu_s", "ms_sw", "ffbs_ms",
              "ffbs_wall_ms", "settle", "settle_s", "first", "first_s", "at_k", "k100", "k200", "k_end",
              "nmi", "jll_end", "jll_2h", "native", "kappa", "accept"]


def csv_row(r):
    """One chain as a CSV row (the one-seed table's columns; K_init 0 = truth)."""
    k_true, k_init, sticky, name, _, _, seed, _ = r["cfg"]
    return [k_true, k_init, int(sticky), name, seed, r["sweeps"], f"{r['secs'][-1]:.3f}",
            f"{r['ms']:.4f}", f"{r['ffbs']:.4f}", f"{r['ffbs_wall']:.4f}", r["settle"], r["settle_s"],
            r["first"], r["first_s"], f"{r['at_k']:.4f}", r["k100"], r["k200"], r["k_end"],
            f"{r['nmi']:.4f}", f"{r['jllc_end']:.2f}", f"{r['jllc_2nd']:.2f}", f"{r['jll_end']:.2f}",
            f"{r['kappa']:.4f}", f"{r['accept']:.4f}"]


def write_runs_csv(results, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in results:
            w.writerow(["" if v is None else v for v in csv_row(r)])


def mean_sd(v):
    """Mean and sample sd (0 for a single value)."""
    v = np.asarray(v, float)
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


SUMMARY_HEADER = (f"{'data':>4} {'K_init':>6} {'sticky':>6} {'sampler':13} {'seeds':>5} {'sweeps':>6} "
                  f"{'ms/sw':>7} {'± sd':>6} {'K_end':>5} {'± sd':>4} {'range':>5} {'reach':>5} "
                  f"{'settl':>5} {'atK':>5} {'NMI':>5} {'JLL_2h':>9} {'± sd':>6} {'min':>9} {'max':>9}")


def summary_row(rs):
    """Mean ± sd over the seeds of one row (data, K_init, model, sampler)."""
    k_true, k_init, sticky, name = rs[0]["cfg"][:4]
    n = len(rs)
    ms, ms_sd = mean_sd([r["ms"] for r in rs])
    ke = [r["k_end"] for r in rs]
    ke_m, ke_sd = mean_sd(ke)
    jl = [r["jllc_2nd"] for r in rs]
    jl_m, jl_sd = mean_sd(jl)
    reach = sum(r["first"] is not None for r in rs)
    settled = sum(r["settle"] is not None for r in rs)
    return (f"{k_true:>4} {k_init if k_init else 'truth':>6} {'yes' if sticky else 'no':>6} {name:13} {n:>5} "
            f"{np.mean([r['sweeps'] for r in rs]):6.0f} {ms:7.2f} {ms_sd:6.2f} {ke_m:5.1f} {ke_sd:4.1f} "
            f"{f'{min(ke)}-{max(ke)}':>5} {f'{reach}/{n}':>5} {f'{settled}/{n}':>5} "
            f"{np.mean([r['at_k'] for r in rs]):5.2f} {np.mean([r['nmi'] for r in rs]):5.3f} "
            f"{jl_m:9.1f} {jl_sd:6.1f} {min(jl):9.1f} {max(jl):9.1f}")


def jll_cpu(r, t):
    """Mean count-level JLL over the sweeps that end in (t/2, t] CPU seconds.

    Compares two chains on the same CPU time: t is the CPU time of the cheaper
    chain of a pair, so a costly sampler is judged on the sweeps it could
    afford, not on as many sweeps as the cheap one.
    """
    sel = (r["secs"] > t / 2) & (r["secs"] <= t)
    if sel.any():
        return float(r["jllc"][sel].mean())
    # fewer sweeps than the window holds: the last value reached by t
    i = max(int(np.searchsorted(r["secs"], t, side="right")) - 1, 0)
    return float(r["jllc"][i])


def paired_wins(by_seed, a, b, per_cpu):
    """Seeds in which row a beats row b (paired by seed): wins, pairs, median a - b."""
    diffs = []
    for runs in by_seed.values():
        if a not in runs or b not in runs:
            continue
        ra, rb = runs[a], runs[b]
        if per_cpu:
            t = min(ra["secs"][-1], rb["secs"][-1])
            diffs.append(jll_cpu(ra, t) - jll_cpu(rb, t))
        else:
            diffs.append(ra["jllc_2nd"] - rb["jllc_2nd"])
    diffs = np.array(diffs)
    return int((diffs > 0).sum()), diffs.size, float(np.median(diffs)) if diffs.size else np.nan


# (label, a, b): "a beats b" comparisons of --figure5, each per sweep and per CPU second
FIGURE5_PAIRS = [
    ("posterior beats prior, N=10", "pgas-n10-post", "pgas-n10-pri"),
    ("posterior beats prior, N=50", "pgas-n50-post", "pgas-n50-pri"),
    ("N=50 beats N=10, posterior", "pgas-n50-post", "pgas-n10-post"),
    ("N=50 beats N=10, prior", "pgas-n50-pri", "pgas-n10-pri"),
]


def figure5_comparisons(results):
    """Per setting and over all settings: in how many seeds each FIGURE5_PAIRS row holds."""
    settings = {}
    for r in results:
        k_true, k_init, sticky, name, _, _, seed, _ = r["cfg"]
        if k_init != 0:
            settings.setdefault((k_true, k_init, sticky), {}).setdefault(seed, {})[name] = r
    lines = []
    totals = {(lab, cpu): [0, 0] for lab, _, _ in FIGURE5_PAIRS for cpu in (False, True)}
    for (k_true, k_init, sticky), by_seed in sorted(settings.items()):
        lines.append(f"{k_true}-state, {setting_label(k_init, sticky)}:")
        for lab, a, b in FIGURE5_PAIRS:
            parts = []
            for cpu in (False, True):
                w, n, med = paired_wins(by_seed, a, b, cpu)
                if n == 0:
                    continue
                totals[lab, cpu][0] += w
                totals[lab, cpu][1] += n
                parts.append(f"{w}/{n} seeds {'per CPU s' if cpu else 'per sweep'} (median difference "
                             f"{med:+.1f})")
            if parts:
                lines.append(f"  {lab:29}: " + "; ".join(parts))
    lines.append("All settings:")
    for lab, _, _ in FIGURE5_PAIRS:
        (ws, ns), (wc, nc) = totals[lab, False], totals[lab, True]
        if ns:
            lines.append(f"  {lab:29}: {ws}/{ns} (setting, seed) pairs per sweep; {wc}/{nc} per CPU s")
    return lines


def median_on_grid(curves, grid):
    """Median over chains of step functions (x increasing, y) evaluated on grid."""
    vals = []
    for x, y in curves:
        i = np.clip(np.searchsorted(x, grid, side="right") - 1, 0, len(y) - 1)
        vals.append(y[i])
    return np.median(vals, axis=0)


def plot_runs(ax, name, curves, per_cpu):
    """One line per chain; with several chains thin ones plus a thick median."""
    color = COLORS.get(name)
    if len(curves) == 1:
        ax.plot(*curves[0], color=color, label=name, lw=1)
        return
    for x, y in curves:
        ax.plot(x, y, color=color, lw=0.5, alpha=0.35)
    if per_cpu:
        # up to the shortest chain: beyond it the median would be over fewer chains
        grid = np.linspace(min(x[0] for x, _ in curves), min(x[-1] for x, _ in curves), 400)
    else:
        grid = curves[int(np.argmin([len(x) for x, _ in curves]))][0]
    ax.plot(grid, median_on_grid(curves, grid), color=color, lw=1.6,
            label=f"{name} (median of {len(curves)})")


def make_plots(results, args, suffix, prefix="pgas_paper"):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(matplotlib not installed: no plots)"]
    written = []
    for k_true in args.data:
        # reference level: mean over the seeds of the chains started at the truth
        refs = {}
        for r in results:
            if r["cfg"][0] == k_true and r["cfg"][1] == 0:
                refs.setdefault(r["cfg"][2], []).append(r)
        rs = [r for r in results if r["cfg"][0] == k_true and r["cfg"][1] != 0]
        settings = sorted({(r["cfg"][1], r["cfg"][2]) for r in rs})
        ncol = len(settings)

        def runs_of(k_init, sticky):
            """Chains of one setting, by sampler in the order of args.samplers."""
            by = {}
            for r in rs:
                if (r["cfg"][1], r["cfg"][2]) == (k_init, sticky):
                    by.setdefault(r["cfg"][3], []).append(r)
            return [(name, by[name]) for name in args.samplers if name in by]

        # K per sweep and per CPU second
        fig, axes = plt.subplots(2, ncol, figsize=(4 * ncol, 6.5), squeeze=False)
        for c, (k_init, sticky) in enumerate(settings):
            for name, runs in runs_of(k_init, sticky):
                kk = [np.concatenate([[r["k0"]], r["k"]]) for r in runs]
                it = [np.arange(r["sweeps"] + 1) for r in runs]
                ss = [np.concatenate([[0.0], r["secs"]]) for r in runs]
                plot_runs(axes[0, c], name, list(zip(it, kk)), per_cpu=False)
                plot_runs(axes[1, c], name, list(zip(ss, kk)), per_cpu=True)
            for row in range(2):
                axes[row, c].axhline(k_true, color="k", ls="--", lw=0.8, label="truth")
                axes[row, c].set_ylabel("K (used states)")
            axes[0, c].set_title(setting_label(k_init, sticky), fontsize=9)
            axes[0, c].set_xlabel("sweep")
            axes[1, c].set_xlabel("CPU seconds")
        axes[0, 0].legend(fontsize=8)
        fig.suptitle(f"{k_true}-state Gaussian HMM, T={T}: number of states", fontsize=10)
        fig.tight_layout()
        path = os.path.join(RESULTS, f"{prefix}{suffix}_K_{k_true}state.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
        # joint log-likelihood per sweep (and, with --figure5, per CPU second)
        nrow = 2 if args.figure5 else 1
        fig, axes = plt.subplots(nrow, ncol, figsize=(4 * ncol, 3.4 * nrow), squeeze=False)
        for c, (k_init, sticky) in enumerate(settings):
            lo = max(np.percentile(r["jllc"], 5) for r in rs
                     if (r["cfg"][1], r["cfg"][2]) == (k_init, sticky))
            hi = max(r["jllc"].max() for r in rs if (r["cfg"][1], r["cfg"][2]) == (k_init, sticky))
            ref = refs.get(sticky)
            if ref is not None:
                ref_level = float(np.mean([r["jllc_2nd"] for r in ref]))
                hi = max(hi, ref_level)
            for row in range(nrow):
                ax = axes[row, c]
                for name, runs in runs_of(k_init, sticky):
                    curves = [(np.arange(1, r["sweeps"] + 1) if row == 0 else r["secs"], r["jllc"])
                              for r in runs]
                    plot_runs(ax, name, curves, per_cpu=row == 1)
                if ref is not None:
                    ax.axhline(ref_level, color="k", ls="--", lw=0.8,
                               label=f"{ref[0]['cfg'][3]} from truth (2nd-half mean"
                                     + (f", mean of {len(ref)})" if len(ref) > 1 else ")"))
                ax.set_ylim(lo - 0.1 * (hi - lo) - 50, hi + 0.05 * (hi - lo) + 10)
                ax.set_xlabel("sweep" if row == 0 else "CPU seconds")
                ax.set_ylabel("joint log-likelihood")
            axes[0, c].set_title(setting_label(k_init, sticky), fontsize=9)
        axes[0, 0].legend(fontsize=8)
        fig.suptitle(f"{k_true}-state Gaussian HMM: joint log-likelihood log p(x, m, o, y | "
                     "alpha, gamma, kappa) (count level)", fontsize=10)
        fig.tight_layout()
        path = os.path.join(RESULTS, f"{prefix}{suffix}_jll_{k_true}state.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
        # transition matrices: rows = settings, columns = truth + samplers
        names = [s for s in args.samplers if any(r["cfg"][3] == s for r in rs)]
        fig, axes = plt.subplots(len(settings), 1 + len(names),
                                 figsize=(2.6 * (1 + len(names)), 2.6 * len(settings)),
                                 squeeze=False)
        for row, (k_init, sticky) in enumerate(settings):
            axes[row, 0].imshow(true_transitions(k_true), vmin=0, vmax=1, cmap="viridis")
            axes[row, 0].set_title("truth", fontsize=8)
            axes[row, 0].set_ylabel(setting_label(k_init, sticky), fontsize=8)
            for c, name in enumerate(names, start=1):
                ax = axes[row, c]
                r = next((r for r in rs if r["cfg"][1:4] == (k_init, sticky, name)
                          and r["cfg"][6] == args.seed), None)
                if r is None:
                    ax.axis("off")
                    continue
                ax.imshow(r["trans"], vmin=0, vmax=1, cmap="viridis")
                ax.set_title(f"{name}: K={r['k_end']}", fontsize=8)
            for ax in axes[row]:
                ax.set_xticks([])
                ax.set_yticks([])
        fig.suptitle(f"{k_true}-state: transition matrices (final state's counts, rows "
                     f"normalised, states by mean)"
                     + (f"; chain seed {args.seed}" if args.seeds > 1 else ""), fontsize=9)
        fig.tight_layout()
        path = os.path.join(RESULTS, f"{prefix}{suffix}_trans_{k_true}state.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=None, help="sweeps per chain (default 1000; 150 with --quick)")
    ap.add_argument("--budget", type=float, default=None, help="CPU seconds per chain (default: none)")
    ap.add_argument("--quick", action="store_true", help="smoke test: 150 sweeps, K_init=30, non-sticky")
    ap.add_argument("--data", type=int, nargs="+", default=[4, 10], help="true numbers of states")
    ap.add_argument("--k-init", type=int, nargs="+", default=None, help="initial numbers of states")
    ap.add_argument("--models", nargs="+", choices=("nonsticky", "sticky"), default=None)
    ap.add_argument("--samplers", nargs="+", default=None, choices=list(SAMPLER_OPTIONS),
                    help=f"default {' '.join(DEFAULT_SAMPLERS)}; with --figure5 {' '.join(FIGURE5_SAMPLERS)}")
    ap.add_argument("--figure5", action="store_true",
                    help="the paper's Figure 5: pgas with the prior / posterior proposal and N=10 / 50 "
                         "particles (non-sticky unless --models says otherwise); outputs pgas_figure5*")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (chains in parallel)")
    ap.add_argument("--seed", type=int, default=0, help="first chain seed")
    ap.add_argument("--seeds", type=int, default=None,
                    help="chains per row, seeds --seed .. --seed+N-1 (default 5 with --figure5, "
                         "1 with --quick or without --figure5)")
    ap.add_argument("--prior", choices=list(PRIORS), default="weak",
                    help="Gaussian emission prior: weak (default: mu0=0, lambda0=0.01, a0=1, b0=1) or "
                         "paper (~fixed sd 0.5, means ~ N(0, 2^2): lambda0=0.0625, a0=1000, b0=250)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--no-truth-ref", action="store_true",
                    help="skip the reference chains started at the true labels")
    args = ap.parse_args(argv)
    if args.iters is None:
        args.iters = 150 if args.quick else 1000
    if args.k_init is None:
        args.k_init = [30] if args.quick else [3, 30]
    if args.samplers is None:
        args.samplers = FIGURE5_SAMPLERS if args.figure5 else DEFAULT_SAMPLERS
    if args.seeds is None:
        args.seeds = 5 if args.figure5 and not args.quick else 1
    seeds = list(range(args.seed, args.seed + args.seeds))
    if args.models is None:
        args.models = ["nonsticky"] if args.quick or args.figure5 else ["nonsticky", "sticky"]
    suffix = ("_quick" if args.quick else "") + ("" if args.prior == "weak" else f"_{args.prior}prior")
    prefix = "pgas_figure5" if args.figure5 else "pgas_paper"
    os.makedirs(RESULTS, exist_ok=True)

    cmd = "python benchmarks/bench_pgas_paper.py " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = []

    def out(s=""):
        print(s, flush=True)
        lines.append(s)

    out(f"# {cmd.strip()}")
    out(f"PGAS paper (Tripuraneni et al. 2015, Sec. 4.1) synthetic data: make_gaussian_hmm(T={T}, "
        f"n_states=4|10, random_state=0), self-transition 0.75, sd 0.5.")
    pr = ", ".join(f"{k}={v:g}" for k, v in PRIORS[args.prior].items())
    if args.prior == "weak":
        out(f"Emission prior Gaussian({pr}) (weak prior on the means, unknown variances, fixed "
            "rather than scaled to the data as the package default is).")
    else:
        out(f"Emission prior Gaussian({pr}): ~ the paper's model, sd fixed near 0.5 (IG(1000, 250)) and "
            "means ~ N(0, 2^2).")
    out("alpha, gamma ~ Gamma(1,1), resampled, start 1;")
    out("sticky: kappa0=1, kappa ~ Gamma(1,1) resampled; non-sticky: kappa=0. "
        + ("pgas-nN-post / pgas-nN-pri: pgas with N particles and the posterior / prior proposal "
           "(the paper's Figure 5)." if args.figure5 else
           "pgas: N=10 particles, posterior proposal; rcd_beam: default block size."))
    out(("One chain per row" if args.seeds == 1 else f"{args.seeds} chains per row")
        + f": {args.iters} sweeps"
        + (f" or {args.budget:g} CPU s, whichever first" if args.budget else "")
        + "; uniform random initial labels (a seed's are shared by the samplers of a setting); "
        + (f"chain seed {args.seed}" if args.seeds == 1 else f"chain seeds {seeds[0]}-{seeds[-1]}")
        + f"; {args.jobs} worker process(es).")
    out("Times are CPU seconds (process_time). FFBS: one numba FFBS pass (T=4000, final K), median of 21, "
        "CPU clock; FFBSw: the same by")
    out("bench_ffbs_reference.ffbs_ms_per_pass (wall clock); both in the chain's process. ratio = ms/sw / FFBS. The "
        f"machine ({os.cpu_count()} cores) was shared with other jobs, load average at start "
        f"{os.getloadavg()[0]:.1f}.")
    out("ms/sw: mean over the second half; settle: first sweep (CPU s) from which |K - K_true| <= 1 "
        "for the rest of the run; first: first sweep (CPU s)")
    out("with K == K_true; atK: fraction of second-half sweeps with K == K_true. K@100, K@200: K after "
        "100 / 200 sweeps; NMI: final labels vs truth.")
    out(f"Rows with K_init 'truth': reference chains of {args.samplers[0]} started at the true labels "
        "(where the posterior mass is, for comparison).")
    out("JLL_end / JLL_2h: log p(x, m, o, y | alpha, gamma, kappa) (table counts m, o; seatings summed "
        "out; beta, pi, emission params integrated out),")
    out("computed for every sampler by pgas's _log_joint: final value / mean over the second half. native: "
        "state.log_joint at the end -- for rcd_*")
    out("that is log p(x, tables, y) of one particular seating, lower than the count-level value, so the "
        "native column is not comparable across samplers.")
    runs_csv = os.path.join(RESULTS, f"{prefix}{suffix}_runs.csv")
    if args.seeds > 1:
        out(f"Per row over the {args.seeds} seeds: ms/sw, K_end and JLL_2h mean and sample sd (K_end also "
            "its range, JLL_2h its min and max); reach / settl: seeds")
        out("with a 'first' / a 'settle' sweep (columns of the per-chain table); atK, NMI: means. "
            f"Per-chain rows (the one-seed table's columns): {os.path.relpath(runs_csv, os.path.dirname(HERE))}.")
        if args.figure5:
            out("Per setting, paired by seed (the same initial labels): in how many seeds a beats b by "
                "JLL_2h (per sweep: the same number of sweeps)")
            out("and by the mean JLL over (t/2, t] CPU s, t the CPU time of the cheaper chain of the pair "
                "(per CPU s); median difference a - b.")
    out()
    # with several seeds the per-chain rows are progress only (they go to the CSV)
    show = out if args.seeds == 1 else (lambda line: print(line, flush=True))
    show(HEADER)

    cfgs = [(k, ki, m == "sticky", s, args.iters, args.budget, seed, args.prior)
            for k in args.data for ki in args.k_init for m in args.models for seed in seeds
            for s in args.samplers]
    if not args.no_truth_ref:
        cfgs += [(k, 0, m == "sticky", args.samplers[0], args.iters, args.budget, seed, args.prior)
                 for k in args.data for m in args.models for seed in seeds]
    t_wall = time.perf_counter()
    results = []

    def done(r):
        results.append(r)
        show(fmt_row(r))

    if args.jobs > 1:
        import multiprocessing as mp
        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("spawn")) as ex:
            for r in ex.map(run_one, cfgs):
                done(r)
    else:
        for cfg in cfgs:
            done(run_one(cfg))
    if args.seeds > 1:
        rows = {}
        for r in results:
            rows.setdefault(tuple(r["cfg"][:4]), []).append(r)
        out(SUMMARY_HEADER)
        for rs in rows.values():
            out(summary_row(rs))
        if args.figure5:
            out()
            for line in figure5_comparisons(results):
                out(line)
    out()
    out(f"wall time {time.perf_counter() - t_wall:.0f} s; CPU in chains "
        f"{sum(r['secs'][-1] for r in results):.0f} s")

    write_runs_csv(results, runs_csv)
    np.savez_compressed(
        os.path.join(RESULTS, f"{prefix}{suffix}_traces.npz"),
        **{"_".join(map(str, (r["cfg"][0], r["cfg"][1], "sticky" if r["cfg"][2] else "nonsticky",
                               r["cfg"][3], f"s{r['cfg'][6]}"))) + "_" + key: r[key]
           for r in results for key in ("k", "jll", "jllc", "secs", "trans", "means")},
    )
    if not args.no_plots:
        for p in make_plots(results, args, suffix, prefix):
            out(f"plot: {os.path.relpath(p, os.path.dirname(HERE))}")
    with open(os.path.join(RESULTS, f"{prefix}{suffix}.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
