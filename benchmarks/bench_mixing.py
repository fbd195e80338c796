"""Mixing at equilibrium: how fast each sampler moves the number of states.

``bench_reach.py`` times the first visit of K == K_true from a random start,
which mixes two things: how fast a chain leaves the initial labels and how
fast it moves K once it is where the posterior is. This benchmark measures the
second alone. Every chain starts at the *true* labels of the PGAS paper's
synthetic data (T=4000, 4 or 10 Gaussian states; the model of
:func:`bench_pgas_paper.make_problem`, non-sticky, alpha and gamma
resampled), runs ``--burn`` sweeps, then ``--sweeps`` recorded sweeps.
``pgas`` runs with N=10 particles (the default) and, as ``pgas/N3`` and
``pgas/N50``, with 3 and 50, to show how much of its mixing depends on the
number of particles.

Printed per (data, prior, sampler), medians over ``--seeds`` chains:

* ``ms/sw``: CPU ms per recorded sweep;
* ``mean K``, ``P(K=Kt)``: mean number of states and fraction of sweeps at
  the true K, pooled over the chains. All samplers target the same posterior,
  so these agree up to Monte-Carlo error (a check on large problems that the
  exact-enumeration tests cannot make);
* ``IAT K``, ``IAT LL``: integrated autocorrelation time in sweeps (Makino et
  al. Eq. 35-36, Geyer's initial monotone sequence; 0.5 for independent
  draws) of K and of the emission log marginal likelihood ``sum_k log p(y_k)``
  of the labels (the same function of the labels for every sampler);
* ``s/ind K``, ``s/ind LL``: CPU seconds per independent draw, ``2 IAT x``
  seconds per sweep: the figure that compares samplers.

K moves slowly (autocorrelation times of tens to hundreds of sweeps on the
10-state data), so runs much shorter than the default 10,000 sweeps give
noisy and low estimates; with 3,000 they changed the order of samplers.

Usage::

    python benchmarks/bench_mixing.py [--seeds 3] [--burn 200] [--sweeps 10000]
        [--jobs 2] [--priors weak paper] [--states 4 10]
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_pgas_paper import PRIORS, SAMPLER_OPTIONS, make_problem  # noqa: E402
from bench_reach import map_tasks  # noqa: E402
from sk_ihmm.datasets import make_gaussian_hmm  # noqa: E402
from sk_ihmm.emissions import log_marginal_sum  # noqa: E402
from sk_ihmm.metrics import integrated_autocorrelation_time  # noqa: E402
from sk_ihmm.samplers import SAMPLERS, get_sampler  # noqa: E402

T = 4000
#: variants beyond the registered samplers: name -> (sampler, options)
VARIANTS = {
    "pgas/N3": ("pgas", {"n_particles": 3, "proposal": "posterior"}),
    "pgas/N50": ("pgas", {"n_particles": 50, "proposal": "posterior"}),
}


def _spec(name):
    if name in VARIANTS:
        return VARIANTS[name]
    return name, SAMPLER_OPTIONS.get(name, {})


def run_chain(name, k_true, prior, seed, burn, sweeps):
    """Traces of K and of the emission log marginal, and CPU s per sweep, of
    one chain started at the true labels."""
    X, z = make_gaussian_hmm(T, n_states=k_true, random_state=0)
    sampler, options = _spec(name)
    prob = make_problem(X, False, options, prior)
    smp = get_sampler(sampler)
    rng = np.random.default_rng([seed, k_true, 11])
    state = smp.init(prob, np.asarray(z, dtype=np.int64) + 1, rng)
    for _ in range(burn):      # compiles on the first sweep
        smp.step(state, prob, rng)
    ks = np.empty(sweeps)
    ll = np.empty(sweeps)
    cpu = 0.0
    for i in range(sweeps):
        t0 = time.process_time()
        smp.step(state, prob, rng)
        cpu += time.process_time() - t0
        ks[i] = np.unique(state.x).shape[0]
        ll[i] = log_marginal_sum(prob.fam, state.stats, prob.hyp)
    return ks, ll, cpu / sweeps


def _iat(x):
    return integrated_autocorrelation_time(x) if np.ptp(x) > 0 else np.nan


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--burn", type=int, default=200)
    ap.add_argument("--sweeps", type=int, default=10000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--priors", nargs="+", choices=list(PRIORS), default=list(PRIORS))
    ap.add_argument("--states", nargs="+", type=int, choices=(4, 10), default=[4, 10])
    ap.add_argument("--samplers", nargs="+", default=list(SAMPLERS) + list(VARIANTS))
    args = ap.parse_args(argv)
    print(f"# python benchmarks/bench_mixing.py --seeds {args.seeds} --burn {args.burn} "
          f"--sweeps {args.sweeps} --jobs {args.jobs} --priors {' '.join(args.priors)} "
          f"--states {' '.join(map(str, args.states))} --samplers {' '.join(args.samplers)}")
    for p in args.priors:
        pr = ", ".join(f"{k}={v:g}" for k, v in PRIORS[p].items())
        print(f"# prior {p}: Gaussian({pr})")
    print("# chains start at the true labels; medians over seeds of ms/sweep, IAT (sweeps) "
          "and CPU s per independent draw; mean K and P(K=Kt) pooled")
    tasks = [(name, k, p, seed, args.burn, args.sweeps)
             for k in args.states for p in args.priors
             for name in args.samplers for seed in range(args.seeds)]
    t0 = time.time()
    done = map_tasks(run_chain, tasks, args.jobs)
    head = (f"{'data':>4} {'prior':>5} {'sampler':<12} {'ms/sw':>6} {'mean K':>6} "
            f"{'P(K=Kt)':>7} {'IAT K':>6} {'IAT LL':>6} {'s/ind K':>7} {'s/ind LL':>8}")
    for k in args.states:
        for p in args.priors:
            print(head)
            for name in args.samplers:
                res = [done[(name, k, p, s, args.burn, args.sweeps)] for s in range(args.seeds)]
                ks = np.concatenate([r[0] for r in res])
                ms = np.median([r[2] for r in res]) * 1e3
                iat_k = np.median([_iat(r[0]) for r in res])
                iat_ll = np.median([_iat(r[1]) for r in res])
                print(f"{k:4d} {p:>5} {name:<12} {ms:6.3f} {ks.mean():6.2f} "
                      f"{np.mean(ks == k):7.3f} {iat_k:6.1f} {iat_ll:6.1f} "
                      f"{2 * iat_k * ms / 1e3:7.3f} {2 * iat_ll * ms / 1e3:8.3f}", flush=True)
    print(f"# wall time {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
