r"""Vector autoregressive emissions (switching linear dynamics) with a
matrix-normal inverse-Wishart prior.

In state ``k``, ``y_t - mu = A_k x_t + e_t`` with ``x_t = [y_{t-1} - mu; ...;
y_{t-p} - mu; 1]``, ``e_t ~ N(0, Sigma_k)``, ``Sigma_k ~ IW(nu0, Psi0)`` and
``A_k | Sigma_k ~ MN(M0, Sigma_k, K0^{-1})``; the centre ``mu`` (by default
the data mean) only reparametrises the intercept. The predictive of a step
is a multivariate Student-t. Derivation, kernels and equivariance of the
default prior: doc/internals.rst, "The autoregressive family".

Layout. :meth:`AutoRegressive.prepare` turns ``X`` into one row per step,
``[y_t, y_{t-1}, ..., y_{t-p}]`` (``W = D (p + 1)`` columns), NaN for the
first ``p`` steps of each sequence and for steps whose row or lags hold a
missing value (conditioning values, scored by nothing). Statistics of a
state: ``[n, mean (W), M2 (W*W) | cache: flag, L (q*q), cst, e, log|K_n|,
log|Psi_n| | scratch (q)]``, ``q = W + 1``; ``L`` is the lower Cholesky
factor of the joint matrix ``G = G_0 + sum z_t z_t^T``, rebuilt only when
``update`` has cleared the flag. Explicit parameters (``pgas``): ``[mu (D),
A_k (D*m, row-major), lower Cholesky factor of Sigma_k (D*D), log
normaliser | scratch (D)]``. ``hyp = [D, p, nu0, lm0, mu (D), G0 (q*q)]``
with ``lm0 = -log Gamma_D(nu0 / 2) + nu0 / 2 log|Psi0| + D / 2 log|K0|``.

Invariants: the hyperparameters of a statistics table never change (the
cache assumes it); ``G0`` is positive definite, so the factorisation never
fails.
"""

import math

import numpy as np
from numba import njit

from ._base import (LOG_2PI, EmissionFamily, Kernels, check_magnitude, family_tag,
                    positive_definite_scale)
from ._wishart import sample_inverse_wishart_cholesky

__all__ = ["AutoRegressive", "PRIOR_NOISE_FRACTION", "PRIOR_COEFFICIENT_WEIGHT"]

AutoRegressiveTag = family_tag("AutoRegressiveTag", __name__)

#: Data-scaled default of the noise prior: the prior mean of a state's noise
#: covariance is this fraction of the residual covariance of one
#: autoregression fitted by least squares to all the training data. Unlike the
#: data covariance that the Gaussian families scale
#: (:data:`~sk_ihmm.emissions.PRIOR_COVARIANCE_FRACTION`), those residuals
#: are not spread by the differences between the states' levels and
#: dynamics, only blurred by them: a fraction of 0.1 made the noise of every
#: state narrow and cut each exercise of the mocap6 recordings into several
#: states (``benchmarks/bench_mocap6.py``), while on generated switching
#: dynamics 0.1 and 1 found the same segmentations.
PRIOR_NOISE_FRACTION = 1.0

#: Default ``kappa0``: the data-scaled coefficient prior weighs as much as
#: this many typical steps (a g-prior). It was the Gaussian families'
#: :data:`~sk_ihmm.emissions.PRIOR_MEAN_PRECISION` until that became 0.01;
#: the autoregressive default was not re-measured then, so it stays.
PRIOR_COEFFICIENT_WEIGHT = 0.1

_LOG_PI = math.log(math.pi)
_LOG_2PI = LOG_2PI
_H0 = 4                   # offset of mu in hyp


@njit(cache=True, nogil=True, inline="always")
def _offsets(W):
    """Column offsets of a row of statistics for rows of ``W`` columns:
    ``(o_m2, o_f, o_L, o_c, o_s, q)`` (the mean is at 1)."""
    q = W + 1
    o_m2 = 1 + W
    o_f = o_m2 + W * W
    o_L = o_f + 1
    o_c = o_L + q * q
    return o_m2, o_f, o_L, o_c, o_c + 4, q


@njit(cache=True, nogil=True)
def _factor(stats, k, hyp):
    """Build the cache of ``stats[k]``: the Cholesky factor of ``G``, the
    predictive constants and both log determinants; set the flag."""
    d = int(hyp[0])
    p = int(hyp[1])
    nu0 = hyp[2]
    W = d * (p + 1)
    o_m2, o_f, o_L, o_c, o_s, q = _offsets(W)
    dp = d * p
    o_g0 = _H0 + d
    n = stats[k, 0]
    # G = G0 + sum z z^T over z = [lags - mu; 1; y - mu], from n, mean, M2:
    # sum (z - c)(z - c)^T = M2 + n (mean - c)(mean - c)^T
    for i in range(q):
        if i < dp:
            ci = d + i
        elif i == dp:
            ci = -1
        else:
            ci = i - dp - 1
        ui = 1.0 if ci < 0 else stats[k, 1 + ci] - hyp[_H0 + ci % d]
        for j in range(i + 1):
            if j < dp:
                cj = d + j
            elif j == dp:
                cj = -1
            else:
                cj = j - dp - 1
            uj = 1.0 if cj < 0 else stats[k, 1 + cj] - hyp[_H0 + cj % d]
            m2 = stats[k, o_m2 + ci * W + cj] if (ci >= 0 and cj >= 0) else 0.0
            stats[k, o_L + i * q + j] = hyp[o_g0 + i * q + j] + m2 + n * ui * uj
    # in-place Cholesky of the lower triangle
    for j in range(q):
        s = stats[k, o_L + j * q + j]
        for r in range(j):
            s -= stats[k, o_L + j * q + r] ** 2
        ljj = math.sqrt(s)
        stats[k, o_L + j * q + j] = ljj
        for i in range(j + 1, q):
            s = stats[k, o_L + i * q + j]
            for r in range(j):
                s -= stats[k, o_L + i * q + r] * stats[k, o_L + j * q + r]
            stats[k, o_L + i * q + j] = s / ljj
    m = dp + 1
    logdet_k = 0.0
    for i in range(m):
        logdet_k += 2.0 * math.log(stats[k, o_L + i * q + i])
    logdet_psi = 0.0
    for i in range(m, q):
        logdet_psi += 2.0 * math.log(stats[k, o_L + i * q + i])
    nu_n = nu0 + n
    stats[k, o_c] = (math.lgamma(0.5 * (nu_n + 1.0)) - math.lgamma(0.5 * (nu_n - d + 1.0))
                     - 0.5 * d * _LOG_PI - 0.5 * logdet_psi)
    stats[k, o_c + 1] = 0.5 * (nu_n + 1.0)
    stats[k, o_c + 2] = logdet_k
    stats[k, o_c + 3] = logdet_psi
    stats[k, o_f] = 1.0


@njit(cache=True, nogil=True, inline="always")
def _ensure_factor(stats, k, hyp):
    """Rebuild the cache of ``stats[k]`` if ``update`` changed the row since."""
    W = int(hyp[0]) * (int(hyp[1]) + 1)
    if stats[k, 1 + W + W * W] == 0.0:
        _factor(stats, k, hyp)


@njit(cache=True, nogil=True)
def _log_pred(stats, k, hyp, Y, t):
    _ensure_factor(stats, k, hyp)
    d = int(hyp[0])
    p = int(hyp[1])
    W = d * (p + 1)
    o_m2, o_f, o_L, o_c, o_s, q = _offsets(W)
    dp = d * p
    c = 1.0
    maha = 0.0
    # forward substitution L s = [lags - mu; 1; y - mu]
    for i in range(q):
        if i < dp:
            r = Y[t, d + i] - hyp[_H0 + i % d]
        elif i == dp:
            r = 1.0
        else:
            r = Y[t, i - dp - 1] - hyp[_H0 + i - dp - 1]
        for j in range(i):
            r -= stats[k, o_L + i * q + j] * stats[k, o_s + j]
        si = r / stats[k, o_L + i * q + i]
        stats[k, o_s + i] = si
        if i <= dp:
            c += si * si
        else:
            maha += si * si
    return stats[k, o_c] - 0.5 * d * math.log(c) - stats[k, o_c + 1] * math.log1p(maha / c)


@njit(cache=True, nogil=True)
def _log_marginal(stats, k, hyp):
    _ensure_factor(stats, k, hyp)
    d = int(hyp[0])
    p = int(hyp[1])
    W = d * (p + 1)
    o_c = _offsets(W)[3]
    n = stats[k, 0]
    half_nu = 0.5 * (hyp[2] + n)
    out = hyp[3] - 0.5 * n * d * _LOG_PI - 0.5 * d * stats[k, o_c + 2]
    out -= half_nu * stats[k, o_c + 3]
    out += 0.25 * d * (d - 1) * _LOG_PI
    for j in range(d):
        out += math.lgamma(half_nu - 0.5 * j)
    return out


@njit(cache=True, nogil=True)
def _update(stats, k, Y, t, sign):
    W = Y.shape[1]
    o_m2, o_f, o_L, o_c, o_s, q = _offsets(W)
    n_old = stats[k, 0]
    n_new = n_old + sign
    if n_new <= 0.0:
        for i in range(stats.shape[1]):
            stats[k, i] = 0.0
        return
    for i in range(W):
        stats[k, o_s + i] = stats[k, 1 + i]      # the old mean
    if sign > 0:
        for i in range(W):
            stats[k, 1 + i] += (Y[t, i] - stats[k, o_s + i]) / n_new
        for i in range(W):
            for j in range(W):
                stats[k, o_m2 + i * W + j] += ((Y[t, i] - stats[k, o_s + i])
                                               * (Y[t, j] - stats[k, 1 + j]))
    else:
        for i in range(W):
            stats[k, 1 + i] = (n_old * stats[k, o_s + i] - Y[t, i]) / n_new
        for i in range(W):
            for j in range(W):
                stats[k, o_m2 + i * W + j] -= ((Y[t, i] - stats[k, 1 + i])
                                               * (Y[t, j] - stats[k, o_s + j]))
    stats[k, 0] = n_new
    stats[k, o_f] = 0.0


@njit(cache=True, nogil=True, inline="always")
def _count(stats, k):
    return stats[k, 0]


@njit(cache=True, nogil=True)
def _sample_param(stats, k, hyp, rng, out_all, j):
    _ensure_factor(stats, k, hyp)
    d = int(hyp[0])
    p = int(hyp[1])
    W = d * (p + 1)
    o_m2, o_f, o_L, o_c, o_s, q = _offsets(W)
    m = d * p + 1
    nu_n = hyp[2] + stats[k, 0]
    # Psi_n from its Cholesky factor (the last d x d block of L)
    lp = np.zeros((d, d))
    for i in range(d):
        for c in range(i + 1):
            lp[i, c] = stats[k, o_L + (m + i) * q + m + c]
    chol = sample_inverse_wishart_cholesky(lp @ lp.T, nu_n, rng)
    # A = (B_n K_n^{-T/2} + chol Z) L_K^{-1}, Z of iid N(0, 1): mean B_n K_n^{-1} = M_n,
    # row covariance Sigma, column covariance K_n^{-1}
    z = np.empty((d, m))
    for i in range(d):
        for c in range(m):
            z[i, c] = rng.standard_normal()
    rhs = chol @ z
    for i in range(d):
        for c in range(m):
            rhs[i, c] += stats[k, o_L + (m + i) * q + c]
    out = out_all[j]
    o_a = d
    for i in range(d):
        out[i] = hyp[_H0 + i]
        # solve a L_K = rhs[i] (L_K^T a^T = rhs^T, back substitution)
        for c in range(m - 1, -1, -1):
            s = rhs[i, c]
            for r in range(c + 1, m):
                s -= out[o_a + i * m + r] * stats[k, o_L + r * q + c]
            out[o_a + i * m + c] = s / stats[k, o_L + c * q + c]
    o_ch = d + d * m
    logdet = 0.0
    for i in range(d):
        for c in range(d):
            out[o_ch + i * d + c] = chol[i, c]
        logdet += math.log(chol[i, i])
    out[o_ch + d * d] = -0.5 * d * _LOG_2PI - logdet


@njit(cache=True, nogil=True)
def _param_loglik(param_all, k, Y, t):
    W = Y.shape[1]
    d = (param_all.shape[1] - 1) // (W + 3)
    dp = W - d
    m = dp + 1
    o_a = d
    o_ch = d + d * m
    o_z = o_ch + d * d + 1
    maha = 0.0
    for i in range(d):
        s = Y[t, i] - param_all[k, i] - param_all[k, o_a + i * m + dp]
        for c in range(dp):
            s -= param_all[k, o_a + i * m + c] * (Y[t, d + c] - param_all[k, c % d])
        for c in range(i):
            s -= param_all[k, o_ch + i * d + c] * param_all[k, o_z + c]
        zi = s / param_all[k, o_ch + i * d + i]
        param_all[k, o_z + i] = zi
        maha += zi * zi
    return param_all[k, o_ch + d * d] - 0.5 * maha


# ------------------------------------------------------------------ numpy
def _moments_rows(stats, hyp):
    """Centred second moments ``sum z z^T`` of every row of statistics, over
    ``z = [lags - mu; 1; y - mu]``: array ``(n_rows, q, q)``."""
    d, p = int(hyp[0]), int(hyp[1])
    W = d * (p + 1)
    n = stats[:, 0]
    mean = stats[:, 1:1 + W]
    m2 = stats[:, 1 + W:1 + W + W * W].reshape(-1, W, W)
    u = mean - np.tile(hyp[_H0:_H0 + d], p + 1)
    # reorder the columns [y, lags] as [lags, 1, y]
    order = np.r_[np.arange(d, W), np.arange(d)]
    u = u[:, order]
    m2 = m2[:, order][:, :, order]
    dp = d * p
    q = W + 1
    S = np.zeros((stats.shape[0], q, q))
    idx = np.r_[np.arange(dp), np.arange(dp + 1, q)]
    S[np.ix_(np.arange(stats.shape[0]), idx, idx)] = m2 + n[:, None, None] * u[:, :, None] * u[:, None, :]
    S[:, idx, dp] = n[:, None] * u
    S[:, dp, idx] = n[:, None] * u
    S[:, dp, dp] = n
    return S


def _posterior_rows(stats, hyp):
    """The MNIW posterior of every row of statistics: dict of ``K_n``
    ``(rows, m, m)``, ``M_n`` ``(rows, D, m)``, ``Psi_n`` ``(rows, D, D)`` and
    ``nu_n`` (centred coordinates)."""
    d, p = int(hyp[0]), int(hyp[1])
    q = d * (p + 1) + 1
    m = d * p + 1
    G = hyp[_H0 + d:_H0 + d + q * q].reshape(q, q) + _moments_rows(stats, hyp)
    K = G[:, :m, :m]
    B = G[:, m:, :m]
    M = np.linalg.solve(K, np.swapaxes(B, 1, 2)).swapaxes(1, 2)
    psi = G[:, m:, m:] - M @ np.swapaxes(B, 1, 2)
    psi = 0.5 * (psi + np.swapaxes(psi, 1, 2))
    return {"K_n": K, "M_n": M, "psi_n": psi, "nu_n": hyp[2] + stats[:, 0]}


def _log_mvgamma(a, d):
    from scipy.special import multigammaln

    return np.array([multigammaln(v, d) for v in np.atleast_1d(a)])


class AutoRegressive(EmissionFamily):
    r"""Vector autoregressive emissions of order ``p``: switching linear dynamics.

    In state ``k``, ``y_t - mu = A_{k,1} (y_{t-1} - mu) + ... + A_{k,p}
    (y_{t-p} - mu) + b_k + e_t`` with ``e_t ~ N(0, Sigma_k)``. The
    coefficients ``A_k = [A_{k,1}, ..., A_{k,p}, b_k]`` (``D x (D p + 1)``)
    and ``Sigma_k`` have the conjugate matrix-normal inverse-Wishart prior
    ``Sigma_k ~ IW(nu0, Psi0)``, ``A_k | Sigma_k ~ MN(M0, Sigma_k, K0^{-1})``,
    integrated out by the samplers (the predictive is a multivariate
    Student-t). With a sticky ``kappa`` this is the sticky HDP-AR-HMM of Fox
    et al. (2011).

    The centre ``mu`` is a fixed hyperparameter that only chooses the
    coordinates in which the intercept ``b_k`` and the prior are written
    (``center=0`` gives the raw form ``y_t = A_k [y_{t-1}; ...; y_{t-p}; 1]
    + e_t``); the fitted ``coefs_`` are always in the raw form.

    **The first** ``p`` **steps of each sequence** have no complete lags:
    they are conditioning values. They add no emission likelihood (their
    states are still sampled, and predicted, from the transitions), and
    :meth:`~sk_ihmm.InfiniteHMM.score` and
    :meth:`~sk_ihmm.InfiniteHMM.perplexity` leave them out, as statsmodels'
    ``AutoReg`` does. With ``allow_missing=True`` a missing step is not
    scored, nor are the ``p`` steps after it (their lags are incomplete):
    they condition on what follows, they are not imputed.

    **Default prior, scaled to the data** (all sequences pooled, scored
    steps only): ``mu`` is the data mean, ``M0 = 0`` (no dynamics and no
    intercept in the centred coordinates: a priori a state is white noise
    about the data mean), ``K0 = kappa0 * mean_t(x_t x_t^T)`` with ``x_t =
    [y_{t-1} - mu; ...; y_{t-p} - mu; 1]`` (the coefficients weigh as much as
    ``kappa0`` typical steps: a g-prior), ``nu0 = D + 2`` and ``Psi0 = (nu0 -
    D - 1) * PRIOR_NOISE_FRACTION * R`` with ``R`` the residual covariance
    of one autoregression fitted by least squares to all the data (the data
    covariance when there are no more steps than coefficients), so that the
    prior mean of a state's noise covariance is ``R``
    (:data:`~sk_ihmm.emissions.autoregressive.PRIOR_NOISE_FRACTION` says
    why not a tenth of it, as for the Gaussian families). Under ``y -> S y +
    c`` for any invertible ``S`` and shift ``c``, ``mu``, ``x_t``, ``K0``
    and ``R`` transform so that the prior on the transformed coefficients is
    the one resolved on the transformed data: the posterior over state
    sequences is the same for ``X`` and ``X @ S.T + c``. (Only degenerate data break this: a constant column, or
    collinear regressors that get a small relative ridge, as with
    :class:`MultivariateGaussian`.)

    Parameters
    ----------
    order : int, default=1
        Number of lags ``p`` (at least 1).
    center : float, array-like of shape (n_features,) or None, default=None
        ``mu``; ``None``: the mean of the training data.
    M0 : float, array-like of shape (n_features, n_features * order + 1) or None, default=None
        Prior mean of ``A_k`` in the centred coordinates (a float fills the
        matrix); ``None``: zeros.
    K0 : float, array-like of shape (n_features * order + 1,) * 2 or None, default=None
        Prior column precision of ``A_k`` (a float ``s`` means ``s * I``);
        ``None``: ``kappa0`` times the mean of ``x_t x_t^T`` as above.
    kappa0 : float, default=0.1
        Weight of the data-scaled ``K0``, in steps.
    nu0 : float or None, default=None
        Degrees of freedom of the inverse Wishart; ``None`` means
        ``n_features + 2``.
    psi0 : float, array-like of shape (n_features, n_features) or None, default=None
        Scale matrix of the inverse Wishart (a float ``s`` means ``s * I``);
        ``None``: data-scaled as above.

    Notes
    -----
    ``log_pred`` costs ``O((D p)^2)`` for a state whose statistics did not
    change since its last evaluation, and ``O((D p)^3)`` (a Cholesky factor,
    then cached) for one that did; ``update`` is a rank-one ``O((D p)^2)``
    step. The formulas are in :doc:`/internals`.

    Examples
    --------
    >>> from sk_ihmm import InfiniteHMM
    >>> from sk_ihmm.datasets import make_ar_hmm
    >>> X, states = make_ar_hmm(600, n_states=2, n_features=2, random_state=0)
    >>> model = InfiniteHMM(emission="autoregressive", kappa=10.0, max_time=0, n_chains=2,
    ...                     random_state=0).fit(X)
    >>> model.coefs_.shape[1:], model.covars_.shape[1:]
    ((2, 3), (2, 2))

    Second order, with the prior written in raw coordinates:

    >>> from sk_ihmm.emissions import AutoRegressive
    >>> model = InfiniteHMM(emission=AutoRegressive(order=2, center=0.0), max_time=0,
    ...                     n_chains=2, random_state=0).fit(X)
    >>> model.coefs_.shape[1:]
    (2, 5)
    """

    name = "autoregressive"
    tag = AutoRegressiveTag()
    kernels = Kernels(
        log_pred=_log_pred, update=_update, log_marginal=_log_marginal, count=_count,
        sample_param=_sample_param, param_loglik=_param_loglik,
    )
    fitted_attributes = ("coefs_", "covars_")

    def __init__(self, order=1, center=None, M0=None, K0=None, kappa0=PRIOR_COEFFICIENT_WEIGHT,
                 nu0=None, psi0=None):
        self.order = order
        self.center = center
        self.M0 = M0
        self.K0 = K0
        self.kappa0 = kappa0
        self.nu0 = nu0
        self.psi0 = psi0

    @property
    def conditioning_steps(self):
        return int(self.order)

    # -- hyperparameters ---------------------------------------------------
    def validate_params(self):
        if (isinstance(self.order, (bool, np.bool_)) or not isinstance(self.order, (int, np.integer))
                or self.order < 1):
            raise ValueError(f"AutoRegressive order must be a positive integer, got {self.order!r}.")
        if not (np.isscalar(self.kappa0) and np.isfinite(self.kappa0) and self.kappa0 > 0):
            raise ValueError(f"AutoRegressive kappa0 must be a positive float, got {self.kappa0!r}.")
        for name in ("center", "M0"):
            value = getattr(self, name)
            if value is not None and not np.all(np.isfinite(np.asarray(value, dtype=float))):
                raise ValueError(f"AutoRegressive {name} must be finite.")
        for name in ("K0", "psi0"):
            value = getattr(self, name)
            if value is not None and np.ndim(value) == 0 and not (np.isfinite(value) and value > 0):
                raise ValueError(f"AutoRegressive {name} must be a positive float or a matrix, got {value!r}.")

    def _nu0(self, d):
        nu0 = d + 2.0 if self.nu0 is None else float(self.nu0)
        if not nu0 > d - 1:
            raise ValueError(f"AutoRegressive nu0 must exceed n_features - 1 = {d - 1}; got {nu0}.")
        return nu0

    @staticmethod
    def _spd(value, size, name):
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 0:
            return np.eye(size) * float(arr)
        if arr.shape != (size, size):
            raise ValueError(f"AutoRegressive {name} must be a positive float or a ({size}, {size}) "
                             f"matrix; got shape {arr.shape}.")
        if not np.allclose(arr, arr.T) or np.any(np.linalg.eigvalsh(arr) <= 0):
            raise ValueError(f"AutoRegressive {name} must be symmetric positive definite.")
        return arr.copy()

    def resolve_prior(self, X=None, dim=None):
        """The prior's hyperparameters; ``X`` holds prepared rows (see
        :meth:`prepare`): ``{"center", "M0", "K0", "nu0", "psi0"}``, ``M0``
        and ``K0`` in the centred coordinates."""
        self.validate_params()
        p = int(self.order)
        if dim is None:
            if X is None:
                raise ValueError("resolve_prior needs X or dim.")
            dim = self.dimension(np.asarray(X))
        d = int(dim)
        m = d * p + 1
        nu0 = self._nu0(d)
        needs_data = self.center is None or self.K0 is None or self.psi0 is None
        if needs_data and X is None:
            raise ValueError(
                "AutoRegressive() with center, K0 or psi0 left at None takes them from the "
                "training data; pass X, or set them explicitly."
            )
        if needs_data:
            Z = np.asarray(X, dtype=np.float64)
            if Z.ndim != 2 or Z.shape[1] != d * (p + 1):
                raise ValueError(f"Expected prepared rows of {d * (p + 1)} columns (see "
                                 f"AutoRegressive.prepare); got shape {Z.shape}.")
            observed = ~np.isnan(Z).any(axis=1)
            # in prepared rows the first lag of a step is the previous step
            both = observed[1:] & observed[:-1]
            if not np.array_equal(Z[1:][both, d:2 * d], Z[:-1][both, :d]):
                raise ValueError("AutoRegressive.resolve_prior expects the rows of "
                                 "AutoRegressive.prepare(X, starts, lengths), not X itself.")
            Z = Z[observed]
            if Z.shape[0] == 0:
                raise ValueError("Data-scaled AutoRegressive priors need at least one scored step "
                                 f"(a sequence longer than order = {p}).")
            check_magnitude(Z)
        if self.center is None:
            center = Z[:, :d].mean(axis=0)
        else:
            center = np.asarray(self.center, dtype=float)
            if center.ndim > 1 or (center.ndim == 1 and center.shape[0] not in (1, d)):
                raise ValueError(f"AutoRegressive center must be a float or have one entry per "
                                 f"feature ({d}); got shape {center.shape}.")
            center = np.broadcast_to(center.reshape(-1), (d,)).astype(float)
        if self.M0 is None:
            M0 = np.zeros((d, m))
        else:
            M0 = np.asarray(self.M0, dtype=float)
            if M0.ndim == 0:
                M0 = np.full((d, m), float(M0))
            if M0.shape != (d, m):
                raise ValueError(f"AutoRegressive M0 must have shape ({d}, {m}); got {M0.shape}.")
            M0 = M0.copy()
        if needs_data:
            Yc = Z[:, :d] - center
            Xc = np.hstack([Z[:, d:] - np.tile(center, p), np.ones((Z.shape[0], 1))])
        if self.K0 is None:
            K0 = float(self.kappa0) * positive_definite_scale(Xc.T @ Xc / Xc.shape[0])
        else:
            K0 = self._spd(self.K0, m, "K0")
        if self.psi0 is None:
            if Z.shape[0] > m:
                coef = np.linalg.lstsq(Xc, Yc, rcond=None)[0]
                resid = Yc - Xc @ coef
                R = resid.T @ resid / Z.shape[0]
            else:
                dev = Yc - Yc.mean(axis=0)
                R = dev.T @ dev / Z.shape[0]
            psi0 = ((nu0 - d - 1.0 if nu0 > d + 1.0 else 1.0) * PRIOR_NOISE_FRACTION
                    * positive_definite_scale(R))
        else:
            psi0 = self._spd(self.psi0, d, "psi0")
        return {"center": np.array(center, dtype=float), "M0": M0, "K0": K0, "nu0": nu0,
                "psi0": psi0}

    def hyperparameters(self, dim, X=None, prior=None):
        from scipy.special import multigammaln

        pr = self.resolve_prior(X, dim) if prior is None else prior
        d, p = int(dim), int(self.order)
        M0, K0, psi0, nu0 = pr["M0"], pr["K0"], pr["psi0"], float(pr["nu0"])
        MK = M0 @ K0
        G0 = np.block([[K0, MK.T], [MK, psi0 + MK @ M0.T]])
        lm0 = (-multigammaln(0.5 * nu0, d) + 0.5 * nu0 * np.linalg.slogdet(psi0)[1]
               + 0.5 * d * np.linalg.slogdet(K0)[1])
        return np.concatenate([[d, p, nu0, lm0], pr["center"], G0.ravel()]).astype(np.float64)

    # -- data --------------------------------------------------------------
    def check_X(self, X, dim=None):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"Expected X of shape (n_samples, n_features); got shape {X.shape}.")
        check_magnitude(X)
        return X

    def prepare(self, X, starts, lengths):
        """Rows ``[y_t, y_{t-1}, ..., y_{t-p}]`` (``n_features * (order + 1)``
        columns) of validated ``X``, per sequence; NaN where a lag falls
        before the sequence's start or a value is missing."""
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        p = int(self.order)
        out = np.full((n, d * (p + 1)), np.nan)
        for s, L in zip(np.asarray(starts), np.asarray(lengths)):
            s, L = int(s), int(L)
            for lag in range(p + 1):
                if L > lag:
                    out[s + lag:s + L, lag * d:(lag + 1) * d] = X[s:s + L - lag]
            out[s:s + min(p, L)] = np.nan
        out[np.isnan(out).any(axis=1)] = np.nan
        return out

    def dimension(self, X):
        return X.shape[1] // (int(self.order) + 1)

    # -- sizes -------------------------------------------------------------
    def n_stats(self, dim):
        W = dim * (int(self.order) + 1)
        q = W + 1
        return 1 + W + W * W + 1 + q * q + 4 + q

    def n_params(self, dim):
        return dim * (dim * (int(self.order) + 1) + 3) + 1

    # -- results -----------------------------------------------------------
    def summary(self, stats, hyp):
        """``coefs_`` ``(n_states, D, D p + 1)``: posterior-mean ``[A_1, ...,
        A_p, intercept]`` in the raw form ``y_t = A [y_{t-1}; ...; y_{t-p};
        1] + e_t``; ``covars_`` ``(n_states, D, D)``: posterior-mean noise
        covariances."""
        d, p = int(hyp[0]), int(hyp[1])
        post = _posterior_rows(stats, hyp)
        coefs = post["M_n"].copy()
        mu = hyp[_H0:_H0 + d]
        lag_sum = sum(coefs[:, :, i * d:(i + 1) * d] for i in range(p))
        coefs[:, :, d * p] += mu - lag_sum @ mu
        nu_n = post["nu_n"]
        denom = np.where(nu_n > d + 1, nu_n - d - 1, nu_n + d + 1)
        return {"coefs_": coefs, "covars_": post["psi_n"] / denom[:, None, None]}

    def draw(self, summary, states, rng):
        """Simulate the switching autoregression along ``states``; the lags of
        the first step are the stationary mean of its state (the least-squares
        solution when its dynamics have a unit root)."""
        coefs, covars = summary["coefs_"], summary["covars_"]
        d = covars.shape[1]
        p = (coefs.shape[2] - 1) // d
        chol = np.linalg.cholesky(covars)
        T = states.shape[0]
        out = np.empty((T, d))
        if T == 0:
            return out
        k0 = states[0]
        lhs = np.eye(d) - sum(coefs[k0][:, i * d:(i + 1) * d] for i in range(p))
        start = np.linalg.lstsq(lhs, coefs[k0][:, d * p], rcond=None)[0]
        lags = np.tile(start, p)
        noise = rng.standard_normal((T, d))
        for t in range(T):
            k = states[t]
            y = coefs[k][:, :d * p] @ lags + coefs[k][:, d * p] + chol[k] @ noise[t]
            out[t] = y
            lags = np.concatenate([y, lags[:d * (p - 1)]])
        return out

    def log_marginal_stats(self, stats, hyp):
        d = int(hyp[0])
        post = _posterior_rows(stats, hyp)
        n, nu_n = stats[:, 0], post["nu_n"]
        return (hyp[3] - 0.5 * n * d * np.log(np.pi) + _log_mvgamma(0.5 * nu_n, d)
                - 0.5 * nu_n * np.linalg.slogdet(post["psi_n"])[1]
                - 0.5 * d * np.linalg.slogdet(post["K_n"])[1])
