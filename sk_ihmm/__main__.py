"""Command line: ``python -m sk_ihmm demo``.

Fits an infinite HMM to the 4-state Gaussian data of Tripuraneni et al.
(2015), generated on the fly, and prints the number of states found, the
held-out log predictive likelihood and the time taken.
"""

import argparse
import sys
import time

import numpy as np


def demo(sampler="rcd_blocked", n_timesteps=2000, n_test=1000, n_burnin=300, n_samples=100,
         n_chains=2, n_jobs=None, random_state=0, max_time=30.0):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from sklearn.metrics import normalized_mutual_info_score

    from . import InfiniteHMM
    from .datasets import make_gaussian_hmm

    X, states = make_gaussian_hmm(n_timesteps + n_test, n_states=4, random_state=random_state)
    X_train, X_test = X[:n_timesteps], X[n_timesteps:]
    model = InfiniteHMM(
        sampler=sampler, emission="gaussian", n_burnin=n_burnin, n_samples=n_samples,
        n_chains=n_chains, n_jobs=n_jobs, random_state=random_state, max_time=max_time,
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # the figures are printed below
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_train)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    score = model.score(X_test)
    t_score = time.perf_counter() - t0
    nmi = normalized_mutual_info_score(states[:n_timesteps], model.predict(X_train))
    k_last = model.trace_["n_states"][:, model.n_burnin_:]
    print(f"data        : 4-state Gaussian HMM (Tripuraneni et al. 2015), "
          f"T_train={n_timesteps}, T_test={n_test}")
    conv = model.convergence_
    print(f"sampler     : {sampler}, {n_chains} chains x {model.n_sweeps_} sweeps "
          f"({conv['n_rounds']} rounds; the last {model.n_sweeps_ - model.n_burnin_} kept)")
    verdict = "converged" if conv["converged"] else "NOT converged (budget reached)"
    print(f"convergence : {verdict}; split R-hat / bulk ESS / tail ESS: " + "; ".join(
        f"{key} {conv[key]['r_hat']:.3f} / {conv[key]['ess_bulk']:.0f} / {conv[key]['ess_tail']:.0f}"
        for key in ("n_states", "log_lik"))
        + f" (targets <= {conv['thresholds']['r_hat_max']}, >= {conv['thresholds']['ess_min']})")
    print(f"states found: {model.n_states_} (representative sample); kept samples: "
          f"median {int(np.median(k_last))}, range {int(k_last.min())}-{int(k_last.max())} (truth: 4)")
    print(f"NMI (train) : {nmi:.3f}")
    print(f"held-out log-likelihood: {score:.1f} ({score / n_test:.3f} per observation, "
          f"perplexity-style exp(-mean) = {np.exp(-score / n_test):.3f})")
    compiling = (f" (of which {conv['compile_seconds']:.0f} s compiling the kernels: once per "
                 "sampler and emission family, later fits load them from numba's cache)"
                 if conv["compile_seconds"] >= 1 else "")
    print(f"time        : fit {t_fit:.1f} s{compiling}, score {t_score:.1f} s")
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m sk_ihmm", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="fit the built-in 4-state Gaussian data")
    d.add_argument("--sampler", default="rcd_blocked")
    d.add_argument("--n-timesteps", type=int, default=2000)
    d.add_argument("--n-burnin", type=int, default=300)
    d.add_argument("--n-samples", type=int, default=100)
    d.add_argument("--n-chains", type=int, default=2)
    d.add_argument("--n-jobs", type=int, default=None,
                   help="chains run at once (default: one thread per chain, up to the cores)")
    d.add_argument("--random-state", type=int, default=0)
    d.add_argument("--max-time", type=float, default=30.0)
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo(sampler=args.sampler, n_timesteps=args.n_timesteps, n_burnin=args.n_burnin,
             n_samples=args.n_samples, n_chains=args.n_chains, n_jobs=args.n_jobs,
             random_state=args.random_state, max_time=args.max_time)
    return 0


if __name__ == "__main__":
    sys.exit(main())
