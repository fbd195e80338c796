"""
Split-merge moves on Sequence 1: mutual information with the true states
========================================================================

Sequence 1 of Makino et al. (2011) repeats the symbols ``A B C D B C D E``.
An 8-state HMM (one state per position of the cycle) predicts it perfectly,
but a sampler easily settles in the 5-state local optimum with one state per
symbol, whose mutual information (MI) with the true positions is that of the
symbols themselves. Split-merge moves (``sampler="split_merge"``, Makino et
al. Algorithms 9-10) propose to split a state into two, or to merge two, in
one Metropolis-Hastings step.

Each sampler below runs ``N_CHAINS`` chains of ``N_SWEEPS`` sweeps from 30
random labels (``init="random", n_init_states=30``) with the same
``random_state``, so chain ``c`` of every sampler starts from the same
labels, and the histograms show the MI of each chain's last sample with the
truth (Eq. 37). Merges are readily accepted while the states are still
random, and a merge joins two states wherever they occur, so the more
split-merge trials per sweep, the more chains collapse into the 5-state
optimum before the other moves have sorted the states by position. (From the
particle-filter initialisation, which already is the 5-state
optimum, no sampler leaves it within such budgets.) The samplers cost
different CPU time per sweep (the median is printed below). The full comparison, 20 runs of
10 CPU seconds per sampler from either initialisation, is
``benchmarks/bench_sequence1.py`` in the repository.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import make_sequence1
from sk_ihmm.emissions import Categorical
from sk_ihmm.metrics import mutual_information

N_CHAINS = 6        # chains per sampler
N_SWEEPS = 600      # sweeps per chain

X, truth = make_sequence1(500)

samplers = {
    "rcd_gibbs": dict(sampler="rcd_gibbs"),
    "rcd_beam": dict(sampler="rcd_beam"),
    "rcd_beam + split-merge 3/sweep": dict(sampler="split_merge", base_sampler="rcd_beam",
                                           split_merge_trials=3),
    "rcd_beam + split-merge 25/sweep": dict(sampler="split_merge", base_sampler="rcd_beam",
                                            split_merge_trials=25),
}

# %%
# One fit per sampler: a single round (``max_time=0``), one kept sample per
# chain, the last sweep. The concentrations are resampled under their
# default Gamma(1, 1) priors.
mi = {}
for label, options in samplers.items():
    model = InfiniteHMM(
        emission=Categorical(concentration=0.5), init="random", n_init_states=30,
        n_chains=N_CHAINS, n_burnin=N_SWEEPS - 1, n_samples=1, max_time=0,
        random_state=0, **options,
    )
    with warnings.catch_warnings():
        # one round of one kept sample per chain is not meant to converge
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X)
    mi[label] = [mutual_information(truth, samples[-1]) for samples in model.state_samples_]
    ms = 1000 * np.median(np.diff(model.trace_["seconds"], axis=1))
    print(f"{label:32s} MI: {np.round(mi[label], 3)}  ms per sweep: {ms:.2f}")

# %%
# Distribution of the MI per sampler. The dashed line is the 5-state
# optimum (symbols vs truth), the dotted line the 8-state truth (ln 8).
mi_5 = mutual_information(truth, X.ravel())
print(f"5-state optimum: {mi_5:.3f} nats, 8-state truth: {np.log(8):.3f} nats")
bins = np.linspace(1.3, np.log(8) + 0.05, 30)
fig, axes = plt.subplots(len(samplers), 1, figsize=(6, 7), sharex=True,
                         constrained_layout=True)
for ax, (label, values) in zip(axes, mi.items()):
    ax.hist(values, bins=bins, color="C0")
    ax.axvline(mi_5, color="k", ls="--", lw=1)
    ax.axvline(np.log(8), color="k", ls=":", lw=1)
    ax.set_ylabel("chains")
    ax.set_title(label, fontsize=10)
axes[-1].set_xlabel("mutual information with the true states (nats)")
plt.show()
