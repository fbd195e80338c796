"""
Quickstart: states of a 4-state Gaussian HMM
============================================

Fit an infinite HMM to the 4-state data of Tripuraneni et al. (2015), read
the posterior of the number of states and the convergence checks, and colour
the observations by the inferred state. The user guide's
:doc:`/getting_started` explains each step.
"""

import warnings

import matplotlib.pyplot as plt

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import make_gaussian_hmm
from sk_ihmm.metrics import normalized_mutual_information
from sk_ihmm.plotting import plot_states, plot_trace

MAX_TIME = 60       # seconds (the default): fit stops earlier when the chains have converged

X, states = make_gaussian_hmm(1500, n_states=4, random_state=0)

# %%
# Every argument at its default (the time budget spelled out). ``fit`` runs
# 4 chains in rounds until the convergence checks pass; if the budget runs
# out first it raises a ConvergenceWarning, which we print.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = InfiniteHMM(random_state=0, max_time=MAX_TIME).fit(X)
for w in caught:
    print(f"{w.category.__name__}: {w.message}")

report = model.convergence_
print(f"converged: {report['converged']} after {report['n_rounds']} rounds, "
      f"{report['n_sweeps']} sweeps per chain, {report['seconds']:.1f} s")
for key in ("n_states", "log_lik"):
    row = report[key]
    print(f"  {key}: R-hat {row['r_hat']:.3f}, bulk ESS {row['ess_bulk']:.0f}, "
          f"tail ESS {row['ess_tail']:.0f}")

# %%
# The number of states is inferred, so it has a posterior. Data drawn from 4
# states usually give 4 large states; the posterior also gives some mass to
# 5 or more, where one or more extra states take a few observations each.
# ``n_states_`` is the number of states of the *representative* sample: the
# most probable sample among those with the most frequent number of states.
posterior = {k: round(float(p), 2) for k, p in enumerate(model.n_states_posterior_) if p > 0.01}
print("posterior of the number of states:", posterior)
print("states of the representative sample:", model.n_states_)
print("its state means:", model.means_.ravel().round(2), "(true: -2, -0.5, 1, 4)")

pred = model.predict(X)
print("NMI with the true states:", round(normalized_mutual_information(states, pred), 3))

# %%
# The traces of the number of states and of the data's log-likelihood, one
# line per chain (the burn-in of the first round is shaded), and the first
# 300 observations coloured by their most likely state.
fig = plot_trace(model, keys=("n_states", "log_lik"))
plot_states(model, X[:300], states=pred[:300])
plt.show()
