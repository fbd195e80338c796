"""Blocked RCD samplers: forward-backward (``rcd_blocked``) and beam (``rcd_beam``).

Makino et al. (2011), Sections 4.2-4.3 and Algorithm 8. A sweep cuts every
sequence into blocks of at most ``block_size`` steps (``options["block_size"]``;
when ``None``, :data:`DEFAULT_BLOCK_SIZE` for ``rcd_blocked`` and
:data:`DEFAULT_BEAM_BLOCK_SIZE` for ``rcd_beam``) at a random offset, so the
boundaries move from sweep to sweep; a sequence no longer than the block size
is one block. Blocks never cross sequence boundaries and may contain the
first or last step of a sequence. Every block, in random order, gets one
Metropolis-Hastings move through the restricted collapsed draw:

1. The block is *lifted*: the transition counts of its customers (the
   transition into it, those inside it, and the transition out of it to
   ``x[e]`` when ``e`` is in the same sequence; ``mat[N]`` and ``vec[NJ]``),
   the occupancies of its steps and its emission statistics are subtracted.
   What remains -- counts ``n'``, occupancies and statistics of the steps
   outside the block -- is a function of the labels outside the block only.
   The tables are not touched.
2. The proposal is a finite HMM over the *candidates*: every label in use
   outside the block plus one symbol ``new``. Its weights follow the HCRP
   predictive (Makino Eq. 31-32) with the lifted counts in place of the
   reduced seating's: ``(n'[j, k] + alpha p0(k) + [j == k] kappa) / (n'_j +
   alpha + kappa)`` (no ``kappa`` in the start restaurant), where the root
   predictive ``p0(k) = m'_k / (m' + gamma)`` (``new``: ``gamma / (m' +
   gamma)``) counts ``m'_k = max(1, sum_j [n'[j, k] > 0] (1 + alpha / (K + 1)
   * log n'[j, k]))`` tables for dish ``k`` -- about the number of tables
   ``n'[j, k]`` customers open in a CRP of concentration ``alpha beta_k``,
   ``beta_k ~ 1 / (K + 1)`` -- instead of the seating's table counts, which
   depend on where the block's customers sit. ``new`` stands for one free
   label (an empty restaurant, ``new -> new`` carrying the sticky
   ``kappa``); the initial weights are the row of the label before the block
   (restaurant 0 at a sequence start); the emission weights are the
   posterior predictives from the lifted statistics (``new``: empty
   statistics), except that a 1-d Gaussian state with more than about a
   hundred observations gets the quadratic form of its Student-t
   (:func:`sk_ihmm.emissions.log_proposal_block`); the final weights are
   the column of ``x[e]`` (always a candidate: it is in use at ``e``), or 1
   at a sequence end. Then the block is put back.
3. A path over the candidates is drawn by forward filtering / backward
   sampling (``rcd_blocked``) or by one beam move started from the old path
   (``rcd_beam``). Each appearance of ``new`` becomes a label through the
   auxiliary CRP ``Q*`` of concentration ``gamma``: its ``i``-th table gets
   the ``i``-th label used only inside the old block (in the order they
   first appear there), then free labels. Every labelled block (up to the
   names of the labels not in use outside it) is thus proposed in exactly
   one way, with probability (Makino Eq. 34)

   ``q(x) = P_hmm(path(x)) * prod_{new appearances} Q(label | earlier ones)``.

   The old block is mapped the same way: labels used only inside it become
   ``new`` and their partition gives ``Q_old``.
4. If ``x* == x_old`` nothing changes. Otherwise let ``l1 .. l2`` be the
   steps from the first to the last where the two differ.
   :func:`~sk_ihmm.samplers._seqmoves.remove_seq` removes the customers and
   emissions of those steps (from the transition into ``l1`` to the
   transition out of ``l2``), giving ``r_old``;
   :func:`~sk_ihmm.samplers._seqmoves.add_seq` seats the proposal's, giving
   ``r*``; the move is accepted with probability ``min(1, r* / r_old *
   q(x_old) / q(x*))`` (Makino Eq. 29), otherwise the undo log restores the
   exact old seating and the emissions are moved back.

Why this is exact. Makino et al. remove the whole block first and build the
proposal from the reduced seating; this kernel builds it before anything is
removed and re-seats only the steps that change. Both are exact for the
same reason, pair by pair. Take two labelled blocks ``a != b`` with the same
labels outside the block, and ``D(a, b)`` the steps from their first to
their last difference.

* The proposal weights are a function of the labels and observations
  outside the block, which the move does not change: the move from ``a``
  proposes ``b`` with ``q(b)`` and the move from ``b`` proposes ``a`` with
  ``q(a)``, the same function.
* ``D(a, b) = D(b, a)``: both directions remove and seat the customers of
  the same steps. Given the label proposal, that is Makino's restricted
  collapsed draw on the block ``D`` (Algorithms 6-7 and Eq. 29): removing
  its customers (each leaving a table drawn in proportion to its size) and
  seating the proposed ones, then accepting with the ratio of the
  ``r``-factors times ``q(a) / q(b)``, is in detailed balance between
  ``(a, seating)`` and ``(b, seating)`` for the HCRP-HMM posterior. The
  customers outside ``D`` are the same in ``a`` and ``b`` and keep their
  tables.
* A proposal equal to the current block is the identity, in balance with
  itself; drawing it costs nothing but the proposal. Such a block counts as
  accepted in ``accept_rate``. Once a chain has settled, a quarter to a half
  of the blocks propose their current labels (25-30% on the 4-state and
  40-50% on the 10-state Gaussian data, blocks of 32).
* The target and every weight are invariant to renaming the labels not in
  use outside the block, so the rule that names the ``new`` tables only
  picks a representative of each partition (the exact tests compare
  partitions).

The tables. A move re-seats only the customers of ``D``, so once a chain
has settled few tables change per sweep. The labels' proposals do not read
the tables, but the ``alpha`` and ``gamma`` updates do (through the numbers
of tables), so at the end of a sweep every block, with probability
:data:`RESEAT_PROB`, gets a Gibbs update of its customers' tables
(:func:`~sk_ihmm.samplers._seqmoves.reseat_seq`: each customer leaves its
table and is seated again with the same dish, a draw from its conditional
by exchangeability). It leaves the posterior invariant whatever the
probability, as it is drawn independently of the state.

Building the proposal before the removal, and re-seating only ``D``, cut
the ``rcd_blocked`` sweep (T=4000, from the same saved settled states) from
0.68 to 0.56 ms on the 4-state data and from 1.00 to 0.91 ms on the
10-state data; a proposal that differs from the old block mostly differs
at a few steps near a state boundary.

Both paths are scored with ``path_log_weight``: ``P_hmm`` is the path weight
divided by one normaliser that depends on the labels outside the block
only, so it cancels.

Why the beam sampler uses the same ratio. The beam move (Van Gael et al.
2008; :func:`sk_ihmm._messages.beam_sample`) is a data-augmentation kernel
``K(a, b)`` on candidate paths that is reversible with respect to
``P_hmm``: ``P_hmm(a) K(a, b) = P_hmm(b) K(b, a)``. Its proposal of a labelled
block is ``K(path(x_old), path(x*)) * Q*``, and the reverse move from ``x*``
(same labels outside the block, hence the same ``P_hmm``) proposes ``x_old`` with
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

from .._hcrp import (_K, _N_FREE, MK, NJ, OCC, N, clear_log, free_label, n_free_labels,
                     undo)
from .._messages import beam_sample_linear, ffbs_linear, linear_weights, path_log_weight_linear
from .._nrt import nrt_free, uniform_int
from .._rng import as_generator, generator_handle
from ..emissions import log_proposal_block, move_stats
from ._collapsed import finish_sweep, init_collapsed
from ._seqmoves import add_seq, lift_seq, move_emissions, remove_seq, reseat_seq

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

#: Probability with which each block's customers get a Gibbs update of their
#: tables at the end of a sweep (:func:`_reseat_blocks`). A block move
#: re-seats only the steps it changes (about one in twenty-five per sweep on
#: the settled 4- and 10-state Gaussian data), so the tables -- which the
#: labels' proposals never read, but the updates of ``alpha`` and ``gamma``
#: do -- would otherwise mix slowly: on the 10-state data, without it, the
#: CPU seconds per independent draw of ``alpha`` went from 0.036 (the
#: algorithm that re-seats every block it changes) to 0.084; with 0.1 they
#: are 0.035 (0.023 with 0.25) for about 2.5% of the sweep (4 stationary
#: chains from the truth, 3,000 sweeps each).
RESEAT_PROB = 0.1


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
            l_max + 1 + (l_max + 2) * width, l_max)
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
    fresh, o = _take(ibuf, o, i[10])
    return (init_buf, final_buf, root_buf, trans_buf, emit_buf, lin_buf, lw_scratch, work,
            x_old, x_new, p_old, p_new, qlab, qcnt, iwork, cand, index, iwork_beam, fresh)


@nrt_free
def _blocked_sweep(s, stats, x, Y, seq_first, seq_last, plan, n_blocks, start,
                   use_beam, fam, hyp, prior_pred, rng, fbuf, ibuf, l_max, width, reseat):
    """One RCD move per block ``order[start:n_blocks]``; stop early when
    capacity runs low. After the last block, the tables of each block's
    customers get a Gibbs update with probability ``reseat``
    (:func:`_reseat_blocks`).

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
        need = L + 2
        if free_lb < need:
            free_lb = n_free_labels(vec)
        if scal[_N_FREE] < 3 * need or log.shape[0] < 3 * need or free_lb < need:
            return i, n_acc, n_vis, width, n_blocks
        # the candidates are at most the labels in use, plus 'new'
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

        # ---- 1. lift the block: counts and statistics of the steps outside it ----
        lift_seq(mat, vec, xo, prev, nxt, -1)
        move_stats(fam, stats, Y, b, xo, -1.0, iwork)

        # ---- 2. candidate HMM from the labels outside the block ----
        # a label is in use iff a root table serves it; a candidate is one in
        # use outside the block
        K = 0
        seen = 0
        n_used = scal[_K]
        for k in range(1, C):
            if seen == n_used:
                break
            if vec[MK, k] > 0:
                seen += 1
                if vec[OCC, k] > 0:
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
        # root weights alpha m'_d / (m' + gamma), m'_d about the tables the
        # lifted counts n'[j, d] open (step 2 of the module docstring)
        root_w = root_buf[:K1]
        m_tot = 0.0
        theta = alpha / K1
        for d in range(K):
            cd = cand[d]
            n0 = mat[N, 0, cd]
            r = 1.0 + theta * math.log(n0) if n0 > 0 else 0.0
            for c in range(K):
                n0 = mat[N, cand[c], cd]
                if n0 > 0:
                    r += 1.0 + theta * math.log(n0)
            root_w[d] = max(r, 1.0)
            m_tot += root_w[d]
        root_w[K] = gamma
        scale = alpha / (m_tot + gamma)
        for d in range(K1):
            root_w[d] *= scale
        # weights (n'[j, k] + alpha p0'(k) + [j == k] kappa) / (n'_j + alpha + kappa)
        jp = index[prev] if prev > 0 else -1
        kp = kappa if prev > 0 else 0.0
        inv0 = 1.0 / (vec[NJ, prev] + alpha + kp)
        kf = index[nxt] if nxt > 0 else -1
        for c in range(K1):
            k = cand[c]
            init[c] = (mat[N, prev, k] + root_w[c] + (kp if c == jp else 0.0)) * inv0
            inv = 1.0 / (vec[NJ, k] + alpha + kappa)
            for d in range(K1):
                trans[c, d] = (mat[N, k, cand[d]] + root_w[d]) * inv
            trans[c, c] += kappa * inv
            final[c] = 1.0 if nxt <= 0 else trans[c, kf]
        # the label standing for 'new' is free: its statistics are all zero
        # (weights, filled just after, is the call's scratch)
        log_proposal_block(fam, stats, cand, K1, hyp, Y, b, L, log_emit, prior_pred,
                           lin_buf[:K1 * L])
        linear_weights(log_emit, weights, lw_scratch[:(K1 + 1) * L].reshape((K1 + 1, L)))
        # the old path: labels used only inside the block are 'new'; fresh
        # lists them in the order they first appear
        n_old = 0
        for l in range(L):
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
        for c in range(K):
            index[cand[c]] = -1
        lift_seq(mat, vec, xo, prev, nxt, 1)
        move_stats(fam, stats, Y, b, xo, 1.0, iwork)

        # ---- 3. proposal path, then labels for 'new' through Q* ----
        if use_beam:
            n_vis += beam_sample_linear(init, trans, emit, final, po, rng, pn,
                                        work, iwork_beam)
        else:
            ffbs_linear(init, trans, emit, final, rng, pn, work)
        # the i-th table of Q* gets the i-th label of fresh, then free labels
        nq, qn = 0, 0
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
            elif t < n_old:
                label = fresh[t]
            else:
                label = free_label(vec, next_free)
                next_free = label + 1
                n_fresh += 1
            nq = _crp_seat(qlab, qcnt, nq, t, label)
            qn += 1
            xn[l] = label
        l1 = 0
        while l1 < L and xn[l1] == xo[l1]:
            l1 += 1
        if l1 == L:
            # the proposal is the current block: the identity (see "Why
            # this is exact" in the module docstring)
            n_acc += 1
            continue
        l2 = L - 1
        while xn[l2] == xo[l2]:
            l2 -= 1
        log_q_old = path_log_weight_linear(init, trans, emit, final, po)
        log_q_new += path_log_weight_linear(init, trans, emit, final, pn)
        nq, qn = 0, 0
        for l in range(L):
            if po[l] < K:
                continue
            lq, t = _crp_log_prob(qlab, qcnt, nq, qn, xo[l], gamma)
            log_q_old += lq
            nq = _crp_seat(qlab, qcnt, nq, t, xo[l])
            qn += 1

        # ---- 4. RCD on the steps l1 .. l2 where the labels differ ----
        bd = b + l1
        xod = xo[l1:l2 + 1]
        xnd = xn[l1:l2 + 1]
        prevd = prev if l1 == 0 else xo[l1 - 1]
        nxtd = nxt if l2 == L - 1 else xo[l2 + 1]
        clear_log(scal)
        log_r_old = remove_seq(mat, vec, tab, log, scal, conc,
                               stats, xod, Y, bd, prevd, nxtd, fam, hyp, rng, iwork)
        log_r_new = add_seq(mat, vec, tab, log, scal, conc,
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
            clear_log(scal)
        else:
            undo(mat, vec, tab, log, scal, conc)
            move_emissions(vec, stats, Y, bd, xnd, xod, fam, iwork)
    _reseat_blocks(mat, vec, tab, log, scal, conc, x, seq_first, seq_last, bstart, bend,
                   n_blocks, reseat, rng)
    return n_blocks, n_acc, n_vis, width, n_blocks


@njit(cache=True)
def _reseat_blocks(mat, vec, tab, log, scal, conc, x, seq_first, seq_last, bstart, bend,
                   n_blocks, prob, rng):
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
        reseat_seq(mat, vec, tab, log, scal, conc, x[b:e], prev, nxt, rng)


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
            problem.prior_pred, handle, fbuf, ibuf, l_max, width, RESEAT_PROB,
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
