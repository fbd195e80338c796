"""Sequentially-allocated split-merge moves through the RCD sampler (``split_merge``).

Makino et al. (2011), Section 4.4 and Algorithms 9-10, after Dahl (2003). A
sweep is one sweep of the ``base_sampler`` (``"rcd_gibbs"``, ``"rcd_blocked"``,
``"rcd_beam"`` or ``"none"``), ``split_merge_trials`` one-state trials, as
many *chain* trials when ``split_merge_width > 1``, then the hyperparameter
updates.

A one-state trial draws ``t1`` uniformly and ``t2 != t1`` with probability
proportional to ``pred(y[t1] | x[t2])``, the emission predictive of
``t2``'s state (our change: Makino draws both uniformly, and a merge of two
similar states is then rarely proposed): a shared label proposes a split
(``t1`` gets a fresh label and the runs of the two states' other steps are
allocated one by one, in random order, by a two-state FFBS on the seating's
predictives), different labels the merge of ``x[t1]`` into ``x[t2]``. A
chain trial (our extension) does the same, with uniform anchors, for the
``w`` states of the runs ``t1 .. t1 + w - 1`` and ``t2 .. t2 + w - 1`` at
once. Everything removed is added back in the reverse order, so the ratio
is ``(r* / r_old) (q_old / q*)`` (Makino Eq. 28-32) times ``q(t2 | t1, x*)
/ q(t2 | t1, x)``, the pair's probability after and before the move; a
rejection replays the undo log.

Invariants: a split and the merge with the same anchors are each other's
reverse; merges are rejected early only for discrete emissions (a continuous
density can exceed 1); a trial's free labels are checked before any of its
random draws. Derivation and exactness: doc/internals.rst, "Split-merge
moves (samplers/_split_merge.py)" and its paragraph "Chain moves".
"""

import math

import numpy as np
from numba import njit

from .._hcrp import (M_TOTAL, MK, NJ, OCC, N, add_customer, clear_log,
                     free_label, n_free_labels, pred_prob, remove_customer, undo)
from .._messages import two_state_forward, two_state_path_weight, two_state_sample
from .._nrt import nrt_free, uniform_int
from .._rng import as_generator, draw_index, generator_handle
from ..emissions import log_pred, log_pred_block, update
from . import _rcd_blocked, _rcd_gibbs, option
from ._collapsed import finish_sweep, init_collapsed, run_resumable
from ._seqmoves import add_seq, move_emissions, remove_seq

__all__ = ["init", "step", "split_merge_moves", "chain_moves"]

# base samplers: they all work on the CollapsedState built by init_collapsed
_BASE_STEPS = {
    "rcd_gibbs": _rcd_gibbs.step,
    "rcd_blocked": _rcd_blocked.step_blocked,
    "rcd_beam": _rcd_blocked.step_beam,
}

# indices into the counts array of the kernel
_N_SPLIT, _ACC_SPLIT, _N_MERGE, _ACC_MERGE, _EARLY, _VOID = range(6)


@njit(cache=True, nogil=True)
def _find_fragments(x, seq_first, t1, t2, a, b, fb, fe):
    """Maximal runs of one sequence with labels in ``{a, b}``, without ``t1``, ``t2``.

    Fills ``fb[:U]`` (first step) and ``fe[:U]`` (one past the last step) in
    time order and returns ``U``.
    """
    T = x.shape[0]
    U = 0
    t = 0
    while t < T:
        if t != t1 and t != t2 and (x[t] == a or x[t] == b):
            fb[U] = t
            t += 1
            while (t < T and not seq_first[t] and t != t1 and t != t2
                   and (x[t] == a or x[t] == b)):
                t += 1
            fe[U] = t
            U += 1
        else:
            t += 1
    return U


@njit(cache=True, nogil=True)
def _restricted_hmm(s, stats, Y, b, L, prev, nxt, k0, k1, fam, hyp,
                    log_init, log_trans, log_emit, log_final, pair):
    """Two-state HMM over the labels ``(k0, k1)`` for the fragment ``b .. b + L - 1``.

    Weights are the HCRP predictives of the current seating: ``log_init[c] =
    log p(k_c | restaurant prev)``, ``log_trans[c, d] = log p(k_d | k_c)``,
    ``log_final[c] = log p(nxt | k_c)`` (0 when ``nxt < 0``: nothing follows)
    and ``log_emit[l, c]`` the posterior predictive of ``Y[b + l]`` under
    ``k_c``. ``pair`` is a work array of two labels. Called by the trial
    loop: it reads the trial's fragment and fills the four arrays the
    two-state FFBS takes, hence its parameters.
    """
    pairs, per_label, tables, undo_log, totals, conc = s
    m_tot = totals[M_TOTAL]
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    for c in range(2):
        k = k0 if c == 0 else k1
        log_init[c] = math.log(pred_prob(pairs[N, prev, k], per_label[NJ, prev], per_label[MK, k],
                                         m_tot, alpha, gamma, kappa, prev, k))
        log_trans[c, 0] = math.log(pred_prob(pairs[N, k, k0], per_label[NJ, k], per_label[MK, k0],
                                             m_tot, alpha, gamma, kappa, k, k0))
        log_trans[c, 1] = math.log(pred_prob(pairs[N, k, k1], per_label[NJ, k], per_label[MK, k1],
                                             m_tot, alpha, gamma, kappa, k, k1))
        if nxt > 0:
            log_final[c] = math.log(pred_prob(pairs[N, k, nxt], per_label[NJ, k],
                                              per_label[MK, nxt], m_tot, alpha, gamma, kappa, k,
                                              nxt))
        else:
            log_final[c] = 0.0
    pair[0] = k0
    pair[1] = k1
    log_pred_block(fam, stats, pair, np.int64(2), hyp, Y, b, L, log_emit)


@njit(cache=True, nogil=True, inline="always")
def _log_uniform(rng):
    """``log u`` for ``u`` uniform in [0, 1): a trial's acceptance threshold."""
    u = rng.random()
    return math.log(u) if u > 0.0 else -np.inf


@njit(cache=True, nogil=True, inline="always")
def _draw_anchors(n, rng):
    """Distinct starts ``t1``, ``t2`` uniform in ``0 .. n - 1`` and ``log u``."""
    t1 = uniform_int(n, rng)
    t2 = uniform_int(n - 1, rng)
    if t2 >= t1:
        t2 += 1
    return t1, t2, _log_uniform(rng)


@njit(cache=True, nogil=True)
def _partner_weights(stats, per_label, t1, own, fam, hyp, Y, w):
    """``w[k] = m_k pred(y[t1] | k) / exp(top)`` for every label slot ``k``,
    ``m_k`` the steps of ``k`` other than ``t1`` (whose label is ``own``;
    ``w[k] = 0`` when ``m_k = 0``). Returns ``log Z = log sum_k m_k pred(y[t1]
    | k)`` and ``sum_k w[k]``; each predictive is evaluated once, ``top`` is
    the largest log term."""
    n = per_label.shape[1]
    top = -np.inf
    for k in range(n):
        m = per_label[OCC, k] - (1 if k == own else 0)
        w[k] = math.log(m) + log_pred(fam, stats, k, hyp, Y, t1) if m > 0 else -np.inf
        top = max(top, w[k])
    total = 0.0
    for k in range(n):
        w[k] = math.exp(w[k] - top)
        total += w[k]
    return top + math.log(total), total


@njit(cache=True, nogil=True)
def _draw_partner(stats, per_label, x, t1, fam, hyp, Y, rng, w):
    """Second anchor ``t2 != t1`` with probability ``pred(y[t1] | x[t2]) / Z``.

    The label of ``t2`` is drawn with probability ``m_k pred(y[t1] | k) / Z``
    (:func:`_partner_weights`, in ``w``), then ``t2`` uniformly among its
    ``m_k`` steps other than ``t1``, so that steps of labels whose
    predictive fits ``y[t1]`` are paired with it more often: a merge of two
    similar states is proposed several times more often than with a uniform
    ``t2``. Returns ``t2`` and ``log q(t2 | t1)``; the ratio of a trial has
    ``q`` of the same pair after the move over this one.
    """
    own = x[t1]
    log_z, total = _partner_weights(stats, per_label, t1, own, fam, hyp, Y, w)
    chosen = draw_index(w, per_label.shape[1], rng.random() * total)
    m = per_label[OCC, chosen] - (1 if chosen == own else 0)
    r = uniform_int(m, rng)
    t2 = -1
    for t in range(x.shape[0]):
        if x[t] == chosen and t != t1:
            if r == 0:
                t2 = t
                break
            r -= 1
    return t2, log_pred(fam, stats, chosen, hyp, Y, t1) - log_z


@njit(cache=True, nogil=True, inline="always")
def _shuffle(order, lo, hi, rng):
    """Shuffle ``order[lo:hi]`` in place (Fisher-Yates)."""
    for i in range(hi - 1, lo, -1):
        j = lo + uniform_int(i - lo + 1, rng)
        tmp = order[i]
        order[i] = order[j]
        order[j] = tmp


@njit(cache=True, nogil=True, inline="always")
def _fragment(f, fb, fe, x, seq_first, seq_last):
    """Bounds ``fb_``, ``fe_`` of fragment ``f`` and its neighbours' labels
    ``prev`` (0, the start restaurant, at a sequence start), ``nxt`` (-1 at
    a sequence end)."""
    fb_, fe_ = fb[f], fe[f]
    prev = 0 if seq_first[fb_] else x[fb_ - 1]
    nxt = -1 if seq_last[fe_ - 1] else x[fe_]
    return fb_, fe_, prev, nxt


@njit(cache=True, nogil=True, inline="always")
def _remove_fragment(s, stats, x, Y, xsave, fb_, fe_, prev, nxt, fam, hyp, rng, iwork):
    """Save the labels of steps ``fb_ .. fe_ - 1`` in ``xsave`` and remove
    them; returns the log predictive of what was removed."""
    pairs, per_label, tables, undo_log, totals, conc = s
    for t in range(fb_, fe_):
        xsave[t] = x[t]
    return remove_seq(pairs, per_label, tables, undo_log, totals, conc,
                      stats, x[fb_:fe_], Y, fb_, prev, nxt, fam, hyp, rng, iwork)


@njit(cache=True, nogil=True, inline="always")
def _settle(s, counts, split, accept):
    """Count a trial as a split or merge tried, and accepted if ``accept``;
    keep its seating (clear the undo log) or replay the undo log."""
    pairs, per_label, tables, undo_log, totals, conc = s
    if split:
        counts[_N_SPLIT] += 1
    else:
        counts[_N_MERGE] += 1
    if accept:
        if split:
            counts[_ACC_SPLIT] += 1
        else:
            counts[_ACC_MERGE] += 1
        clear_log(totals)
    else:
        undo(pairs, per_label, tables, undo_log, totals, conc)


@njit(cache=True, nogil=True, inline="always")
def _restore_fragments(per_label, stats, x, Y, xsave, order, fb, fe, U, n_added, fam, iwork):
    """Give the fragments of a rejected trial back their labels ``xsave`` and
    emissions (``undo`` restores the seating): ``order[:n_added]`` were added
    with new labels, the others are still out."""
    for i in range(U):
        f = order[i]
        fb_, fe_ = fb[f], fe[f]
        if i < n_added:
            move_emissions(per_label, stats, Y, fb_, x[fb_:fe_], xsave[fb_:fe_], fam, iwork)
            for t in range(fb_, fe_):
                x[t] = xsave[t]
        else:
            for t in range(fb_, fe_):
                update(fam, stats, x[t], Y, t, 1.0)
                per_label[OCC, x[t]] += 1


@nrt_free
def _sm_trials(s, stats, x, data, n_trials, start, fam, hyp, early_stop, rng, work, counts):
    """Split-merge trials ``start .. n_trials - 1``; stop early when no label is free.

    ``data`` is ``(Y, seq_first, seq_last)``. Returns the number of trials
    done (``n_trials`` unless the caller must grow the seating and resume).
    ``counts`` accumulates splits tried and accepted, merges tried and
    accepted, merges rejected early. Compiled with numba's reference
    counting off (:func:`sk_ihmm._nrt.nrt_free`): every work array comes
    from the caller, in ``work = (fb, fe, order, xsave, emit_buf, fwd_buf,
    path_buf, small, ibuf, label_w)`` (``small``: 8 floats, ``ibuf``: ``T + 2``
    integers, ``label_w``: a float per label slot, the others of
    :func:`split_merge_moves`). A trial's four steps
    stay in this loop (about 130 lines) because they share its draws and its
    undo log; the pieces the chain trials share are the inline helpers above.
    """
    rng = as_generator(rng)
    Y, seq_first, seq_last = data
    fb, fe, order, xsave, emit_buf, fwd_buf, path_buf, small, ibuf, label_w = work
    T = x.shape[0]
    pairs, per_label, tables, undo_log, totals, conc = s
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    log_init = small[0:2]
    log_tr = small[2:6].reshape((1, 2, 2))
    log_trans = log_tr[0]
    log_final = small[6:8]
    pair = ibuf[0:2]
    iwork = ibuf[2:]
    for trial in range(start, n_trials):
        if free_label(per_label, 1) < 0:
            return trial
        # ---- 1. pair, threshold, fragments in random order ----
        t1 = uniform_int(T, rng)
        t2, log_pair_old = _draw_partner(stats, per_label, x, t1, fam, hyp, Y, rng, label_w)
        log_u = _log_uniform(rng)
        a = x[t2]
        b = x[t1]
        split = a == b
        U = _find_fragments(x, seq_first, t1, t2, a, b, fb, fe)
        for i in range(U):
            order[i] = i
        _shuffle(order, 0, U, rng)
        # t1's own customers: the transitions from t1 - 1 (restaurant 0 at a
        # sequence start) and to t1 + 1, unless that neighbour is a fragment
        # step (then the fragment's remove_seq / add_seq handles it)
        has_in = seq_first[t1] or not (t1 - 1 != t2 and (x[t1 - 1] == a or x[t1 - 1] == b))
        j_in = 0 if seq_first[t1] else x[t1 - 1]
        has_out = not seq_last[t1] and (t1 + 1 == t2 or (x[t1 + 1] != a and x[t1 + 1] != b))
        k_out = x[t1 + 1] if has_out else -1

        # ---- 2. remove F_U .. F_1 (q_old of a merge on the way), then t1 ----
        clear_log(totals)
        log_r_old = 0.0
        log_q_old = 0.0
        for i in range(U - 1, -1, -1):
            fb_, fe_, prev, nxt = _fragment(order[i], fb, fe, x, seq_first, seq_last)
            L = fe_ - fb_
            log_r_old += _remove_fragment(s, stats, x, Y, xsave, fb_, fe_, prev, nxt, fam, hyp,
                                          rng, iwork)
            if not split:
                _restricted_hmm(s, stats, Y, fb_, L, prev, nxt, b, a, fam, hyp,
                                log_init, log_trans, emit_buf[:L], log_final, pair)
                for l in range(L):
                    path_buf[l] = 0 if x[fb_ + l] == b else 1
                log_z = two_state_forward(log_init, log_tr, 0, emit_buf, log_final, L, fwd_buf)
                log_q_old += two_state_path_weight(log_init, log_tr, 0, emit_buf, log_final, L,
                                                    path_buf) - log_z
        xsave[t1] = b
        update(fam, stats, b, Y, t1, -1.0)
        per_label[OCC, b] -= 1
        log_r_old += log_pred(fam, stats, b, hyp, Y, t1)
        if has_in:
            remove_customer(pairs, per_label, tables, undo_log, totals, conc, j_in, b, rng)
            log_r_old += math.log(pred_prob(pairs[N, j_in, b], per_label[NJ, j_in],
                                            per_label[MK, b], totals[M_TOTAL], alpha, gamma, kappa,
                                            j_in, b))
        if has_out:
            remove_customer(pairs, per_label, tables, undo_log, totals, conc, b, k_out, rng)
            log_r_old += math.log(pred_prob(pairs[N, b, k_out], per_label[NJ, b],
                                            per_label[MK, k_out], totals[M_TOTAL], alpha, gamma,
                                            kappa, b, k_out))

        # ---- 3. t1 with its new label, then F_1 .. F_U ----
        if split:
            c = free_label(per_label, 1)
        else:
            c = a
        x[t1] = c
        log_r_new = log_pred(fam, stats, c, hyp, Y, t1)
        update(fam, stats, c, Y, t1, 1.0)
        per_label[OCC, c] += 1
        if has_out:
            log_r_new += math.log(pred_prob(pairs[N, c, k_out], per_label[NJ, c],
                                            per_label[MK, k_out], totals[M_TOTAL], alpha, gamma,
                                            kappa, c, k_out))
            add_customer(pairs, per_label, tables, undo_log, totals, conc, c, k_out, rng)
        if has_in:
            log_r_new += math.log(pred_prob(pairs[N, j_in, c], per_label[NJ, j_in],
                                            per_label[MK, c], totals[M_TOTAL], alpha, gamma, kappa,
                                            j_in, c))
            add_customer(pairs, per_label, tables, undo_log, totals, conc, j_in, c, rng)
        log_q_new = 0.0
        n_added = U
        for i in range(U):
            fb_, fe_, prev, nxt = _fragment(order[i], fb, fe, x, seq_first, seq_last)
            L = fe_ - fb_
            if split:
                _restricted_hmm(s, stats, Y, fb_, L, prev, nxt, c, a, fam, hyp,
                                log_init, log_trans, emit_buf[:L], log_final, pair)
                log_z = two_state_forward(log_init, log_tr, 0, emit_buf, log_final, L, fwd_buf)
                two_state_sample(log_tr, 0, log_final, fwd_buf, L, rng, path_buf)
                log_q_new += two_state_path_weight(log_init, log_tr, 0, emit_buf, log_final, L,
                                                    path_buf) - log_z
                for l in range(L):
                    x[fb_ + l] = c if path_buf[l] == 0 else a
            else:
                # the factors still to come are probabilities (<= 1) for
                # discrete emissions, and so is the pair's q after the move:
                # the final ratio cannot exceed this one
                if early_stop and log_r_new - log_r_old + log_q_old - log_pair_old <= log_u:
                    n_added = i
                    counts[_EARLY] += 1
                    break
                for l in range(L):
                    x[fb_ + l] = a
            log_r_new += add_seq(pairs, per_label, tables, undo_log, totals, conc,
                                 stats, x[fb_:fe_], Y, fb_, prev, nxt, fam, hyp, rng, iwork)

        # ---- 4. accept, or restore the exact old state ----
        log_ratio = log_r_new - log_r_old + log_q_old - log_q_new - log_pair_old
        if n_added == U:
            # the reverse move draws the same pair: q(t2 | t1) after the move
            log_ratio += (log_pred(fam, stats, x[t2], hyp, Y, t1)
                          - _partner_weights(stats, per_label, t1, x[t1], fam, hyp, Y, label_w)[0])
        accept = n_added == U and log_u < log_ratio
        _settle(s, counts, split, accept)
        if not accept:
            # t1 between undo and the fragments: the statistics are
            # floating-point sums, another order changes their last bits
            update(fam, stats, c, Y, t1, -1.0)
            per_label[OCC, c] -= 1
            update(fam, stats, b, Y, t1, 1.0)
            per_label[OCC, b] += 1
            x[t1] = b
            _restore_fragments(per_label, stats, x, Y, xsave, order, fb, fe, U, n_added, fam,
                               iwork)
    return n_trials


@njit(cache=True, nogil=True, inline="always")
def _in_labels(k, labs, n):
    for i in range(n):
        if labs[i] == k:
            return True
    return False


@njit(cache=True, nogil=True)
def _label_fragments(x, seq_first, labs, n, fb, fe):
    """Maximal runs of one sequence with labels in ``labs[:n]``: ``fb[:U]``,
    ``fe[:U]`` in time order; returns ``U``."""
    T = x.shape[0]
    U = 0
    t = 0
    while t < T:
        if _in_labels(x[t], labs, n):
            fb[U] = t
            t += 1
            while t < T and not seq_first[t] and _in_labels(x[t], labs, n):
                t += 1
            fe[U] = t
            U += 1
        else:
            t += 1
    return U


@njit(cache=True, nogil=True, inline="always")
def _holds_anchor(b, e, t1, t2, w):
    """Steps ``b .. e - 1`` meet ``t1 .. t1 + w - 1`` or ``t2 .. t2 + w - 1``."""
    return (b < t1 + w and t1 < e) or (b < t2 + w and t2 < e)


@njit(cache=True, nogil=True)
def _chain_hmm(s, stats, x, Y, fb_, L, prev, nxt, t1, t2, w, la_, lc_, fam, hyp,
               cand, log_init, log_tr, log_emit, log_final):
    """Restricted HMM of the chain move over the fragment ``fb_ .. fb_ + L - 1``.

    Step ``l`` of group ``g`` (its label is ``la_[g]`` or ``lc_[g]``) has the
    candidates ``cand[l] = (lc_[g], la_[g])``; the anchors ``t1 + i`` are
    pinned to candidate 0 and ``t2 + i`` to candidate 1 (the other one gets
    weight 0). Weights are the HCRP predictives of the current seating and
    emission statistics, as in :func:`_restricted_hmm`; ``log_tr[l]`` is the
    transition from step ``l - 1`` to ``l``. Like :func:`_restricted_hmm`,
    its parameters are the trial's state and the arrays it fills.
    """
    pairs, per_label, tables, undo_log, totals, conc = s
    m_tot = totals[M_TOTAL]
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    for l in range(L):
        t = fb_ + l
        g = 0
        for i in range(w):
            if x[t] == la_[i] or x[t] == lc_[i]:
                g = i
        cand[l, 0] = lc_[g]
        cand[l, 1] = la_[g]
        for c in range(2):
            log_emit[l, c] = log_pred(fam, stats, cand[l, c], hyp, Y, t)
        if t1 <= t < t1 + w:
            log_emit[l, 1] = -np.inf
        elif t2 <= t < t2 + w:
            log_emit[l, 0] = -np.inf
    for c in range(2):
        k = cand[0, c]
        log_init[c] = math.log(pred_prob(pairs[N, prev, k], per_label[NJ, prev], per_label[MK, k],
                                         m_tot, alpha, gamma, kappa, prev, k))
        j = cand[L - 1, c]
        if nxt > 0:
            log_final[c] = math.log(pred_prob(pairs[N, j, nxt], per_label[NJ, j],
                                              per_label[MK, nxt], m_tot, alpha, gamma, kappa, j,
                                              nxt))
        else:
            log_final[c] = 0.0
    for l in range(1, L):
        for c in range(2):
            j = cand[l - 1, c]
            for d in range(2):
                k = cand[l, d]
                log_tr[l, c, d] = math.log(pred_prob(pairs[N, j, k], per_label[NJ, j],
                                                     per_label[MK, k], m_tot, alpha, gamma, kappa,
                                                     j, k))


@nrt_free
def _chain_trials(s, stats, x, data, widths, start, max_width, fam, hyp, early_stop, rng, work,
                  counts):
    """Chain trials ``start .. len(widths) - 1``, trial ``i`` of width ``widths[i]``.

    Returns the number of trials done (fewer when fewer than ``max_width >=
    widths`` labels are free: the caller grows the seating and resumes).
    ``data`` is ``(Y, seq_first, seq_last)``, ``work`` ``(fb, fe, order,
    xsave, emit_buf, tr_buf, fwd_buf, cand, path_buf, small, ibuf)``
    (``small``: 4 floats; ``ibuf``: ``T + 2 + 4 * max_width`` integers; the
    others of :func:`chain_moves`). Like :func:`_sm_trials`, it allocates
    nothing (reference counting off), so its work arrays are parameters, and
    a trial's steps stay in this loop because they share its draws and its
    undo log.
    """
    rng = as_generator(rng)
    Y, seq_first, seq_last = data
    fb, fe, order, xsave, emit_buf, tr_buf, fwd_buf, cand, path_buf, small, ibuf = work
    T = x.shape[0]
    pairs, per_label, tables, undo_log, totals, conc = s
    log_init = small[0:2]
    log_final = small[2:4]
    la_ = ibuf[0:max_width]
    lc_ = ibuf[max_width:2 * max_width]
    labs = ibuf[2 * max_width:4 * max_width]
    iwork = ibuf[4 * max_width:]
    n_trials = widths.shape[0]
    for trial in range(start, n_trials):
        if n_free_labels(per_label) < max_width:
            return trial
        # ---- 1. anchors, threshold; split, merge or nothing ----
        w = widths[trial]
        t1, t2, log_u = _draw_anchors(T - w + 1, rng)
        if abs(t1 - t2) < w:
            counts[_VOID] += 1
            continue
        n_same = 0
        for i in range(w):
            la_[i] = x[t2 + i]
            lc_[i] = x[t1 + i]
            if la_[i] == lc_[i]:
                n_same += 1
        valid = n_same == w or n_same == 0
        for i in range(w):
            for j in range(i):
                if la_[i] == la_[j] or lc_[i] == lc_[j]:
                    valid = False
            if n_same == 0:
                for j in range(w):
                    if la_[i] == lc_[j]:
                        valid = False
        if not valid:
            counts[_VOID] += 1
            continue
        split = n_same == w
        if split:
            # fresh labels, chosen while the a labels still hold their steps
            k = 0
            for i in range(w):
                k = free_label(per_label, k + 1)
                lc_[i] = k
        for i in range(w):
            labs[i] = la_[i]
            labs[w + i] = lc_[i]
        U = _label_fragments(x, seq_first, labs, 2 * w, fb, fe)
        # fragments holding an anchor first (time order), the others in
        # uniformly random order: the same law in both directions
        n_anch = 0
        for f in range(U):
            if _holds_anchor(fb[f], fe[f], t1, t2, w):
                order[n_anch] = f
                n_anch += 1
        n_rest = n_anch
        for f in range(U):
            if not _holds_anchor(fb[f], fe[f], t1, t2, w):
                order[n_rest] = f
                n_rest += 1
        _shuffle(order, n_anch, U, rng)

        # ---- 2. remove F_U .. F_1 (q_old of a merge on the way) ----
        clear_log(totals)
        log_r_old = 0.0
        log_q_old = 0.0
        for i in range(U - 1, -1, -1):
            fb_, fe_, prev, nxt = _fragment(order[i], fb, fe, x, seq_first, seq_last)
            L = fe_ - fb_
            log_r_old += _remove_fragment(s, stats, x, Y, xsave, fb_, fe_, prev, nxt, fam, hyp,
                                          rng, iwork)
            if not split:
                _chain_hmm(s, stats, x, Y, fb_, L, prev, nxt, t1, t2, w, la_, lc_, fam, hyp,
                           cand, log_init, tr_buf, emit_buf, log_final)
                for l in range(L):
                    path_buf[l] = 0 if x[fb_ + l] == cand[l, 0] else 1
                log_z = two_state_forward(log_init, tr_buf, 1, emit_buf, log_final, L, fwd_buf)
                log_q_old += two_state_path_weight(log_init, tr_buf, 1, emit_buf, log_final, L,
                                                    path_buf) - log_z

        # ---- 3. allocate and add F_1 .. F_U ----
        log_r_new = 0.0
        log_q_new = 0.0
        n_added = U
        for i in range(U):
            fb_, fe_, prev, nxt = _fragment(order[i], fb, fe, x, seq_first, seq_last)
            L = fe_ - fb_
            if split:
                _chain_hmm(s, stats, x, Y, fb_, L, prev, nxt, t1, t2, w, la_, lc_, fam, hyp,
                           cand, log_init, tr_buf, emit_buf, log_final)
                log_z = two_state_forward(log_init, tr_buf, 1, emit_buf, log_final, L, fwd_buf)
                two_state_sample(tr_buf, 1, log_final, fwd_buf, L, rng, path_buf)
                log_q_new += two_state_path_weight(log_init, tr_buf, 1, emit_buf, log_final, L,
                                                    path_buf) - log_z
                for l in range(L):
                    x[fb_ + l] = cand[l, path_buf[l]]
            else:
                # discrete emissions: the factors still to come are <= 1
                if early_stop and log_r_new - log_r_old + log_q_old <= log_u:
                    n_added = i
                    counts[_EARLY] += 1
                    break
                for l in range(L):
                    t = fb_ + l
                    for g in range(w):
                        if x[t] == lc_[g]:
                            x[t] = la_[g]
            log_r_new += add_seq(pairs, per_label, tables, undo_log, totals, conc,
                                 stats, x[fb_:fe_], Y, fb_, prev, nxt, fam, hyp, rng, iwork)

        # ---- 4. accept, or restore the exact old state ----
        log_ratio = log_r_new - log_r_old + log_q_old - log_q_new
        accept = n_added == U and log_u < log_ratio
        _settle(s, counts, split, accept)
        if not accept:
            _restore_fragments(per_label, stats, x, Y, xsave, order, fb, fe, U, n_added, fam,
                               iwork)
    return n_trials


def _trial_room(state, T, labels):
    """What a trial may need: ``labels`` free labels; table slots for every
    customer (``<= T`` customers, hence tables, at any time) beyond those in
    use; ``<= 2 T`` logged operations."""
    return labels, T - state.seating.n_tables + 8, 2 * T + 8


def split_merge_moves(state, problem, n_trials, rng, early_stop=None):
    """Run ``n_trials`` split-merge trials on a collapsed state.

    Parameters
    ----------
    state : sk_ihmm.samplers._collapsed.CollapsedState
        Chain state, modified in place (arrays may be replaced when grown).
    problem : sk_ihmm._chain.Problem
        Data, sequence boundaries and emission kernels.
    n_trials : int
        Number of trials.
    rng : numpy.random.Generator
        Source of every random draw.
    early_stop : bool or None, default=None
        Stop a merge as soon as its partial acceptance ratio falls below the
        threshold. ``None`` enables it exactly when it is valid: for
        discrete emissions, whose predictive probabilities are ``<= 1``.

    Returns
    -------
    counts : ndarray of shape (5,), int64
        Splits tried, splits accepted, merges tried, merges accepted, merges
        rejected early.
    """
    counts = np.zeros(5, np.int64)
    T = state.x.shape[0]
    if n_trials <= 0 or T < 2:
        return counts
    if early_stop is None:
        early_stop = problem.emission.discrete
    # fragment bounds and order, saved labels, the restricted HMM's
    # emissions and forward messages, the drawn path
    work = (np.empty(T, np.int64), np.empty(T, np.int64), np.empty(T, np.int64),
            np.empty(T, np.int64), np.empty((T, 2)), np.empty((T, 2)), np.empty(T, np.int64),
            np.empty(8), np.empty(T + 2, np.int64))
    data = (problem.Y, problem.seq_first, problem.seq_last)

    def run(done):
        # the anchor weights: one per label slot, as many as the seating has now
        label_w = np.empty(state.seating.per_label.shape[1])
        done = _sm_trials(
            state.seating, state.stats, state.x, data, int(n_trials), done, problem.fam,
            state.hyp, bool(early_stop), generator_handle(rng), work + (label_w,), counts)
        return done, done >= n_trials

    run_resumable(state, lambda: _trial_room(state, T, 2), run)
    return counts


def chain_moves(state, problem, widths, rng, early_stop=None):
    """Run one chain trial of each width in ``widths`` on a collapsed state.

    Parameters are those of :func:`split_merge_moves`, with ``widths``
    (ints ``>= 1``) in place of ``n_trials``.

    Returns
    -------
    counts : ndarray of shape (6,), int64
        Splits tried, splits accepted, merges tried, merges accepted, merges
        rejected early, trials that were neither (anchors that overlap, or
        mix equal and different labels, or repeat a label).
    """
    counts = np.zeros(6, np.int64)
    T = state.x.shape[0]
    widths = np.ascontiguousarray(widths, dtype=np.int64)
    if widths.shape[0] == 0:
        return counts
    max_width = int(widths.max())
    if 2 * max_width > T:
        raise ValueError(f"chain width {max_width} needs at least {2 * max_width} steps.")
    if early_stop is None:
        early_stop = problem.emission.discrete
    # as in split_merge_moves, plus a transition matrix and two candidates per step
    work = (np.empty(T, np.int64), np.empty(T, np.int64), np.empty(T, np.int64),
            np.empty(T, np.int64), np.empty((T, 2)), np.empty((T, 2, 2)), np.empty((T, 2)),
            np.empty((T, 2), np.int64), np.empty(T, np.int64), np.empty(4),
            np.empty(T + 2 + 4 * max_width, np.int64))
    data = (problem.Y, problem.seq_first, problem.seq_last)

    def run(done):
        done = _chain_trials(
            state.seating, state.stats, state.x, data, widths, done, max_width, problem.fam,
            state.hyp, bool(early_stop), generator_handle(rng), work, counts)
        return done, done >= widths.shape[0]

    run_resumable(state, lambda: _trial_room(state, T, max_width + 1), run)
    return counts


def init(problem, x0, rng):
    """Initial state: seat the labelled sequence ``x0``."""
    return init_collapsed(problem, x0, rng)


def _options(problem):
    base, trials = str(option(problem, "base_sampler")), int(option(problem, "split_merge_trials"))
    width = int(option(problem, "split_merge_width"))
    if base != "none" and base not in _BASE_STEPS:
        raise ValueError(
            f"base_sampler must be one of {sorted(_BASE_STEPS) + ['none']}, got {base!r}."
        )
    if trials < 0:
        raise ValueError(f"split_merge_trials must be >= 0, got {trials}.")
    if width < 1:
        raise ValueError(f"split_merge_width must be >= 1, got {width}.")
    return base, trials, width


def step(state, problem, rng):
    """One sweep: a base-sampler sweep, the split-merge trials (one-state,
    then chain), hyperparameters.

    Returns
    -------
    info : dict
        ``accept_rate`` of the base sampler (``nan`` for ``"none"``) and its
        other statistics, ``split_accept`` and ``merge_accept`` (accepted
        fraction of the splits / merges tried in this sweep, ``nan`` when none
        was tried).
    """
    base, trials, width = _options(problem)
    info = {"accept_rate": np.nan}
    if base != "none":
        # the base sweep leaves the concentrations alone; they are resampled
        # once, after the split-merge trials (a family's own hyperparameters
        # are drawn at the end of both: each draw keeps the posterior)
        info.update(_BASE_STEPS[base](state, problem._replace(resample=np.zeros(3, np.bool_)), rng))
    counts = split_merge_moves(state, problem, trials, rng)
    # chain trials come on top of the one-state ones, which merge down from
    # many states; the widths do not depend on the state, so the sweep is a
    # composition of kernels that each keep the posterior invariant
    width = min(width, state.x.shape[0] // 2)
    if width > 1 and trials:
        counts[:5] += chain_moves(state, problem, 2 + rng.integers(width - 1, size=trials),
                                  rng)[:5]
    finish_sweep(state, problem, rng)
    n_split, n_merge = counts[_N_SPLIT], counts[_N_MERGE]
    info["split_accept"] = counts[_ACC_SPLIT] / n_split if n_split else np.nan
    info["merge_accept"] = counts[_ACC_MERGE] / n_merge if n_merge else np.nan
    return info
