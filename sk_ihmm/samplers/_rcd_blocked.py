"""Blocked RCD samplers: forward-backward (``rcd_blocked``) and beam (``rcd_beam``).

Makino et al. (2011), Sections 4.2-4.3 and Algorithm 8. A sweep cuts every
sequence into blocks of at most ``block_size`` steps (``options["block_size"]``;
when ``None``, :data:`DEFAULT_BLOCK_SIZE` for ``rcd_blocked`` and
:data:`DEFAULT_BEAM_BLOCK_SIZE` for ``rcd_beam``) at a random offset, so the
boundaries move from sweep to sweep; a sequence no longer than the block size
is one block. Blocks never cross sequence boundaries and may contain the
first or last step of a sequence. Every block, in random order, gets one
Metropolis-Hastings move through the restricted collapsed draw:

1. :func:`~sk_ihmm.samplers._seqmoves.remove_seq` removes the customers of
   the block (the transition into it, those inside it, and the transition
   out of it to ``x[e]`` when ``e`` is in the same sequence) and its
   emissions, giving the reduced seating ``s0`` and ``r_old``.
2. The proposal is a finite HMM over the *candidates*: every label served by
   the root in ``s0`` plus one symbol ``new``. Its weights are the HCRP
   predictives in ``s0`` (Makino Eq. 31-32): ``pi_hat[j, k] = get_prob(s0, j,
   k)``, where ``new`` stands for one free label (so the ``new`` row is an
   empty restaurant and ``new -> new`` carries the sticky ``kappa``); the
   initial weights are the row of the label before the block (restaurant 0 at
   a sequence start); the emission weights are the posterior predictives
   ``log_pred(stats0[k], y_t)`` (``new``: empty statistics), except that a
   1-d Gaussian state with more than about a hundred observations gets the
   quadratic form of its Student-t
   (:func:`sk_ihmm.emissions.log_proposal_block`); the final weights
   are the column of ``x[e]``, ``get_prob(s0, k, x[e])``, or 1 at a sequence
   end. These weights only make the proposal: the acceptance ratio below
   scores both paths with the same weights, and the target enters through
   the RCD factors, so the sampler stays exact whatever the weights (only
   the acceptance rate depends on how close they are to the predictives).
3. A path over the candidates is drawn by forward filtering / backward
   sampling (``rcd_blocked``) or by one beam move started from the old path
   (``rcd_beam``). Each appearance of ``new`` becomes a label through the
   auxiliary CRP ``Q*`` of concentration ``gamma`` whose tables carry unused
   labels; when ``x[e]`` exists but is no longer served by the root in
   ``s0`` -- the only way a label can be in use without being a candidate,
   since its incoming customer was the transition out of the block -- ``Q*``
   starts with one customer at the table of ``x[e]``. Every labelled block
   (up to the names of unused labels) is thus proposed in exactly one way,
   with probability (Makino Eq. 34)

   ``q(x) = P_hmm(path(x)) * prod_{new appearances} Q(label | earlier ones)``.

   The old block is mapped the same way: labels free in ``s0`` (and ``x[e]``
   when unserved) become ``new`` and their partition gives ``Q_old``.
4. :func:`~sk_ihmm.samplers._seqmoves.add_seq` seats the proposal, giving
   ``r*``; the move is accepted with probability
   ``min(1, r* / r_old * q(x_old) / q(x*))`` (Makino Eq. 29), otherwise the
   undo log restores the exact old seating and the emissions are moved back.

A proposal equal to the current block. When ``x* == x_old`` (labels, not
only candidate paths) the move would change nothing but the seating of the
block's customers, and the kernel keeps the old seating at once (the undo log
restores it; the emissions are put back) without seating the proposal. This
is exact: given ``s0`` -- a draw of the reduced seating from its exact
conditional, each removed customer leaving a table with probability
proportional to its size -- the move is a Metropolis-Hastings kernel on the
block's labels and seating that satisfies detailed balance pair by pair, and
setting to zero the moves between two states with the same labels (a
symmetric set of pairs) and keeping their mass at the current state leaves
every pair in balance. Such a block counts as accepted in ``accept_rate``
(its labels are those the move keeps). Once a chain has settled, a quarter
to a half of the blocks propose their current labels (25-30% on the 4-state
and 40-50% on the 10-state Gaussian data, blocks of 32), and for those this
saves the seating of the proposal and its two path weights.

Both paths are scored with ``path_log_weight``: ``P_hmm`` is the path weight
divided by one normaliser that depends on ``s0`` only, and ``s0`` is shared by
the forward and the reverse move, so the normaliser cancels.

Why the beam sampler uses the same ratio. The beam move (Van Gael et al.
2008; :func:`sk_ihmm._messages.beam_sample`) is a data-augmentation kernel
``K(a, b)`` on candidate paths that is reversible with respect to
``P_hmm``: ``P_hmm(a) K(a, b) = P_hmm(b) K(b, a)``. Its proposal of a labelled
block is ``K(path(x_old), path(x*)) * Q*``, and the reverse move from ``x*``
(same ``s0``, hence the same ``P_hmm``) proposes ``x_old`` with
``K(path(x*), path(x_old)) * Q_old``; by reversibility

``q(x_old | x*) / q(x* | x_old) = P_hmm(path(x_old)) Q_old / (P_hmm(path(x*)) Q*)``,

exactly the ratio of the forward-backward proposal. The beam move therefore
never needs its own (intractable) transition probability; it only restricts
each step to the candidates that pass the slice, which is cheaper when many
states are represented.

The per-block work runs in one numba kernel, compiled without reference
counting (:func:`sk_ihmm._nrt.nrt_free`), that processes blocks until the
seating runs short of free labels, table slots or undo-log rows, or its
scratch (from the Python driver) of candidate columns; the driver then grows
the state (doubling) or the scratch and resumes, so a sweep is a few kernel
calls. The candidate HMM is built and sampled in linear space
(:func:`sk_ihmm._messages.ffbs_linear`), its transition weights being
probabilities and its emission weights exponentiated per block by the
vectorised :func:`sk_ihmm._messages.linear_weights` (exact for the same
reason as any consistent weights: the forward pass and both path weights
read the same values).
"""

import math

import numpy as np
from numba import njit

from .._hcrp import (_K, _M_TOT, _N_FREE, MK, NJ, OCC, N, clear_log, free_label, n_free_labels,
                     pred_prob, root_prob, undo)
from .._messages import beam_sample_linear, ffbs_linear, linear_weights, path_log_weight_linear
from .._nrt import nrt_free, uniform_int
from .._rng import as_generator, generator_handle
from ..emissions import log_proposal_block, move_stats
from ._collapsed import finish_sweep, init_collapsed
from ._seqmoves import add_seq, move_emissions, remove_seq

__all__ = ["init", "step_blocked", "step_beam", "DEFAULT_BLOCK_SIZE",
           "DEFAULT_BEAM_BLOCK_SIZE"]

#: Block length of ``rcd_blocked`` when ``options["block_size"]`` is
#: ``None``. On the 4- and 10-state Gaussian data (T=4000) a sweep with
#: blocks of 32 costs 0.4-0.6 of one with blocks of 8 (the per-block work --
#: the candidate matrix, the proposal bookkeeping -- is paid four times less
#: often) while the acceptance rate per block stays >= 0.99 (0.99-1.0 with
#: 8). Blocks of 64 cost 4-7% less again and mix the joint log-likelihood
#: better per CPU second, but the number of states worse (stationary chains,
#: 4 seeds: 0.025 -> 0.037 and 0.016 -> 0.020 CPU s per independent draw of
#: K on the 4- and 10-state data), so this sampler keeps 32.
DEFAULT_BLOCK_SIZE = 32

#: Block length of ``rcd_beam`` when ``options["block_size"]`` is ``None``.
#: With blocks of 64 rather than 32 the beam sampler mixes both the joint
#: log-likelihood and the number of states better per CPU second (medians of
#: 4 stationary chains, CPU s per independent draw: log-likelihood 1.60 ->
#: 0.54 and 0.59 -> 0.41, K 0.21 -> 0.10 and 0.13 -> 0.10 on the 4- and
#: 10-state data), its sweep costs 4-5% less, and on Sequence 1 from 30
#: random labels 6 of 6 chains found the 8-state truth within 2 CPU s (5 of
#: 6 with 32).
DEFAULT_BEAM_BLOCK_SIZE = 64


@njit(cache=True)
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


@njit(cache=True)
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
@njit(cache=True)
def _crp_start(qlab, qcnt, seed):
    """Empty CRP, or one customer at the table of label ``seed`` if ``seed > 0``.
    Returns ``(nq, qn)``."""
    if seed > 0:
        qlab[0] = seed
        qcnt[0] = 1
        return 1, 1
    return 0, 0


@njit(cache=True)
def _crp_log_prob(qlab, qcnt, nq, qn, label, gamma):
    """Log probability that the CRP seats a customer at the table of ``label``
    (a new table if no table has it). Returns ``(log_prob, table)``; ``table ==
    nq`` means a new table."""
    for i in range(nq):
        if qlab[i] == label:
            return math.log(qcnt[i] / (qn + gamma)), i
    return math.log(gamma / (qn + gamma)), nq


@njit(cache=True)
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


@njit(cache=True)
def _crp_seat(qlab, qcnt, nq, table, label):
    """Seat a customer at ``table`` (opening it with ``label`` if ``table ==
    nq``); returns the new number of tables."""
    if table < nq:
        qcnt[table] += 1
        return nq
    qlab[nq] = label
    qcnt[nq] = 1
    return nq + 1


@njit(cache=True)
def _scratch_sizes(l_max, C, width):
    """Lengths of the float and the int64 pieces of the blocked kernel's
    scratch, in the order :func:`_carve` takes them (blocks of at most
    ``l_max`` steps, label capacity ``C``, at most ``width`` candidates)."""
    floats = (C, C, C, C * C, l_max * width, (l_max + 2) * width + l_max * width + width * width,
              l_max * width, l_max * (width + 1))
    ints = (l_max, l_max, l_max, l_max, l_max + 1, l_max + 1, l_max, C, C,
            l_max + 1 + (l_max + 2) * width)
    return floats, ints


def _scratch(l_max, C, width):
    """Scratch arrays ``(fbuf, ibuf)`` of :func:`_blocked_sweep`."""
    floats, ints = _scratch_sizes(l_max, C, width)
    return np.empty(sum(floats)), np.empty(sum(ints), np.int64)


@njit(cache=True, inline="always")
def _take(buf, o, n):
    return buf[o:o + n], o + n


@njit(cache=True, inline="always")
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
    return (init_buf, final_buf, root_buf, trans_buf, emit_buf, lin_buf, lw_scratch, work,
            x_old, x_new, p_old, p_new, qlab, qcnt, iwork, cand, index, iwork_beam)


@nrt_free
def _blocked_sweep(s, stats, x, Y, seq_first, seq_last, plan, n_blocks, start,
                   use_beam, fam, hyp, prior_pred, rng, fbuf, ibuf, l_max, width):
    """One RCD move per block ``order[start:n_blocks]``; stop early when
    capacity runs low.

    ``plan`` is ``(starts, ends, block_size, offsets, bstart, bend, order)``:
    the sequence bounds, the block size and the buffers of
    :func:`_plan_sweep`, which draws the sweep's blocks first when
    ``n_blocks < 0``.

    Returns ``(stop, n_accepted, n_visited, width, n_blocks)``: ``stop ==
    n_blocks`` when done, else the position in ``order`` to resume from
    after growing the state or, when the returned ``width`` exceeds the one
    given, the scratch (the candidate HMM of the next block needs more
    columns); ``n_visited`` sums the (step, state) pairs the beam kept.

    Compiled with numba's reference counting off (:func:`sk_ihmm._nrt.nrt_free`),
    so it allocates nothing: ``fbuf``, ``ibuf`` come from :func:`_scratch`.
    """
    rng = as_generator(rng)
    mat, vec, tab, log, scal, conc = s
    C = mat.shape[1]
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    (init_buf, final_buf, root_buf, trans_buf, emit_buf, lin_buf, lw_scratch, work, x_old,
     x_new, p_old, p_new, qlab, qcnt, iwork, cand, index, iwork_beam) = _carve(fbuf, ibuf, l_max,
                                                                               C, width)
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
        need = L + 2
        if free_lb < need:
            free_lb = n_free_labels(vec)
        if scal[_N_FREE] < 3 * need or log.shape[0] < 3 * need or free_lb < need:
            return i, n_acc, n_vis, width, n_blocks
        # removing the block only closes root tables: the candidates are at
        # most the labels served now, plus 'new'
        n_served = scal[_K]
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

        # ---- 1. remove the block: reduced seating s0 ----
        clear_log(scal)
        log_r_old = remove_seq(mat, vec, tab, log, scal, conc,
                               stats, xo, Y, b, prev, nxt, fam, hyp, rng, iwork)

        # ---- 2. candidate HMM in s0 ----
        m_tot = scal[_M_TOT]
        K = 0
        n_served = scal[_K]
        for k in range(1, C):
            if K == n_served:
                break
            if vec[MK, k] > 0:
                cand[K] = k
                index[k] = K
                K += 1
        cand[K] = free_label(vec, 1)  # 'new'
        K1 = K + 1
        init = init_buf[:K1]
        final = final_buf[:K1]
        trans = trans_buf[:K1 * K1].reshape((K1, K1))
        # emission weights label-major (K1, L), read step-major through .T
        log_emit = emit_buf[:K1 * L].reshape((K1, L))
        weights = lin_buf[:K1 * L].reshape((K1, L))
        emit = weights.T
        # pred_prob(j -> k) = (n[j, k] + alpha p0(k) + [j == k] kappa) / (n_j + alpha +
        # kappa) for a state restaurant j: the matrix from the candidates'
        # root terms alpha p0(k) (root_w) and one reciprocal per row, without a
        # division per entry (proposal weights: any consistent values are exact)
        root_w = root_buf[:K1]
        for d in range(K1):
            root_w[d] = alpha * root_prob(vec[MK, cand[d]], m_tot, gamma)
        for c in range(K1):
            k = cand[c]
            init[c] = pred_prob(mat[N, prev, k], vec[NJ, prev], vec[MK, k], m_tot,
                                alpha, gamma, kappa, prev, k)
            inv = 1.0 / (vec[NJ, k] + alpha + kappa)
            for d in range(K1):
                trans[c, d] = (mat[N, k, cand[d]] + root_w[d]) * inv
            trans[c, c] += kappa * inv
            final[c] = 1.0 if nxt <= 0 else pred_prob(
                mat[N, k, nxt], vec[NJ, k], vec[MK, nxt], m_tot, alpha, gamma, kappa, k, nxt)
        # the label standing for 'new' is free: its statistics are all zero
        # (weights, filled just after, is the call's scratch)
        log_proposal_block(fam, stats, cand, K1, hyp, Y, b, L, log_emit, prior_pred,
                           lin_buf[:K1 * L])
        linear_weights(log_emit, weights, lw_scratch[:(K1 + 1) * L].reshape((K1 + 1, L)))
        for l in range(L):
            c = index[xo[l]]
            po[l] = c if c >= 0 else K
        for c in range(K):
            index[cand[c]] = -1

        # ---- 3. proposal path, then labels for 'new' through Q* ----
        if use_beam:
            n_vis += beam_sample_linear(init, trans, emit, final, po, rng, pn,
                                        work, iwork_beam)
        else:
            ffbs_linear(init, trans, emit, final, rng, pn, work)
        # Q* (and Q_old) start with x[e] when no root table serves it in s0
        seed = nxt if nxt > 0 and vec[MK, nxt] == 0 else 0
        nq, qn = _crp_start(qlab, qcnt, seed)
        next_free = 1
        n_fresh = 0
        log_q_new = 0.0
        for l in range(L):
            if pn[l] < K:
                xn[l] = cand[pn[l]]
                continue
            t, lq = _crp_draw(qcnt, nq, qn, gamma, rng)
            log_q_new += lq
            if t < nq:
                label = qlab[t]
            else:
                label = free_label(vec, next_free)
            if t == nq:
                next_free = label + 1
                n_fresh += 1
            nq = _crp_seat(qlab, qcnt, nq, t, label)
            qn += 1
            xn[l] = label
        same = True
        for l in range(L):
            if xn[l] != xo[l]:
                same = False
                break
        if same:
            # the proposal is the current block: keep the old seating (see
            # "A proposal equal to the current block" in the module docstring)
            undo(mat, vec, tab, log, scal, conc)
            move_stats(fam, stats, Y, b, xo, 1.0, iwork)   # statistics only, no factor
            for l in range(L):
                vec[OCC, xo[l]] += 1
            n_acc += 1
            continue
        log_q_old = path_log_weight_linear(init, trans, emit, final, po)
        log_q_new += path_log_weight_linear(init, trans, emit, final, pn)
        nq, qn = _crp_start(qlab, qcnt, seed)
        for l in range(L):
            if po[l] < K:
                continue
            lq, t = _crp_log_prob(qlab, qcnt, nq, qn, xo[l], gamma)
            log_q_old += lq
            nq = _crp_seat(qlab, qcnt, nq, t, xo[l])
            qn += 1

        # ---- 4. seat the proposal, accept or undo ----
        log_r_new = add_seq(mat, vec, tab, log, scal, conc,
                            stats, xn, Y, b, prev, nxt, fam, hyp, rng, iwork)
        log_ratio = log_r_new - log_r_old + log_q_old - log_q_new
        if log_ratio >= 0.0 or rng.random() < math.exp(log_ratio):
            for l in range(L):
                x[b + l] = xn[l]
            n_acc += 1
            free_lb -= n_fresh
            clear_log(scal)
        else:
            undo(mat, vec, tab, log, scal, conc)
            move_emissions(vec, stats, Y, b, xn, xo, fam, iwork)
    return n_blocks, n_acc, n_vis, width, n_blocks


def init(problem, x0, rng):
    """Initial state: seat the labelled sequence ``x0``."""
    return init_collapsed(problem, x0, rng)


def _block_size(problem, use_beam):
    size = problem.options.get("block_size")
    if size is None:
        size = DEFAULT_BEAM_BLOCK_SIZE if use_beam else DEFAULT_BLOCK_SIZE
    size = int(size)
    if size < 1:
        raise ValueError(f"block_size must be >= 1, got {size}.")
    return size


def _sweep(state, problem, rng, use_beam):
    """One sweep of block moves followed by the hyperparameter updates.

    The candidate width, the kernel's scratch and the buffers of the block
    plan are kept in ``state.scratch`` between sweeps, so a settled chain
    makes one kernel call per sweep (which also draws the plan); the state
    is only grown when the kernel stops early for want of room.
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
    need = l_max + 2
    handle = generator_handle(rng)      # for both calls; rng is held meanwhile
    pos, n_blocks, n_acc, n_vis = 0, -1, 0, 0
    while True:
        C = state.seating.mat.shape[1]
        width = keep["width"] = min(C, keep["width"])
        shape, fbuf, ibuf = keep["buffers"]
        if shape != (l_max, C, width):
            fbuf, ibuf = _scratch(l_max, C, width)
            keep["buffers"] = ((l_max, C, width), fbuf, ibuf)
        pos, acc, vis, wanted, n_blocks = _blocked_sweep(
            state.seating, state.stats, state.x, problem.Y, problem.seq_first,
            problem.seq_last, plan, n_blocks, pos, use_beam, problem.fam, problem.hyp,
            problem.prior_pred, handle, fbuf, ibuf, l_max, width,
        )
        n_acc += acc
        n_vis += vis
        if pos >= n_blocks:
            break
        # the kernel stopped early: it needs more room (it checks the same
        # needs as this call) or a wider scratch
        state.ensure_capacity(labels=need, tables=3 * need, log=3 * need)
        if wanted > width:
            keep["width"] = max(wanted, 2 * width)
    finish_sweep(state, problem, handle)
    info = {"accept_rate": n_acc / n_blocks}
    if use_beam:
        info["states_visited"] = n_vis / state.x.shape[0]
    return info


def step_blocked(state, problem, rng):
    """One sweep of blocked Gibbs RCD moves (forward-backward proposals)."""
    return _sweep(state, problem, rng, False)


def step_beam(state, problem, rng):
    """One sweep of beam RCD moves (slice-restricted forward-backward proposals)."""
    return _sweep(state, problem, rng, True)
