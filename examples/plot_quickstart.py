"""
Quickstart: states of a 4-state Gaussian HMM
============================================

Fit an infinite HMM to the 4-state data of Tripuraneni et al. (2015), look at
the number of states per sweep and colour the observations by the inferred
state.
"""

import matplotlib.pyplot as plt
import numpy as np

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import make_gaussian_hmm
from sk_ihmm.metrics import normalized_mutual_information

X, states = make_gaussian_hmm(1500, n_states=4, random_state=0)
# every argument at its default, except a shorter time budget for the gallery
model = InfiniteHMM(random_state=0, max_time=20).fit(X)
pred = model.predict(X)
print("states found:", model.n_states_)
print("posterior of the number of states:",
      {k: round(p, 2) for k, p in enumerate(model.n_states_posterior_) if p > 0.01})
print("convergence:", {k: model.convergence_[k] for k in ("n_states", "log_lik", "converged")})
print("NMI vs truth:", round(normalized_mutual_information(states, pred), 3))

fig, (ax0, ax1) = plt.subplots(2, 1, figsize=(9, 5), constrained_layout=True)
for c in range(model.trace_["n_states"].shape[0]):
    ax0.plot(model.trace_["n_states"][c], label=f"chain {c}")
ax0.set(xlabel="sweep", ylabel="number of states")
ax0.legend()
t = np.arange(400)
ax1.scatter(t, X[:400, 0], c=pred[:400], cmap="tab10", s=8)
ax1.set(xlabel="time step", ylabel="observation", title="observations coloured by inferred state")
plt.show()
