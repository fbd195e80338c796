"""The budget mode's rounds: how long the next round is, and which sweeps
the convergence checks and the kept samples cover after it.

``InfiniteHMM.fit`` runs every chain for a first round of ``n_burnin +
n_samples * thin`` sweeps and then, while the checks of
:func:`sk_ihmm._diagnostics.convergence_report` fail, rounds as long as all
the sweeps before them, cut to what fits in ``max_sweeps`` and
``max_time`` (:func:`next_round`, timed by :func:`round_seconds`). After
each round but the first (whose window starts at ``n_burnin``) the
*window* -- the sweeps the checks look at and over which each chain keeps
its samples -- is the last three quarters of the chain, never starting
before ``n_burnin`` nor shorter than ``n_samples * thin`` sweeps
(:func:`window_start`, :func:`move_window`); the first quarter is burn-in.
Why a quarter is enough: doc/convergence.rst, "Why a quarter of burn-in"
(Sokal 1997; Vehtari et al. 2021 for the checks), measured on simulated
traces (whole doubling rounds, no thinning grid) by
``benchmarks/bench_burnin.py``.

Invariants after every round of new chains: a chain's kept samples are the
sweeps :func:`sk_ihmm._diagnostics.kept_sweeps` gives for ``(n_sweeps,
n_burnin, thin)``, every ``thin``-th sweep ending at the last one,
``n_samples`` to ``2 * n_samples`` of them (``n_samples`` after the first
round), and ``n_burnin >= 0``. The first kept sweep never moves back;
``n_burnin``, the first sweep of the thinning interval that ends at it, is
up to ``thin - 1`` sweeps before the window's start, so the start can move
back by as much. With very few samples (a handful per chain) the
thinning interval can be as long as the quarter, and the checks then see
sweeps of the burn-in. A warm start's round appends samples off that grid
(``thin=None`` to :func:`next_round`): the round after it replaces the
window instead of extending it, and the invariants hold again from there.
"""

import numpy as np

from . import _diagnostics

__all__ = ["next_round", "window_start", "move_window", "round_seconds", "chains_at_once"]


def next_round(n_done, n_burnin, thin, n_samples, max_sweeps, left, per_sweep):
    """``(n_sweeps, thin, extend)`` of the next budget-mode round, or
    ``None`` to stop.

    A round is as long as the ``n_done`` sweeps before it, rounded up to a
    multiple of ``n_samples``, or shorter when that would go past
    ``max_sweeps`` or take longer than the ``left`` seconds of ``max_time``
    (``None``: no limit) at ``per_sweep`` seconds a sweep: it is then cut to
    what fits. It *extends* the current window, whose kept samples are
    every ``thin``-th sweep from ``n_burnin`` on (``extend=True``): it keeps
    every ``thin * step``-th sweep, ``step`` chosen so that the window of
    :func:`window_start` holds at most ``2 * n_samples`` of them, and its
    length is a multiple of that. A round shorter than a quarter of the
    window is not worth running. With ``thin=None`` (the kept samples are
    not evenly spaced: after a warm start's round) the round replaces the
    window instead, ``n_samples`` samples every ``n_sweeps / n_samples``-th
    sweep, and a cut one is run only if it holds at least half of
    ``n_done`` sweeps.
    """
    thin_new = -(-n_done // n_samples)
    n_next = thin_new * n_samples
    fits = max_sweeps - n_done
    if left is not None:
        fits = min(fits, int(left / max(per_sweep, 1e-12)))
    if thin is None:
        if n_next <= fits:
            return n_next, thin_new, False
        thin_cut = fits // n_samples
        if thin_cut < 1 or 2 * thin_cut * n_samples < n_done:
            return None
        return thin_cut * n_samples, thin_cut, False
    n_run = min(n_next, fits)
    total = n_done + n_run // thin * thin
    start = window_start(total, n_burnin, thin, n_samples)
    n_grid = -(-(total - start) // thin)       # sweeps of the window on the thin grid
    step = max(1, -(-n_grid // (2 * n_samples)))
    n_extend = n_run // (thin * step) * (thin * step)
    if n_extend < 1 or 4 * n_extend < n_done - n_burnin:
        return None
    return n_extend, thin * step, True


def window_start(n_sweeps, n_burnin, thin, n_samples):
    """First sweep of the window after a round: the last three quarters of
    the ``n_sweeps`` sweeps, but never before ``n_burnin`` nor shorter than
    ``n_samples * thin`` sweeps.

    Why a quarter of warm-up, not half (doc/convergence.rst): the samplers
    do not adapt, so warm-up only has to outlast the start, and when the
    window passes the ESS check (100 per chain) its integrated
    autocorrelation time is at most a hundredth of the window, which makes
    the first quarter 33 of them (Sokal 1997 advises about 20 exponential
    autocorrelation times); the split R-hat sees a start that is still
    there.
    """
    return max(n_burnin, min(n_sweeps // 4, n_sweeps - n_samples * thin))


def move_window(chains, n_burnin, thin, n_extend, thin_extend, n_samples):
    """Move the window of extended chains to :func:`window_start`.

    Before the extension of ``n_extend`` sweeps every chain kept every
    ``thin``-th sweep from ``n_burnin`` on; the extension kept every
    ``thin_extend``-th (a multiple of ``thin`` that divides ``n_extend``).
    The samples kept are those on the extension's grid (every
    ``thin_extend``-th sweep counted back from the last) from the window's
    start on. Returns the ``(n_burnin, thin)`` that give them as
    :func:`sk_ihmm._diagnostics.kept_sweeps` reads them; the diagnostics
    look at every sweep from that ``n_burnin`` on, which is the window's
    start or, when it falls between two kept sweeps, up to ``thin_extend -
    1`` sweeps before it.
    """
    n_sweeps = chains[0].n_sweeps
    start = window_start(n_sweeps, n_burnin, thin, n_samples)
    n_done = n_sweeps - n_extend
    sweeps = np.concatenate([_diagnostics.kept_sweeps(n_done, n_burnin, thin),
                             n_done + _diagnostics.kept_sweeps(n_extend, 0, thin_extend)])
    # a kept sweep before thin_extend - 1 would give a negative n_burnin
    lo = max(start, thin_extend - 1)
    keep = np.flatnonzero((sweeps >= lo) & ((n_sweeps - 1 - sweeps) % thin_extend == 0))
    for chain in chains:
        chain.snapshots = [chain.snapshots[i] for i in keep]
        chain.samples = chain.samples[keep]
    return int(sweeps[keep[0]]) - thin_extend + 1, thin_extend


def round_seconds(chains, n_sweeps, n_jobs, measured=None):
    """Expected wall time of ``n_sweeps`` more sweeps of every chain.

    From each chain's CPU time per sweep (its first sweep, which may
    include compilation, left out) and the number of chains run at once,
    or from ``measured``, the wall seconds per sweep of the last round
    (compilation left out), when that is longer: chains in threads wait for
    each other's Python lines, and the machine may be busy.
    """
    per_sweep = []
    for chain in chains:
        sec = chain.trace["seconds"]
        per_sweep.append((sec[-1] - sec[0]) / (len(sec) - 1) if len(sec) > 1 else sec[-1])
    estimate = float(np.sum(per_sweep)) / chains_at_once(n_jobs, len(chains))
    return max(estimate, measured or 0.0) * n_sweeps


def chains_at_once(n_jobs, n_chains):
    """How many of ``n_chains`` chains run at once.

    ``n_jobs`` as joblib reads it; ``None``: one thread per chain, up to the
    cores this process may use (``joblib.cpu_count``, which respects CPU
    affinity and container quotas) and the threads numba may use
    (``numba.config.NUMBA_NUM_THREADS``, which joblib lowers to what each
    of its worker processes may use, so a parallel grid search does not
    oversubscribe the machine).
    """
    from joblib import cpu_count, effective_n_jobs

    if n_jobs is None:
        from numba import config

        return max(1, min(n_chains, int(config.NUMBA_NUM_THREADS), cpu_count()))

    return max(1, min(n_chains, effective_n_jobs(n_jobs)))
