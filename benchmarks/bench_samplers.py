"""Cost and convergence of the samplers on the PGAS paper's synthetic data.

For each data set (T=4000, 4 and 10 Gaussian states) and sampler, one chain
starts from ``K_init`` uniformly random states and runs for a CPU budget.
Reported per run:

* ``ms/sweep``: mean CPU ms per sweep over the last quarter of the run, and
  ``FFBS ms``: a numba forward-filtering backward-sampling pass at the same K
  (the number of states at the end), measured in the same process;
* ``ratio``: ms/sweep divided by FFBS ms. K changes during the run, so
  this compares with an FFBS pass at the *final* K only;
* ``settled``, ``K_s``, ``FFBS_s``, ``ratio_s``: the cost where the chain
  has arrived, which the issues' goals ask for (an FFBS pass at the same
  K): after the budget, the least wall ms per sweep over 10 chunks of 20
  further sweeps, the median K over the chunks, an FFBS pass at that K, and
  their ratio; ``ratio_m``: the same ratio with the reference pass at the
  K of each sweep, timed right after each chunk (median over the chunks;
  the two differ where K fluctuates or the machine's speed drifts)
  (:func:`bench_ffbs_reference.settled_cost`);
* ``settle``: first sweep (and CPU seconds) from which K stays within one of
  the truth for the rest of the run (``-`` if never);
* ``NMI``: normalised mutual information of the final state sequence with the
  truth; ``K_end``: final number of states;
* ``IAT K`` / ``IAT LL``: integrated autocorrelation time (Makino et al. Eq.
  35-36, Geyer's initial monotone sequence) of the number of states and of
  the joint log-likelihood over the second half of the run, in sweeps, in
  Makino's convention (``1/2 + sum of autocorrelations``: 0.5 for
  independent draws; ``nan`` for a constant trace, e.g. K stuck at one
  value), and ``s/indep``: CPU seconds per independent draw of the joint
  log-likelihood (``2 IAT LL`` x seconds per sweep), the figure that compares
  samplers;
* ``accept``: acceptance rate of the sampler's move (per block for the
  blocked samplers, per step for Gibbs); ``visited``: states kept per step by
  the beam (``rcd_beam``; ``split_merge`` only on ``base_sampler="rcd_beam"``,
  its default before 2026-12-07).

A last row per data set fits hmmlearn's ``GaussianHMM`` (best of 3 EM
restarts) for K in a grid around the truth on the even tenths of the
sequence, picks K by the log-likelihood of the odd tenths, and reports the
NMI of its Viterbi path (skipped without hmmlearn).

Usage::

    python benchmarks/bench_samplers.py [--samplers rcd_gibbs rcd_beam ...]
        [--budget 20] [--k-init 30] [--kappa 0] [--lambda0 0.01]
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_ffbs_reference import ffbs_ms_per_pass, settled_cost  # noqa: E402
from sk_ihmm._chain import make_problem  # noqa: E402
from sk_ihmm.datasets import make_gaussian_hmm  # noqa: E402
from sk_ihmm.emissions import Gaussian  # noqa: E402
from sk_ihmm.metrics import integrated_autocorrelation_time, normalized_mutual_information  # noqa: E402,E501
from sk_ihmm.samplers import SAMPLERS, get_sampler  # noqa: E402


def gaussian_problem(X, kappa=0.0, kappa_prior=False, options=None, lambda0=None):
    """1-d Gaussian problem; ``lambda0`` overrides the package's default prior."""
    family = Gaussian() if lambda0 is None else Gaussian(lambda0=lambda0)
    return make_problem(family, X, 1, conc0=(1.0, 1.0, kappa),
                        resample=(True, True, bool(kappa_prior)), options=options)


def run(sampler, X, truth, k_true, budget, k_init, seed=0, kappa=0.0, options=None,
        lambda0=None):
    prob = gaussian_problem(X, kappa=kappa, kappa_prior=kappa > 0, options=options,
                            lambda0=lambda0)
    smp = get_sampler(sampler)
    rng = np.random.default_rng(seed)
    x0 = rng.integers(1, k_init + 1, X.shape[0]).astype(np.int64)
    state = smp.init(prob, x0, rng)
    smp.step(state, prob, rng)  # compile outside the budget
    ks, secs, infos, lls = [], [], [], []
    t0 = time.process_time()
    while time.process_time() - t0 < budget:
        infos.append(smp.step(state, prob, rng))
        ks.append(len(np.unique(state.x)))
        lls.append(state.log_joint)
        secs.append(time.process_time() - t0)
    ks, secs, lls = np.array(ks), np.array(secs), np.array(lls)
    n = len(ks)
    q = max(1, n // 4)
    ms = (secs[-1] - secs[-q - 1]) / q * 1e3 if n > q else secs[-1] / n * 1e3
    ok = np.abs(ks - k_true) <= 1
    settle = next((i for i in range(n) if ok[i:].all()), None)
    acc = np.mean([i.get("accept_rate", np.nan) for i in infos[-q:]])
    visited = np.mean([i.get("states_visited", np.nan) for i in infos[-q:]])
    half = slice(n // 2, None)
    iat_k = _iat(ks[half])
    iat_ll = _iat(lls[half])
    cost = settled_cost(smp, state, prob, rng)
    return {**cost,
        "iat_k": iat_k, "iat_ll": iat_ll, "s_indep": 2 * iat_ll * ms / 1e3, "visited": visited,
        "sweeps": n, "ms": ms, "K_end": int(ks[-1]),
        "settle": settle, "settle_s": None if settle is None else float(secs[settle]),
        "nmi": normalized_mutual_information(truth, state.x), "accept": acc,
    }


def _iat(x):
    """IAT in sweeps (Makino's convention); nan when constant or too short."""
    x = np.asarray(x, float)
    if x.size < 20 or np.ptp(x) == 0:
        return float("nan")
    return float(integrated_autocorrelation_time(x))


def hmmlearn_row(X, z, k_true):
    """hmmlearn GaussianHMM with K chosen on held-out tenths: (K, CPU s, NMI) or None."""
    from bench_real import _hmmlearn, block_split, hmm_fit, hmm_select
    hmm = _hmmlearn()
    if hmm is None:
        return None
    t0 = time.process_time()
    (fit_idx, fit_len), (val_idx, val_len) = block_split(X.shape[0])
    grid = sorted({max(2, k_true + d) for d in (-2, -1, 0, 1, 2, 4)})
    K, _ = hmm_select(hmm, "gaussian", grid, X[fit_idx], X[val_idx], fit_len, val_len)
    model = hmm_fit(hmm, "gaussian", K, X)
    nmi = normalized_mutual_information(z, model.predict(X))
    return K, time.process_time() - t0, nmi


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samplers", nargs="+", default=[s for s in
                    ("rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge", "pgas") if s in SAMPLERS])
    ap.add_argument("--budget", type=float, default=20.0, help="CPU seconds per run")
    ap.add_argument("--k-init", type=int, default=30)
    ap.add_argument("--kappa", type=float, default=0.0)
    ap.add_argument("--T", type=int, default=4000)
    ap.add_argument("--lambda0", type=float, default=None,
                    help="lambda0 of the package's data-scaled Gaussian prior (default: the "
                         "package's, 0.01; it was 0.1 before 2026-12-07)")
    args = ap.parse_args(argv)
    print(f"# python benchmarks/bench_samplers.py --budget {args.budget} --k-init {args.k_init} "
          f"--kappa {args.kappa} --T {args.T} --samplers {' '.join(args.samplers)}"
          + ("" if args.lambda0 is None else f" --lambda0 {args.lambda0}"))
    print(f"{'data':8} {'sampler':12} {'sweeps':>6} {'ms/sweep':>9} {'FFBS ms':>8} {'ratio':>6} "
          f"{'K_end':>5} {'settle':>12} {'NMI':>5} {'IAT K':>6} {'IAT LL':>7} {'s/indep':>7} "
          f"{'accept':>6} {'visited':>7} {'settled':>7} {'K_s':>3} {'FFBS_s':>6} {'ratio_s':>7} "
          f"{'ratio_m':>7}")
    for k_true in (4, 10):
        X, z = make_gaussian_hmm(args.T, n_states=k_true, random_state=0)
        for name in args.samplers:
            r = run(name, X, z, k_true, args.budget, args.k_init, kappa=args.kappa,
                    lambda0=args.lambda0)
            ffbs = ffbs_ms_per_pass(args.T, r["K_end"])
            settle = "-" if r["settle"] is None else f"{r['settle']} ({r['settle_s']:.1f}s)"
            print(f"{k_true}-state  {name:12} {r['sweeps']:6d} {r['ms']:9.2f} {ffbs:8.2f} "
                  f"{r['ms'] / ffbs:6.1f} {r['K_end']:5d} {settle:>12} {r['nmi']:5.3f} "
                  f"{r['iat_k']:6.1f} {r['iat_ll']:7.1f} {r['s_indep']:7.3f} "
                  f"{r['accept']:6.3f} {r['visited']:7.2f} {r['cost_ms']:7.3f} {r['cost_K']:3d} "
                  f"{r['ffbs_ms']:6.3f} {r['cost_ms'] / r['ffbs_ms']:7.2f} "
                  f"{r['ratio_matched']:7.2f}", flush=True)
        ref = hmmlearn_row(X, z, k_true)
        if ref is None:
            print(f"{k_true}-state  {'hmmlearn':12} skipped (hmmlearn not installed)")
        else:
            print(f"{k_true}-state  {'hmmlearn':12} {'EM':>6} {'':9} {'':8} {'':6} {ref[0]:5d} "
                  f"{f'{ref[1]:.1f}s CPU':>12} {ref[2]:5.3f}   (GaussianHMM, K by held-out LL)",
                  flush=True)


if __name__ == "__main__":
    main()
