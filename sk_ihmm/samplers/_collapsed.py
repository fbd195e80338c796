"""State shared by the collapsed (RCD) samplers: labels, seating, emission stats.

Every RCD sampler works on a :class:`CollapsedState` and differs only in the
move it makes; they share the seating kernels of :mod:`sk_ihmm._hcrp`, the
emission kernels and the hyperparameter updates of :mod:`sk_ihmm._hyper`.
"""

import numpy as np
from numba import njit

from .._hcrp import (M_TOTAL, N_DISHES, NJ, OCC, O, add_customer, clear_log,
                     ensure_capacity, log_seating_prob, new_seating)
from .._hyper import resample_concentrations, rho_prior
from .._rng import as_generator, generator_handle
from ..emissions import add_labelled, log_marginal_sum, resample_hyperparameters


class CollapsedState:
    """Mutable chain state of the collapsed HCRP-HMM samplers.

    Attributes
    ----------
    x : ndarray of shape (n_timesteps,), int64
        Hidden state labels (>= 1; label 0 is the start restaurant).
    seating : sk_ihmm._hcrp.Seating
        Tables of every restaurant and of the root.
    stats : ndarray of shape (capacity, n_stats)
        Emission sufficient statistics per label.
    hyp : ndarray
        The chain's emission hyperparameters (its own copy: a family may
        resample them).
    log_joint : float
        ``log p(x, tables, y)`` after the last sweep.
    scratch : dict
        Work arrays and per-chain constants a sampler keeps from one sweep
        to the next (not part of the Markov state).
    """

    def __init__(self, x, seating, stats, hyp):
        self.x = x
        self.seating = seating
        self.stats = stats
        self.hyp = hyp
        self.log_joint = np.nan
        self.scratch = {}

    # the fields every sampler state exposes (see sk_ihmm.samplers)
    @property
    def conc(self):
        return self.seating.conc

    @property
    def n(self):
        return self.seating.n

    @property
    def m(self):
        return self.seating.m

    @property
    def o(self):
        return self.seating.o

    def ensure_capacity(self, labels=2, tables=8, log=8):
        """Grow seating and statistics so a move has room (doubling)."""
        s = ensure_capacity(self.seating, labels, tables, log)
        if s is not self.seating:
            C = s.n.shape[0]
            if C > self.stats.shape[0]:
                stats = np.zeros((C, self.stats.shape[1]))
                stats[: self.stats.shape[0]] = self.stats
                self.stats = stats
            self.seating = s


@njit(cache=True, nogil=True)
def seat_sequences(s, stats, x, Y, seq_first, fam, rng):
    """Seat the customers and add the emissions of a complete labelled sequence
    (a new seating, no undo)."""
    pairs, per_label, tables, undo_log, totals, conc = s
    for t in range(x.shape[0]):
        j = 0 if seq_first[t] else x[t - 1]
        add_customer(pairs, per_label, tables, undo_log, totals, conc, j, x[t], rng)
        clear_log(totals)
        per_label[OCC, x[t]] += 1
    add_labelled(fam, stats, x, Y)



def run_resumable(state, room, run):
    """Run a collapsed kernel to the end of its sweep, growing the state
    whenever it stops short: the one resume loop of every collapsed sampler.

    The kernels allocate nothing (:func:`sk_ihmm._nrt.nrt_free`), so a kernel
    that finds fewer free labels, table slots or undo-log rows than its next
    move may need stops and returns where it stopped. Before *every* call,
    the first included, the state is grown to ``room()``, a tuple ``(labels,
    tables, log)``: at least what the kernel checks (or the loop would not
    advance), and what it relies on without checking (the split-merge trials
    check only free labels, a Gibbs step not the undo log; the kernels do no
    bounds checks, so less room would write past the arrays). ``run(pos)``
    calls the kernel from position ``pos`` and returns ``(pos, done)``.
    Growing changes capacities only, never a draw
    (``tests/test_resume.py``).
    """
    pos, done = 0, False
    while not done:
        labels, tables, log = room()
        state.ensure_capacity(labels=labels, tables=tables, log=log)
        pos, done = run(pos)


def init_collapsed(problem, x0, rng):
    """Seat the labelled sequence ``x0`` (labels >= 1) customer by customer."""
    x = np.ascontiguousarray(x0, dtype=np.int64).copy()
    C = max(16, 2 * int(x.max()) + 2)
    # a table holds at least one customer and there is one customer per time
    # step, so T slots always suffice (kernels still report and grow if short)
    s = new_seating(C, x.shape[0] + 16, 64, *problem.conc0)
    stats = np.zeros((C, problem.n_stats))
    seat_sequences(s, stats, x, problem.Y, problem.seq_first, problem.fam, rng)
    state = CollapsedState(x, s, stats, problem.hyp.copy())
    state.log_joint = log_joint(state, problem)
    return state


@njit(cache=True, nogil=True)
def _log_joint(s, stats, fam, hyp):
    return log_seating_prob(s) + log_marginal_sum(fam, stats, hyp)


def log_joint(state, problem):
    """``log p(x, tables, y)`` with emission parameters integrated out."""
    return float(_log_joint(state.seating, state.stats, problem.fam, state.hyp))


@njit(cache=True, nogil=True)
def _finish(s, stats, fam, hyp, priors, rho, resample, rng):
    """:func:`finish_sweep` in one kernel call: resample ``s.conc`` in place
    when asked (:mod:`sk_ihmm._hyper`, either hyperprior) and the family's
    hyperparameters ``hyp`` if it samples them, return the new
    ``log_joint`` (``rho``: :func:`~sk_ihmm._hyper.rho_prior` of ``priors``)."""
    rng = as_generator(rng)
    resample_hyperparameters(fam, stats, hyp, rng)
    per_label, totals, conc = s.per_label, s.totals, s.conc
    if resample[0] or resample[1] or resample[2]:
        overrides = np.int64(0)   # not 0: a literal compiles a second specialisation
        for j in range(per_label.shape[1]):
            overrides += per_label[O, j]
        resample_concentrations(conc[0], conc[1], conc[2], per_label[NJ], totals[M_TOTAL],
                                overrides, totals[N_DISHES], priors, rho, resample, rng, conc)
    return _log_joint(s, stats, fam, hyp)


def finish_sweep(state, problem, rng):
    """Resample the concentrations (when asked) and the family's
    hyperparameters (if it samples them), and refresh ``log_joint``
    (``rng``: a Generator or its :func:`~sk_ihmm._rng.generator_handle`)."""
    state.log_joint = float(_finish(
        state.seating, state.stats, problem.fam, state.hyp, problem.priors,
        rho_prior(problem.priors), problem.resample, generator_handle(rng)))
