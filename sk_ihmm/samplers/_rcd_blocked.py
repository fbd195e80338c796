"""Blocked RCD samplers: forward-backward (``rcd_blocked``) and beam (``rcd_beam``).

Makino et al. (2011), Sections 4.2-4.3, Algorithm 8 and Eq. 34; the beam
pass after Van Gael et al. (2008). A sweep cuts every sequence into blocks of
at most ``block_size`` steps (option ``block_size``, else
:data:`DEFAULT_BLOCK_SIZE` or :data:`DEFAULT_BEAM_BLOCK_SIZE`, but no more
than an eighth of the observed steps, :data:`MIN_BLOCKS`) at a random
offset, and gives every block, in random order, one Metropolis-Hastings move
through the restricted collapsed draw:

1. build a candidate HMM -- the labels in use outside the block plus one
   symbol ``new`` -- from the counts and statistics of the steps outside it;
2. draw a path by FFBS or by one beam move from the old path, and name each
   ``new`` through the auxiliary CRP ``Q*`` of concentration ``gamma``;
3. remove and re-seat only the steps from the first to the last that differ,
   and accept with probability ``min(1, r* / r_old * q(x_old) / q(x*))``
   (Makino Eq. 29); a rejection replays the undo log.

Invariants: the proposal weights depend only on the labels and observations
outside the block, so both directions of a move read the same weights;
blocks never cross sequence boundaries; a proposal equal to the current block
changes nothing and counts as accepted. After the moves, each block's
customers get a Gibbs update of their tables with probability
:data:`RESEAT_PROB`. The kernel allocates nothing; it stops early when room
runs short, and the driver grows the state or the scratch and resumes.

Derivation and exactness argument: doc/internals.rst, section "Blocked moves
(samplers/_rcd_blocked.py)".
"""

import math

import numpy as np
from numba import njit

from .._hcrp import (N_DISHES, N_FREE_SLOTS, MK, NJ, OCC, N, clear_log, free_label, n_free_labels,
                     undo)
from .._messages import beam_sample_linear, ffbs_linear, linear_weights, path_log_weight_linear
from .._nrt import nrt_free, uniform_int
from .._rng import as_generator, generator_handle
from ..emissions import log_proposal_block, move_stats
from . import option
from ._collapsed import finish_sweep, init_collapsed, run_resumable
from ._seqmoves import add_seq, lift_seq, move_emissions, remove_seq, reseat_seq

__all__ = ["init", "step_blocked", "step_beam", "DEFAULT_BLOCK_SIZE",
           "DEFAULT_BEAM_BLOCK_SIZE", "MIN_BLOCKS"]

#: Block length of ``rcd_blocked`` when option ``block_size`` is
#: ``None``. Longer blocks pay the per-block work (the candidate matrix, the
#: proposal bookkeeping) less often while the acceptance rate falls only
#: slowly; blocks of 64 mixed the number of states worse per CPU second than
#: blocks of 32, so this sampler keeps 32.
DEFAULT_BLOCK_SIZE = 32

#: Block length of ``rcd_beam`` when option ``block_size`` is ``None``.
#: With blocks of 64 rather than 32 the beam sampler mixed both the joint
#: log-likelihood and the number of states better per CPU second (measured
#: with uniform slices, before :data:`BEAM_SLICE_SHAPE`).
DEFAULT_BEAM_BLOCK_SIZE = 64

#: Shape ``a`` of the Beta(a, 1) slice variables of ``rcd_beam``'s beam
#: pass (:func:`sk_ihmm._messages.beam_sample_linear`; 1 is the uniform slice).
BEAM_SLICE_SHAPE = 0.1

#: Probability with which each block's customers get a Gibbs update of their
#: tables at the end of a sweep (:func:`_reseat_blocks`). A block move
#: re-seats only the steps it changes, so the tables -- which the labels'
#: proposals never read, but the updates of ``alpha`` and ``gamma`` do --
#: would otherwise mix slowly; at this probability the concentrations mix per
#: CPU second as well as when every changed block is re-seated, for a small
#: share of the sweep.
RESEAT_PROB = 0.1

#: With ``block_size=None`` a block holds at most ``1 / MIN_BLOCKS`` of the
#: observed training steps (and at least 2 steps). The proposal reads only the
#: steps outside the block, so a block holding most of the data proposes
#: from little more than the prior and is almost never accepted: on a single
#: 30-step sequence a 32-step block did not move in 6,000 sweeps.
MIN_BLOCKS = 8


@njit(cache=True, nogil=True)
def _make_blocks(starts, ends, block_size, offsets, bstart, bend):
    """Cut each sequence ``[starts[i], ends[i])`` into blocks.

    A sequence of at most ``block_size`` steps is one block; a longer one is
    cut at ``starts[i] + offsets[i] + k * block_size`` (``k >= 0``), skipping
    an empty first block. Writes the blocks into ``bstart``, ``bend`` (room
    for :func:`_max_blocks`) and returns their number.
    """
    c = 0
    for i in range(starts.shape[0]):
        a, z = starts[i], ends[i]
        if z - a <= block_size:
            bstart[c] = a
            bend[c] = z
            c += 1
            continue
        b = a
        e = a + offsets[i] if offsets[i] > 0 else a + block_size
        while b < z:
            bstart[c] = b
            bend[c] = min(e, z)
            c += 1
            b = e
            e += block_size
    return c


def _max_blocks(starts, ends, block_size):
    """Most blocks :func:`_make_blocks` can cut, whatever the offsets."""
    return int(np.sum(1 + -(-(ends - starts) // block_size)))


@njit(cache=True, nogil=True)
def _plan_sweep(starts, ends, block_size, rng, offsets, bstart, bend, order):
    """The blocks of a sweep at random offsets, in random order: fills
    ``offsets``, ``bstart``, ``bend`` and ``order`` (a uniform permutation of
    the blocks, Fisher-Yates); returns the number of blocks."""
    for i in range(starts.shape[0]):
        offsets[i] = uniform_int(block_size, rng)
    n = _make_blocks(starts, ends, block_size, offsets, bstart, bend)
    for i in range(n):
        order[i] = i
    for i in range(n - 1, 0, -1):
        j = uniform_int(i + 1, rng)
        order[i], order[j] = order[j], order[i]
    return n


# The auxiliary CRP Q of Makino Algorithm 8: tables qlab[:nq] (labels) with
# qcnt[:nq] customers, qn customers in all, concentration gamma.
@njit(cache=True, nogil=True)
def _crp_log_prob(qlab, qcnt, nq, qn, label, gamma):
    """Log probability that the CRP seats a customer at the table of ``label``
    (a new table if no table has it). Returns ``(log_prob, table)``; ``table ==
    nq`` means a new table."""
    for i in range(nq):
        if qlab[i] == label:
            return math.log(qcnt[i] / (qn + gamma)), i
    return math.log(gamma / (qn + gamma)), nq


@njit(cache=True, nogil=True)
def _crp_draw(qcnt, nq, qn, gamma, rng):
    """Draw the table of a new customer. Returns ``(table, log_prob)``;
    ``table == nq`` means a new table."""
    u = rng.random() * (qn + gamma)
    acc = 0.0
    for i in range(nq):
        acc += qcnt[i]
        if u < acc:
            return i, math.log(qcnt[i] / (qn + gamma))
    return nq, math.log(gamma / (qn + gamma))


@njit(cache=True, nogil=True)
def _crp_seat(qlab, qcnt, nq, table, label):
    """Seat a customer at ``table`` (opening it with ``label`` if ``table ==
    nq``); returns the new number of tables."""
    if table < nq:
        qcnt[table] += 1
        return nq
    qlab[nq] = label
    qcnt[nq] = 1
    return nq + 1


@njit(cache=True, nogil=True)
def _scratch_sizes(l_max, C, width):
    """Lengths of the float and the int64 pieces of the blocked kernel's
    scratch, in the order :func:`_carve` takes them (blocks of at most
    ``l_max`` steps, label capacity ``C``, at most ``width`` candidates)."""
    floats = (C, C, C, C * C, l_max * width,
              (l_max + 3) * width + l_max * width + width * width,
              l_max * width, l_max * (width + 1))
    ints = (l_max, l_max, l_max, l_max, l_max + 1, l_max + 1, l_max, C, C,
            l_max + 1 + (l_max + 2) * width, l_max)
    return floats, ints


def _scratch(l_max, C, width):
    """Scratch arrays ``(fbuf, ibuf)`` of :func:`_blocked_sweep`."""
    floats, ints = _scratch_sizes(l_max, C, width)
    return np.empty(sum(floats)), np.empty(sum(ints), np.int64)


@njit(cache=True, nogil=True, inline="always")
def _take(buf, o, n):
    return buf[o:o + n], o + n


@njit(cache=True, nogil=True, inline="always")
def _carve(fbuf, ibuf, l_max, C, width):
    """The views of :func:`_scratch`'s arrays (see the kernel for their use)."""
    f, i = _scratch_sizes(l_max, C, width)
    init_buf, o = _take(fbuf, 0, f[0])
    final_buf, o = _take(fbuf, o, f[1])
    root_buf, o = _take(fbuf, o, f[2])
    trans_buf, o = _take(fbuf, o, f[3])
    emit_buf, o = _take(fbuf, o, f[4])
    work, o = _take(fbuf, o, f[5])
    lin_buf, o = _take(fbuf, o, f[6])
    lw_scratch, o = _take(fbuf, o, f[7])
    x_old, o = _take(ibuf, 0, i[0])
    x_new, o = _take(ibuf, o, i[1])
    p_old, o = _take(ibuf, o, i[2])
    p_new, o = _take(ibuf, o, i[3])
    qlab, o = _take(ibuf, o, i[4])
    qcnt, o = _take(ibuf, o, i[5])
    iwork, o = _take(ibuf, o, i[6])
    cand, o = _take(ibuf, o, i[7])
    index, o = _take(ibuf, o, i[8])
    iwork_beam, o = _take(ibuf, o, i[9])
    fresh, o = _take(ibuf, o, i[10])
    return (init_buf, final_buf, root_buf, trans_buf, emit_buf, lin_buf, lw_scratch, work,
            x_old, x_new, p_old, p_new, qlab, qcnt, iwork, cand, index, iwork_beam, fresh)


@njit(cache=True, nogil=True, inline="always")
def _room(L):
    """``(labels, tables)``: the free labels, and the free table slots and
    undo-log rows, a move on a block of ``L`` steps may need. The kernel
    stops below them; the driver grows the seating to them and resumes."""
    need = L + 2
    return need, 3 * need


@njit(cache=True, nogil=True, inline="always")
def _candidates(per_label, totals, cand, index):
    """The labels in use outside the lifted block into ``cand[:K]`` (``index``
    maps each to its column) and a free label for 'new' into ``cand[K]``;
    returns ``K``. A label is in use iff a root table serves it; a candidate
    is one in use outside the block."""
    K = 0
    seen = 0
    n_used = totals[N_DISHES]
    for k in range(1, per_label.shape[1]):
        if seen == n_used:
            break
        if per_label[MK, k] > 0:
            seen += 1
            if per_label[OCC, k] > 0:
                cand[K] = k
                index[k] = K
                K += 1
    cand[K] = free_label(per_label, 1)  # 'new'
    return K


@njit(cache=True, nogil=True, inline="always")
def _candidate_weights(pairs, per_label, cand, index, K, prev, nxt, alpha, gamma, kappa,
                       root_w, init, trans, final):
    """Linear weights of the candidate HMM from the lifted counts: ``init``
    (from ``prev``), ``trans`` and ``final`` (into ``nxt``; ones at a
    sequence end), ``(n'[j, k] + alpha p0'(k) + [j == k] kappa) / (n'_j +
    alpha + kappa)`` with root weights ``alpha m'_d / (m' + gamma)``, ``m'_d``
    about the tables the lifted counts open (doc/internals.rst, "Blocked
    moves")."""
    K1 = K + 1
    m_tot = 0.0
    theta = alpha / K1
    for d in range(K):
        cd = cand[d]
        n0 = pairs[N, 0, cd]
        r = 1.0 + theta * math.log(n0) if n0 > 0 else 0.0
        for c in range(K):
            n0 = pairs[N, cand[c], cd]
            if n0 > 0:
                r += 1.0 + theta * math.log(n0)
        root_w[d] = max(r, 1.0)
        m_tot += root_w[d]
    root_w[K] = gamma
    scale = alpha / (m_tot + gamma)
    for d in range(K1):
        root_w[d] *= scale
    jp = index[prev] if prev > 0 else -1
    kp = kappa if prev > 0 else 0.0
    inv0 = 1.0 / (per_label[NJ, prev] + alpha + kp)
    kf = index[nxt] if nxt > 0 else -1
    for c in range(K1):
        k = cand[c]
        init[c] = (pairs[N, prev, k] + root_w[c] + (kp if c == jp else 0.0)) * inv0
        inv = 1.0 / (per_label[NJ, k] + alpha + kappa)
        for d in range(K1):
            trans[c, d] = (pairs[N, k, cand[d]] + root_w[d]) * inv
        trans[c, c] += kappa * inv
        final[c] = 1.0 if nxt <= 0 else trans[c, kf]


@njit(cache=True, nogil=True, inline="always")
def _current_path(xo, index, K, po, fresh):
    """The block's current labels as candidate columns into ``po``: a label
    used only inside the block is 'new' (column ``K``), and ``fresh`` lists
    those labels in the order they first appear; returns their number."""
    n_old = 0
    for l in range(xo.shape[0]):
        c = index[xo[l]]
        if c >= 0:
            po[l] = c
            continue
        po[l] = K
        i = 0
        while i < n_old and fresh[i] != xo[l]:
            i += 1
        if i == n_old:
            fresh[n_old] = xo[l]
            n_old += 1
    return n_old


@njit(cache=True, nogil=True, inline="always")
def _label_proposal(pn, cand, K, fresh, n_old, per_label, qlab, qcnt, gamma, rng, xn):
    """Labels ``xn`` of the proposal path ``pn``: a candidate column keeps its
    label, the 'new' steps are seated in the auxiliary CRP Q*, whose i-th
    table gets the i-th label of ``fresh``, then free labels. Returns ``(log
    Q*(xn), number of free labels taken)``."""
    nq, qn = np.int64(0), np.int64(0)   # not 0: see _pgas._csmc
    next_free = 1
    n_fresh = 0
    log_q = 0.0
    for l in range(pn.shape[0]):
        if pn[l] < K:
            xn[l] = cand[pn[l]]
            continue
        t, lq = _crp_draw(qcnt, nq, qn, gamma, rng)
        log_q += lq
        if t < nq:
            label = qlab[t]
        elif t < n_old:
            label = fresh[t]
        else:
            label = free_label(per_label, next_free)
            next_free = label + 1
            n_fresh += 1
        nq = _crp_seat(qlab, qcnt, nq, t, label)
        qn += 1
        xn[l] = label
    return log_q, n_fresh


@njit(cache=True, nogil=True, inline="always")
def _log_q_current(log_q, po, xo, K, qlab, qcnt, gamma):
    """``log_q`` plus the log probability that Q* seats the current block's
    'new' steps as they are labelled (added term by term: the sum's rounding
    is part of the chain)."""
    nq, qn = np.int64(0), np.int64(0)
    for l in range(po.shape[0]):
        if po[l] < K:
            continue
        lq, t = _crp_log_prob(qlab, qcnt, nq, qn, xo[l], gamma)
        log_q += lq
        nq = _crp_seat(qlab, qcnt, nq, t, xo[l])
        qn += 1
    return log_q


@nrt_free
def _blocked_sweep(s, stats, x, Y, seq_first, seq_last, plan, n_blocks, start,
                   beam, fam, hyp, prior_pred, rng, fbuf, ibuf, l_max, width, reseat):
    """One RCD move per block ``order[start:n_blocks]``; stop early when
    capacity runs low. After the last block, the tables of each block's
    customers get a Gibbs update with probability ``reseat``
    (:func:`_reseat_blocks`).

    ``plan`` is ``(starts, ends, block_size, offsets, bstart, bend, order)``:
    the sequence bounds, the block size and the buffers of
    :func:`_plan_sweep`, which draws the sweep's blocks first when
    ``n_blocks < 0``. ``beam`` is ``None`` for forward-backward proposals
    and ``True`` for beam proposals: numba prunes the branch on ``is None``
    at compile time, so each sampler compiles only its own path draw.

    Returns ``(stop, n_accepted, n_visited, width, n_blocks)``: ``stop ==
    n_blocks`` when done, else the position in ``order`` to resume from
    after growing the state or, when the returned ``width`` exceeds the one
    given, the scratch (the candidate HMM of the next block needs more
    columns); ``n_visited`` sums the (step, state) pairs the beam kept.

    Compiled with numba's reference counting off (:func:`sk_ihmm._nrt.nrt_free`),
    so it allocates nothing: ``fbuf``, ``ibuf`` come from :func:`_scratch`.
    It takes the state's arrays one by one (19 parameters) because a numba
    kernel cannot take the Python objects that group them. Each step of a
    block move is a named inline helper (``lift_seq``, :func:`_candidates`,
    :func:`_candidate_weights`, :func:`_label_proposal`, ``remove_seq`` /
    ``add_seq``, ...); what stays here (about 140 lines) is their sequence,
    which shares the block's buffers, the candidate index and the undo log.
    """
    rng = as_generator(rng)
    pairs, per_label, tables, undo_log, totals, conc = s
    C = pairs.shape[1]
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    (init_buf, final_buf, root_buf, trans_buf, emit_buf, lin_buf, lw_scratch, work, x_old,
     x_new, p_old, p_new, qlab, qcnt, iwork, cand, index, iwork_beam, fresh) = _carve(
         fbuf, ibuf, l_max, C, width)
    starts, ends, block_size, offsets, bstart, bend, order = plan
    if n_blocks < 0:
        n_blocks = _plan_sweep(starts, ends, block_size, rng, offsets, bstart, bend, order)
    for k in range(C):
        index[k] = -1                  # label -> candidate column, -1 = 'new'
    n_acc = 0
    n_vis = 0
    # a lower bound on the free labels, recounted (a pass over all C labels)
    # only when it drops below a block's need: a block takes at most the
    # fresh labels Q* opens in it, and freeing labels only raises the count
    free_lb = -1
    for i in range(start, n_blocks):
        b = bstart[order[i]]
        e = bend[order[i]]
        L = e - b
        need, need_tables = _room(L)
        if free_lb < need:
            free_lb = n_free_labels(per_label)
        if totals[N_FREE_SLOTS] < need_tables or undo_log.shape[0] < need_tables or free_lb < need:
            return i, n_acc, n_vis, width, n_blocks
        # the candidates are at most the labels in use, plus 'new'
        n_served = totals[N_DISHES]
        if n_served + 1 > width:
            return i, n_acc, n_vis, n_served + 1, n_blocks
        prev = 0 if seq_first[b] else x[b - 1]
        nxt = -1 if seq_last[e - 1] else x[e]
        xo = x_old[:L]
        xn = x_new[:L]
        po = p_old[:L]
        pn = p_new[:L]
        for l in range(L):
            xo[l] = x[b + l]

        # ---- 1. lift the block: counts and statistics of the steps outside it ----
        lift_seq(pairs, per_label, xo, prev, nxt, -1)
        move_stats(fam, stats, Y, b, xo, -1.0, iwork)

        # ---- 2. candidate HMM from the labels outside the block ----
        K = _candidates(per_label, totals, cand, index)
        K1 = K + 1
        init = init_buf[:K1]
        final = final_buf[:K1]
        trans = trans_buf[:K1 * K1].reshape((K1, K1))
        # emission weights label-major (K1, L), read step-major through .T
        log_emit = emit_buf[:K1 * L].reshape((K1, L))
        weights = lin_buf[:K1 * L].reshape((K1, L))
        emit = weights.T
        _candidate_weights(pairs, per_label, cand, index, K, prev, nxt, alpha, gamma, kappa,
                           root_buf[:K1], init, trans, final)
        # the label standing for 'new' is free: its statistics are all zero
        # (weights, filled just after, is the call's scratch)
        log_proposal_block(fam, stats, cand, K1, hyp, Y, b, L, log_emit, prior_pred,
                           lin_buf[:K1 * L])
        linear_weights(log_emit, weights, lw_scratch[:(K1 + 1) * L].reshape((K1 + 1, L)))
        n_old = _current_path(xo, index, K, po, fresh)
        for c in range(K):
            index[cand[c]] = -1
        lift_seq(pairs, per_label, xo, prev, nxt, 1)
        move_stats(fam, stats, Y, b, xo, 1.0, iwork)

        # ---- 3. proposal path, then labels for 'new' through Q* ----
        if beam is None:
            ffbs_linear(init, trans, emit, final, rng, pn, work)
        else:
            n_vis += beam_sample_linear(init, trans, emit, final, po, rng, pn,
                                        work, iwork_beam, BEAM_SLICE_SHAPE)
        log_q_new, n_fresh = _label_proposal(pn, cand, K, fresh, n_old, per_label, qlab, qcnt,
                                             gamma, rng, xn)
        l1 = 0
        while l1 < L and xn[l1] == xo[l1]:
            l1 += 1
        if l1 == L:
            # the proposal is the current block: the identity (see the
            # exactness argument in doc/internals.rst, "Blocked moves")
            n_acc += 1
            continue
        l2 = L - 1
        while xn[l2] == xo[l2]:
            l2 -= 1
        log_q_new += path_log_weight_linear(init, trans, emit, final, pn)
        log_q_old = _log_q_current(path_log_weight_linear(init, trans, emit, final, po),
                                   po, xo, K, qlab, qcnt, gamma)

        # ---- 4. RCD on the steps l1 .. l2 where the labels differ ----
        bd = b + l1
        xod = xo[l1:l2 + 1]
        xnd = xn[l1:l2 + 1]
        prevd = prev if l1 == 0 else xo[l1 - 1]
        nxtd = nxt if l2 == L - 1 else xo[l2 + 1]
        clear_log(totals)
        log_r_old = remove_seq(pairs, per_label, tables, undo_log, totals, conc,
                               stats, xod, Y, bd, prevd, nxtd, fam, hyp, rng, iwork)
        log_r_new = add_seq(pairs, per_label, tables, undo_log, totals, conc,
                            stats, xnd, Y, bd, prevd, nxtd, fam, hyp, rng, iwork)
        log_ratio = log_r_new - log_r_old + log_q_old - log_q_new
        # the uniform is drawn whatever the ratio, so the number of draws does not
        # depend on the rounding of a ratio that is 0 in exact arithmetic (the
        # chains of data in other units stay identical)
        u = rng.random()
        if log_ratio >= 0.0 or u < math.exp(log_ratio):
            for l in range(l1, l2 + 1):
                x[b + l] = xn[l]
            n_acc += 1
            free_lb -= n_fresh
            clear_log(totals)
        else:
            undo(pairs, per_label, tables, undo_log, totals, conc)
            move_emissions(per_label, stats, Y, bd, xnd, xod, fam, iwork)
    _reseat_blocks(pairs, per_label, tables, undo_log, totals, conc, x, seq_first, seq_last,
                   bstart, bend, n_blocks, reseat, rng)
    return n_blocks, n_acc, n_vis, width, n_blocks


@njit(cache=True, nogil=True)
def _reseat_blocks(pairs, per_label, tables, undo_log, totals, conc, x, seq_first, seq_last,
                   bstart, bend, n_blocks, prob, rng):
    """Gibbs update of the tables (:func:`~sk_ihmm.samplers._seqmoves.reseat_seq`)
    of the customers of each block ``bstart[i] .. bend[i] - 1`` with
    probability ``prob``."""
    for i in range(n_blocks):
        if rng.random() >= prob:
            continue
        b = bstart[i]
        e = bend[i]
        prev = 0 if seq_first[b] else x[b - 1]
        nxt = -1 if seq_last[e - 1] else x[e]
        reseat_seq(pairs, per_label, tables, undo_log, totals, conc, x[b:e], prev, nxt, rng)


def init(problem, x0, rng):
    """Initial state: seat the labelled sequence ``x0``."""
    return init_collapsed(problem, x0, rng)


def _block_size(problem, use_beam):
    size = option(problem, "block_size")
    if size is None:
        size = DEFAULT_BEAM_BLOCK_SIZE if use_beam else DEFAULT_BLOCK_SIZE
        n_steps = int(np.count_nonzero(~np.isnan(problem.Y[:, 0])))
        size = min(size, max(2, n_steps // MIN_BLOCKS))
    size = int(size)
    if size < 1:
        raise ValueError(f"block_size must be >= 1, got {size}.")
    return size


def _sweep(state, problem, rng, use_beam):
    """One sweep of block moves followed by the hyperparameter updates.

    The candidate width, the kernel's scratch and the buffers of the block
    plan are kept in ``state.scratch`` between sweeps, so a settled chain
    makes one kernel call per sweep (which also draws the plan). The state
    is grown to the room of the longest block before every call
    (:func:`~sk_ihmm.samplers._collapsed.run_resumable`), and the kernel
    stops early when a block needs more, or a wider scratch.
    """
    size = _block_size(problem, use_beam)
    keep = state.scratch
    if "width" not in keep:
        keep["width"] = 8
        keep["buffers"] = (None, None, None)
    starts, ends = problem.starts, problem.ends
    plan = keep.get("plan")
    if plan is None or plan[0] is not starts or plan[1] is not ends or plan[2] != size:
        n_max = _max_blocks(starts, ends, size)
        plan = keep["plan"] = (starts, ends, size, np.empty(starts.shape[0], np.int64),
                               np.empty(n_max, np.int64), np.empty(n_max, np.int64),
                               np.empty(n_max, np.int64))
        keep["l_max"] = min(size, int((ends - starts).max()))
    l_max = keep["l_max"]
    need, need_tables = _room(l_max)
    handle = generator_handle(rng)      # for both calls; rng is held meanwhile
    n_blocks, n_acc, n_vis = -1, 0, 0

    def run(pos):
        nonlocal n_blocks, n_acc, n_vis
        C = state.seating.pairs.shape[1]
        width = keep["width"] = min(C, keep["width"])
        shape, fbuf, ibuf = keep["buffers"]
        if shape != (l_max, C, width):
            fbuf, ibuf = _scratch(l_max, C, width)
            keep["buffers"] = ((l_max, C, width), fbuf, ibuf)
        pos, acc, vis, wanted, n_blocks = _blocked_sweep(
            state.seating, state.stats, state.x, problem.Y, problem.seq_first,
            problem.seq_last, plan, n_blocks, pos, True if use_beam else None, problem.fam,
            state.hyp,
            problem.prior_pred, handle, fbuf, ibuf, l_max, width, RESEAT_PROB,
        )
        n_acc += acc
        n_vis += vis
        if wanted > width:
            # the kernel stopped for a wider scratch, not for room
            keep["width"] = max(wanted, 2 * width)
        return pos, pos >= n_blocks

    # _room(l_max) covers the needs the kernel checks for any block
    run_resumable(state, lambda: (need, need_tables, need_tables), run)
    finish_sweep(state, problem, handle)
    info = {"accept_rate": n_acc / n_blocks}
    if use_beam:
        info["states_visited"] = n_vis / state.x.shape[0]
    return info


def step_blocked(state, problem, rng):
    """One sweep of blocked RCD Metropolis-Hastings moves (forward-backward
    proposals)."""
    return _sweep(state, problem, rng, False)


def step_beam(state, problem, rng):
    """One sweep of beam RCD moves (slice-restricted forward-backward proposals)."""
    return _sweep(state, problem, rng, True)
