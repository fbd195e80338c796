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

Each sampler below runs a few short chains from the same initial labellings
(30 random labels), each on the same small CPU budget, and the histograms show
the MI of the final state sequence with the truth (Eq. 37). Merges are
readily accepted while the states are still random, and a merge joins two
states wherever they occur, so the more split-merge trials per sweep, the more
chains collapse into the 5-state optimum before the beam moves have sorted
the states by position. (From the particle-filter initialisation of the paper,
which already is the 5-state optimum, no sampler leaves it within such
budgets.) The full comparison, 20 runs of 10 CPU seconds per sampler from
either initialisation, is ``benchmarks/bench_sequence1.py``.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from sk_ihmm._chain import make_problem
from sk_ihmm.datasets import make_sequence1
from sk_ihmm.emissions import Categorical
from sk_ihmm.metrics import mutual_information
from sk_ihmm.samplers import get_sampler

N_RUNS = 6          # chains per sampler
BUDGET = 1.5        # CPU seconds per chain

X, truth = make_sequence1(500)
T = X.shape[0]
family = Categorical(concentration=0.5)


def problem(options):
    """Categorical emissions, alpha and gamma resampled under Gamma(1, 1)."""
    return make_problem(family, X, 5, options=options)


samplers = {
    "rcd_gibbs": ("rcd_gibbs", {}),
    "rcd_beam": ("rcd_beam", {}),
    "rcd_beam + split-merge 3/sweep": ("split_merge", {"split_merge_trials": 3}),
    "rcd_beam + split-merge 25/sweep": ("split_merge", {"split_merge_trials": 25}),
}

# %%
# Initial labellings: 30 random labels, one labelling per run, shared by all
# samplers.
init_rng = np.random.default_rng(0)
starts = [init_rng.integers(1, 31, T) for _ in range(N_RUNS)]

# %%
# Run every sampler from every start on the same CPU budget.
mi = {}
for label, (name, options) in samplers.items():
    prob = problem(options)
    smp = get_sampler(name)
    smp.step(smp.init(prob, starts[0], np.random.default_rng(0)), prob,
             np.random.default_rng(0))  # compile outside the budget
    mi[label] = []
    for run, x0 in enumerate(starts):
        rng = np.random.default_rng(run + 1)
        state = smp.init(prob, x0, rng)
        t0 = time.process_time()
        while time.process_time() - t0 < BUDGET:
            smp.step(state, prob, rng)
        mi[label].append(mutual_information(truth, state.x))
    print(f"{label:32s} MI: {np.round(mi[label], 3)}")

# %%
# Distribution of the MI per sampler. The dashed line is the 5-state
# optimum (symbols vs truth), the dotted line the 8-state truth (ln 8).
mi_5 = mutual_information(truth, X.ravel())
bins = np.linspace(1.3, np.log(8) + 0.05, 30)
fig, axes = plt.subplots(len(samplers), 1, figsize=(6, 7), sharex=True,
                         constrained_layout=True)
for ax, (label, values) in zip(axes, mi.items()):
    ax.hist(values, bins=bins, color="C0")
    ax.axvline(mi_5, color="k", ls="--", lw=1)
    ax.axvline(np.log(8), color="k", ls=":", lw=1)
    ax.set_ylabel("runs")
    ax.set_title(label, fontsize=10)
axes[-1].set_xlabel("mutual information with the true states (nats)")
plt.show()
