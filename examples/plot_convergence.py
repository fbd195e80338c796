"""
Checking convergence with a deliberately short run
==================================================

``fit`` checks its chains and raises a ``ConvergenceWarning`` when they fail
the checks (split R-hat at most 1.01, bulk and tail effective sample size at
least 100 per chain, for the number of states and the data's
log-likelihood; :doc:`/convergence`). Here we make it fail on purpose with a
single round of 60 sweeps, read the diagnostics, and then continue the same
chains with ``warm_start=True`` until the checks pass.
"""

import warnings

import matplotlib.pyplot as plt

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import make_gaussian_hmm
from sk_ihmm.plotting import plot_trace

MAX_TIME = 30       # seconds for the continued fit

X, _ = make_gaussian_hmm(1000, n_states=4, random_state=0)

# %%
# A short run: 20 burn-in sweeps and 40 kept, one round (``max_time=0``).
model = InfiniteHMM(n_burnin=20, n_samples=40, max_time=0, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model.fit(X)
for w in caught:
    print(f"{w.category.__name__}: {w.message}\n")


def show(model):
    report = model.convergence_
    print(f"converged: {report['converged']}, {report['n_rounds']} round(s), "
          f"{report['n_sweeps']} sweeps per chain; thresholds {report['thresholds']}")
    for key in ("n_states", "log_lik"):
        row = report[key]
        print(f"  {key:9s} R-hat {row['r_hat']:.3f}  bulk ESS {row['ess_bulk']:6.0f}  "
              f"tail ESS {row['ess_tail']:6.0f}")


show(model)

# %%
# The table of :meth:`~sk_ihmm.InfiniteHMM.diagnostics` covers every traced
# quantity of the kept sweeps, with the autocorrelation time ``act`` in
# sweeps (0.5 for independent draws).
print(model.diagnostics())

# %%
# The traces of the four chains show what the figures say: after 60 sweeps
# the chains still disagree about the number of states.
fig = plot_trace(model, keys=("n_states", "log_lik"))

# %%
# Continue the same chains: ``warm_start=True`` keeps their states, random
# generators and samples; ``n_burnin=0`` throws away no new sweep. The
# continued fit runs rounds until the checks pass or ``MAX_TIME`` runs out.
model.set_params(warm_start=True, n_burnin=0, max_time=MAX_TIME)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model.fit(X)
print(f"{len(caught)} warning(s)")
show(model)
print("posterior of the number of states:",
      {k: round(float(p), 2) for k, p in enumerate(model.n_states_posterior_) if p > 0.01})
fig = plot_trace(model, keys=("n_states", "log_lik"))
plt.show()
