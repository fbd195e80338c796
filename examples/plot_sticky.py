"""
Sticky against non-sticky
=========================

Four states whose means are 1.5 apart with noise of standard deviation 1, so
neighbouring states overlap, and a 97% chance of staying in the current
state. The plain HDP-HMM can explain a long stay with several similar states
it switches between; the sticky HDP-HMM (Fox et al., 2008) adds weight
``kappa`` to every self-transition, learnt here under a Gamma(1, 0.1) prior
(:doc:`/sticky`). We fit both with the same budget and compare the posterior
of the number of states, the agreement with the true states and the held-out
likelihood.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import make_gaussian_hmm
from sk_ihmm.metrics import normalized_mutual_information

N_TRAIN = 2000
MAX_TIME = 15       # seconds per fit

X, states = make_gaussian_hmm(N_TRAIN + 500, n_states=4, self_transition=0.97, sd=1.0,
                              random_state=1)
X_train, X_test = X[:N_TRAIN], X[N_TRAIN:]

settings = {
    "plain (kappa = 0)": dict(),
    "sticky (kappa learnt)": dict(kappa=10.0, kappa_prior=(1.0, 0.1)),
}
models = {}
for name, extra in settings.items():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # convergence is printed below
        models[name] = InfiniteHMM(max_time=MAX_TIME, random_state=0, **extra).fit(X_train)
    model = models[name]
    p = model.n_states_posterior_
    z = model.point_estimate()
    print(f"{name}:")
    print(f"  converged {model.convergence_['converged']}, kappa_ = {model.kappa_:.1f}")
    print(f"  P(K <= 5) = {p[:6].sum():.2f}, most probable K = {int(np.argmax(p))}")
    print(f"  NMI of the point estimate with the truth: "
          f"{normalized_mutual_information(states[:N_TRAIN], z):.3f}")
    print(f"  held-out log-likelihood per step: {model.score(X_test) / len(X_test):.4f}")

# %%
# The sticky model concentrates the posterior on fewer states; the
# agreement with the true states and the held-out likelihood change little
# in this case. The bars show the two posteriors of the number of states.
fig, ax = plt.subplots(figsize=(7, 3.5))
for i, (name, model) in enumerate(models.items()):
    p = model.n_states_posterior_
    ax.bar(np.arange(len(p)) + 0.4 * i - 0.2, p, width=0.4, label=name)
ax.axvline(4, color="k", ls=":", lw=1)
ax.set(xlabel="number of states", ylabel="posterior probability")
ax.legend()
plt.show()
