"""Per-sweep CPU time of the AutoRegressive family beside the full-covariance Gaussian at the same K and T.

rcd_blocked from the true labels, concentrations fixed (kappa=5), 5 warm-up
sweeps (compilation), then 200 timed sweeps with ``time.process_time``; data
``ar`` (make_ar_hmm) or ``gauss`` (make_multivariate_gaussian_hmm: both
families keep the true K there, so the comparison is at the same K).

Usage::

    taskset -c 1 python benchmarks/bench_ar_cost.py T K D {ar,gauss}
"""
import sys
import time

import numpy as np

from sk_ihmm._chain import make_problem, run_chain
from sk_ihmm.datasets import make_ar_hmm, make_multivariate_gaussian_hmm
from sk_ihmm.emissions import AutoRegressive, MultivariateGaussian

T, K, D = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
if sys.argv[4] == "ar":
    X, z = make_ar_hmm(T, n_states=K, n_features=D, random_state=0)
else:
    X, z = make_multivariate_gaussian_hmm(T, n_states=K, n_features=D, random_state=0)
x0 = (z + 1).astype(np.int64)
for fam in (AutoRegressive(order=1), MultivariateGaussian()):
    Y = fam.prepare(X, np.array([0]), np.array([T]))
    prior = fam.resolve_prior(Y, fam.dimension(Y))
    prob = make_problem(fam, Y, fam.dimension(Y), [T], conc0=(1.0, 1.0, 5.0),
                        priors=((1.0, 1.0), (1.0, 1.0), (1.0, 1.0)), resample=(False, False, False),
                        options={}, emission_prior=prior, missing=bool(np.isnan(Y[:, 0]).any()))
    run_chain("rcd_blocked", prob, x0, 0, 5, 1, np.random.SeedSequence(0))      # compile
    t = time.process_time()
    out = run_chain("rcd_blocked", prob, x0, 0, 200, 1, np.random.SeedSequence(1))
    dt = (time.process_time() - t) / 200
    ks = out["trace"]["n_states"]
    print(f"{sys.argv[4]} data: {type(fam).__name__:22s} T={T} D={D} K_true={K}: {1e3 * dt:.2f} ms/sweep, K over the sweeps {ks.min()}-{ks.max()} (mean {ks.mean():.1f})")
