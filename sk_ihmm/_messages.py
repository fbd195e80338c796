"""Message-passing kernels for finite HMM-shaped distributions (numba).

Every kernel works on a distribution over paths ``x = (x_1, ..., x_L)`` with
``x_t in {0, ..., K-1}`` of the form

.. math::

    p(x) \\propto a(x_1) \\prod_{t=2}^{L} A(x_{t-1}, x_t)
                 \\prod_{t=1}^{L} e_t(x_t) \\; f(x_L)

given as LOG weights: ``log_init`` ``(K,)`` = log a, ``log_trans`` ``(K, K)``
= log A, ``log_emit`` ``(L, K)`` = log e_t, ``log_final`` ``(K,)`` = log f
(the kernels without ``log_final`` use f = 1). Weights need not be
normalised; ``-inf`` marks a forbidden choice. The sampling kernels also come
in a ``_linear`` form (``ffbs_linear``, ``beam_sample_linear``,
``path_log_weight_linear``) on non-negative linear weights, which the blocked
RCD samplers call directly; :func:`linear_weights` turns log weights into
linear ones.

Provides forward filtering / backward sampling (``ffbs``; ``two_state_*``
with a transition matrix per step), beam sampling (Van Gael et al. 2008),
path weights, forward-backward, Viterbi, the forward log-likelihood.
Invariants: the forward recursion is scaled (rows renormalised, log
normalisers accumulated), so any sequence length and emission magnitude is
safe; randomness comes only from the ``rng`` passed in; if every path has
zero weight, ``ffbs`` returns ``-inf`` and fills ``out`` with ``-1``, and
``forward_loglik`` / ``forward_backward`` / ``viterbi`` return ``-inf``.

Numerics, the beam construction and its exactness argument:
doc/internals.rst, section "Message passing (_messages.py)".
"""

import math

import numpy as np
from numba import njit

from ._rng import as_generator, draw_index
from ._vmath import exp_poly7, exp_reduce, exp_scale

__all__ = [
    "shifted_exp",
    "ffbs",
    "ffbs_linear",
    "linear_weights",
    "path_log_weight",
    "path_log_weight_linear",
    "two_state_forward",
    "two_state_sample",
    "two_state_path_weight",
    "beam_sample",
    "beam_sample_linear",
    "forward_backward",
    "viterbi",
    "forward_loglik",
]

_NEG_INF = -np.inf


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _linear_trans(log_trans):
    """Return (A, shift) with A = exp(log_trans - shift), shift = finite max."""
    K = log_trans.shape[0]
    shift = _NEG_INF
    for i in range(K):
        for j in range(K):
            v = log_trans[i, j]
            if v > shift:
                shift = v
    A = np.zeros((K, K))
    if shift == _NEG_INF:
        return A, 0.0
    for i in range(K):
        for j in range(K):
            A[i, j] = math.exp(log_trans[i, j] - shift)
    return A, shift


@njit(cache=True, nogil=True)
def shifted_exp(log_w, out, if_all_inf):
    """``out = exp(log_w - max(log_w))``; return the max.

    When every entry is ``-inf`` the max is reported as 0 and ``out`` is
    filled with ``if_all_inf``: 0 for weights of an impossible event (the
    messages), 1 for equal weights (the particle filter's resampling).
    """
    m = _NEG_INF
    for j in range(log_w.shape[0]):
        if log_w[j] > m:
            m = log_w[j]
    if m == _NEG_INF:
        for j in range(log_w.shape[0]):
            out[j] = if_all_inf
        return 0.0
    for j in range(log_w.shape[0]):
        out[j] = math.exp(log_w[j] - m)
    return m


@njit(cache=True, nogil=True)
def _sum_add(s, c, x):
    """Neumaier compensated summation: add x to (s, c); true sum is s + c."""
    t = s + x
    if abs(s) >= abs(x):
        c += (s - t) + x
    else:
        c += (x - t) + s
    return t, c


@njit(cache=True, nogil=True)
def _transpose(A, At):
    """``At[j, i] = A[i, j]`` (square matrices)."""
    K = A.shape[0]
    for i in range(K):
        for j in range(K):
            At[j, i] = A[i, j]


@njit(cache=True, nogil=True)
def _predict(prev, At, pred):
    """pred[j] = sum_i prev[i] * A[i, j], from the transpose ``At`` (each
    entry a dot product of contiguous rows)."""
    K = prev.shape[0]
    for j in range(K):
        acc = 0.0
        for i in range(K):
            acc += At[j, i] * prev[i]
        pred[j] = acc


#: The forward pass on log weights sets to zero a filtered mass below
#: ``_FLUSH`` (relative to the step's total, 1) and an emission factor below
#: ``exp(_EXP_FLOOR)`` (relative to the step's largest): such values would
#: otherwise decay into subnormal numbers, on which every arithmetic
#: operation takes a slow path; paths through them carry relative weight
#: below 1e-200. The linear forms never meet them: their emission weights are
#: clamped at ``exp(-300)`` (:func:`linear_weights`) and their transition
#: weights are predictive probabilities.
_FLUSH = 1e-280
_EXP_FLOOR = -700.0


@njit(cache=True, nogil=True)
def _forward(pred, At, emit, alpha, store, linear):
    """Scaled forward pass (fused loop) on linear weights (the emissions may
    come as logs, see ``emit``).

    ``At`` is the TRANSPOSED transition matrix, ``At[j, i] = A(i, j)``: the
    prediction ``pred[j] = sum_i alpha[i] A(i, j)`` is then a dense dot
    product over a contiguous row, which the compiler vectorises (a
    row-by-row update that skips zero rows branches and does not).

    ``emit`` ``(L, K)`` are the emission weights: linear if ``linear``, else
    logs (each row then shifted by its maximum over the reachable states and
    exponentiated here).
    ``pred`` ``(K,)`` holds the non-negative initial weights on entry and is
    used as scratch.  ``alpha`` is ``(L, K)`` if ``store`` (filtered rows
    kept) else ``(2, K)`` (rolling rows; the last filtered row ends in
    ``alpha[(L - 1) % 2]``).  Rows are normalised to sum 1.  Returns the log
    of the total weight without any final factor (``-inf`` if zero), relative
    to the scale of ``pred`` and ``A`` as given.

    log Z = sum_t (m_t + log s_t), where m_t is the emission shift and s_t
    the normaliser; the m_t are summed with compensation and the s_t are
    multiplied in linear space (a log is taken only when the running product
    leaves [1e-200, 1e200]).
    """
    L, K = emit.shape
    msum, mcomp = 0.0, 0.0
    prod = 1.0
    logs = 0.0
    for t in range(L):
        # rows by index, not views: a view per step costs a reference count
        r = t if store else t & 1
        if t > 0:
            rp = t - 1 if store else 1 - r
            for j in range(K):
                acc = 0.0
                for i in range(K):
                    acc += At[j, i] * alpha[rp, i]
                pred[j] = acc
        sm = 0.0
        if linear:
            for j in range(K):
                v = pred[j] * emit[t, j]
                alpha[r, j] = v
                sm += v
        else:
            m = _NEG_INF
            for j in range(K):
                e = emit[t, j]
                if pred[j] > 0.0 and e > m:
                    m = e
            if m == _NEG_INF:
                return _NEG_INF
            for j in range(K):
                pj = pred[j]
                d = emit[t, j] - m
                v = pj * math.exp(d) if pj > 0.0 and d > _EXP_FLOOR else 0.0   # see _FLUSH
                alpha[r, j] = v
                sm += v
            msum, mcomp = _sum_add(msum, mcomp, m)
        if not sm > 0.0:
            return _NEG_INF
        inv = 1.0 / sm
        if linear:
            for j in range(K):
                alpha[r, j] *= inv
        else:
            # log weights: flush filtered masses below _FLUSH to zero, so that
            # no subnormal number enters the next steps (see _FLUSH)
            for j in range(K):
                a = alpha[r, j] * inv
                alpha[r, j] = a if a >= _FLUSH else 0.0
        if sm < 1e-100 or sm > 1e100:
            logs += math.log(sm)
        else:
            prod *= sm
            if prod < 1e-200 or prod > 1e200:
                logs += math.log(prod)
                prod = 1.0
    logs += math.log(prod)
    msum, mcomp = _sum_add(msum, mcomp, logs)
    return msum + mcomp


@njit(cache=True, nogil=True)
def _forward_log(log_init, log_trans, log_emit, alpha, store):
    """``_forward`` on log weights: returns ``(log_z, A, At)`` with ``A`` the
    shifted linear transition matrix and ``At`` its transpose (``log_z``
    includes every shift)."""
    K = log_init.shape[0]
    L = log_emit.shape[0]
    A, ashift = _linear_trans(log_trans)
    At = np.empty((K, K))
    _transpose(A, At)
    pred = np.empty(K)
    m0 = shifted_exp(log_init, pred, 0.0)
    logz = _forward(pred, At, log_emit, alpha, store, False)
    if logz == _NEG_INF:
        return _NEG_INF, A, At
    s, c = _sum_add(logz, 0.0, m0)
    s, c = _sum_add(s, c, (L - 1) * ashift)
    return s + c, A, At


@njit(cache=True, nogil=True)
def _sample_index(w, K, rng):
    """Draw an index with probability proportional to w[:K] (w >= 0, sum > 0)."""
    s = 0.0
    for k in range(K):
        s += w[k]
    return draw_index(w, K, rng.random() * s)


# --------------------------------------------------------------------------
# FFBS
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _ffbs(init, A, emit, final, rng, out, work, linear):
    """The forward filter / backward sampler of :func:`ffbs_linear` (linear
    ``emit``) and :func:`ffbs` (log ``emit``, ``linear`` false). ``work``:
    at least ``(L + 2) * K + K * K`` entries (the filtered rows, two
    ``K``-vectors, the transpose of ``A``)."""
    L, K = emit.shape
    if L == 0:
        return 0.0
    alpha = work[:L * K].reshape((L, K))
    w = work[L * K:(L + 1) * K]
    pred = work[(L + 1) * K:(L + 2) * K]
    At = work[(L + 2) * K:(L + 2) * K + K * K].reshape((K, K))
    _transpose(A, At)
    for j in range(K):
        pred[j] = init[j]
    logz = _forward(pred, At, emit, alpha, True, linear)
    if logz != _NEG_INF:
        s = 0.0
        for j in range(K):
            v = alpha[L - 1, j] * final[j]
            w[j] = v
            s += v
        if s > 0.0:
            logz += math.log(s)
        else:
            logz = _NEG_INF
    if logz == _NEG_INF:
        for t in range(L):
            out[t] = -1
        return _NEG_INF
    x = _sample_index(w, K, rng)
    out[L - 1] = x
    for t in range(L - 2, -1, -1):
        for i in range(K):
            w[i] = alpha[t, i] * At[x, i]
        x = _sample_index(w, K, rng)
        out[t] = x
    return logz


@njit(cache=True, nogil=True)
def ffbs_linear(init, A, emit, final, rng, out, work):
    """Forward-filtering backward-sampling of one path, linear weights.

    :func:`ffbs` for callers that hold every weight as an (unnormalised,
    non-negative) linear weight -- the blocked RCD samplers build their
    transition weights from seating predictives and their emission weights
    with :func:`linear_weights` -- so that no log is taken and
    re-exponentiated.

    Parameters
    ----------
    init : (K,) float array
        Weight of the first state.
    A : (K, K) float array
        Weight of the transition i -> j.
    emit : (L, K) float array
        Emission weight of each state at each step (a row may have any
        positive scale).
    final : (K,) float array
        Weight attached to the last state (ones if none).
    rng : numpy.random.Generator
    out : (L,) int64 array
        Receives the sampled path (``-1`` everywhere if every path has zero
        weight).
    work : 1-D float array of size >= (L + 2) * K + K * K
        Scratch space (filtered rows, two K-vectors, the transpose of
        ``A``).

    Returns
    -------
    log_z : float
        Log of the total weight summed over all ``K**L`` paths.
    """
    L, K = emit.shape
    if work.shape[0] < (L + 2) * K + K * K:
        raise ValueError("ffbs_linear: work array too small")
    return _ffbs(init, A, emit, final, rng, out, work, True)


#: ``exp`` argument below which :func:`linear_weights` clamps (e^-300 is
#: about 5e-131: products of a block's weights stay far from underflow).
LINEAR_WEIGHT_FLOOR = -300.0


@njit(cache=True, nogil=True, fastmath={"contract"})
def linear_weights(log_w, out, scratch):
    """``out[j, t] = exp(max(log_w[j, t] - max_j' log_w[j', t], -300))``: the
    log weights of each step shifted by their maximum and exponentiated,
    clamped at :data:`LINEAR_WEIGHT_FLOOR`.

    For proposal weights (the blocked RCD samplers). The arrays are
    label-major, ``(K, L)`` for ``K`` states and ``L`` steps, as
    :func:`sk_ihmm.emissions.log_proposal_block` writes them: every loop
    then runs along a contiguous row of ``L`` steps and vectorises, the
    maximum over the states included. The message kernels read the result
    step-major through its transpose, ``out.T``. ``scratch`` is a
    C-contiguous float array of shape ``(K + 1, L)``; ``out`` is
    C-contiguous.

    The exponential is the branch-free polynomial of :mod:`sk_ihmm._vmath`,
    which the compiler vectorises (unlike a scalar ``math.exp``), of degree
    7: relative error below 6e-9. Such weights are exact for a
    Metropolis-Hastings proposal as long as both directions use the same
    values, whatever their error; the error only moves the proposal (by a
    factor within 1 +- 1e-8 of the intended one), so the cheaper degree 7
    serves rather than a full-precision one, and fused multiply-adds
    (``fastmath={"contract"}``) are allowed. ``log_w`` must not hold NaN.
    """
    K, L = log_w.shape
    mx = scratch[K]
    for t in range(L):
        mx[t] = log_w[0, t]
    for j in range(1, K):
        for t in range(L):
            mx[t] = max(log_w[j, t], mx[t])
    for j in range(K):
        for t in range(L):
            b, r = exp_reduce(max(log_w[j, t] - mx[t], LINEAR_WEIGHT_FLOOR))
            scratch[j, t] = b
            out[j, t] = exp_poly7(r)
    exp_scale(out.reshape(K * L), scratch[:K].reshape(K * L))


@njit(cache=True, nogil=True)
def ffbs(log_init, log_trans, log_emit, log_final, rng, out):
    """Forward-filtering backward-sampling of one path.

    Parameters
    ----------
    log_init : (K,) float array
        Log weight of the first state.
    log_trans : (K, K) float array
        Log weight of the transition i -> j.
    log_emit : (L, K) float array
        Log emission weight of each state at each step.
    log_final : (K,) float array
        Log weight attached to the last state (e.g. the log transition into
        a fixed state following the block); zeros if none.
    rng : numpy.random.Generator
    out : (L,) int64 array
        Receives the sampled path (``-1`` everywhere if every path has zero
        weight).

    Returns
    -------
    log_z : float
        Log of the total weight summed over all ``K**L`` paths.  The log
        probability of the drawn path is ``path_log_weight(...) - log_z``.

    Notes
    -----
    Shifts the weights to linear scale (the emissions row by row, with
    ``math.exp``, inside the forward pass) and runs the code of
    :func:`ffbs_linear`. ``rng`` may also be a
    :func:`sk_ihmm._rng.generator_handle` (cheaper to pass).
    """
    rng = as_generator(rng)
    L, K = log_emit.shape
    if L == 0:
        return 0.0
    A, ashift = _linear_trans(log_trans)
    init = np.empty(K)
    final = np.empty(K)
    m0 = shifted_exp(log_init, init, 0.0)
    mf = shifted_exp(log_final, final, 0.0)
    logz = _ffbs(init, A, log_emit, final, rng, out, np.empty((L + 2) * K + K * K), False)
    if logz == _NEG_INF:
        return _NEG_INF
    s, c = _sum_add(logz, 0.0, m0)
    s, c = _sum_add(s, c, mf)
    s, c = _sum_add(s, c, (L - 1) * ashift)
    return s + c


# --------------------------------------------------------------------------
# Two-state FFBS in log space with a transition matrix per step, for the
# restricted HMMs of the split-merge trials (sk_ihmm.samplers._split_merge):
# the transition into step t is log_tr[t * dt] (dt = 0: one matrix for all
# steps, dt = 1: one per step), which the FFBS above (one matrix, linear
# scaled weights) does not take. Every weight is a predictive probability or
# a pinned candidate's 0, so log space needs no scaling.
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def _log_add(u, v):
    """``log(exp(u) + exp(v))``; one of ``u``, ``v`` may be ``-inf``."""
    if u < v:
        u, v = v, u
    return u + math.log1p(math.exp(v - u))


@njit(cache=True, nogil=True)
def two_state_forward(log_init, log_tr, dt, log_emit, log_final, L, la):
    """Fill ``la[t, k]``, the log weight of the paths of steps ``0 .. t``
    ending in ``k``; return the log total weight of the ``2^L`` paths.

    Two states, ``L`` steps: ``log_init[k]``, ``log_emit[t, k]`` and
    ``log_final[k]`` (the transition out of the last step); ``log_tr[t * dt,
    j, k]`` is the transition into step ``t`` (``dt = 0``: one matrix for
    every step, ``dt = 1``: one per step); ``la`` is ``(>= L, 2)`` scratch
    that receives the forward messages."""
    la[0, 0] = log_init[0] + log_emit[0, 0]
    la[0, 1] = log_init[1] + log_emit[0, 1]
    for t in range(1, L):
        tr = t * dt
        for k in range(2):
            la[t, k] = _log_add(la[t - 1, 0] + log_tr[tr, 0, k],
                                la[t - 1, 1] + log_tr[tr, 1, k]) + log_emit[t, k]
    return _log_add(la[L - 1, 0] + log_final[0], la[L - 1, 1] + log_final[1])


@njit(cache=True, nogil=True, inline="always")
def _draw_two(v0, v1, rng):
    """1 with probability ``exp(v1) / (exp(v0) + exp(v1))``, else 0."""
    return 1 if rng.random() * (1.0 + math.exp(v0 - v1)) < 1.0 else 0


@njit(cache=True, nogil=True)
def two_state_sample(log_tr, dt, log_final, la, L, rng, path):
    """Draw ``path[:L]`` given the forward messages ``la`` of
    :func:`two_state_forward` (same ``log_tr``, ``dt``, ``log_final``)."""
    k = _draw_two(la[L - 1, 0] + log_final[0], la[L - 1, 1] + log_final[1], rng)
    path[L - 1] = k
    for t in range(L - 2, -1, -1):
        tr = (t + 1) * dt
        k = _draw_two(la[t, 0] + log_tr[tr, 0, k], la[t, 1] + log_tr[tr, 1, k], rng)
        path[t] = k


@njit(cache=True, nogil=True)
def two_state_path_weight(log_init, log_tr, dt, log_emit, log_final, L, path):
    """Log weight of ``path[:L]``."""
    k = path[0]
    v = log_init[k] + log_emit[0, k]
    for t in range(1, L):
        j = path[t]
        v += log_tr[t * dt, k, j] + log_emit[t, j]
        k = j
    return v + log_final[k]


@njit(cache=True, nogil=True)
def _check_path(path, L, K):
    for t in range(L):
        if path[t] < 0 or path[t] >= K:
            raise ValueError("path contains a state outside [0, K)")


@njit(cache=True, nogil=True)
def path_log_weight(log_init, log_trans, log_emit, log_final, path):
    """Unnormalised log weight of one path (the same factors as ``ffbs``).

    ``log_init[x_1] + sum_t log_trans[x_{t-1}, x_t] + sum_t log_emit[t, x_t]
    + log_final[x_L]``; its log probability under ``ffbs`` is this minus the
    returned ``log_z``.
    """
    L, K = log_emit.shape
    if L == 0:
        return 0.0
    _check_path(path, L, K)
    x = path[0]
    s = log_init[x] + log_emit[0, x]
    for t in range(1, L):
        y = path[t]
        s += log_trans[x, y] + log_emit[t, y]
        x = y
    return s + log_final[x]


@njit(cache=True, nogil=True)
def path_log_weight_linear(init, A, emit, final, path):
    """:func:`path_log_weight` for the linear weights of :func:`ffbs_linear`.

    The weights are multiplied in linear space, a step's transition and
    emission weight first (a log is taken of that factor if it is below
    1e-100, and of the running product when it falls below 1e-200), so a
    path costs a log or two rather than one per step.
    """
    L, K = emit.shape
    if L == 0:
        return 0.0
    _check_path(path, L, K)
    x = path[0]
    prod = init[x]
    s = 0.0
    for t in range(L):
        y = path[t]
        f = emit[t, y] if t == 0 else A[x, y] * emit[t, y]
        if f < 1e-100:
            s += math.log(f)
        else:
            prod *= f
            if prod < 1e-200:
                s += math.log(prod)
                prod = 1.0
        x = y
    return s + math.log(prod * final[x])


# --------------------------------------------------------------------------
# beam sampling
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def beam_sample_linear(init, A, emit, final, path_old, rng, out, fwork, iwork, slice_shape=1.0):
    """One beam-sampling move on linear weights (the core of :func:`beam_sample`).

    Parameters are those of :func:`ffbs_linear`, plus the current path
    ``path_old`` ``(L,)``, which must have positive weight; the new path is
    written into ``out`` (which may be the same array).  Slices are
    ``u_1 = init[x_1] R_1``, ``u_t = A[x_{t-1}, x_t] R_t`` with ``R_t ~
    Beta(slice_shape, 1)`` (``U^(1 / slice_shape)``, ``U`` uniform; see
    :func:`beam_sample`). ``fwork`` (float) and ``iwork`` (int64) are scratch
    arrays of at least ``L + 3 K + L K + K^2`` and ``L + 1 + 2 K + L K``
    entries (the sparse filter holds at most ``L K`` pairs).

    Returns
    -------
    n_visited : int
        Number of (t, state) pairs with non-zero forward mass.
    """
    return _beam(init, A, emit, final, path_old, rng, out, fwork, iwork, True, slice_shape)


#: Above this many states the beam's forward step accumulates densely and
#: branch-free, as a branch per entry is mispredicted too often; with fewer
#: states the branch is cheaper (doc/internals.rst, "Message passing").
_BEAM_DENSE_MIN_K = 8


@njit(cache=True, nogil=True, inline="always")
def _diagonal_step(off, idx, lo, hi, vt):
    """Whether the slice ``vt`` is at least the largest off-diagonal weight
    ``off[i]`` of every active state ``i = idx[lo:hi]``."""
    for p in range(lo, hi):
        if off[idx[p]] > vt:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _beam_slices(init, A, path_old, K, rng, v, slice_shape):
    """The slice variables ``v[t] = w_t R``, ``w_t`` the weight of the old
    path's step ``t``, ``R = U^(1 / slice_shape)`` with ``U`` uniform (step 1
    of :func:`_beam`)."""
    L = v.shape[0]
    inv_shape = 1.0 / slice_shape
    x = path_old[0]
    if x < 0 or x >= K:
        raise ValueError("path_old contains a state outside [0, K)")
    wv = init[x]
    if not wv > 0.0:
        raise ValueError("path_old has zero weight")
    v[0] = wv * rng.random() ** inv_shape
    for t in range(1, L):
        y = path_old[t]
        if y < 0 or y >= K:
            raise ValueError("path_old contains a state outside [0, K)")
        wv = A[x, y]
        if not wv > 0.0:
            raise ValueError("path_old has zero weight")
        v[t] = wv * rng.random() ** inv_shape
        x = y


@njit(cache=True, nogil=True, inline="always")
def _slice_weights(init, A, slice_shape, tinit, tw):
    """The weights a transition above its slice keeps in ``p(x | u)``:
    ``tinit = init^(1 - slice_shape)``, ``tw = A^(1 - slice_shape)`` (all
    ones for uniform slices, ``slice_shape = 1``: ``pow(x, 0)`` is exactly 1)."""
    K = init.shape[0]
    e = 1.0 - slice_shape
    for i in range(K):
        tinit[i] = init[i] ** e
        for j in range(K):
            tw[i, j] = A[i, j] ** e


@njit(cache=True, nogil=True, inline="always")
def _beam_forward(init, A, emit, v, off, tinit, tw, pred, stamp, touched, ptr, idx, val, linear):
    """Sparse forward filter of the sliced HMM (step 2 of :func:`_beam`):
    the normalised masses of step ``t`` in CSR storage, ``idx[ptr[t]:ptr[t +
    1]]`` the states with positive mass and ``val`` their masses; only those
    are propagated. A step where every active state can only stay gets ``v[t]
    = -1`` for the backward pass. Returns the number of stored entries."""
    L, K = emit.shape
    for j in range(K):
        stamp[j] = -1
    ptr[0] = 0
    nnz = 0
    for t in range(L):
        nt = 0
        vt = v[t]
        if t == 0:
            for j in range(K):
                if init[j] > vt:
                    touched[nt] = j
                    nt += 1
                    pred[j] = tinit[j]
        elif _diagonal_step(off, idx, ptr[t - 1], ptr[t], vt):
            v[t] = -1.0
            for p in range(ptr[t - 1], ptr[t]):
                i = idx[p]
                if A[i, i] > vt:
                    touched[nt] = i
                    nt += 1
                    pred[i] = val[p] * tw[i, i]
        elif K > _BEAM_DENSE_MIN_K:
            # dense over the states and branch-free (a select the compiler
            # vectorises); a state is reachable iff its sum is positive, the
            # stored masses being positive
            for j in range(K):
                pred[j] = 0.0
            for p in range(ptr[t - 1], ptr[t]):
                i = idx[p]
                a = val[p]
                for j in range(K):
                    pred[j] += a * tw[i, j] if A[i, j] > vt else 0.0
            for j in range(K):
                if pred[j] > 0.0:
                    touched[nt] = j
                    nt += 1
        else:
            # few states: a branch per entry, the reached states listed as
            # they are first reached (stamp[j] == t)
            for p in range(ptr[t - 1], ptr[t]):
                i = idx[p]
                a = val[p]
                for j in range(K):
                    if A[i, j] > vt:
                        if stamp[j] != t:
                            stamp[j] = t
                            touched[nt] = j
                            nt += 1
                            pred[j] = a * tw[i, j]
                        else:
                            pred[j] += a * tw[i, j]
        # absorb the emission (log weights: shifted by their max over the
        # reachable states)
        m = 0.0
        if not linear:
            m = _NEG_INF
            for q in range(nt):
                e = emit[t, touched[q]]
                if e > m:
                    m = e
            if m == _NEG_INF:
                raise ValueError("beam_sample: no path has positive weight")
        s = 0.0
        start = nnz
        for q in range(nt):
            j = touched[q]
            w = pred[j] * emit[t, j] if linear else pred[j] * math.exp(emit[t, j] - m)
            if w > 0.0:
                idx[nnz] = j
                val[nnz] = w
                nnz += 1
                s += w
        if not s > 0.0:
            raise ValueError("beam_sample: no path has positive weight")
        inv = 1.0 / s
        for p in range(start, nnz):
            val[p] *= inv
        ptr[t + 1] = nnz
    return nnz


@njit(cache=True, nogil=True, inline="always")
def _beam_backward(A, tw, final, v, ptr, idx, val, wbuf, rng, out):
    """Backward sampling over the stored masses (step 3 of :func:`_beam`).
    It is FFBS's backward pass, on the sparse storage of the forward filter
    and with the slice test times the sliced weight ``tw`` (``A^(1 - a)``)
    in place of the transition weight, hence not :func:`_ffbs`'s dense one."""
    L = v.shape[0]
    start = ptr[L - 1]
    n = ptr[L] - start
    tot = 0.0
    for q in range(n):
        wq = val[start + q] * final[idx[start + q]]
        wbuf[q] = wq
        tot += wq
    if not tot > 0.0:
        raise ValueError("beam_sample: no path has positive weight")
    x = idx[start + _sample_index(wbuf, n, rng)]
    out[L - 1] = x
    for t in range(L - 1, 0, -1):
        vt = v[t]
        if vt < 0.0:
            # a diagonal step: x_{t-1} = x_t is the only state with weight
            out[t - 1] = x
            continue
        start = ptr[t - 1]
        n = ptr[t] - start
        for q in range(n):
            i = idx[start + q]
            wbuf[q] = val[start + q] * tw[i, x] if A[i, x] > vt else 0.0
        x = idx[start + _sample_index(wbuf, n, rng)]
        out[t - 1] = x


@njit(cache=True, nogil=True)
def _beam(init, A, emit, final, path_old, rng, out, fwork, iwork, linear, slice_shape):
    """The move of :func:`beam_sample_linear` (linear ``emit``) and
    :func:`beam_sample` (log ``emit``, ``linear`` false): slice variables
    along the old path, a sparse forward filter of the sliced HMM, backward
    sampling. Returns the number of (step, state) pairs the filter kept."""
    if not 0.0 < slice_shape <= 1.0:
        raise ValueError("beam_sample: slice_shape must be in (0, 1]")
    L, K = emit.shape
    if L == 0:
        return 0
    cap = L * K
    if fwork.shape[0] < L + 3 * K + cap + K * K or iwork.shape[0] < L + 1 + 2 * K + cap:
        raise ValueError("beam_sample_linear: work arrays too small")
    v = fwork[:L]
    pred = fwork[L:L + K]
    wbuf = fwork[L + K:L + 2 * K]
    val = fwork[L + 2 * K:L + 2 * K + cap]
    tinit = fwork[L + 2 * K + cap:L + 3 * K + cap]
    tw = fwork[L + 3 * K + cap:L + 3 * K + cap + K * K].reshape((K, K))
    ptr = iwork[:L + 1]
    stamp = iwork[L + 1:L + 1 + K]
    touched = iwork[L + 1 + K:L + 1 + 2 * K]
    idx = iwork[L + 1 + 2 * K:L + 1 + 2 * K + cap]
    _beam_slices(init, A, path_old, K, rng, v, slice_shape)
    _slice_weights(init, A, slice_shape, tinit, tw)
    # the largest weight off the diagonal of each row (in wbuf until the
    # backward pass): a slice at or above it for every active state admits
    # only self-transitions (doc/internals.rst, "Message passing": diagonal steps)
    off = wbuf
    for i in range(K):
        m = 0.0
        for j in range(K):
            if i != j and A[i, j] > m:
                m = A[i, j]
        off[i] = m
    nnz = _beam_forward(init, A, emit, v, off, tinit, tw, pred, stamp, touched, ptr, idx, val,
                        linear)
    _beam_backward(A, tw, final, v, ptr, idx, val, wbuf, rng, out)
    return nnz


@njit(cache=True, nogil=True)
def beam_sample(log_init, log_trans, log_emit, log_final, path_old, rng, out, slice_shape=1.0):
    """One beam-sampling move (Van Gael et al., 2008).

    Leaves ``p(x) ∝ init(x_1) prod_t trans(x_{t-1}, x_t) prod_t emit_t(x_t)
    final(x_L)`` invariant and is reversible with respect to it.  Slices
    ``u_1 ~ U(0, init[x_1])``, ``u_t ~ U(0, trans[x_{t-1}, x_t])`` are drawn
    on the weights of ``path_old``; the new path is then drawn exactly from
    ``p(x | u) ∝ 1[u_1 < init(x_1)] prod_t 1[u_t < trans(x_{t-1}, x_t)]
    prod_t emit_t(x_t) final(x_L)`` (construction and exactness:
    doc/internals.rst, "Message passing").

    With ``slice_shape = a < 1`` the slices are ``u_t = w_t R_t``, ``R_t ~
    Beta(a, 1)``: smaller, so more transitions pass them (a wider beam), and
    each transition that passes keeps the weight ``trans^(1 - a)`` (and the
    first step ``init^(1 - a)``) in ``p(x | u)``. ``a = 1`` is the uniform
    slice above; ``a -> 0`` tends to forward-backward sampling.

    Parameters are as in ``ffbs``; ``path_old`` ``(L,)`` is the current path
    (must have positive weight), the new one is written into ``out`` (which
    may be the same array).  The weights are shifted to linear scale (the
    construction is invariant to constant rescaling; emission rows by their
    maximum over the reachable states) and handed to
    :func:`beam_sample_linear` with work arrays for the worst case of
    ``L K`` active (step, state) pairs.

    Returns
    -------
    n_visited : int
        Number of (t, state) pairs with non-zero forward mass.
    """
    L, K = log_emit.shape
    A, _ = _linear_trans(log_trans)
    init = np.empty(K)
    final = np.empty(K)
    shifted_exp(log_init, init, 0.0)
    shifted_exp(log_final, final, 0.0)
    return _beam(init, A, log_emit, final, path_old, rng, out,
                 np.empty(L + 3 * K + L * K + K * K), np.empty(L + 1 + 2 * K + L * K, np.int64),
                 False, slice_shape)


# --------------------------------------------------------------------------
# smoothing, Viterbi, likelihood
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def forward_backward(log_init, log_trans, log_emit):
    """Log-likelihood and posterior marginals.

    Returns
    -------
    loglik : float
        Log of the total weight over all paths (no final factor).
    gamma : (L, K) float array
        ``gamma[t, k] = p(x_t = k | everything)``.

    The backward pass uses the filtered rows only (Rauch-Tung-Striebel form
    ``gamma_t(i) = alpha_t(i) sum_j A(i, j) gamma_{t+1}(j) / pred_{t+1}(j)``),
    so no emission has to be re-exponentiated.
    """
    L, K = log_emit.shape
    gamma = np.zeros((L, K))
    if L == 0:
        return 0.0, gamma
    alpha = np.empty((L, K))
    logz, A, At = _forward_log(log_init, log_trans, log_emit, alpha, True)
    if logz == _NEG_INF:
        return _NEG_INF, gamma
    for j in range(K):
        gamma[L - 1, j] = alpha[L - 1, j]
    pred = np.empty(K)
    ratio = np.empty(K)
    for t in range(L - 2, -1, -1):
        _predict(alpha[t], At, pred)
        for j in range(K):
            g = gamma[t + 1, j]
            ratio[j] = g / pred[j] if g > 0.0 else 0.0
        s = 0.0
        for i in range(K):
            a = alpha[t, i]
            if a > 0.0:
                acc = 0.0
                for j in range(K):
                    acc += A[i, j] * ratio[j]
                v = a * acc
                gamma[t, i] = v
                s += v
        if s > 0.0:
            inv = 1.0 / s
            for i in range(K):
                gamma[t, i] *= inv
    return logz, gamma


@njit(cache=True, nogil=True)
def viterbi(log_init, log_trans, log_emit):
    """Most likely path (ties -> smallest index) and its log joint weight.

    Returns ``(log_joint, path)`` with ``path`` an ``(L,)`` int64 array
    (``log_joint = -inf`` and an arbitrary path if every path is forbidden).
    """
    L, K = log_emit.shape
    path = np.zeros(L, dtype=np.int64)
    if L == 0:
        return 0.0, path
    bp = np.zeros((L, K), dtype=np.int64)
    delta = np.empty(K)
    new = np.empty(K)
    # delta is kept shifted by its running max (offset accumulated with
    # compensated summation) so comparisons stay at O(1) magnitude
    off = 0.0
    comp = 0.0
    m = _NEG_INF
    for j in range(K):
        delta[j] = log_init[j] + log_emit[0, j]
        if delta[j] > m:
            m = delta[j]
    if m == _NEG_INF:
        return _NEG_INF, path
    for j in range(K):
        delta[j] -= m
    off, comp = _sum_add(off, comp, m)
    for t in range(1, L):
        for j in range(K):
            new[j] = _NEG_INF
        bpt = bp[t]
        for i in range(K):
            d = delta[i]
            if d == _NEG_INF:
                continue
            for j in range(K):
                c = d + log_trans[i, j]
                if c > new[j]:
                    new[j] = c
                    bpt[j] = i
        m = _NEG_INF
        for j in range(K):
            v = new[j] + log_emit[t, j]
            delta[j] = v
            if v > m:
                m = v
        if m == _NEG_INF:
            return _NEG_INF, path
        for j in range(K):
            delta[j] -= m
        off, comp = _sum_add(off, comp, m)
    best = 0
    for j in range(1, K):
        if delta[j] > delta[best]:
            best = j
    score = off + comp
    path[L - 1] = best
    for t in range(L - 1, 0, -1):
        best = bp[t, best]
        path[t - 1] = best
    return score, path


@njit(cache=True, nogil=True)
def forward_loglik(log_init, log_trans, log_emit):
    """Log of the total weight over all paths (scaled forward, O(K) memory)."""
    L, K = log_emit.shape
    if L == 0:
        return 0.0
    return _forward_log(log_init, log_trans, log_emit, np.empty((2, K)), False)[0]
