"""
Segmenting switching dynamics
=============================

A two-dimensional signal that switches, every 50 steps or so, between three
regimes of stable linear dynamics (from :func:`~sk_ihmm.datasets.make_ar_hmm`):
one oscillates fast, the others drift slowly about overlapping levels. What
tells the regimes apart is how each step follows from the one before, not
where the signal is, as in motion capture or animal behaviour. A Gaussian
per state cuts a slowly drifting regime into several states, one per stretch
of its path. The autoregressive family
(:class:`~sk_ihmm.emissions.AutoRegressive`) gives each state its own
dynamics ``y_t = A_k [y_{t-1}; 1] + e_t`` and, with a sticky ``kappa`` (the
sticky HDP-AR-HMM of Fox et al., 2011), recovers the regimes. We fit both
with the same budget and compare the number of states, the agreement with
the true regimes and the held-out likelihood.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import make_ar_hmm
from sk_ihmm.metrics import normalized_mutual_information

N_TRAIN = 1500
MAX_TIME = 15       # seconds per fit

X, states = make_ar_hmm(N_TRAIN + 500, n_states=3, n_features=2, spectral_radius=0.97,
                        noise_scale=0.2, random_state=2)
X_train, X_test = X[:N_TRAIN], X[N_TRAIN:]

settings = {
    "Gaussian": dict(emission="gaussian"),
    "autoregressive": dict(emission="autoregressive"),
}
models, estimates = {}, {}
for name, extra in settings.items():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # convergence is printed below
        model = InfiniteHMM(kappa=10.0, kappa_prior=(1.0, 0.1), max_time=MAX_TIME,
                            random_state=0, **extra).fit(X_train)
    models[name] = model
    estimates[name] = z = model.point_estimate()
    # the autoregressive family does not score the first step (a conditioning
    # value): compare per scored step
    n_scored = len(X_test) - (1 if name == "autoregressive" else 0)
    print(f"{name}:")
    print(f"  converged {model.convergence_['converged']}, "
          f"most probable K = {int(np.argmax(model.n_states_posterior_))}")
    print(f"  NMI of the point estimate with the truth: "
          f"{normalized_mutual_information(states[:N_TRAIN], z):.3f}")
    print(f"  held-out log-likelihood per step: {model.score(X_test) / n_scored:.3f}")

coefs = models["autoregressive"].coefs_
print("fitted dynamics A_k (lag-1 block) of the autoregressive states:")
for k, c in enumerate(coefs):
    print(f"  state {k}: {np.round(c[:, :2], 2).tolist()}, spectral radius "
          f"{np.max(np.abs(np.linalg.eigvals(c[:, :2]))):.2f}")

# %%
# The first column of the signal, coloured by the true regimes and by the
# point estimate of each model (least-squares clustering of the kept
# samples; the colours of different panels are unrelated labels): the
# Gaussian states follow the level of the signal, the autoregressive states
# its dynamics.
t = np.arange(min(600, N_TRAIN))
fig, axes = plt.subplots(3, 1, figsize=(8, 6), sharex=True)
rows = [("true regimes", states[t])] + [(name, estimates[name][t]) for name in settings]
for ax, (title, labels) in zip(axes, rows):
    ax.plot(t, X_train[t, 0], color="0.7", lw=0.8)
    ax.scatter(t, X_train[t, 0], c=labels, cmap="tab10", s=6, vmin=0, vmax=9)
    ax.set_title(title, fontsize=10)
axes[-1].set_xlabel("time step")
fig.tight_layout()
plt.show()
