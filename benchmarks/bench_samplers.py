"""Cost and convergence of the samplers on the PGAS paper's synthetic data.

For each data set (T=4000, 4 and 10 Gaussian states) and sampler, one chain
starts from ``K_init`` uniformly random states and runs for a CPU budget.
Reported per run:

* ``ms/sweep``: mean CPU ms per sweep over the last quarter of the run, and
  ``FFBS ms``: a numba forward-filtering backward-sampling pass at the same K
  (the number of states at the end), measured in the same process;
* ``ratio``: ms/sweep divided by FFBS ms (the issues' goals are ratios);
* ``settle``: first sweep (and CPU seconds) from which K stays within one of
  the truth for the rest of the run (``-`` if never);
* ``NMI``: normalised mutual information of the final state sequence with the
  truth; ``K_end``: final number of states.

Usage::

    python benchmarks/bench_samplers.py [--samplers rcd_gibbs rcd_beam ...]
        [--budget 20] [--k-init 30] [--kappa 0]
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_ffbs_reference import ffbs_ms_per_pass  # noqa: E402
from sk_ihmm._chain import make_problem  # noqa: E402
from sk_ihmm.datasets import make_gaussian_hmm  # noqa: E402
from sk_ihmm.emissions import Gaussian  # noqa: E402
from sk_ihmm.metrics import normalized_mutual_information  # noqa: E402
from sk_ihmm.samplers import SAMPLERS, get_sampler  # noqa: E402


def gaussian_problem(X, kappa=0.0, kappa_prior=False, options=None):
    return make_problem(Gaussian(), X, 1, conc0=(1.0, 1.0, kappa),
                        resample=(True, True, bool(kappa_prior)), options=options)


def run(sampler, X, truth, k_true, budget, k_init, seed=0, kappa=0.0, options=None):
    prob = gaussian_problem(X, kappa=kappa, kappa_prior=kappa > 0, options=options)
    smp = get_sampler(sampler)
    rng = np.random.default_rng(seed)
    x0 = rng.integers(1, k_init + 1, X.shape[0]).astype(np.int64)
    state = smp.init(prob, x0, rng)
    smp.step(state, prob, rng)  # compile outside the budget
    ks, secs, infos = [], [], []
    t0 = time.process_time()
    while time.process_time() - t0 < budget:
        infos.append(smp.step(state, prob, rng))
        ks.append(len(np.unique(state.x)))
        secs.append(time.process_time() - t0)
    ks, secs = np.array(ks), np.array(secs)
    n = len(ks)
    q = max(1, n // 4)
    ms = (secs[-1] - secs[-q - 1]) / q * 1e3 if n > q else secs[-1] / n * 1e3
    ok = np.abs(ks - k_true) <= 1
    settle = next((i for i in range(n) if ok[i:].all()), None)
    acc = np.mean([i.get("accept_rate", np.nan) for i in infos[-q:]])
    return {
        "sweeps": n, "ms": ms, "K_end": int(ks[-1]),
        "settle": settle, "settle_s": None if settle is None else float(secs[settle]),
        "nmi": normalized_mutual_information(truth, state.x), "accept": acc,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samplers", nargs="+", default=[s for s in
                    ("rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge", "pgas") if s in SAMPLERS])
    ap.add_argument("--budget", type=float, default=20.0, help="CPU seconds per run")
    ap.add_argument("--k-init", type=int, default=30)
    ap.add_argument("--kappa", type=float, default=0.0)
    ap.add_argument("--T", type=int, default=4000)
    args = ap.parse_args(argv)
    print(f"# python benchmarks/bench_samplers.py --budget {args.budget} --k-init {args.k_init} "
          f"--kappa {args.kappa} --T {args.T} --samplers {' '.join(args.samplers)}")
    print(f"{'data':8} {'sampler':12} {'sweeps':>6} {'ms/sweep':>9} {'FFBS ms':>8} {'ratio':>6} "
          f"{'K_end':>5} {'settle':>12} {'NMI':>5} {'accept':>6}")
    for k_true in (4, 10):
        X, z = make_gaussian_hmm(args.T, n_states=k_true, random_state=0)
        for name in args.samplers:
            r = run(name, X, z, k_true, args.budget, args.k_init, kappa=args.kappa)
            ffbs = ffbs_ms_per_pass(args.T, r["K_end"])
            settle = "-" if r["settle"] is None else f"{r['settle']} ({r['settle_s']:.1f}s)"
            print(f"{k_true}-state  {name:12} {r['sweeps']:6d} {r['ms']:9.2f} {ffbs:8.2f} "
                  f"{r['ms'] / ffbs:6.1f} {r['K_end']:5d} {settle:>12} {r['nmi']:5.3f} "
                  f"{r['accept']:6.3f}", flush=True)


if __name__ == "__main__":
    main()
