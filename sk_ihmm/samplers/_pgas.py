r"""Particle Gibbs with ancestor sampling for the (sticky) HDP-HMM (``pgas``).

Tripuraneni, Gu, Ge & Ghahramani (2015), Sections 3.1-3.4. Unlike the
collapsed samplers, the state holds explicit parameters: the root weights
``beta``, the transition rows ``pi`` (row 0 is the start distribution) and the
emission parameters ``phi``. One sweep is

1. ``x | beta, pi, phi`` for every sequence by conditional SMC with ancestor
   sampling (the current labels are the reference trajectory) on the
   *infinite* state space, expanded lazily; ``proposal`` is ``"prior"`` or
   ``"posterior"`` (fully adapted: particles are weighted by how well their
   state predicts the next observation);
2. ``(m, o) | x, beta``: root and override table counts (pi integrated out);
3. ``(alpha, gamma, kappa) | x, m, o`` (:mod:`sk_ihmm._hyper`: independent
   Gamma priors, or Fox et al.'s on ``(alpha + kappa, rho)``), when asked for;
4. ``beta | m, gamma ~ Dir(M_1, ..., M_K, gamma)``;
5. ``pi_j | x, beta ~ Dir(alpha * beta + kappa * delta_j + n_j)`` (row 0
   without ``kappa``);
6. ``phi_k | x, y`` from the conjugate posterior.

Invariants: labels are ``1..K`` and index 0 of every label-indexed array
holds the *remainder* (``beta[0]`` the root mass of the uninstantiated
states, ``pi[j, 0]`` the mass row ``j`` gives them); the explicit set of the
posterior proposal depends on the parameters only, never on the reference
trajectory; ``log_joint`` is ``log p(x, m, o, y | alpha, gamma, kappa)``, the
collapsed samplers' joint at the level of table counts.

Derivation and exactness argument: doc/internals.rst, section "Particle Gibbs
(samplers/_pgas.py)".
"""

import math

import numpy as np
from numba import njit

from .. import emissions as em
from .._hcrp import log_stirling_cover
from .._joint import count_log_joint
from .._hyper import resample_concentrations, rho_prior
from .._labels import compact_labels
from .._messages import shifted_exp
from .._nrt import hold, nrt_free, uniform_int
from .._rng import as_generator, draw_index, generator_handle
from .._vmath import exp_inplace
from . import option

__all__ = ["PGASState", "init", "step"]

_PROPOSALS = ("posterior", "prior")

#: Root weight above which a state is in the explicit set of the posterior
#: proposal (doc/internals.rst, "Particle Gibbs").
_EXPLICIT_MASS = 1e-3


class PGASState:
    """Mutable chain state of the particle Gibbs sampler.

    Attributes
    ----------
    x : ndarray of shape (n_timesteps,), int64
        Hidden state labels ``1..K`` (compact after every sweep).
    conc : ndarray of shape (3,)
        ``alpha, gamma, kappa``.
    beta : ndarray of shape (K + 1,)
        Root weights of the labels; ``beta[0]`` is the remainder mass.
    pi : ndarray of shape (K + 1, K + 1)
        Transition rows; row 0 is the start distribution, column 0 the
        remainder mass of a row.
    phi : ndarray of shape (K + 1, n_params)
        Emission parameters per label (row 0 unused).
    n, m : ndarray of shape (K + 1, K + 1), int64
        Transition counts and sampled root-table counts (restaurant 0 = start).
    o : ndarray of shape (K + 1,), int64
        Sampled override-table counts.
    stats : ndarray of shape (K + 1, n_stats)
        Emission sufficient statistics per label (row 0 unused).
    hyp : ndarray
        The chain's emission hyperparameters (its own copy: a family may
        resample them).
    log_joint : float
        ``log p(x, m, o, y | alpha, gamma, kappa)``, see the module docstring
        and doc/internals.rst, "Particle Gibbs".
    """

    def __init__(self, x, conc, hyp):
        self.x = x
        self.hyp = hyp
        self.conc = np.asarray(conc, dtype=np.float64)
        self.beta = self.pi = self.phi = None
        self.n = self.m = self.o = self.stats = None
        self.log_joint = np.nan
        self._log_stirling = None     # Stirling table of _log_joint, grown on demand

    @property
    def n_states(self):
        """Number of instantiated (= used) states ``K``."""
        return self.beta.shape[0] - 1


# --------------------------------------------------------------------------
# random variates (numba; randomness only from the Generator argument)
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _log_gamma_variate(shape, rng):
    """``log G`` with ``G ~ Gamma(shape, 1)``, accurate for tiny shapes
    (``G = G' U^(1/shape)``, ``G' ~ Gamma(shape + 1)``); ``-inf`` for shape 0."""
    if shape <= 0.0:
        return -np.inf
    if shape < 1.0:
        u = rng.random()
        if u <= 0.0:
            return -np.inf
        return math.log(rng.gamma(shape + 1.0, 1.0)) + math.log(u) / shape
    return math.log(rng.gamma(shape, 1.0))


@njit(cache=True, nogil=True)
def _beta_split(a, b, rng):
    """``(p, 1 - p)`` with ``p ~ Beta(a, b)``, both without cancellation.

    A zero shape gives a point mass; when both Gamma variates underflow the
    draw is the small-shape limit, a Bernoulli with mean ``a / (a + b)``.
    """
    la = _log_gamma_variate(a, rng)
    lb = _log_gamma_variate(b, rng)
    if la == -np.inf and lb == -np.inf:
        if a > 0.0 and rng.random() * (a + b) < a:
            return 1.0, 0.0
        return 0.0, 1.0
    d = lb - la
    return 1.0 / (1.0 + math.exp(d)), 1.0 / (1.0 + math.exp(-d))


@njit(cache=True, nogil=True)
def _dirichlet(shapes, out, rng):
    """Fill ``out`` with a ``Dir(shapes)`` draw (normalised in log space)."""
    mx = -np.inf
    for c in range(shapes.shape[0]):
        out[c] = _log_gamma_variate(shapes[c], rng)
        if out[c] > mx:
            mx = out[c]
    if mx == -np.inf:
        # every variate underflowed: small-shape limit, a point mass on a
        # component drawn with probabilities proportional to the shapes
        tot = 0.0
        for c in range(shapes.shape[0]):
            tot += shapes[c]
        u = rng.random() * tot
        acc = 0.0
        pick = shapes.shape[0] - 1
        for c in range(shapes.shape[0]):
            acc += shapes[c]
            if u < acc:
                pick = c
                break
        out[:] = 0.0
        out[pick] = 1.0
        return
    tot = 0.0
    for c in range(shapes.shape[0]):
        out[c] = math.exp(out[c] - mx)
        tot += out[c]
    for c in range(shapes.shape[0]):
        out[c] /= tot


@njit(cache=True, nogil=True, inline="always")
def _cumulative(w, cum):
    """``cum[0] = cumsum(w)``; returns the total. When every weight is zero
    the row is that of equal weights (a uniform draw)."""
    tot = 0.0
    for i in range(w.shape[0]):
        tot += w[i]
        cum[0, i] = tot
    if not tot > 0.0:
        tot = 0.0
        for i in range(w.shape[0]):
            tot += 1.0
            cum[0, i] = tot
    hold(w)
    hold(cum)
    return tot


@njit(cache=True, nogil=True, inline="always")
def _search_row(cum, r, u):
    """Smallest ``i`` with ``u < cum[r, i]`` (row ``r`` of ``cum`` non-decreasing,
    ``u < cum[r, -1]``; the last index if ``u`` is not).

    Counted, ``#{i : cum[r, i] <= u}``, rather than bisected: the rows here
    are short, and a count has no data-dependent branch to mispredict (a
    bisection of ten entries mispredicts about twice).
    """
    n = cum.shape[1]
    idx = 0
    for i in range(n):
        idx += cum[r, i] <= u
    hold(cum)
    return min(idx, n - 1)


# --------------------------------------------------------------------------
# conditional SMC with ancestor sampling on the lazily expanded state space
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _resized(pi, beta, phi, C):
    """Copies of ``pi``, ``beta``, ``phi`` with room for labels ``< C``
    (the new entries zero)."""
    # loops, not slice assignments between arrays: numba compiles those with
    # a shape-mismatch error message, and with it string formatting
    K1 = beta.shape[0]
    pi2 = np.zeros((C, C))
    beta2 = np.zeros(C)
    phi2 = np.zeros((C, phi.shape[1]))
    for j in range(K1):
        beta2[j] = beta[j]
        for k in range(K1):
            pi2[j, k] = pi[j, k]
        for d in range(phi.shape[1]):
            phi2[j, d] = phi[j, d]
    return pi2, beta2, phi2


@njit(cache=True, nogil=True)
def _grow(pi, beta, phi, need):
    """Copies of the parameter arrays with room for labels ``< need`` (doubling)."""
    return _resized(pi, beta, phi, max(2 * pi.shape[0], need))


@njit(cache=True, nogil=True)
def _new_state(pi, beta, phi, K, hit_row, alpha, gamma, kappa, zero_stats, hyp,
               fam, shapes, rng):
    """Realise state ``K + 1`` from the conditional prior.

    Breaks the root stick, splits the remainder of rows ``0..K`` (row
    ``hit_row`` conditioned on having just moved into the new state; ``-1``
    for none), draws the row of the new state and its emission parameters
    from the prior. The caller guarantees ``K + 1 < pi.shape[0]`` and
    ``shapes.shape[0] > K + 1``.
    """
    k = K + 1
    b, rest = _beta_split(1.0, gamma, rng)
    bk = beta[0] * b
    beta[0] = beta[0] * rest
    beta[k] = bk
    for r in range(k):
        p, q = _beta_split(alpha * bk + (1.0 if r == hit_row else 0.0), alpha * beta[0], rng)
        pi[r, k] = pi[r, 0] * p
        pi[r, 0] = pi[r, 0] * q
    shapes[0] = alpha * beta[0]
    for c in range(1, k + 1):
        shapes[c] = alpha * beta[c]
    shapes[k] += kappa
    _dirichlet(shapes[:k + 1], pi[k, :k + 1], rng)
    pi[k, k + 1:] = 0.0
    em.sample_param(fam, zero_stats, np.int64(0), hyp, rng, phi, k)


@njit(cache=True, nogil=True)
def _realise_down_to(pi, beta, phi, K, eps, alpha, gamma, kappa, zero_stats, hyp,
                     fam, rng):
    """Realise unused states until the root remainder ``beta[0]`` is ``<= eps``.

    Returns the (possibly grown) arrays and the new number of states.
    """
    shapes = np.zeros(pi.shape[0])
    while beta[0] > eps:
        if K + 1 >= pi.shape[0]:
            pi, beta, phi = _grow(pi, beta, phi, K + 2)
            shapes = np.zeros(pi.shape[0])
        _new_state(pi, beta, phi, K, np.int64(-1), alpha, gamma, kappa, zero_stats, hyp,
                   fam, shapes, rng)
        K += 1
    return pi, beta, phi, K


@njit(cache=True, nogil=True, inline="always")
def _scan_row(w, j, lo, hi, u, skip):
    """Column ``k`` in ``lo..hi`` of row ``j`` that ``u`` falls in when the
    weights ``w[j, lo..hi]`` other than column ``skip`` (``-1``: none) are
    laid end to end from 0 (the smallest ``k`` with ``u`` below their sum up
    to ``k``), or ``-1`` when ``u`` exceeds the whole sum (for a row of
    ``pi``: the remainder was hit)."""
    found = -1
    acc = 0.0
    for k in range(lo, hi + 1):
        if k != skip:
            acc += w[j, k]
            if u < acc:
                found = k
                break
    hold(w)
    return found


@njit(cache=True, nogil=True)
def _enter_new_state(params, K, K0, j, prior, rows, rng):
    """Realise state ``K + 1`` as the one a particle of row ``j`` moves into
    (:func:`_new_state`), record its tail mass; returns ``K + 1``
    (``params``, ``prior``, ``rows``: those of :func:`_csmc_range`)."""
    pi, beta, phi = params
    alpha, gamma, kappa, fam, hyp, zero_stats = prior
    tail, shapes = rows[0], rows[1]
    _new_state(pi, beta, phi, K, j, alpha, gamma, kappa, zero_stats, hyp, fam, shapes, rng)
    tail[K + 1] = _row_tail(pi, K + 1, K0)
    return K + 1


@njit(cache=True, nogil=True)
def _row_tail(pi, j, K0):
    """Mass of the row of the newest state ``j`` outside the explicit set
    ``1..K0`` (remainder included)."""
    s = pi[j, 0]
    for k in range(K0 + 1, j + 1):
        s += pi[j, k]
    return s


#: Time steps per call of the CSMC kernel (:func:`_csmc_range`). Between
#: calls, the driver (:func:`_csmc`) computes the chunk's emission terms
#: (:func:`_emission_terms`, with a vectorised ``exp``).
_CHUNK = 4096


@njit(cache=True, nogil=True)
def _emission_terms(fam, phi, K0, Y, start, n, ef, l_prior, bits):
    """Emission terms of the posterior proposal at steps ``start .. start + n - 1``.

    For row ``c`` (step ``t = start + c``) fills ``ef[c, k] = f(y_t | phi_k) /
    exp(mx_t)`` for the explicit states ``k = 1..K0`` and ``ef[c, 0] = L_t /
    exp(mx_t)``, with ``log L_t = l_prior[t]`` (the problem's ``prior_pred``)
    and ``mx_t`` the largest of the ``K0 + 1`` log terms (a shift common to
    every particle of the step); a term below ``exp(-700)`` is raised to it
    (:data:`sk_ihmm.emissions.SHIFTED_FLOOR`). The explicit states' parameters
    do not change during a CSMC sweep, so the terms are computed ahead, a
    chunk at a time; the exponentials by the vectorised
    :func:`sk_ihmm._vmath.exp_inplace` (``bits``: scratch of ``ef``'s size),
    as NumPy's ``exp`` is vectorised for float64 only on CPUs with AVX-512.
    """
    for c in range(n):
        ef[c, 0] = l_prior[start + c]
    em.shifted_param_loglik_block(fam, phi, K0, Y, start, n, ef)
    m = n * ef.shape[1]
    exp_inplace(ef.reshape(-1)[:m], bits[:m])


@njit(cache=True, nogil=True, inline="always")
def _proposal_row(pi, j, r, stamp, K0, tail, ef, c, zrow, z_stamp):
    """Weights of the posterior proposal from state ``j`` at the step of
    emission row ``c`` (global time index ``stamp``), into slot ``r``:
    ``zrow[r, k - 1] = pi_jk f_k`` for the explicit states ``k = 1..K0`` and
    ``zrow[r, K0] = Z_j``, their sum plus the mass outside the explicit set
    times the new-state predictive. The weights are kept as they are, not
    as a cumulative row: the sum then runs in four independent partial sums
    (a cumulative row is one chain of dependent additions), and a draw adds
    the weights up as it searches (:func:`_scan_row`)."""
    s0 = tail[j] * ef[c, 0]
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    k = 1
    while k + 3 <= K0:
        w0 = pi[j, k] * ef[c, k]
        w1 = pi[j, k + 1] * ef[c, k + 1]
        w2 = pi[j, k + 2] * ef[c, k + 2]
        w3 = pi[j, k + 3] * ef[c, k + 3]
        zrow[r, k - 1] = w0
        zrow[r, k] = w1
        zrow[r, k + 1] = w2
        zrow[r, k + 2] = w3
        s0 += w0
        s1 += w1
        s2 += w2
        s3 += w3
        k += 4
    while k <= K0:
        w0 = pi[j, k] * ef[c, k]
        zrow[r, k - 1] = w0
        s0 += w0
        k += 1
    zrow[r, K0] = (s0 + s1) + (s2 + s3)
    z_stamp[r] = stamp
    hold(zrow)
    hold(z_stamp)


@njit(cache=True, nogil=True, inline="always")
def _row_mode(zrow, r, K0):
    """The explicit state of largest weight in proposal row ``r``: returns
    ``(idx, weight)``, its column and its weight."""
    idx = 0
    best = zrow[r, 0]
    for k in range(1, K0):
        if zrow[r, k] > best:
            best = zrow[r, k]
            idx = k
    hold(zrow)
    return idx, best


@njit(cache=True, nogil=True, inline="always")
def _binomial_from_top(m, p, u):
    """``Binomial(m, p)`` variate for ``p >= 0.5`` by inversion from ``m``
    down (one uniform ``u``; expected ``1 + m (1 - p)`` terms); ``-1`` when
    ``p ** m`` underflows (the caller then draws one by one)."""
    pm = 1.0
    b = p
    e = m
    while e > 0:               # p ** m by squaring
        if e & 1:
            pm *= b
        b *= b
        e >>= 1
    if pm < 1e-280:
        return -1
    ratio = (1.0 - p) / p
    k = m
    prob = pm
    cdf = pm
    while u >= cdf and k > 0:
        prob *= k / (m - k + 1) * ratio
        k -= 1
        cdf += prob
    return k


@njit(cache=True, nogil=True, inline="always")
def _ancestors(t, N, X, A, anc, w, v, cum, aw, pi, ref, rng):
    """Resampling of the particles of step ``t - 1`` by their weights ``w``
    and ancestor sampling of the reference (``v`` times the transition into
    ``ref``): ancestors into ``anc`` and ``A[t]``. Returns whether every
    particle of step ``t - 1`` is in the same state.

    Then the resampling and ancestor-sampling weights are all equal: the
    ancestors are iid uniform and nothing at step ``t`` depends on them (the
    particles of step ``t - 1`` differ only in their past). Only the kept
    lineage reads one, so :func:`_trace_back` draws it there (``A[t, 0] =
    -1`` marks the step); ``anc[i] = 0`` stands for "a particle of the
    common state".
    """
    same = t > 0
    for i in range(1, N if t > 0 else 1):
        same = same and X[t - 1, i] == X[t - 1, 0]
    if same:
        A[t, 0] = -1
        for i in range(N):
            anc[i] = 0
    elif t > 0:
        tot = _cumulative(w, cum)
        atot = 0.0
        for i in range(N):
            aw[i] = v[i] * pi[X[t - 1, i], ref]
            atot += aw[i]
        if not atot > 0.0:
            atot = 0.0
            for i in range(N):
                aw[i] = pi[X[t - 1, i], ref]
                atot += aw[i]
        for i in range(N - 1):
            anc[i] = _search_row(cum, 0, rng.random() * tot)
        anc[N - 1] = draw_index(aw, N, rng.random() * atot)
        for i in range(N):
            A[t, i] = anc[i]
    return same


@njit(cache=True, nogil=True, inline="always")
def _move_posterior(t, a, c, L, now, same, ref, K, K0, N, params, prior, l_prior, Y,
                    particles, rows, rng):
    """Move the ``N - 1`` free particles of step ``t`` (sequence start ``a``,
    emission row ``c``, proposal-row parity ``now``) by the posterior
    proposal, the last one to the reference state ``ref``, and set their
    weights ``w`` and ancestor-sampling factors ``v``. Returns ``K``.
    Inlined into :func:`_csmc_range`, whose loop state its parameters are
    (the tuples of that kernel, the step's position and the two flags)."""
    pi = params[0]
    X, anc, w, v = particles[0], particles[7], particles[3], particles[4]
    tail, zrow, z_stamp, ef = rows[0], rows[2], rows[3], rows[4]
    fam, phi = prior[3], params[2]
    # when every free particle moves from the same state (the start
    # row, or a step whose particles all agree) and one explicit
    # state has at least half the proposal mass, the number going
    # there is one binomial draw and only the others are drawn one
    # by one, from the row without it: the multinomial draw of the
    # N - 1 moves, whose order does not matter (the particles of the
    # step are exchangeable: their ancestors are iid uniform)
    n_mode = -1
    m_idx = 0
    w_mode = 0.0
    if (same or t == 0) and K0 > 0:
        r = 2 * (0 if t == 0 else X[t - 1, 0]) + now
        m_idx, w_mode = _row_mode(zrow, r, K0)
        p = w_mode / zrow[r, K0]
        if p >= 0.5:
            n_mode = _binomial_from_top(N - 1, p, rng.random())
        m_idx += 1
    k_last = -1
    v_last = 1.0
    w_last = 1.0
    for i in range(N):
        k_new = ref
        if i < n_mode:
            k_new = m_idx
        elif i < N - 1 and n_mode >= 0:
            # from the row without the mode
            r = 2 * (0 if t == 0 else X[t - 1, 0]) + now
            u = rng.random() * (zrow[r, K0] - w_mode)
            idx = _scan_row(zrow, r, 0, K0 - 1, u, m_idx - 1)
            if idx >= 0:
                k_new = idx + 1
            else:
                j = 0 if t == 0 else X[t - 1, 0]
                k_new = _scan_row(pi, j, K0 + 1, K, rng.random() * tail[j], -1)
                if k_new < 0:
                    K = _enter_new_state(params, K, K0, j, prior, rows, rng)
                    k_new = K
        elif i < N - 1:
            # slot r is current: j is a state of step t - 1, whose
            # weight needed it (or the start row at t == 0)
            j = 0 if t == 0 else X[t - 1, anc[i]]
            r = 2 * j + now
            u = rng.random() * zrow[r, K0]
            # staying in j, the likeliest move, gets the first interval
            stay = j - 1 if 1 <= j <= K0 else -1
            w_stay = zrow[r, stay] if stay >= 0 else 0.0
            if u < w_stay:
                idx = stay
            else:
                idx = _scan_row(zrow, r, 0, K0 - 1, u - w_stay, stay)
            if idx >= 0:
                k_new = idx + 1
            else:
                # outside the explicit set, in proportion to pi_jk
                k_new = _scan_row(pi, j, K0 + 1, K, rng.random() * tail[j], -1)
                if k_new < 0:
                    K = _enter_new_state(params, K, K0, j, prior, rows, rng)
                    k_new = K
        X[t, i] = k_new
        # weight: f / g of the state just entered (g = f on the
        # explicit set), times Z of that state at the next step; a
        # function of k_new, so kept for the next particle
        if k_new != k_last:
            k_last = k_new
            v_last = 1.0
            if k_new > K0:
                v_last = math.exp(em.param_loglik(fam, phi, k_new, Y, a + t)
                                  - l_prior[a + t])
            w_last = v_last
            if t + 1 < L:
                r = 2 * k_new + 1 - now
                if z_stamp[r] != a + t + 1:
                    _proposal_row(pi, k_new, r, a + t + 1, K0, tail, ef, c + 1, zrow,
                                  z_stamp)
                w_last *= zrow[r, K0]
        v[i] = v_last
        w[i] = w_last
    return K


@njit(cache=True, nogil=True, inline="always")
def _move_prior(t, a, ref, K, K0, N, params, prior, Y, particles, rows, rng):
    """Move the ``N - 1`` free particles of step ``t`` by the prior (their
    rows of ``pi``), the last one to ``ref``; weights ``w = v`` are the
    emission likelihoods, shifted. Returns ``K``."""
    pi, phi, fam = params[0], params[2], prior[3]
    X, logw, w, v, anc = particles[0], particles[2], particles[3], particles[4], particles[7]
    for i in range(N):
        j = 0 if t == 0 else X[t - 1, anc[i]]
        k_new = ref
        if i < N - 1:
            # rows sum to one (column 0 = remainder)
            k_new = _scan_row(pi, j, 1, K, rng.random(), -1)
            if k_new < 0:
                K = _enter_new_state(params, K, K0, j, prior, rows, rng)
                k_new = K
        X[t, i] = k_new
        logw[i] = em.param_loglik(fam, phi, k_new, Y, a + t)
    shifted_exp(logw, w, 1.0)     # all -inf: equal weights
    for i in range(N):
        v[i] = w[i]
    return K


@nrt_free
def _csmc_range(s, t, g_end, K, K0, N, posterior, data, params, prior, particles, rows, rng):
    """CSMC steps from step ``t`` of sequence ``s`` up to the global time index
    ``g_end``, or until fewer than ``N`` free labels remain.

    ``data`` is ``(x, Y, starts, ends, l_prior)``, ``params`` ``(pi, beta,
    phi)``, ``prior`` ``(alpha, gamma, kappa, fam, hyp, zero_stats)`` (what
    realising a state draws from), ``particles`` ``(X, A, logw, w, v, cum,
    aw, anc)`` (see :func:`_csmc`) and ``rows`` ``(tail, shapes, zrow,
    z_stamp, ef)``. Row ``c`` of the emission terms ``ef``
    (:func:`_emission_terms`, with one row more for the next step) belongs
    to the global time index ``g0 + c``, ``g0`` the index of the first step
    run; ``l_prior`` is indexed by the global time index. A sequence that
    ends within the range gets its new trajectory drawn and traced back into
    ``x``.

    Returns ``(s, t, K, n_changed)``: where to resume, the number of states
    and the number of time steps whose label changed.

    ``w`` are the particles' weights at the previous step, ``v`` their
    ancestor-sampling factors. With the posterior proposal ``zrow[2 j + p]``
    holds the proposal weights of state ``j`` (:func:`_proposal_row`) for
    the step ``z_stamp[2 j + p]`` (a global time index of parity ``p``). No
    array is reassigned or allocated here: the driver grows them between
    calls, and the loop is compiled without reference counting
    (:func:`sk_ihmm._nrt.nrt_free`).
    """
    rng = as_generator(rng)
    x, Y, starts, ends, l_prior = data
    pi = params[0]
    X, A, _, w, v, cum, aw, anc = particles
    tail, zrow, z_stamp, ef = rows[0], rows[2], rows[3], rows[4]
    n_changed = 0
    g0 = starts[s] + t
    while s < starts.shape[0] and pi.shape[0] - 1 - K >= N:
        a = starts[s]
        L = ends[s] - a
        if a + t >= g_end:
            break
        ref = x[a + t]
        c = a + t - g0
        # ---- resampling and ancestor sampling (weights of step t - 1) ----
        same = _ancestors(t, N, X, A, anc, w, v, cum, aw, pi, ref, rng)
        if posterior:
            # proposal rows alternate between two slots per state by the
            # parity of the step: those of step t are read while those of
            # step t + 1 are written
            now = (a + t) & 1
            if t == 0:
                _proposal_row(pi, 0, now, a, K0, tail, ef, c, zrow, z_stamp)
            K = _move_posterior(t, a, c, L, now, same, ref, K, K0, N, params, prior, l_prior,
                                Y, particles, rows, rng)
        else:
            K = _move_prior(t, a, ref, K, K0, N, params, prior, Y, particles, rows, rng)
        t += 1
        if t == L:
            n_changed += _trace_back(x, a, L, X, A, w, cum, rng)
            s += 1
            t = 0
    return s, t, K, n_changed


@njit(cache=True, nogil=True)
def _trace_back(x, a, L, X, A, w, cum, rng):
    """Draw the final particle by its weight, write its ancestry into
    ``x[a:a + L]``; returns the number of labels changed. A step whose
    ancestors were uniform (``A[t, 0] == -1``, see :func:`_csmc_range`) gets
    the ancestor of the kept lineage drawn here."""
    N = w.shape[0]
    b = _search_row(cum, 0, rng.random() * _cumulative(w, cum))
    n_changed = 0
    for t in range(L - 1, -1, -1):
        k = X[t, b]
        if k != x[a + t]:
            n_changed += 1
            x[a + t] = k
        if A[t, 0] < 0 and t > 0:   # ancestors left to draw here (uniform)
            b = uniform_int(N, rng)
        else:
            b = A[t, b]
    return n_changed


@njit(cache=True, nogil=True)
def _grown(arr, rows, fill):
    """``arr`` with ``rows`` rows, the new ones filled with ``fill``."""
    out = np.empty((rows,) + arr.shape[1:], dtype=arr.dtype)
    # over the flat C-order views, as loops (see _resized): the first rows
    # of ``out`` are the first ``arr.size`` entries
    flat_out = out.reshape(-1)
    flat_in = arr.reshape(-1)
    for i in range(flat_in.shape[0]):
        flat_out[i] = flat_in[i]
    for i in range(flat_in.shape[0], flat_out.shape[0]):
        flat_out[i] = fill
    return out


@njit(cache=True, nogil=True)
def _csmc(data, params, K, K0, n_particles, posterior, prior, rng):
    """Conditional SMC with ancestor sampling for every sequence, in place on ``x``.

    Particle ``N - 1`` carries the reference (the current labels of the
    sequence). Multinomial resampling at every step. The weights of a step
    (and the ancestor-sampling weights) depend on the particles' states
    only, so when every particle is in the same state -- at most steps once
    the chain has settled -- they are equal: the ancestors are then iid
    uniform and independent of everything else at that step, and only the
    one on the lineage kept at the end is drawn (by :func:`_trace_back`).

    With the prior proposal the weight of a particle at step ``t`` is
    ``f(y_t | s_t)`` and the reference picks its ancestor in proportion to
    ``w_{t-1}^i pi(x'_t | s_{t-1}^i)``.

    The posterior proposal is *fully adapted* (an auxiliary particle filter,
    which is plain SMC on the targets ``p(s_{1:t}, y_{1:t}) Z_{s_t}(y_{t+1})``):
    the weight of a particle entering ``s_t = k`` is ``(f_k / g_k)(y_t)
    Z_k(y_{t+1})``, with ``g`` and ``Z`` of doc/internals.rst, "Particle
    Gibbs" (``f / g = 1`` on the explicit set ``1..K0``; no ``Z`` at the
    last step), so particles are resampled by how well their state predicts
    the *next* observation. Its
    ancestor-sampling weights are ``w_{t-1}^i pi(x'_t | s^i_{t-1}) /
    Z_{s^i_{t-1}}(y_t) = (f / g)(y_{t-1}) pi(x'_t | s^i_{t-1})``. The proposal
    row of a state is computed once per step however many particles share it,
    and so is a particle's weight, a function of the state it enters. When
    the free particles all move from one state (most steps of a settled
    chain) and the likeliest explicit
    state ``k`` of that row has probability ``p >= 1/2``, the ``N - 1`` moves
    are drawn as one multinomial: ``Binomial(N - 1, p)`` of them enter ``k``
    (:func:`_binomial_from_top`, one uniform) and only the others are drawn
    one by one from the row without ``k`` -- about 1.2 uniforms a step
    instead of ``N - 1``. The order of the particles does not matter there
    (their ancestors are iid uniform), so those entering ``k`` come first.

    The time loop runs in :func:`_csmc_range`, a chunk of ``_CHUNK`` steps per
    call; between calls this driver computes the next chunk's emission terms
    and grows the parameter arrays when fewer than ``N`` free
    labels remain. ``data``, ``params`` and ``prior`` are the tuples of
    :func:`_csmc_range`; ``l_prior`` in ``data`` is ``log L_t``, the
    problem's ``prior_pred`` (computed once per problem).

    Returns ``(pi, beta, phi, K, n_changed)``: the (possibly grown) working
    arrays with the states realised during the sweep appended as labels
    ``> K`` (input), the new number of instantiated states and the number of
    time steps whose label changed.
    """
    rng = as_generator(rng)
    x, Y, starts, ends, l_prior = data
    pi, beta, phi = params
    alpha, gamma, kappa, fam, hyp, zero_stats = prior
    N = n_particles
    L_max = 0
    for s in range(starts.shape[0]):
        L_max = max(L_max, ends[s] - starts[s])
    X = np.empty((L_max, N), np.int64)      # particle states, time-major
    A = np.empty((L_max, N), np.int64)      # ancestors (row t written at step t)
    logw = np.zeros(N)                      # log weights ('prior' proposal)
    w = np.ones(N)                          # weights, relative within a step
    v = np.ones(N)                          # ancestor-sampling factors
    cum = np.empty((1, N))                  # cumulative weights (one row)
    aw = np.empty(N)
    anc = np.zeros(N, np.int64)
    C = pi.shape[0]
    # mass of each row outside the explicit set (remainder included)
    tail = np.empty(C)
    for j in range(C):
        tail[j] = pi[j, 0]
        for k in range(K0 + 1, K + 1):
            tail[j] += pi[j, k]
    shapes = np.zeros(C)
    zrow = np.zeros((2 * C, K0 + 1))        # proposal weights (_proposal_row), two per state, ...
    z_stamp = np.full(2 * C, -1, np.int64)  # ... valid at the time index stored here
    # a chunk's emission terms (one row more, for the next step)
    ef = np.empty((_CHUNK + 1, K0 + 1))
    ef_bits = np.empty(ef.size)
    T = Y.shape[0]
    # np.int64, not 0: a literal int argument compiles a second specialisation of the callee
    s, t, n_changed = np.int64(0), np.int64(0), 0
    while s < starts.shape[0]:
        if pi.shape[0] - 1 - K < N:
            pi, beta, phi = _grow(pi, beta, phi, K + N + 1)
            C = pi.shape[0]
            tail, shapes = _grown(tail, C, 0.0), np.zeros(C)
            zrow, z_stamp = _grown(zrow, 2 * C, 0.0), _grown(z_stamp, 2 * C, np.int64(-1))
        g0 = starts[s] + t
        n = min(_CHUNK, T - g0)
        if posterior:
            _emission_terms(fam, phi, K0, Y, g0, min(n + 1, T - g0), ef, l_prior, ef_bits)
        s, t, K, changed = _csmc_range(
            s, t, g0 + n, K, K0, N, posterior, data, (pi, beta, phi), prior,
            (X, A, logw, w, v, cum, aw, anc), (tail, shapes, zrow, z_stamp, ef), rng)
        n_changed += changed
    return pi, beta, phi, K, n_changed


# --------------------------------------------------------------------------
# parameters given the labels
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _counts(x, Y, seq_first, K, n_stats, fam):
    """Transition counts ``n`` (row 0 = start) and emission statistics."""
    n = np.zeros((K + 1, K + 1), np.int64)
    stats = np.zeros((K + 1, n_stats))
    for t in range(x.shape[0]):
        j = 0 if seq_first[t] else x[t - 1]
        n[j, x[t]] += 1
    em.add_labelled(fam, stats, x, Y)
    return n, stats


#: :func:`_crp_tables` draws the first ``max(_TABLES_DIRECT, 4 c)``
#: customers one by one, the rest by thinning.
_TABLES_DIRECT = 8


@njit(cache=True, nogil=True)
def _crp_tables(nn, c, rng):
    """Number of tables ``nn >= 1`` customers of a CRP with concentration
    ``c > 0`` occupy: ``1 + sum_{i=1}^{nn-1} B_i``, ``B_i ~ Bernoulli(c / (i + c))``
    independent (customer ``i + 1`` opens a table).

    The first customers are drawn one by one; beyond ``i0 = max(8, 4 c)``
    the successes are found by thinning, over the ranges ``[lo, 2 lo)``:
    candidates are the successes of Bernoulli trials with the range's largest
    probability ``p = c / (lo + c)``, reached by geometric jumps, and a
    candidate ``i`` is kept with probability ``(c / (i + c)) / p``. That is an
    exact draw of the same Bernoulli sequence with about ``c + 1`` jumps per
    range instead of ``lo`` trials: ``O(c log nn)`` uniforms instead of
    ``nn`` (about 20 instead of 400 for ``nn = 400``, ``c = 0.5``).
    """
    tables = 1
    i0 = min(nn, max(_TABLES_DIRECT, int(4.0 * c) + 1))
    for i in range(1, i0):
        if rng.random() * (i + c) < c:
            tables += 1
    lo = i0
    while lo < nn:
        hi = min(2 * lo, nn)
        p = c / (lo + c)
        log_q = math.log1p(-p)
        i = lo - 1
        while True:
            # next success of Bernoulli(p) trials after i: a geometric jump
            # (compared as a float first: with p tiny the jump can exceed
            # any integer)
            jump = math.log(1.0 - rng.random()) / log_q      # log of (0, 1]
            if jump >= hi - 1 - i:
                break
            i += 1 + int(jump)
            if rng.random() * (i + c) < lo + c:    # keep with (c / (i + c)) / p
                tables += 1
        lo = hi
    return tables


@njit(cache=True, nogil=True)
def _sample_tables(n, beta, alpha, kappa, rng):
    """Root-table counts ``m`` and override counts ``o`` given ``n`` and ``beta``.

    The ``n_jk`` customers of ``(j, k)`` open tables as in a CRP with
    concentration ``alpha beta_k + kappa [j == k >= 1]`` (Teh et al. 2006;
    Fox et al. 2008); each table of ``(j, j)`` is an override table with
    probability ``kappa / (kappa + alpha beta_j)``.
    """
    K1 = n.shape[0]
    m = np.zeros((K1, K1), np.int64)
    o = np.zeros(K1, np.int64)
    for j in range(K1):
        for k in range(1, K1):
            nn = n[j, k]
            if nn == 0:
                continue
            sticky = kappa if (j == k and j > 0) else 0.0
            c = alpha * beta[k] + sticky
            tables = _crp_tables(nn, c, rng)
            if sticky > 0.0:
                over = 0
                for _ in range(tables):
                    if rng.random() * c < sticky:
                        over += 1
                o[j] = over
                m[j, k] = tables - over
            else:
                m[j, k] = tables
    return m, o


@njit(cache=True, nogil=True)
def _sample_rows(n, beta, alpha, kappa, rng):
    """``pi_j ~ Dir(alpha beta + kappa delta_j + n_j)``, remainder in column 0."""
    K1 = n.shape[0]
    pi = np.zeros((K1, K1))
    shapes = np.empty(K1)
    for j in range(K1):
        shapes[0] = alpha * beta[0]
        for k in range(1, K1):
            shapes[k] = alpha * beta[k] + n[j, k]
        if j > 0:
            shapes[j] += kappa
        _dirichlet(shapes, pi[j], rng)
    return pi


@njit(cache=True, nogil=True)
def _sample_emission_params(stats, hyp, fam, n_params, rng):
    """``phi_k`` from the conjugate posterior given ``stats[k]`` (row 0 unused)."""
    phi = np.zeros((stats.shape[0], n_params))
    for k in range(1, stats.shape[0]):
        em.sample_param(fam, stats, k, hyp, rng, phi, k)
    return phi


def _log_joint(state, problem):
    """``log p(x, m, o, y | conc)`` (see the module docstring)."""
    state._log_stirling = log_stirling_cover(state._log_stirling, state.n, state.m, state.o)
    return count_log_joint(state.n, state.m, state.o, state.stats, state.conc, problem.fam,
                           state.hyp, state._log_stirling)


@njit(cache=True, nogil=True)
def _parameters(x, Y, seq_first, K, n_stats, n_params, fam, hyp, beta_used, conc, priors,
                rho, resample, rng):
    """Steps 2-6 of the sweep in one kernel: counts, tables, concentrations,
    ``beta``, ``pi``, ``phi`` (``rho``: :func:`~sk_ihmm._hyper.rho_prior` of
    ``priors``). Returns ``(n, stats, m, o, conc, beta, pi, phi)``."""
    rng = as_generator(rng)
    n, stats = _counts(x, Y, seq_first, K, n_stats, fam)
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    m, o = _sample_tables(n, beta_used, alpha, kappa, rng)
    new_conc = conc.copy()
    if resample[0] or resample[1] or resample[2]:
        # the sums as loops: numba's sum with an axis is slow to compile
        customers = np.zeros(K + 1, np.int64)
        root_tables = np.int64(0)
        override_tables = np.int64(0)
        for j in range(K + 1):
            override_tables += o[j]
            for k in range(K + 1):
                customers[j] += n[j, k]
                root_tables += m[j, k]
        resample_concentrations(alpha, gamma, kappa, customers, root_tables, override_tables, K,
                                priors, rho, resample, rng, new_conc)
        alpha, gamma, kappa = new_conc[0], new_conc[1], new_conc[2]
    shapes = np.empty(K + 1)
    shapes[0] = gamma
    for k in range(1, K + 1):
        shapes[k] = 0.0
        for j in range(K + 1):
            shapes[k] += m[j, k]
    beta = np.empty(K + 1)
    _dirichlet(shapes, beta, rng)
    pi = _sample_rows(n, beta, alpha, kappa, rng)
    # the family's hyperparameters given the labels (emission parameters
    # integrated out), then the parameters given them: one block
    em.resample_hyperparameters(fam, stats, hyp, rng)
    phi = _sample_emission_params(stats, hyp, fam, n_params, rng)
    return n, stats, m, o, new_conc, beta, pi, phi


def _resample_parameters(state, problem, beta_used, rng):
    """Steps 2-6 of the sweep given compact labels ``state.x``.

    ``beta_used[k]`` (``k >= 1``) is the current root weight of label ``k``;
    it only enters the table counts.
    """
    (state.n, state.stats, state.m, state.o, state.conc, state.beta, state.pi,
     state.phi) = _parameters(
        state.x, problem.Y, problem.seq_first, int(state.x.max()), problem.n_stats,
        problem.emission.n_params(problem.dim), problem.fam, state.hyp, beta_used,
        np.asarray(state.conc, dtype=np.float64), problem.priors, rho_prior(problem.priors),
        problem.resample, generator_handle(rng),
    )
    state.log_joint = _log_joint(state, problem)


def _options(problem):
    """Validated ``(n_particles, posterior)`` from the problem's options."""
    n_particles, proposal = option(problem, "n_particles"), option(problem, "proposal")
    if int(n_particles) != n_particles or n_particles < 2:
        raise ValueError(f"pgas needs n_particles >= 2; got {n_particles!r}.")
    if proposal not in _PROPOSALS:
        raise ValueError(f"pgas proposal must be one of {_PROPOSALS}; got {proposal!r}.")
    return int(n_particles), proposal == "posterior"


# --------------------------------------------------------------------------
# sampler protocol
# --------------------------------------------------------------------------
def init(problem, x0, rng):
    """Initial state from labels ``x0``: counts, tables, ``beta``, ``pi``, ``phi``.

    The table counts are drawn with equal provisional root weights
    ``1 / (K + 1)``; everything else follows from them as in a sweep (without
    resampling the concentrations).
    """
    _options(problem)
    x = np.array(x0, dtype=np.int64)
    compact_labels(x)
    state = PGASState(x, problem.conc0, problem.hyp.copy())
    K = int(x.max())
    no_resample = problem._replace(resample=np.zeros(3, np.bool_))
    _resample_parameters(state, no_resample, np.full(K + 1, 1.0 / (K + 1)), rng)
    return state


@njit(cache=True, nogil=True)
def _explicit_set(x, pi, beta, phi, K, spare, eps, alpha, gamma, kappa, zero_stats, hyp, fam,
                  rng):
    """Working copies of the parameters of the ``K`` used states with the
    explicit set of the posterior proposal realised and moved to the front.

    Unused states are realised from their conditional prior until the root
    remainder is at most ``eps`` (:data:`_EXPLICIT_MASS`, an argument so
    that tests can change it); the states with a larger root weight get
    labels ``1..K0`` (``x`` is relabelled accordingly).
    Returns ``(pi, beta, phi, K, K0)``, the arrays with room for ``spare``
    more labels than the input (or more, if the realised states needed it).
    """
    rng = as_generator(rng)
    pi, beta, phi = _resized(pi, beta, phi, K + 1 + spare)
    pi, beta, phi, K = _realise_down_to(
        pi, beta, phi, K, eps, alpha, gamma, kappa, zero_stats, hyp, fam, rng)
    K0 = _explicit_first(x, pi, beta, phi, K, eps)
    return pi, beta, phi, K, K0


@njit(cache=True, nogil=True)
def _explicit_first(x, pi, beta, phi, K, eps):
    """Relabel, in place, so that the states with ``beta > eps`` come first
    (labels ``1..K0``, order otherwise kept); returns ``K0``."""
    order = np.empty(K + 1, np.int64)
    order[0] = 0
    K0 = 0
    for k in range(1, K + 1):
        if beta[k] > eps:
            K0 += 1
            order[K0] = k
    i = K0
    for k in range(1, K + 1):
        if not beta[k] > eps:
            i += 1
            order[i] = k
    lut = np.empty(K + 1, np.int64)
    for i in range(K + 1):
        lut[order[i]] = i
    for t in range(x.shape[0]):
        x[t] = lut[x[t]]
    pi_old = pi[:K + 1, :K + 1].copy()
    beta_old = beta[:K + 1].copy()
    phi_old = phi[:K + 1].copy()
    for i in range(K + 1):
        beta[i] = beta_old[order[i]]
        for d in range(phi.shape[1]):      # a loop, as in _resized
            phi[i, d] = phi_old[order[i], d]
        for j in range(K + 1):
            pi[i, j] = pi_old[order[i], order[j]]
    return K0


@njit(cache=True, nogil=True)
def _sweep(data, params, conc, options, emission, hyper, rng):
    """One sweep in one kernel: the explicit set (posterior proposal), CSMC-AS
    on every sequence (labels ``x`` replaced in place and made compact), then
    steps 2-6 (:func:`_parameters`). Returns :func:`_parameters`' tuple and
    the number of time steps whose label changed.

    ``data`` is ``(x, Y, starts, ends, seq_first, l_prior)``, ``params``
    ``(pi, beta, phi)``, ``options`` ``(n_particles, posterior, eps)``,
    ``emission`` ``(fam, hyp, n_stats, n_params)`` and ``hyper`` ``(priors,
    rho, resample)`` (see :func:`step`)."""
    handle = rng     # _parameters gets the handle, as from Python: one compiled version
    rng = as_generator(rng)
    x, Y, starts, ends, seq_first, l_prior = data
    pi, beta, phi = params
    n_particles, posterior, eps = options
    fam, hyp, n_stats, n_params = emission
    priors, rho, resample = hyper
    K = beta.shape[0] - 1
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    zero_stats = np.zeros((1, n_stats))
    spare = K + 1 + n_particles
    if posterior:
        pi, beta, phi, K, K0 = _explicit_set(x, pi, beta, phi, K, spare, eps, alpha, gamma,
                                             kappa, zero_stats, hyp, fam, rng)
    else:
        pi, beta, phi = _resized(pi, beta, phi, K + 1 + spare)
        K0 = K
    pi, beta, phi, _, n_changed = _csmc(
        (x, Y, starts, ends, l_prior), (pi, beta, phi), K, K0, n_particles, posterior,
        (alpha, gamma, kappa, fam, hyp, zero_stats), rng)
    old = compact_labels(x)
    beta_used = beta[old]       # beta_used[0] (the old remainder) is not used
    n, stats, m, o, conc2, beta2, pi2, phi2 = _parameters(
        x, Y, seq_first, old.shape[0] - 1, n_stats, n_params, fam, hyp, beta_used, conc,
        priors, rho, resample, handle)
    return n, stats, m, o, conc2, beta2, pi2, phi2, n_changed


def step(state, problem, rng):
    """One sweep: CSMC-AS on every sequence, then tables, concentrations,
    ``beta``, ``pi`` and ``phi`` (:func:`_sweep`, one kernel call).

    Returns
    -------
    dict
        ``accept_rate``: the fraction of time steps whose label changed in
        the CSMC (a particle Gibbs move is always accepted).
    """
    n_particles, posterior = _options(problem)
    (state.n, state.stats, state.m, state.o, state.conc, state.beta, state.pi, state.phi,
     n_changed) = _sweep(
        (state.x, problem.Y, problem.starts, problem.ends, problem.seq_first, problem.prior_pred),
        (state.pi, state.beta, state.phi), state.conc, (n_particles, posterior, _EXPLICIT_MASS),
        (problem.fam, state.hyp, problem.n_stats, problem.emission.n_params(problem.dim)),
        (problem.priors, rho_prior(problem.priors), problem.resample), generator_handle(rng))
    state.log_joint = _log_joint(state, problem)
    return {"accept_rate": n_changed / state.x.shape[0]}
