"""
Segmenting an ion-channel recording
===================================

A patch-clamp recording follows the current through a single ion channel
as it opens and closes. Tripuraneni et al. (2015, Figure 6) segment 2,000
samples of such a recording with an infinite HMM. We fit the same stretch
of DC-Progs' sample recording ``test2.abf`` (every 100th sample), read by
:func:`sk_ihmm.datasets.load_ion_channel` from the data folder (set
``SK_IHMM_DATA`` to the folder holding ``ion_channel_sctrace_test2_sub100.txt``;
the script says so and stops if it is missing).

The current is in pA and is not rescaled: the default prior is scaled to
the data. States persist for many samples, so we also fit the sticky model
(:doc:`/sticky`) and compare.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import DataNotAvailable, load_ion_channel
from sk_ihmm.plotting import plot_states

N = 2000            # samples, as in the paper
MAX_TIME = 20       # seconds per fit

try:
    X = load_ion_channel("sctrace_test2_sub100", n=N)
except DataNotAvailable as exc:
    print(f"Skipping this example: {exc}")
    X = None

# %%
# Fit the plain and the sticky model with the same budget. A
# ConvergenceWarning, if any, is printed rather than raised.
if X is not None:
    print(f"{X.shape[0]} samples, current from {X.min():.2f} to {X.max():.2f} pA")
    models = {}
    for name, extra in [("plain", {}), ("sticky", dict(kappa=10.0, kappa_prior=(1.0, 0.1)))]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            models[name] = InfiniteHMM(max_time=MAX_TIME, random_state=0, **extra).fit(X)
        model = models[name]
        p = model.n_states_posterior_
        print(f"\n{name}: converged {model.convergence_['converged']} "
              f"({model.convergence_['n_sweeps']} sweeps per chain); "
              f"{len(caught)} warning(s)")
        print("  most probable numbers of states:",
              {int(k): round(float(p[k]), 2) for k in np.argsort(p)[::-1][:4]})
        # the states of the label-switching-robust point estimate, by size
        z = model.point_estimate()
        sizes = np.bincount(z)
        order = np.argsort(sizes)[::-1]
        levels = [float(np.median(X[z == k])) for k in order]
        print("  point estimate:", len(sizes), "states; median current (pA) and share of samples:")
        for k, level in zip(order, levels):
            print(f"    {level:6.2f} pA  {sizes[k] / len(z):5.1%}")

# %%
# Both models put about 81% of the samples in the closed level (about
# -1.2 pA) and 11% in the open level (about +1.6 pA), and find a third level
# near -0.65 pA with about 7% of the samples, plus small states of samples
# between levels (the recording is low-pass filtered, so a transition passes
# through intermediate values). The posterior of the number of states stays
# wide, and within this budget neither fit passes the convergence checks:
# the extra small states come and go. The sticky prior changes little here,
# since the levels are far apart relative to the noise. The figure shows the
# first 600 samples coloured by the sticky model's point estimate.
if X is not None:
    z = models["sticky"].point_estimate()
    plot_states(models["sticky"], X[:600], states=z[:600])
    plt.title("ion channel: sticky model, point estimate")
    plt.show()
