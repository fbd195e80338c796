"""Step-wise Gibbs sampling through the restricted collapsed draw (``rcd_gibbs``).

Makino et al. (2011), Section 4.1 and Algorithm 5. For each time step ``t``
(in random order) with neighbours ``p = x[t-1]`` (the start restaurant 0 at
the beginning of a sequence) and ``q = x[t+1]`` (absent at the end):

1. remove the customers ``x_t -> q`` and ``p -> x_t`` and the emission
   ``y_t``, each removal drawing which table the customer leaves, and collect
   ``r_old``, the product of the predictive probabilities of what was removed
   evaluated just after its removal;
2. propose ``x*`` from Eq. (33): every served state, plus ``q`` when no root
   table serves it (the "delta" term of Eq. 33), plus one fresh label, with
   weight ``p(k | s_p) * f_k(y_t) * p(q | s_k)``; an unserved label gets the
   root's new-dish mass (Eq. 32);
3. add the customers back for ``x*`` collecting ``r*`` (Eq. 28-31: each factor is
   the predictive of the customer just before it is seated);
4. accept with ``min(1, r* / r_old * q(x_old) / q(x*))`` (Eq. 29); on rejection
   replay the undo log, which restores the *exact* old tables.

The fresh label is ``x_old`` itself when removing ``t`` emptied it, so
``q(x_old)`` is always a candidate weight.
"""

import math

import numpy as np

from .._hcrp import (M_TOTAL, N_FREE_SLOTS, MK, NJ, OCC, N, add_customer, clear_log, free_label,
                     is_free, pred_prob, remove_customer, undo)
from .._nrt import nrt_free
from .._rng import as_generator, draw_index, generator_handle
from ..emissions import log_pred, log_pred_block, update
from ._collapsed import finish_sweep, init_collapsed, run_resumable

#: Free table slots (and undo-log rows) a step's move may need: the kernel
#: stops below it, and the driver grows the seating to it before resuming.
ROOM_TABLES = 8

__all__ = ["init", "step"]


@nrt_free
def _gibbs_sweep(s, stats, x, data, order, start, fam, hyp, rng, work):
    """Gibbs-update ``x[order[start:]]``; stop early when capacity runs low.

    ``data`` is ``(Y, seq_first, seq_last)`` and ``work`` ``(cand, logw,
    trans)``, scratch for ``C + 1`` candidates (``C`` labels). Returns
    ``(stop, n_accepted)``: ``stop == len(order)`` when done, else the
    position in ``order`` to resume from after growing the state.
    """
    rng = as_generator(rng)
    Y, seq_first, seq_last = data
    cand, logw, trans = work
    pairs, per_label, tables, undo_log, totals, conc = s
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    n_acc = 0
    C = pairs.shape[1]
    for i in range(start, order.shape[0]):
        if totals[N_FREE_SLOTS] < ROOM_TABLES:
            return i, n_acc
        fresh = free_label(per_label, 1)
        if fresh < 0:
            return i, n_acc
        t = order[i]
        old = x[t]
        p = 0 if seq_first[t] else x[t - 1]
        q = -1 if seq_last[t] else x[t + 1]
        clear_log(totals)
        # ---- remove (Algorithm 5, reverse order of addition) ----
        log_r_old = 0.0
        if q > 0:
            remove_customer(pairs, per_label, tables, undo_log, totals, conc, old, q, rng)
            log_r_old += math.log(pred_prob(pairs[N, old, q], per_label[NJ, old], per_label[MK, q],
                                            totals[M_TOTAL], alpha, gamma, kappa, old, q))
        update(fam, stats, old, Y, t, -1.0)
        per_label[OCC, old] -= 1
        log_r_old += log_pred(fam, stats, old, hyp, Y, t)
        remove_customer(pairs, per_label, tables, undo_log, totals, conc, p, old, rng)
        log_r_old += math.log(pred_prob(pairs[N, p, old], per_label[NJ, p], per_label[MK, old],
                                        totals[M_TOTAL], alpha, gamma, kappa, p, old))
        if is_free(per_label, old):
            fresh = old
        # ---- proposal, Eq. (33): w_k = p(k|s_p) p(q|s_k) f_k(y_t) ----
        nc = np.int64(0)   # not 0: a literal would compile log_pred_block twice
        m_tot = totals[M_TOTAL]
        for k in range(1, C):
            if per_label[MK, k] > 0 or k == q or k == fresh:
                cand[nc] = k
                tr = pred_prob(pairs[N, p, k], per_label[NJ, p], per_label[MK, k], m_tot,
                               alpha, gamma, kappa, p, k)
                if q > 0:
                    tr *= pred_prob(pairs[N, k, q], per_label[NJ, k], per_label[MK, q], m_tot,
                                    alpha, gamma, kappa, k, q)
                trans[nc] = tr
                nc += 1
        # a literal length 1: numba specialises the block kernel for one step
        log_pred_block(fam, stats, cand, nc, hyp, Y, t, 1, logw)
        mx = -np.inf
        for c in range(nc):
            mx = max(mx, logw[0, c])
        tot = 0.0
        for c in range(nc):
            trans[c] *= math.exp(logw[0, c] - mx)
            tot += trans[c]
        c_new = draw_index(trans, nc, rng.random() * tot)
        new = cand[c_new]
        w_new = trans[c_new]
        w_old = 0.0
        for c in range(nc):
            if cand[c] == old:
                w_old = trans[c]
        # ---- add back with the proposed state ----
        log_r_new = math.log(pred_prob(pairs[N, p, new], per_label[NJ, p], per_label[MK, new],
                                       totals[M_TOTAL], alpha, gamma, kappa, p, new))
        add_customer(pairs, per_label, tables, undo_log, totals, conc, p, new, rng)
        log_r_new += log_pred(fam, stats, new, hyp, Y, t)
        update(fam, stats, new, Y, t, 1.0)
        per_label[OCC, new] += 1
        if q > 0:
            log_r_new += math.log(pred_prob(pairs[N, new, q], per_label[NJ, new], per_label[MK, q],
                                            totals[M_TOTAL], alpha, gamma, kappa, new, q))
            add_customer(pairs, per_label, tables, undo_log, totals, conc, new, q, rng)
        log_ratio = log_r_new - log_r_old + math.log(w_old) - math.log(w_new)
        # the uniform is drawn whatever the ratio, so the number of draws does not
        # depend on the rounding of a ratio that is 0 in exact arithmetic (the
        # chains of data in other units stay identical)
        u = rng.random()
        if log_ratio >= 0.0 or u < math.exp(log_ratio):
            x[t] = new
            n_acc += 1
            clear_log(totals)
        else:
            undo(pairs, per_label, tables, undo_log, totals, conc)
            update(fam, stats, new, Y, t, -1.0)
            per_label[OCC, new] -= 1
            update(fam, stats, old, Y, t, 1.0)
            per_label[OCC, old] += 1
    return order.shape[0], n_acc


def init(problem, x0, rng):
    """Initial state: seat the labelled sequence ``x0``."""
    return init_collapsed(problem, x0, rng)


def step(state, problem, rng):
    """One sweep: every time step once in random order, then hyperparameters."""
    T = state.x.shape[0]
    order = rng.permutation(T).astype(np.int64, copy=False)
    n_acc = 0

    def run(pos):
        nonlocal n_acc
        C = state.seating.pairs.shape[1]
        pos, acc = _gibbs_sweep(
            state.seating, state.stats, state.x, (problem.Y, problem.seq_first, problem.seq_last),
            order, pos, problem.fam, state.hyp, generator_handle(rng),
            (np.empty(C + 1, np.int64), np.empty((1, C + 1)), np.empty(C + 1)))
        n_acc += acc
        return pos, pos >= T

    run_resumable(state, lambda: (2, ROOM_TABLES, ROOM_TABLES), run)
    finish_sweep(state, problem, rng)
    return {"accept_rate": n_acc / T}
