"""Motion-capture segmentation (mocap6): the sticky HDP-AR-HMM against Gaussian emissions.

The six CMU motion-capture sequences of Fox et al. (2014)
(:func:`sk_ihmm.datasets.load_mocap6`: 2,058 steps at 10 frames per second,
12 channels, one of 12 exercises per step), read in place from the shared
data folder. Every method segments the six sequences jointly (shared states)
and is compared with the exercise labels:

* ``iHMM autoregressive (p)``: ``InfiniteHMM(emission=AutoRegressive(order=p))``,
  sticky (``kappa`` learnt, Gamma(1, 0.1) prior, starting at 10), default
  data-scaled prior on the raw channels;
* ``iHMM Gaussian``: the same with the full-covariance Gaussian emission;
* ``hmmlearn GaussianHMM`` (full covariance, on standardised channels), K
  chosen by held-out log-likelihood: fit on sequences 1, 3, 5, validated on
  2, 4, 6 (best of 3 EM restarts per K), then refit on all six.

The iHMM rows run ``--chains`` chains of ``--sweeps`` sweeps each (half
burn-in, the rest thinned to 100 kept samples; ``max_time=0``) with the
default sampler; their segmentation is the least-squares point estimate
(``InfiniteHMM.point_estimate``), hmmlearn's the Viterbi path.

Columns: K (states of the segmentation; for the iHMM also the most probable
K of the posterior), NMI with the exercise labels, Hamming distance (the
fraction of steps whose state is not mapped to their exercise by the best
one-to-one matching of states to exercises, Hungarian algorithm; states left
unmatched count as errors), CPU seconds of the fit (chains run one after the
other). A plot of the segmentations under the labels goes to
``benchmarks/results/mocap6_segmentation.png``, the table to
``benchmarks/results/mocap6.txt`` (``_quick`` with ``--quick``).
"""

import argparse
import os
import shlex
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from sk_ihmm import InfiniteHMM  # noqa: E402
from sk_ihmm.datasets import DataNotAvailable, load_mocap6  # noqa: E402
from sk_ihmm.emissions import AutoRegressive  # noqa: E402
from sk_ihmm.metrics import normalized_mutual_information  # noqa: E402

RESULTS = os.path.join(HERE, "results")


def best_matching(labels, states):
    """``{state: label}`` of the one-to-one matching that maximises the
    number of agreeing steps (Hungarian algorithm on the contingency table)."""
    from scipy.optimize import linear_sum_assignment

    _, s_codes = np.unique(states, return_inverse=True)
    s_values = np.unique(states)
    table = np.zeros((s_values.size, labels.max() + 1), np.int64)
    np.add.at(table, (s_codes, labels), 1)
    rows, cols = linear_sum_assignment(-table)
    return {int(s_values[r]): int(c) for r, c in zip(rows, cols)}


def hamming(labels, states):
    match = best_matching(labels, states)
    mapped = np.array([match.get(int(s), -1) for s in states])
    return float(np.mean(mapped != labels))


def fit_ihmm(emission, X, lengths, args, seed=0):
    n_burnin = args.sweeps // 2
    n_samples = min(100, args.sweeps - n_burnin)
    thin = (args.sweeps - n_burnin) // n_samples
    model = InfiniteHMM(emission=emission, kappa=10.0, kappa_prior=(1.0, 0.1), max_time=0,
                        n_burnin=n_burnin, n_samples=n_samples, thin=thin, n_chains=args.chains,
                        random_state=seed, progress=False)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, lengths=lengths)
    cpu = time.process_time() - t0
    return model, model.point_estimate(), cpu, model.convergence_["compile_seconds"]


def fit_hmmlearn(X, lengths, args):
    try:
        from hmmlearn import hmm
    except ImportError:
        return None
    import logging

    logging.getLogger("hmmlearn").setLevel(logging.ERROR)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    seqs = [Z[s:s + L] for s, L in zip(starts, lengths)]
    fit_idx, val_idx = [0, 2, 4], [1, 3, 5]
    X_fit, l_fit = np.vstack([seqs[i] for i in fit_idx]), [len(seqs[i]) for i in fit_idx]
    X_val, l_val = np.vstack([seqs[i] for i in val_idx]), [len(seqs[i]) for i in val_idx]
    n_restarts, n_iter = (1, 30) if args.quick else (3, 200)

    def best_of(K, data, lens):
        best, best_ll = None, -np.inf
        for r in range(n_restarts):
            m = hmm.GaussianHMM(n_components=K, covariance_type="full", n_iter=n_iter, tol=1e-3,
                                random_state=r)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    m.fit(data, lens)
                    ll = m.score(data, lens)
                except (ValueError, np.linalg.LinAlgError):
                    continue
            if np.isfinite(ll) and ll > best_ll:
                best, best_ll = m, ll
        return best

    t0 = time.process_time()
    grid = (2, 6, 12) if args.quick else (2, 4, 6, 8, 10, 12, 14, 16, 20)
    val = {}
    for K in grid:
        m = best_of(K, X_fit, l_fit)
        val[K] = -np.inf if m is None else m.score(X_val, l_val)
    K = max(val, key=val.get)
    m = best_of(K, Z, list(lengths))
    pred = m.predict(Z, list(lengths))
    return K, val, pred, time.process_time() - t0


def plot(path, labels, lengths, panels, actions):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        return None
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rows = [("exercise labels", labels)]
    for name, states in panels:
        # colour a state like the exercise it is matched to; unmatched states grey shades
        match = best_matching(labels, states)
        codes = np.array([match.get(int(s), -1) for s in states])
        rows.append((name, codes))
    cmap = matplotlib.colormaps["tab20"]
    fig, axes = plt.subplots(len(lengths), 1, figsize=(11, 1.1 * len(lengths) * len(rows) / 3 + 1.2),
                             squeeze=False)
    for ax, s, L in zip(axes[:, 0], starts, lengths):
        img = np.zeros((len(rows), L, 4))
        for r, (_, codes) in enumerate(rows):
            seg = codes[s:s + L]
            img[r] = np.where(seg[:, None] >= 0, cmap(np.maximum(seg, 0) % 20), (0.3, 0.3, 0.3, 1.0))
        ax.imshow(img, aspect="auto", interpolation="nearest")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([name for name, _ in rows], fontsize=7)
        ax.set_xlabel(f"steps of sequence ({L})", fontsize=7)
        ax.tick_params(axis="x", labelsize=7)
    handles = [Patch(color=cmap(i % 20), label=a) for i, a in enumerate(actions)]
    handles.append(Patch(color=(0.3, 0.3, 0.3), label="state not matched"))
    fig.legend(handles=handles, loc="lower center", ncol=7, fontsize=7, frameon=False)
    fig.suptitle("mocap6: segmentations under the exercise labels (states coloured by the "
                 "exercise they are matched to)", fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 0.97))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny budgets for a smoke run")
    ap.add_argument("--sweeps", type=int, default=None, help="sweeps per chain (default 2000; 40 with --quick)")
    ap.add_argument("--chains", type=int, default=None, help="chains per iHMM fit (default 2; 1 with --quick)")
    ap.add_argument("--orders", type=int, nargs="+", default=[1, 2], help="autoregressive orders")
    args = ap.parse_args(argv)
    args.sweeps = args.sweeps or (40 if args.quick else 2000)
    args.chains = args.chains or (1 if args.quick else 2)
    command = " ".join(["python benchmarks/bench_mocap6.py"]
                       + [shlex.quote(a) for a in (argv or sys.argv[1:])])
    lines = []

    def out(line=""):
        print(line, flush=True)
        lines.append(line)

    try:
        X, lengths, labels, actions, _ = load_mocap6()
    except DataNotAvailable as exc:
        out(f"mocap6: skipped (data not available: {exc})")
        return
    out(f"mocap6: {len(lengths)} sequences, T={X.shape[0]:,}, {X.shape[1]} channels, "
        f"{len(actions)} exercises; iHMM: {args.chains} chain(s) x {args.sweeps} sweeps, "
        "default sampler, sticky (kappa learnt)")
    out()
    head = (f"{'method':28} {'K':>4} {'K post':>6} {'NMI':>6} {'Hamming':>8} {'CPU s':>7} "
            f"{'ms/sweep':>9}")
    out(head)
    out("-" * len(head))
    panels = []
    emissions = [(f"iHMM autoregressive (p={p})", AutoRegressive(order=p)) for p in args.orders]
    emissions.append(("iHMM Gaussian", "gaussian"))
    for name, emission in emissions:
        model, z, cpu, compile_s = fit_ihmm(emission, X, lengths, args)
        panels.append((name, z))
        sweep_ms = 1000 * np.mean(model.trace_["seconds"][:, -1]) / model.n_sweeps_
        out(f"{name:28} {len(np.unique(z)):4d} {int(np.argmax(model.n_states_posterior_)):6d} "
            f"{normalized_mutual_information(labels, z):6.3f} {hamming(labels, z):8.3f} "
            f"{cpu - compile_s:7.1f} {sweep_ms:9.1f}")
    res = fit_hmmlearn(X, lengths, args)
    if res is None:
        out(f"{'hmmlearn GaussianHMM':28} skipped (hmmlearn not installed)")
    else:
        K, val, pred, cpu = res
        panels.append((f"hmmlearn GaussianHMM (K={K})", pred))
        out(f"{'hmmlearn GaussianHMM (full)':28} {K:4d} {'':>6} "
            f"{normalized_mutual_information(labels, pred):6.3f} {hamming(labels, pred):8.3f} "
            f"{cpu:7.1f} {'':>9}")
    out()
    out("K: states of the segmentation (iHMM: least-squares point estimate; hmmlearn: Viterbi); "
        "K post: most probable K of the iHMM posterior; Hamming: fraction of steps misassigned "
        "after the best one-to-one matching of states to exercises; CPU s: the fit, all chains, "
        "numba compilation excluded; ms/sweep: sampling CPU per sweep and chain.")
    if res is not None:
        out("hmmlearn: K by held-out log-likelihood (fit on sequences 1, 3, 5, validated on 2, 4, "
            "6: " + ", ".join(f"{k}:{v:.0f}" for k, v in val.items()) + "), refit on all six, "
            "standardised channels.")
    suffix = "_quick" if args.quick else ""
    path = plot(os.path.join(RESULTS, f"mocap6_segmentation{suffix}.png"), labels, lengths, panels,
                actions)
    out("plot: " + (os.path.relpath(path, os.path.dirname(HERE)) if path else
                    "skipped (matplotlib not installed)"))
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"mocap6{suffix}.txt"), "w") as fh:
        fh.write(f"# {command}\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
