"""One-dimensional Gaussian emissions with a Normal-Inverse-Gamma prior.

``sigma^2 ~ InvGamma(a0, b0)`` and ``mu | sigma^2 ~ N(mu0, sigma^2 /
lambda0)``; the predictive is a Student-t (Murphy 2007, "Conjugate Bayesian
analysis of the Gaussian distribution", section 6). ``hyp = [mu0, lambda0,
a0, b0]``.

Statistics of a state, 13 columns: ``[n, mean, M2, cache_valid, mu_n,
log_norm, 1/(nu s^2), (nu+1)/2, marginal_valid, log_marginal, block_n,
block_s1, block_s2]``. Welford moments (removal as stable as addition); a
cache of the Student-t predictive that :func:`_update` invalidates and
:func:`_log_pred` refills; one of the log marginal likelihood; the sums of a
block being moved (zero outside a move). An RCD move reads the marginal of
each label of its block before and after removing the block and again
before and after seating the proposal; with the cache the first read of
each pair finds the value the previous move left. Explicit parameters
(``pgas``): ``[mean, variance, log normaliser, 1 / (2 variance)]``.
"""

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from .._nrt import hold
from .._warn import warn
from ._base import (LOG_2PI, PRIOR_COVARIANCE_FRACTION, PRIOR_MEAN_PRECISION, SHIFTED_FLOOR,
                    EmissionFamily, Kernels, check_magnitude, data_moments, family_tag,
                    positive_definite_scale)

__all__ = ["Gaussian"]

GaussianTag = family_tag("GaussianTag", __name__)

_LOG_2PI = LOG_2PI


@njit(cache=True, nogil=True)
def _nig_posterior(n, mean, m2, hyp):
    mu0, lam0, a0, b0 = hyp[0], hyp[1], hyp[2], hyp[3]
    lam_n = lam0 + n
    if n > 0:
        mu_n = (lam0 * mu0 + n * mean) / lam_n
        b_n = b0 + 0.5 * m2 + 0.5 * lam0 * n * (mean - mu0) ** 2 / lam_n
    else:
        mu_n = mu0
        b_n = b0
    return mu_n, lam_n, a0 + 0.5 * n, b_n


#: From this ``a`` on, :func:`lgamma_half_step` sums its asymptotic series.
HALF_STEP_SERIES_MIN = 30.0


@njit(cache=True, nogil=True, inline="always")
def lgamma_half_step(a):
    """``lgamma(a + 1/2) - lgamma(a) - log(a) / 2``.

    For ``a >= 30`` the asymptotic series ``-1/(8a) + 1/(192a^3) -
    1/(640a^5) + 17/(14336a^7) - 31/(18432a^9)`` (the coefficients are
    ``(-1)^n (B_n(1/2) - B_n) / (n (n - 1))``, ``B_n`` Bernoulli numbers and
    polynomials), whose first omitted term is below 2e-19 there; this is
    more accurate than the difference of two ``lgamma`` (about ``a log(a)``
    each, so an absolute rounding error of 1e-12 at ``a = 1000``) and
    cheaper.
    """
    if a >= HALF_STEP_SERIES_MIN:
        r = 1.0 / a
        r2 = r * r
        return r * (-0.125 + r2 * (1.0 / 192.0 + r2 * (-1.0 / 640.0 + r2 * (
            17.0 / 14336.0 - r2 * (31.0 / 18432.0)))))
    return math.lgamma(a + 0.5) - math.lgamma(a) - 0.5 * math.log(a)


@njit(cache=True, nogil=True)
def _predictive(n, mean, m2, hyp):
    """Student-t predictive as (mu_n, log-normaliser, 1/(nu s^2), (nu+1)/2)."""
    mu_n, lam_n, a_n, b_n = _nig_posterior(n, mean, m2, hyp)
    nu = 2.0 * a_n
    scale2 = b_n * (lam_n + 1.0) / (a_n * lam_n)
    # lgamma((nu+1)/2) - lgamma(nu/2) - log(nu pi scale2)/2, with nu/2 = a_n:
    # the log(a_n)/2 of the lgamma difference cancels
    c = lgamma_half_step(a_n) - 0.5 * math.log(2.0 * math.pi * scale2)
    return mu_n, c, 1.0 / (nu * scale2), 0.5 * (nu + 1.0)


@njit(cache=True, nogil=True, inline="always")
def _student_t(y, mu, log_norm, inv_scale, half_nu1):
    """Student-t log density from the cached predictive of a state (scalars)."""
    d = y - mu
    return log_norm - half_nu1 * math.log1p(d * d * inv_scale)


@njit(cache=True, nogil=True)
def _fill_cache(stats, k, hyp):
    # columns 3..7 cache the Student-t predictive; update() invalidates it
    stats[k, 4], stats[k, 5], stats[k, 6], stats[k, 7] = _predictive(
        stats[k, 0], stats[k, 1], stats[k, 2], hyp)
    stats[k, 3] = 1.0


@njit(cache=True, nogil=True, inline="always")
def _log_pred(stats, k, hyp, Y, t):
    if stats[k, 3] == 0.0:
        _fill_cache(stats, k, hyp)
    return _student_t(Y[t, 0], stats[k, 4], stats[k, 5], stats[k, 6], stats[k, 7])


#: :func:`log_proposal_block` weighs a Gaussian state whose Student-t
#: predictive has ``(nu + 1) / 2`` above this (``nu > 99``) with its
#: quadratic approximation, without a ``log1p``.
PROPOSAL_QUADRATIC_HALF_NU1 = 50.0


@njit(cache=True, nogil=True)
def _log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out,
                          quadratic_above, prior_pred):
    """Student-t log predictives of a block; a state with ``(nu + 1) / 2 >
    quadratic_above`` gets ``log1p(z)`` replaced by ``z`` (see
    :func:`log_proposal_block`); an empty state whose Student-t is not
    replaced reads its values, the prior predictive, from ``prior_pred`` if
    that is not empty."""
    read_prior = prior_pred.shape[0] > 0 and hyp[2] + 0.5 <= quadratic_above
    for c in range(n_labels):
        k = labels[c]
        if read_prior and stats[k, 0] == 0.0:
            for l in range(length):
                out[l, c] = prior_pred[start + l]
            continue
        if stats[k, 3] == 0.0:
            _fill_cache(stats, k, hyp)
        mu, log_norm, inv_scale, half_nu1 = stats[k, 4], stats[k, 5], stats[k, 6], stats[k, 7]
        if half_nu1 > quadratic_above:
            q = half_nu1 * inv_scale
            for l in range(length):
                d = Y[start + l, 0] - mu
                out[l, c] = log_norm - q * d * d
        else:
            for l in range(length):
                out[l, c] = _student_t(Y[start + l, 0], mu, log_norm, inv_scale, half_nu1)


@njit(cache=True, nogil=True, inline="always")
def _invalidate(stats, k):
    """Mark the cached predictive (columns 3-7) and log marginal (8, 9) of
    ``stats[k]`` stale: every change of the moments of a row goes with it."""
    stats[k, 3] = 0.0
    stats[k, 8] = 0.0


@njit(cache=True, nogil=True, inline="always")
def _update(stats, k, Y, t, sign):
    n_old = stats[k, 0]
    n_new = n_old + sign
    x = Y[t, 0]
    if n_new <= 0.0:
        for i in range(stats.shape[1]):
            stats[k, i] = 0.0
    else:
        mean_old = stats[k, 1]
        if sign > 0:
            stats[k, 1] = mean_old + (x - mean_old) / n_new
            stats[k, 2] += (x - mean_old) * (x - stats[k, 1])
        else:
            stats[k, 1] = (n_old * mean_old - x) / n_new
            stats[k, 2] -= (x - stats[k, 1]) * (x - mean_old)
            if stats[k, 2] < 0.0:
                stats[k, 2] = 0.0
        stats[k, 0] = n_new
        _invalidate(stats, k)
    hold(stats)
    hold(Y)


#: From this ``a_n`` on, :func:`_log_marginal` takes ``lgamma(a_n)``
#: from Stirling's series.
_STIRLING_MIN = 30.0


@njit(cache=True, nogil=True, inline="always")
def _stirling_tail(a):
    """``lgamma(a) - ((a - 1/2) log(a) - a + log(2 pi) / 2)`` for ``a >= 30``:
    ``1/(12a) - 1/(360a^3) + 1/(1260a^5) - 1/(1680a^7) + 1/(1188a^9)``, the
    first omitted term below 1e-19 there."""
    r = 1.0 / a
    r2 = r * r
    return r * (1.0 / 12.0 + r2 * (-1.0 / 360.0 + r2 * (1.0 / 1260.0 + r2 * (
        -1.0 / 1680.0 + r2 * (1.0 / 1188.0)))))


@njit(cache=True, nogil=True)
def _log_marginal(stats, k, hyp):
    """``lgamma(a_n) - a_n log(b_n) - log(lam_n) / 2 - n log(2 pi) / 2``: the
    log marginal likelihood of the observations of ``k`` up to a constant of
    the prior (``f(0) = 0`` is not enforced: only differences are used),
    cached in columns 8, 9.

    For ``a_n >= 30``, ``lgamma(a) = (a - 1/2) log(a) - a + log(2 pi) / 2 +``
    :func:`_stirling_tail`, and the logs combine into ``a_n log(a_n / b_n) -
    log(a_n lam_n) / 2``: two logs instead of ``lgamma`` and three (a
    blocked RCD move reads a few marginals per block). Its rounding error is
    that of the terms of size ``a_n log(a_n)``, as for ``lgamma``.
    """
    if stats[k, 8] != 0.0:
        return stats[k, 9]
    n = stats[k, 0]
    _, lam_n, a_n, b_n = _nig_posterior(n, stats[k, 1], stats[k, 2], hyp)
    if a_n >= _STIRLING_MIN:
        v = (a_n * math.log(a_n / b_n) - a_n - 0.5 * math.log(a_n * lam_n) + _stirling_tail(a_n)
             + 0.5 * _LOG_2PI * (1.0 - n))
    else:
        v = math.lgamma(a_n) - a_n * math.log(b_n) - 0.5 * math.log(lam_n) - 0.5 * n * _LOG_2PI
    stats[k, 9] = v
    stats[k, 8] = 1.0
    return v


@njit(cache=True, nogil=True)
def _sample_param(stats, k, hyp, rng, out, j):
    # out[j] = [mean, variance, log normaliser, 1 / (2 variance)]: the last two
    # spare param_loglik a log per call
    mu_n, lam_n, a_n, b_n = _nig_posterior(stats[k, 0], stats[k, 1], stats[k, 2], hyp)
    var = b_n / rng.gamma(a_n, 1.0)
    out[j, 0] = mu_n + math.sqrt(var / lam_n) * rng.standard_normal()
    out[j, 1] = var
    out[j, 2] = -0.5 * (_LOG_2PI + math.log(var))
    out[j, 3] = 0.5 / var


@njit(cache=True, nogil=True, inline="always")
def _param_loglik(param, k, Y, t):
    d = Y[t, 0] - param[k, 0]
    return param[k, 2] - param[k, 3] * d * d


# --------------------------------------------------------------------------
# D-dimensional Gaussian with a Normal-Inverse-Wishart prior.
# Sigma ~ IW(nu0, Psi0), mu | Sigma ~ N(mu0, Sigma / kappa0).
# stats = [n, mean (D), M2 (D*D, row-major) | scratch: S (D*D), mu_n (D), z (D)]
# The scratch columns let log_pred / update / the log marginal work without


@njit(cache=True, nogil=True)
def _add_labelled(stats, x, Y):
    # two passes (counts and sums, then squared deviations from each label's
    # batch mean), merged into the existing rows by the pairwise update of
    # Chan et al. (1979): no division per observation, unlike update(). Each
    # pass sums a run of equal labels in registers and adds it to the label's
    # row when the run ends: adding every observation to the row would make
    # each addition wait for the store of the one before (labels come in long
    # runs)
    C = stats.shape[0]
    n = np.zeros(C)
    mean = np.zeros(C)
    m2 = np.zeros(C)
    T = x.shape[0]
    if T == 0:
        return
    k_run = x[0]
    cnt = 0.0
    acc = 0.0
    for t in range(T):
        k = x[t]
        if k != k_run:
            n[k_run] += cnt
            mean[k_run] += acc
            k_run = k
            cnt = 0.0
            acc = 0.0
        cnt += 1.0
        acc += Y[t, 0]
    n[k_run] += cnt
    mean[k_run] += acc
    for k in range(C):
        if n[k] > 0.0:
            mean[k] /= n[k]
    k_run = x[0]
    mu = mean[k_run]
    acc = 0.0
    for t in range(T):
        k = x[t]
        if k != k_run:
            m2[k_run] += acc
            k_run = k
            mu = mean[k]
            acc = 0.0
        d = Y[t, 0] - mu
        acc += d * d
    m2[k_run] += acc
    for k in range(C):
        if n[k] == 0.0:
            continue
        na = stats[k, 0]
        tot = na + n[k]
        delta = mean[k] - stats[k, 1]
        stats[k, 1] += delta * (n[k] / tot)
        stats[k, 2] += m2[k] + delta * delta * (na * n[k] / tot)
        stats[k, 0] = tot
        _invalidate(stats, k)



@njit(cache=True, nogil=True)
def _shifted_block(param, n, Y, start, length, out):
    # the parameters as contiguous scalars: the row loop then reads no
    # strided column of param, and the row maximum is taken as the row is
    # written (one pass)
    mu = np.empty(n + 1)
    c = np.empty(n + 1)
    h = np.empty(n + 1)
    for k in range(1, n + 1):
        mu[k] = param[k, 0]
        c[k] = param[k, 2]
        h[k] = param[k, 3]
    for l in range(length):
        y = Y[start + l, 0]
        mx = out[l, 0]
        for k in range(1, n + 1):
            d = y - mu[k]
            v = c[k] - h[k] * d * d
            out[l, k] = v
            mx = v if v > mx else mx
        for k in range(n + 1):
            v = out[l, k] - mx
            out[l, k] = v if v > SHIFTED_FLOOR else SHIFTED_FLOOR



@njit(cache=True, nogil=True, inline="always")
def _block_sums(stats, Y, b, xb, work):
    """Sums of the block's observations per label, about the label's mean:
    ``stats[k, 10:13] = (m, sum (y - mean_k), sum (y - mean_k)^2)`` over the
    steps of label ``k`` (the mean of a label without observations is set to
    its first observation in the block, a shift that keeps the sums small).
    The labels go to ``work[:n]`` in order of first appearance; returns ``n``.
    One pass, no division."""
    n = 0
    for l in range(xb.shape[0]):
        k = xb[l]
        y = Y[b + l, 0]
        if stats[k, 10] == 0.0:
            work[n] = k
            n += 1
            if stats[k, 0] == 0.0:
                stats[k, 1] = y
        d = y - stats[k, 1]
        stats[k, 10] += 1.0
        stats[k, 11] += d
        stats[k, 12] += d * d
    hold(stats)
    hold(Y)
    return n


@njit(cache=True, nogil=True, inline="always")
def _merge_sums(stats, k, sign):
    """Add (``sign=+1``) or remove (``-1``) the block sums of
    :func:`_block_sums` in ``stats[k]`` and clear them. About the old
    mean ``c`` the block has ``m`` values with sums ``s1``, ``s2``; the
    result has ``N = n + sign m`` values, ``sum (y - c) = sign s1`` and
    ``sum (y - c)^2 = M2 + sign s2``, hence mean ``c + sign s1 / N`` and
    ``M2 + sign s2 - s1^2 / N`` (Chan et al. 1979, shifted at the old mean:
    one division per label instead of one per observation)."""
    m, s1, s2 = stats[k, 10], stats[k, 11], stats[k, 12]
    cnt = stats[k, 0] + sign * m
    if cnt <= 0.0:
        for i in range(stats.shape[1]):
            stats[k, i] = 0.0
    else:
        s1 = sign * s1
        m2 = stats[k, 2] + sign * s2 - s1 * s1 / cnt
        stats[k, 0] = cnt
        stats[k, 1] += s1 / cnt
        stats[k, 2] = m2 if m2 > 0.0 else 0.0
        _invalidate(stats, k)
        stats[k, 10] = 0.0
        stats[k, 11] = 0.0
        stats[k, 12] = 0.0
    hold(stats)


@njit(cache=True, nogil=True, inline="always")
def _count(stats, k):
    return stats[k, 0]


@njit(cache=True, nogil=True, inline="always")
def _log_pred_block_exact(stats, labels, n_labels, hyp, Y, start, length, out):
    _log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out, math.inf, hyp[:0])


@njit(cache=True, nogil=True, inline="always")
def _log_proposal_block(stats, labels, n_labels, hyp, Y, start, length, out, prior_pred, work):
    # the quadratic form for states with many observations (see
    # PROPOSAL_QUADRATIC_HALF_NU1); out is label-major, the block loop step-major
    _log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out.T,
                    PROPOSAL_QUADRATIC_HALF_NU1, prior_pred)


@njit(cache=True, nogil=True)
def _move_stats(stats, Y, b, xb, sign, work):
    n = _block_sums(stats, Y, b, xb, work)
    for i in range(n):
        _merge_sums(stats, work[i], sign)


@njit(cache=True, nogil=True)
def _move_block(stats, hyp, Y, b, xb, sign, work):
    # closed form: the change of each touched label's log marginal likelihood
    n = _block_sums(stats, Y, b, xb, work)
    acc = 0.0
    for i in range(n):
        k = work[i]
        acc -= _log_marginal(stats, k, hyp)
        _merge_sums(stats, k, sign)
        acc += _log_marginal(stats, k, hyp)
    return acc if sign > 0 else -acc


def _nig_posterior_rows(stats, hyp):
    """Vectorised Normal-Inverse-Gamma posterior ``(mu_n, lambda_n, a_n, b_n)``
    of every row of Gaussian statistics ``[n, mean, M2, ...]``."""
    n, mean, m2 = stats[:, 0], stats[:, 1], stats[:, 2]
    mu0, lam0, a0, b0 = hyp
    lam_n = lam0 + n
    mu_n = (lam0 * mu0 + n * mean) / lam_n
    b_n = b0 + 0.5 * m2 + 0.5 * lam0 * n * (mean - mu0) ** 2 / lam_n
    return mu_n, lam_n, a0 + 0.5 * n, b_n


class Gaussian(EmissionFamily):
    """One-dimensional Gaussian emissions with a Normal-Inverse-Gamma prior.

    ``sigma^2 ~ InvGamma(a0, b0)`` and ``mu | sigma^2 ~ N(mu0, sigma^2 / lambda0)``.

    By default the prior is scaled to the training data, as scikit-learn's
    :class:`~sklearn.mixture.BayesianGaussianMixture` does with
    ``mean_prior=None``: ``mu0`` is the mean of the training data and
    ``b0 = (a0 - 1) * PRIOR_COVARIANCE_FRACTION * var(X)``, so that the prior
    mean of a state's variance is a tenth of the data's variance, and
    ``lambda0 = PRIOR_MEAN_PRECISION`` (0.01) lets a state's mean lie
    anywhere within about three standard deviations of the data mean. With
    these defaults the posterior over state sequences is the same for ``X``
    and ``a * X + b`` (any ``a != 0``). The resolved values are
    stored by :class:`~sk_ihmm.InfiniteHMM` in ``emission_prior_``; they are
    part of the model, so held-out data is scored under the prior of the
    training data (empirical Bayes). Explicit values always win.

    Parameters
    ----------
    mu0 : float or None, default=None
        Prior mean of the state means; ``None``: the mean of the training data.
    lambda0 : float, default=0.01
        Prior precision of a state mean, relative to the state's precision
        (:data:`~sk_ihmm.emissions.PRIOR_MEAN_PRECISION`).
    a0 : float, default=1.5
        Shape of the inverse-gamma prior of a state's variance.
    b0 : float or None, default=None
        Scale of that prior; ``None``: ``(a0 - 1) * 0.1 * var(X)`` (or
        ``0.1 * var(X)`` when ``a0 <= 1``).

    Examples
    --------
    The default prior is resolved on the training data:

    >>> from sk_ihmm import InfiniteHMM
    >>> from sk_ihmm.datasets import make_gaussian_hmm
    >>> from sk_ihmm.emissions import Gaussian
    >>> X, states = make_gaussian_hmm(500, random_state=0)
    >>> Gaussian().resolve_prior(X)["mu0"] == float(X.mean())
    True

    Explicit values win; here the prior mean of a state's variance is
    ``b0 / (a0 - 1) = 0.125``:

    >>> model = InfiniteHMM(emission=Gaussian(a0=3.0, b0=0.25), max_time=0,
    ...                     n_chains=2, random_state=0).fit(X)
    >>> model.emission_prior_["b0"], model.means_.shape[1]
    (0.25, 1)
    """

    name = "gaussian"
    tag = GaussianTag()
    kernels = Kernels(
        log_pred=_log_pred, update=_update, log_marginal=_log_marginal, count=_count,
        sample_param=_sample_param, param_loglik=_param_loglik,
        log_pred_block=_log_pred_block_exact, log_proposal_block=_log_proposal_block,
        move_stats=_move_stats, move_block=_move_block, add_labelled=_add_labelled,
        shifted_param_loglik_block=_shifted_block,
    )
    fitted_attributes = ("means_", "covars_")

    def __init__(self, mu0=None, lambda0=PRIOR_MEAN_PRECISION, a0=1.5, b0=None):
        self.mu0 = mu0
        self.lambda0 = lambda0
        self.a0 = a0
        self.b0 = b0

    def validate_params(self):
        if self.mu0 is not None and not np.isfinite(self.mu0):
            raise ValueError(f"Gaussian mu0 must be a finite float or None, got {self.mu0!r}.")
        for name in ("lambda0", "a0", "b0"):
            v = getattr(self, name)
            if name == "b0" and v is None:
                continue
            if not (isinstance(v, (int, float, np.number)) and np.isfinite(v) and v > 0):
                raise ValueError(f"Gaussian {name} must be a positive float, got {v!r}.")

    def check_X(self, X, dim=None):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 1:
            raise ValueError(
                "Gaussian emissions expect X of shape (n_samples, 1); got shape "
                f"{X.shape}. Use emission='gaussian' (a string) or MultivariateGaussian() "
                "for several features."
            )
        check_magnitude(X)
        return X

    def warn_data(self, X):
        warn_integer_codes(X)

    def resolve_prior(self, X=None, dim=None):
        self.validate_params()
        prior = {"mu0": self.mu0, "lambda0": float(self.lambda0), "a0": float(self.a0), "b0": self.b0}
        if self.mu0 is None or self.b0 is None:
            if X is None:
                raise ValueError(
                    "Gaussian() with mu0=None or b0=None takes them from the training data; "
                    "pass X, or set them explicitly."
                )
            mean, cov = data_moments(self.check_X(X))
            var = float(positive_definite_scale(cov)[0, 0])
            if self.mu0 is None:
                prior["mu0"] = float(mean[0])
            if self.b0 is None:
                a0 = float(self.a0)
                prior["b0"] = (a0 - 1.0 if a0 > 1.0 else 1.0) * PRIOR_COVARIANCE_FRACTION * var
        prior["mu0"], prior["b0"] = float(prior["mu0"]), float(prior["b0"])
        return prior

    def hyperparameters(self, dim, X=None, prior=None):
        p = self.resolve_prior(X) if prior is None else prior
        return np.array([p["mu0"], p["lambda0"], p["a0"], p["b0"]], dtype=np.float64)

    def n_stats(self, dim):
        return 13

    def n_params(self, dim):
        return 4

    def summary(self, stats, hyp):
        mu_n, _, a_n, b_n = _nig_posterior_rows(stats, hyp)
        # posterior mean of sigma^2 (a_n > 1) or its mode otherwise
        var = np.where(a_n > 1, b_n / np.maximum(a_n - 1, 1e-12), b_n / (a_n + 1))
        return {"means_": mu_n[:, None], "covars_": var[:, None]}

    def dimension(self, X):
        return 1

    def draw(self, summary, states, rng):
        return rng.normal(summary["means_"][states, 0], np.sqrt(summary["covars_"][states, 0]))[:, None]

    def log_marginal_stats(self, stats, hyp):
        _, lam0, a0, b0 = hyp
        _, lam_n, a_n, b_n = _nig_posterior_rows(stats, hyp)
        return (gammaln(a_n) - gammaln(a0) + a0 * np.log(b0) - a_n * np.log(b_n)
                + 0.5 * (np.log(lam0) - np.log(lam_n)) - 0.5 * stats[:, 0] * np.log(2 * np.pi))

    def log_marginal(self, Y, dim=None, hyp=None):
        """Log marginal likelihood of ``Y`` in one state, from the moments
        (``hyp``: resolved hyperparameters, by default those of this
        instance, which must then be explicit)."""
        y = np.asarray(Y, dtype=np.float64).ravel()
        n = y.size
        if n == 0:
            return 0.0
        mean = y.mean()
        stats = np.array([[n, mean, np.sum((y - mean) ** 2)]])
        return float(self.log_marginal_stats(stats, self.hyperparameters(1) if hyp is None else hyp)[0])


#: Up to this many distinct values, one column of non-negative integers
#: fitted with Gaussian emissions draws a warning.
INTEGER_CODE_MAX_DISTINCT = 50


def warn_integer_codes(X):
    """Warn when a Gaussian family gets one column of small non-negative integers."""
    y = X[~np.isnan(X[:, 0]), 0] if X.ndim == 2 and X.shape[1] == 1 else np.zeros(0)
    if y.shape[0] < 2 or y.min() < 0 or np.any(y != np.round(y)):
        return
    n_distinct = np.unique(y).shape[0]
    if 2 <= n_distinct <= INTEGER_CODE_MAX_DISTINCT:
        warn(
            f"X is a single column of {n_distinct} distinct non-negative integers "
            f"({int(y.min())}..{int(y.max())}), fitted with Gaussian emissions. If these are "
            "category codes use emission='categorical', if they are counts "
            "emission='poisson'; Gaussian emissions treat them as measurements on a line.",
            UserWarning,
        )
