"""CPU time to reach the true number of states, per sampler, over several seeds.

Issue 5 asks whether ``pgas`` "reaches the true K faster in CPU time than
every other sampler". One chain per setting (as in ``bench_pgas_paper.py``)
is too noisy for that, so here every (data, K_init, sampler) runs ``--seeds``
chains. Each chain starts from uniform random labels over ``K_init`` states
(the same labels for every sampler of a seed) and stops at the first sweep
with K == K_true, or after ``--cap`` CPU seconds. The model is the PGAS-paper
benchmark's (:func:`bench_pgas_paper.make_problem`: weak prior ``lambda0 =
0.01``, alpha and gamma resampled, non-sticky unless ``--sticky``); pgas runs with N=10 particles
and the posterior proposal. JIT compilation happens on a throw-away chain
before the clock starts.

``--prior paper`` uses the emission prior that approximates the paper's
model instead (known sd 0.5, means ~ N(0, 2^2); ``bench_pgas_paper.PRIORS``);
``--sticky`` runs the sticky model (``kappa`` resampled).
``benchmarks/results/reach.txt``, ``reach_paperprior.txt`` and
``reach_sticky.txt`` hold the three.

Printed per setting: for each sampler the median CPU seconds to K_true over
the seeds (``-`` for a chain that did not get there within the cap, counted
as infinite) and the seeds' values, then which sampler has the least median.

Usage::

    python benchmarks/bench_reach.py [--seeds 3] [--cap 10] [--jobs 2]
        [--samplers pgas rcd_gibbs rcd_blocked rcd_beam split_merge] [--prior weak|paper] [--sticky]
"""

import argparse
import os
import sys
import time
from multiprocessing import get_context

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_pgas_paper import PRIORS, SAMPLER_OPTIONS, make_problem  # noqa: E402
from sk_ihmm.datasets import make_gaussian_hmm  # noqa: E402
from sk_ihmm.samplers import get_sampler  # noqa: E402

T = 4000
SAMPLERS = ["pgas", "rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge"]


def time_to_k(name, k_true, k_init, seed, cap, prior="weak", sticky=False):
    """CPU seconds and sweeps to the first sweep with K == k_true (None if not
    within ``cap`` CPU seconds)."""
    X, _ = make_gaussian_hmm(T, n_states=k_true, random_state=0)
    prob = make_problem(X, sticky, SAMPLER_OPTIONS[name], prior)
    smp = get_sampler(name)
    x0 = np.random.default_rng([seed, k_true, k_init]).integers(1, k_init + 1, T)
    x0 = x0.astype(np.int64)
    warm = np.random.default_rng(1)
    smp.step(smp.init(prob, x0.copy(), warm), prob, warm)      # compile
    rng = np.random.default_rng([seed, 7])
    state = smp.init(prob, x0.copy(), rng)
    t0 = time.process_time()
    sweeps = 0
    while time.process_time() - t0 < cap:
        smp.step(state, prob, rng)
        sweeps += 1
        if np.unique(state.x).shape[0] == k_true:
            return time.process_time() - t0, sweeps
    return None, sweeps


def _call(job):
    func, args = job
    return args, func(*args)


def map_tasks(func, tasks, jobs):
    """``{task: func(*task)}`` for every tuple in ``tasks``, in a pool of
    ``jobs`` spawned processes when ``jobs > 1`` (``func`` must be a
    module-level function)."""
    work = [(func, t) for t in tasks]
    if jobs > 1:
        with get_context("spawn").Pool(jobs) as pool:
            return dict(pool.map(_call, work, chunksize=1))
    return dict(map(_call, work))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cap", type=float, default=10.0, help="CPU seconds per chain")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--samplers", nargs="+", default=SAMPLERS)
    ap.add_argument("--prior", choices=list(PRIORS), default="weak",
                    help="emission prior of bench_pgas_paper: weak (default) or paper")
    ap.add_argument("--sticky", action="store_true",
                    help="sticky model: kappa resampled (Gamma(1, 1), start 1) instead of kappa = 0")
    args = ap.parse_args(argv)
    print(f"# python benchmarks/bench_reach.py --seeds {args.seeds} --cap {args.cap} "
          f"--jobs {args.jobs} --samplers {' '.join(args.samplers)} --prior {args.prior}"
          + (" --sticky" if args.sticky else ""))
    pr = ", ".join(f"{k}={v:g}" for k, v in PRIORS[args.prior].items())
    print(f"# emission prior Gaussian({pr})")
    print("# CPU seconds to the first sweep with K == K_true: median over seeds "
          "(seeds' values); '-' = not within the cap")
    tasks = [(name, k_true, k_init, seed, args.cap, args.prior, args.sticky)
             for k_true in (4, 10) for k_init in (3, 30)
             for seed in range(args.seeds) for name in args.samplers]
    t0 = time.time()
    done = map_tasks(time_to_k, tasks, args.jobs)
    for k_true in (4, 10):
        for k_init in (3, 30):
            cells, medians = [], {}
            for name in args.samplers:
                vals = [done[(name, k_true, k_init, s, args.cap, args.prior, args.sticky)][0] for s in range(args.seeds)]
                secs = [np.inf if v is None else v for v in vals]
                medians[name] = float(np.median(secs))
                shown = ", ".join("-" if v is None else f"{v:.2f}" for v in vals)
                med = "-" if not np.isfinite(medians[name]) else f"{medians[name]:.2f}"
                cells.append(f"{name} {med} ({shown})")
            least = min(medians.values())
            best = (", ".join(n for n, m in medians.items() if m == least)
                    if np.isfinite(least) else "none within the cap")
            print(f"{k_true:2d}-state K_init={k_init:2d}: " + " | ".join(cells)
                  + f"  -> least: {best}", flush=True)
    print(f"# wall time {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
