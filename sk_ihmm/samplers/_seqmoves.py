"""Remove and re-add a contiguous piece of a state sequence (Makino et al. 2011).

Algorithms 6 (``removeSeq``) and 7 (``addSeq``) of Makino et al. (2011), as
standalone numba kernels shared by every RCD move that resamples whole
stretches of the state sequence (the blocked and beam samplers, split-merge).

A *block* is the run of time steps ``b .. b + L - 1`` of one sequence with
labels ``xb``. Its customers are the transition into it, ``prev -> xb[0]``
(``prev`` is the label of step ``b - 1``, or the start restaurant ``0`` when
``b`` starts a sequence), the transitions inside it, and the transition out
of it, ``xb[L - 1] -> nxt`` (``nxt`` is the label of step ``b + L`` when that
step is in the same sequence, ``-1`` otherwise); its emissions are
``Y[b .. b + L - 1]``.

Both kernels return the log of the product of the RCD factors (Makino Eq.
28-32): the predictive probability of each customer and emission evaluated
*without* it -- right after its removal, or right before its addition.
Invariants: customers are added in time order and removed in the reverse
order, so the factors of ``remove_seq`` are those ``add_seq`` would collect
when seating the same labels again; the emission factors of a block are
exchangeable and taken together (:func:`sk_ihmm.emissions.move_block`); every
seating change goes through :func:`sk_ihmm._hcrp.add_customer` /
:func:`~sk_ihmm._hcrp.remove_customer` and so into the undo log (the caller
clears it before a move and calls :func:`sk_ihmm._hcrp.undo` to reject);
emission statistics and occupancies are not logged, :func:`move_emissions`
puts them back.
"""

import math

from numba import njit

from .._hcrp import (M_TOTAL, MK, NJ, OCC, N, add_customer, clear_log, pred_parts,
                     remove_customer)
from .._nrt import nrt_free
from ..emissions import move_block, move_stats

__all__ = ["remove_seq", "add_seq", "move_emissions", "reseat_seq", "lift_seq"]


@njit(cache=True, nogil=True, inline="always")
def _times(pn, pd, log_r, parts):
    """Multiply the running ratio ``exp(log_r) * pn / pd`` by the fraction
    ``parts = (num, den)`` (:func:`sk_ihmm._hcrp.pred_parts`, a probability:
    ``num <= den``), folding ``pn / pd`` into ``log_r`` only when ``pn`` falls
    below 1e-150 or ``pd`` exceeds 1e150 (as ``pn <= pd``, neither can then
    leave the range of a double)."""
    pn *= parts[0]
    pd *= parts[1]
    if pn < 1e-150 or pd > 1e150:
        log_r += math.log(pn) - math.log(pd)
        pn = 1.0
        pd = 1.0
    return pn, pd, log_r


@nrt_free
def _unseat(pairs, per_label, tables, undo_log, totals, conc, xb, prev, nxt, rng):
    """Customer part of :func:`remove_seq`: remove the block's customers in
    reverse time order (and its time steps from ``per_label[OCC]``); return the log
    product of their predictives, each right after its removal."""
    L = xb.shape[0]
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    pn = 1.0
    pd = 1.0
    log_r = 0.0
    # customer L is the transition out, xb[L - 1] -> nxt; one call site of
    # remove_customer, as each inlined copy costs compile time
    for l in range(L if nxt > 0 else L - 1, -1, -1):
        if l == L:
            j, k = xb[L - 1], nxt
        else:
            k = xb[l]
            j = prev if l == 0 else xb[l - 1]
            per_label[OCC, k] -= 1
        remove_customer(pairs, per_label, tables, undo_log, totals, conc, j, k, rng)
        pn, pd, log_r = _times(pn, pd, log_r, pred_parts(
            pairs[N, j, k], per_label[NJ, j], per_label[MK, k], totals[M_TOTAL],
            alpha, gamma, kappa, j, k))
    return log_r + (math.log(pn) - math.log(pd))


@nrt_free
def _seat(pairs, per_label, tables, undo_log, totals, conc, xb, prev, nxt, rng):
    """Customer part of :func:`add_seq`: seat the block's customers in time
    order (and its time steps in ``per_label[OCC]``); return the log product of
    their predictives, each right before its addition."""
    L = xb.shape[0]
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    pn = 1.0
    pd = 1.0
    log_r = 0.0
    # customer L is the transition out (one call site, as in _unseat)
    for l in range(L + 1 if nxt > 0 else L):
        if l == L:
            j, k = xb[L - 1], nxt
        else:
            k = xb[l]
            j = prev if l == 0 else xb[l - 1]
        pn, pd, log_r = _times(pn, pd, log_r, pred_parts(
            pairs[N, j, k], per_label[NJ, j], per_label[MK, k], totals[M_TOTAL],
            alpha, gamma, kappa, j, k))
        add_customer(pairs, per_label, tables, undo_log, totals, conc, j, k, rng)
        if l < L:
            per_label[OCC, k] += 1
    return log_r + (math.log(pn) - math.log(pd))


@njit(cache=True, nogil=True, inline="always")
def lift_seq(pairs, per_label, xb, prev, nxt, d):
    """Add ``d`` to the transition counts (``pairs[N]``, ``per_label[NJ]``) of the
    customers of the block ``xb`` (between ``prev`` and ``nxt``, as in
    :func:`remove_seq`) and to the occupancies of its labels:
    with ``d = -1`` the counts of the steps outside the block, which the
    proposal reads; ``d = 1`` puts them back. The tables are not touched."""
    j = prev
    for l in range(xb.shape[0]):
        k = xb[l]
        pairs[N, j, k] += d
        per_label[NJ, j] += d
        per_label[OCC, k] += d
        j = k
    if nxt > 0:
        pairs[N, j, nxt] += d
        per_label[NJ, j] += d


@nrt_free
def reseat_seq(pairs, per_label, tables, undo_log, totals, conc, xb, prev, nxt, rng):
    """Gibbs update of the tables of a block's customers, labels unchanged.

    Each customer in turn (the transition into the block, those inside it
    and the transition out of it, as in :func:`remove_seq`) leaves its table
    -- drawn in proportion to the table sizes -- and is seated again with the
    same dish (:func:`sk_ihmm._hcrp.add_customer`): by exchangeability that
    is a draw of its table from its conditional given every other customer,
    so the seating's conditional distribution given the labels is left
    invariant. Clears the undo log."""
    L = xb.shape[0]
    j = prev
    # customer L is the transition out (one call site, as in _unseat)
    for l in range(L + 1 if nxt > 0 else L):
        k = xb[l] if l < L else nxt
        remove_customer(pairs, per_label, tables, undo_log, totals, conc, j, k, rng)
        add_customer(pairs, per_label, tables, undo_log, totals, conc, j, k, rng)
        clear_log(totals)
        j = k


@njit(cache=True, nogil=True, inline="always")
def remove_seq(pairs, per_label, tables, undo_log, totals, conc,
               stats, xb, Y, b, prev, nxt, fam, hyp, rng, work):
    """Remove the customers and emissions of a block (Makino Algorithm 6).

    Parameters
    ----------
    pairs, per_label, tables, undo_log, totals, conc : ndarray
        The seating (:class:`sk_ihmm._hcrp.Seating`, unpacked), modified in
        place; changes are appended to the undo log. One by one, not as the
        named tuple: numba miscompiles the tuple's fields written in an
        inlined routine (doc/internals.rst, "Why six arrays").
    stats : ndarray of shape (capacity, n_stats)
        Emission sufficient statistics per label, modified in place.
    xb : ndarray of shape (L,), int64
        Current labels of time steps ``b .. b + L - 1``.
    Y : ndarray of shape (n_timesteps, n_features)
        All observations.
    b : int
        First time step of the block.
    prev : int
        Restaurant of the transition into the block: the label of step
        ``b - 1``, or ``0`` when ``b`` starts a sequence.
    nxt : int
        Label of step ``b + L`` if it is in the same sequence, else ``-1``.
    fam : int
        Emission family code (:mod:`sk_ihmm.emissions` dispatch).
    hyp : ndarray
        Emission hyperparameters.
    rng : numpy.random.Generator
        Draws the table each removed customer leaves.
    work : ndarray of shape (>= L,), int64
        Scratch space for :func:`sk_ihmm.emissions.move_block`.

    Returns
    -------
    log_r : float
        Sum of the log predictive probabilities of the removed customers and
        emissions, each evaluated right after its own removal.  The customer
        factors are multiplied in linear space, numerators and
        denominators apart (:func:`sk_ihmm._hcrp.pred_parts`: no division
        per customer; a log only when a product nears the end of the range
        of a double, and once per block), the
        emission factors come from :func:`sk_ihmm.emissions.move_block`.
    """
    return (move_block(fam, stats, hyp, Y, b, xb, -1.0, work)
            + _unseat(pairs, per_label, tables, undo_log, totals, conc, xb, prev, nxt, rng))


@njit(cache=True, nogil=True, inline="always")
def add_seq(pairs, per_label, tables, undo_log, totals, conc,
            stats, xb, Y, b, prev, nxt, fam, hyp, rng, work):
    """Add the customers and emissions of a block (Makino Algorithm 7).

    Parameters are those of :func:`remove_seq`, with ``xb`` the labels to
    seat; ``prev`` and ``nxt`` are unchanged labels outside the block.

    Returns
    -------
    log_r : float
        Sum of the log predictive probabilities of the added customers and
        emissions, each evaluated right before its own addition.
    """
    return (_seat(pairs, per_label, tables, undo_log, totals, conc, xb, prev, nxt, rng)
            + move_block(fam, stats, hyp, Y, b, xb, 1.0, work))


@njit(cache=True, nogil=True, inline="always")
def move_emissions(per_label, stats, Y, b, x_from, x_to, fam, work):
    """Move the emissions of steps ``b ..`` from labels ``x_from`` to ``x_to``.

    Updates the statistics (:func:`sk_ihmm.emissions.move_stats`; ``work``:
    int64 scratch of at least ``len(x_from)`` entries) and occupancies only
    (no customers); used to restore them after a rejected move, whose
    seating :func:`sk_ihmm._hcrp.undo` restores.
    """
    move_stats(fam, stats, Y, b, x_from, -1.0, work)
    move_stats(fam, stats, Y, b, x_to, 1.0, work)
    for l in range(x_from.shape[0]):
        per_label[OCC, x_from[l]] -= 1
        per_label[OCC, x_to[l]] += 1
