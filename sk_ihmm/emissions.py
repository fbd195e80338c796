"""Collapsed conjugate emission families.

Every family exposes the same small interface, shared by all samplers:

* a Python object (an sklearn-style estimator, so ``emission__concentration``
  can be grid-searched) that validates data, turns its hyperparameters into a
  flat ``float64`` array ``hyp`` and summarises per-state statistics;
* numba kernels, dispatched on the family's integer ``code`` by the
  module-level functions every sampler calls:

  ``log_pred(fam, stats, k, hyp, Y, t) -> float``
      log posterior predictive density of observation ``Y[t]`` under state
      ``k`` whose sufficient statistics are ``stats[k]`` (all zeros = the
      prior predictive of a brand-new state);
  ``update(fam, stats, k, Y, t, sign)``
      add (``sign=+1``) or remove (``sign=-1``) ``Y[t]`` in ``stats[k]``;
  ``add_labelled(fam, stats, x, Y)``
      add every ``Y[t]`` to ``stats[x[t]]`` in one call (the statistics of
      a labelled sequence);
  ``log_marginal_sum(fam, stats, hyp) -> float``
      the closed-form log marginal likelihood of every row, summed;
  ``log_pred_block(fam, stats, labels, n_labels, hyp, Y, start, length, out)``
      the ``(length, n_labels)`` matrix of ``log_pred`` for a block of
      observations and a list of labels, in one call;
  ``log_proposal_block(fam, stats, labels, n_labels, hyp, Y, start, length, out, prior_pred, work)``
      the same values, label-major ``(n_labels, length)``, or a cheaper
      stand-in for them where a proposal only needs consistent weights
      (``work``: float scratch);
  ``move_block(fam, stats, hyp, Y, b, labels, sign, work) -> float``
      add or remove a block of observations and return their joint log
      predictive given the statistics without them (closed form where the
      family has one);

  and two kernels used by the non-collapsed sampler (``pgas``):

  ``sample_param(fam, stats, k, hyp, rng, out, j)``
      draw explicit parameters into ``out[j]`` from the posterior given
      ``stats[k]``;
  ``param_loglik(fam, param, k, Y, t) -> float``
      log density of ``Y[t]`` under the explicit parameters ``param[k]``;
  ``shifted_param_loglik_block(fam, param, n, Y, start, length, out)``
      the same for the states ``1..n`` and a block of observations, each
      step shifted by its maximum, in one call.

  They take whole arrays and row indices rather than row views, and the
  per-observation ones are inlined into their callers: numba takes a
  reference count (an atomic increment and decrement) for every view it
  creates and every array it passes to a compiled call, which in the
  samplers' inner loops costs several times the arithmetic
  (doc/internals.rst, "Writing kernels").

Per-state statistics are rows of one ``(capacity, n_stats)`` float array,
observations are rows of one ``(n_timesteps, n_features)`` float array (a
categorical symbol is stored as a float holding an integer).
"""

import math

import numpy as np
from numba import njit
from scipy.special import gammaln
from sklearn.base import BaseEstimator

from ._nrt import hold

__all__ = [
    "EmissionFamily",
    "Categorical",
    "Gaussian",
    "MultivariateGaussian",
    "make_emission",
]

_LOG_2PI = math.log(2.0 * math.pi)


# --------------------------------------------------------------------------
# Categorical with a symmetric Dirichlet prior.
# stats = [count_0, ..., count_{V-1}, total];  hyp = [concentration, V]
# --------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _cat_log_pred(stats, k, hyp, Y, t):
    v = int(Y[t, 0])
    n_sym = stats.shape[1] - 1
    return math.log((stats[k, v] + hyp[0]) / (stats[k, n_sym] + n_sym * hyp[0]))


@njit(cache=True)
def _cat_log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out):
    n_sym = stats.shape[1] - 1
    for c in range(n_labels):
        k = labels[c]
        log_den = math.log(stats[k, n_sym] + n_sym * hyp[0])
        for l in range(length):
            out[l, c] = math.log(stats[k, int(Y[start + l, 0])] + hyp[0]) - log_den


@njit(cache=True)
def _cat_log_proposal_block(stats, labels, n_labels, hyp, Y, start, length, out, work):
    # the values of _cat_log_pred_block, label-major, from a table of each
    # label's log predictive per symbol (work[:n_sym]): one log per symbol
    # rather than one per step (called when the symbols are no more than the steps)
    n_sym = stats.shape[1] - 1
    a = hyp[0]
    for c in range(n_labels):
        k = labels[c]
        log_den = math.log(stats[k, n_sym] + n_sym * a)
        for v in range(n_sym):
            work[v] = math.log(stats[k, v] + a) - log_den
        for l in range(length):
            out[c, l] = work[int(Y[start + l, 0])]


@njit(cache=True, inline="always")
def _cat_update(stats, k, Y, t, sign):
    stats[k, int(Y[t, 0])] += sign
    stats[k, stats.shape[1] - 1] += sign


@njit(cache=True)
def _cat_move_block(stats, hyp, Y, b, xb, sign):
    # exact sequential predictives (adding in time order, removing in reverse,
    # each evaluated without its own observation), multiplied in linear space:
    # one division per step, where the closed-form marginal costs O(n_symbols)
    n_sym = stats.shape[1] - 1
    a = hyp[0]
    L = xb.shape[0]
    prod = 1.0
    log_r = 0.0
    for i in range(L):
        l = i if sign > 0 else L - 1 - i
        k = xb[l]
        v = int(Y[b + l, 0])
        if sign < 0:
            stats[k, v] -= 1.0
            stats[k, n_sym] -= 1.0
        prod *= (stats[k, v] + a) / (stats[k, n_sym] + n_sym * a)
        if sign > 0:
            stats[k, v] += 1.0
            stats[k, n_sym] += 1.0
        if prod < 1e-250:
            log_r += math.log(prod)
            prod = 1.0
    return log_r + math.log(prod)


@njit(cache=True)
def _cat_sample_param(stats, k, hyp, rng, out, j):
    # out[j] = log probabilities of the symbols, drawn from the Dirichlet posterior
    n_sym = stats.shape[1] - 1
    tot = 0.0
    for v in range(n_sym):
        g = rng.gamma(stats[k, v] + hyp[0], 1.0)
        out[j, v] = g
        tot += g
    for v in range(n_sym):
        out[j, v] = math.log(max(out[j, v] / tot, 1e-300))


@njit(cache=True, inline="always")
def _cat_param_loglik(param, k, Y, t):
    return param[k, int(Y[t, 0])]


# --------------------------------------------------------------------------
# 1-D Gaussian with a Normal-Inverse-Gamma prior.
# sigma^2 ~ InvGamma(a0, b0), mu | sigma^2 ~ N(mu0, sigma^2 / lambda0).
# stats = [n, mean, M2, cache_valid, mu_n, log_norm, 1/(nu s^2), (nu+1)/2,
#          marginal_valid, log_marginal, block_n, block_s1, block_s2]:
# Welford moments (removal as stable as addition), a cache of the Student-t
# predictive that update() invalidates and log_pred() refills, one of the
# log marginal likelihood (_gauss_log_marginal), and the sums of a block
# being moved (_gauss_block_sums; zero outside a move). An RCD move reads the
# marginal of each label of its block before and after removing the block
# (move_block) and again before and after seating the proposal; with the
# cache the first read of each pair finds the value the previous move left.
# hyp = [mu0, lambda0, a0, b0]
# --------------------------------------------------------------------------
@njit(cache=True)
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


#: From this ``a`` on, :func:`_lgamma_half_step` sums its asymptotic series.
_HALF_STEP_SERIES_MIN = 30.0


@njit(cache=True, inline="always")
def _lgamma_half_step(a):
    """``lgamma(a + 1/2) - lgamma(a) - log(a) / 2``.

    For ``a >= 30`` the asymptotic series ``-1/(8a) + 1/(192a^3) -
    1/(640a^5) + 17/(14336a^7) - 31/(18432a^9)`` (the coefficients are
    ``(-1)^n (B_n(1/2) - B_n) / (n (n - 1))``, ``B_n`` Bernoulli numbers and
    polynomials), whose first omitted term is below 2e-19 there; this is
    more accurate than the difference of two ``lgamma`` (about ``a log(a)``
    each, so an absolute rounding error of 1e-12 at ``a = 1000``) and
    cheaper.
    """
    if a >= _HALF_STEP_SERIES_MIN:
        r = 1.0 / a
        r2 = r * r
        return r * (-0.125 + r2 * (1.0 / 192.0 + r2 * (-1.0 / 640.0 + r2 * (
            17.0 / 14336.0 - r2 * (31.0 / 18432.0)))))
    return math.lgamma(a + 0.5) - math.lgamma(a) - 0.5 * math.log(a)


@njit(cache=True)
def _gauss_predictive(n, mean, m2, hyp):
    """Student-t predictive as (mu_n, log-normaliser, 1/(nu s^2), (nu+1)/2)."""
    mu_n, lam_n, a_n, b_n = _nig_posterior(n, mean, m2, hyp)
    nu = 2.0 * a_n
    scale2 = b_n * (lam_n + 1.0) / (a_n * lam_n)
    # lgamma((nu+1)/2) - lgamma(nu/2) - log(nu pi scale2)/2, with nu/2 = a_n:
    # the log(a_n)/2 of the lgamma difference cancels
    c = _lgamma_half_step(a_n) - 0.5 * math.log(2.0 * math.pi * scale2)
    return mu_n, c, 1.0 / (nu * scale2), 0.5 * (nu + 1.0)


@njit(cache=True, inline="always")
def _student_t(y, mu, log_norm, inv_scale, half_nu1):
    """Student-t log density from the cached predictive of a state (scalars)."""
    d = y - mu
    return log_norm - half_nu1 * math.log1p(d * d * inv_scale)


@njit(cache=True)
def _gauss_fill_cache(stats, k, hyp):
    # columns 3..7 cache the Student-t predictive; update() invalidates it
    stats[k, 4], stats[k, 5], stats[k, 6], stats[k, 7] = _gauss_predictive(
        stats[k, 0], stats[k, 1], stats[k, 2], hyp)
    stats[k, 3] = 1.0


@njit(cache=True, inline="always")
def _gauss_log_pred(stats, k, hyp, Y, t):
    if stats[k, 3] == 0.0:
        _gauss_fill_cache(stats, k, hyp)
    return _student_t(Y[t, 0], stats[k, 4], stats[k, 5], stats[k, 6], stats[k, 7])


#: :func:`log_proposal_block` weighs a Gaussian state whose Student-t
#: predictive has ``(nu + 1) / 2`` above this (``nu > 99``) with its
#: quadratic approximation, without a ``log1p``.
PROPOSAL_QUADRATIC_HALF_NU1 = 50.0


@njit(cache=True)
def _gauss_log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out,
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
            _gauss_fill_cache(stats, k, hyp)
        mu, log_norm, inv_scale, half_nu1 = stats[k, 4], stats[k, 5], stats[k, 6], stats[k, 7]
        if half_nu1 > quadratic_above:
            q = half_nu1 * inv_scale
            for l in range(length):
                d = Y[start + l, 0] - mu
                out[l, c] = log_norm - q * d * d
        else:
            for l in range(length):
                out[l, c] = _student_t(Y[start + l, 0], mu, log_norm, inv_scale, half_nu1)


@njit(cache=True, inline="always")
def _gauss_invalidate(stats, k):
    """Mark the cached predictive (columns 3-7) and log marginal (8, 9) of
    ``stats[k]`` stale: every change of the moments of a row goes with it."""
    stats[k, 3] = 0.0
    stats[k, 8] = 0.0


@njit(cache=True, inline="always")
def _gauss_update(stats, k, Y, t, sign):
    n_old = stats[k, 0]
    n_new = n_old + sign
    x = Y[t, 0]
    if n_new <= 0.0:
        for i in range(stats.shape[1]):
            stats[k, i] = 0.0
    else:
        mean_old = stats[k, 1]
        if sign > 0:
            mean_new = mean_old + (x - mean_old) / n_new
            stats[k, 2] += (x - mean_old) * (x - mean_new)
        else:
            mean_new = (n_old * mean_old - x) / n_new
            stats[k, 2] -= (x - mean_new) * (x - mean_old)
            if stats[k, 2] < 0.0:
                stats[k, 2] = 0.0
        stats[k, 0] = n_new
        stats[k, 1] = mean_new
        _gauss_invalidate(stats, k)
    hold(stats)
    hold(Y)


#: From this ``a_n`` on, :func:`_gauss_log_marginal` takes ``lgamma(a_n)``
#: from Stirling's series.
_STIRLING_MIN = 30.0


@njit(cache=True, inline="always")
def _stirling_tail(a):
    """``lgamma(a) - ((a - 1/2) log(a) - a + log(2 pi) / 2)`` for ``a >= 30``:
    ``1/(12a) - 1/(360a^3) + 1/(1260a^5) - 1/(1680a^7) + 1/(1188a^9)``, the
    first omitted term below 1e-19 there."""
    r = 1.0 / a
    r2 = r * r
    return r * (1.0 / 12.0 + r2 * (-1.0 / 360.0 + r2 * (1.0 / 1260.0 + r2 * (
        -1.0 / 1680.0 + r2 * (1.0 / 1188.0)))))


@njit(cache=True)
def _gauss_log_marginal(stats, k, hyp):
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


@njit(cache=True)
def _gauss_sample_param(stats, k, hyp, rng, out, j):
    # out[j] = [mean, variance, log normaliser, 1 / (2 variance)]: the last two
    # spare param_loglik a log per call
    mu_n, lam_n, a_n, b_n = _nig_posterior(stats[k, 0], stats[k, 1], stats[k, 2], hyp)
    var = b_n / rng.gamma(a_n, 1.0)
    out[j, 0] = mu_n + math.sqrt(var / lam_n) * rng.standard_normal()
    out[j, 1] = var
    out[j, 2] = -0.5 * (_LOG_2PI + math.log(var))
    out[j, 3] = 0.5 / var


@njit(cache=True, inline="always")
def _gauss_param_loglik(param, k, Y, t):
    d = Y[t, 0] - param[k, 0]
    return param[k, 2] - param[k, 3] * d * d


# --------------------------------------------------------------------------
# D-dimensional Gaussian with a Normal-Inverse-Wishart prior.
# Sigma ~ IW(nu0, Psi0), mu | Sigma ~ N(mu0, Sigma / kappa0).
# stats = [n, mean (D), M2 (D*D, row-major) | scratch: S (D*D), mu_n (D), z (D)]
# The scratch columns let log_pred / update / the log marginal work without
# allocating (so that kernels calling them can run with numba's reference
# counting switched off, see sk_ihmm._nrt); they hold no state between calls.
# hyp = [D, kappa0, nu0, mu0 (D), Psi0 (D*D)]
# --------------------------------------------------------------------------
@njit(cache=True)
def _niw_posterior(stats, hyp):
    d = int(hyp[0])
    k0, nu0 = hyp[1], hyp[2]
    n = stats[0]
    mu0 = hyp[3:3 + d]
    psi = hyp[3 + d:3 + d + d * d].reshape((d, d)).copy()
    k_n = k0 + n
    mu_n = mu0.copy()
    if n > 0:
        mean = stats[1:1 + d]
        m2 = stats[1 + d:1 + d + d * d].reshape((d, d))
        diff = mean - mu0
        c = k0 * n / k_n
        for i in range(d):
            mu_n[i] = (k0 * mu0[i] + n * mean[i]) / k_n
            for j in range(d):
                psi[i, j] += m2[i, j] + c * diff[i] * diff[j]
    return d, mu_n, k_n, nu0 + n, psi


@njit(cache=True)
def _mvn_dim(n_stats):
    # n_stats = 2 D^2 + 3 D + 1
    return int(round((math.sqrt(8.0 * n_stats + 1.0) - 3.0) / 4.0))


@njit(cache=True)
def _niw_posterior_scratch(stats, k, hyp):
    """NIW posterior of ``stats[k]`` written into its scratch columns:
    ``psi_n`` (row-major) at ``1 + D + D^2`` and ``mu_n`` after it. Returns
    ``(d, k_n, nu_n)``."""
    d = int(hyp[0])
    k0, nu0 = hyp[1], hyp[2]
    n = stats[k, 0]
    o_s = 1 + d + d * d
    o_mu = o_s + d * d
    k_n = k0 + n
    c = k0 * n / k_n
    for i in range(d):
        di = stats[k, 1 + i] - hyp[3 + i]
        stats[k, o_mu + i] = (k0 * hyp[3 + i] + n * stats[k, 1 + i]) / k_n
        for j in range(d):
            dj = stats[k, 1 + j] - hyp[3 + j]
            stats[k, o_s + i * d + j] = (hyp[3 + d + i * d + j] + stats[k, 1 + d + i * d + j]
                                         + c * di * dj)
    return d, k_n, nu0 + n


@njit(cache=True)
def _cholesky_scratch(stats, k, o, d, f):
    """In place: the lower Cholesky factor of ``f * S``, ``S`` the ``d x d``
    row-major matrix at ``stats[k, o:]`` (its lower triangle is read, the
    factor overwrites it). Returns ``log det`` of the factor."""
    logdet = 0.0
    for j in range(d):
        sj = f * stats[k, o + j * d + j]
        for p in range(j):
            sj -= stats[k, o + j * d + p] ** 2
        ljj = math.sqrt(sj)
        stats[k, o + j * d + j] = ljj
        logdet += math.log(ljj)
        for i in range(j + 1, d):
            si = f * stats[k, o + i * d + j]
            for p in range(j):
                si -= stats[k, o + i * d + p] * stats[k, o + j * d + p]
            stats[k, o + i * d + j] = si / ljj
    return logdet


@njit(cache=True)
def _mvn_log_pred(stats, k, hyp, Y, t):
    d, k_n, nu_n = _niw_posterior_scratch(stats, k, hyp)
    o_s = 1 + d + d * d
    o_mu = o_s + d * d
    o_z = o_mu + d
    dof = nu_n - d + 1.0
    logdet = _cholesky_scratch(stats, k, o_s, d, (k_n + 1.0) / (k_n * dof))
    # forward substitution L z = y - mu_n
    maha = 0.0
    for i in range(d):
        r = Y[t, i] - stats[k, o_mu + i]
        for j in range(i):
            r -= stats[k, o_s + i * d + j] * stats[k, o_z + j]
        zi = r / stats[k, o_s + i * d + i]
        stats[k, o_z + i] = zi
        maha += zi * zi
    return (
        math.lgamma(0.5 * (dof + d))
        - math.lgamma(0.5 * dof)
        - 0.5 * d * math.log(dof * math.pi)
        - logdet
        - 0.5 * (dof + d) * math.log1p(maha / dof)
    )


@njit(cache=True)
def _mvn_log_marginal(stats, k, hyp):
    # log p(observations of k) up to a constant of the prior
    d, k_n, nu_n = _niw_posterior_scratch(stats, k, hyp)
    logdet = _cholesky_scratch(stats, k, 1 + d + d * d, d, 1.0)
    out = -0.5 * stats[k, 0] * d * math.log(math.pi) - 0.5 * d * math.log(k_n) - nu_n * logdet
    for i in range(d):
        out += math.lgamma(0.5 * (nu_n - i))
    return out


@njit(cache=True)
def _mvn_update(stats, k, Y, t, sign):
    d = _mvn_dim(stats.shape[1])
    o_z = 1 + 2 * d + 2 * d * d      # scratch: the old mean
    n_old = stats[k, 0]
    n_new = n_old + sign
    if n_new <= 0.0:
        for i in range(stats.shape[1]):
            stats[k, i] = 0.0
    else:
        for i in range(d):
            stats[k, o_z + i] = stats[k, 1 + i]
        if sign > 0:
            for i in range(d):
                stats[k, 1 + i] += (Y[t, i] - stats[k, o_z + i]) / n_new
            for i in range(d):
                for j in range(d):
                    stats[k, 1 + d + i * d + j] += ((Y[t, i] - stats[k, o_z + i])
                                                    * (Y[t, j] - stats[k, 1 + j]))
        else:
            for i in range(d):
                stats[k, 1 + i] = (n_old * stats[k, o_z + i] - Y[t, i]) / n_new
            for i in range(d):
                for j in range(d):
                    stats[k, 1 + d + i * d + j] -= ((Y[t, i] - stats[k, 1 + i])
                                                    * (Y[t, j] - stats[k, o_z + j]))
        stats[k, 0] = n_new


@njit(cache=True)
def _mvn_sample_param(stats, k, hyp, rng, out_all, j):
    # out[j] = [mean (D), lower Cholesky factor of the covariance (D*D, row-major),
    # log normaliser -D/2 log(2 pi) - log det(chol) | scratch (D)]: the scratch
    # columns hold the whitened residual of _mvn_param_loglik, which then
    # allocates nothing
    out = out_all[j]
    d, mu_n, k_n, nu_n, psi = _niw_posterior(stats[k], hyp)
    # Sigma ~ IW(nu_n, psi): draw W ~ Wishart(nu_n, psi^-1) by Bartlett, Sigma = W^-1
    lpsi_inv = np.linalg.cholesky(np.linalg.inv(psi))
    a = np.zeros((d, d))
    for i in range(d):
        a[i, i] = math.sqrt(2.0 * rng.gamma(0.5 * (nu_n - i), 1.0))
        for c in range(i):
            a[i, c] = rng.standard_normal()
    la = lpsi_inv @ a
    sigma = np.linalg.inv(la @ la.T)
    sigma = 0.5 * (sigma + sigma.T)
    chol = np.linalg.cholesky(sigma)
    z = np.empty(d)
    for i in range(d):
        z[i] = rng.standard_normal()
    mean = mu_n + (chol @ z) / math.sqrt(k_n)
    out[:d] = mean
    out[d:d + d * d] = chol.reshape(d * d)
    logdet = 0.0
    for i in range(d):
        logdet += math.log(chol[i, i])
    out[d + d * d] = -0.5 * d * _LOG_2PI - logdet


@njit(cache=True)
def _mvn_param_loglik(param_all, k, Y, t):
    # row layout of _mvn_sample_param: (D + 1)^2 entries
    d = int(round(math.sqrt(param_all.shape[1]))) - 1
    c0 = d                     # Cholesky factor, row-major
    z0 = d + d * d + 1         # scratch: whitened residual
    maha = 0.0
    for i in range(d):
        s = Y[t, i] - param_all[k, i]
        for j in range(i):
            s -= param_all[k, c0 + i * d + j] * param_all[k, z0 + j]
        zi = s / param_all[k, c0 + i * d + i]
        param_all[k, z0 + i] = zi
        maha += zi * zi
    return param_all[k, d + d * d] - 0.5 * maha


# --------------------------------------------------------------------------
# Python-facing families
# --------------------------------------------------------------------------

def _nig_posterior_rows(stats, hyp):
    """Vectorised Normal-Inverse-Gamma posterior ``(mu_n, lambda_n, a_n, b_n)``
    of every row of Gaussian statistics ``[n, mean, M2, ...]``."""
    n, mean, m2 = stats[:, 0], stats[:, 1], stats[:, 2]
    mu0, lam0, a0, b0 = hyp
    lam_n = lam0 + n
    mu_n = (lam0 * mu0 + n * mean) / lam_n
    b_n = b0 + 0.5 * m2 + 0.5 * lam0 * n * (mean - mu0) ** 2 / lam_n
    return mu_n, lam_n, a0 + 0.5 * n, b_n


def _niw_posterior_rows(stats, hyp):
    """Vectorised Normal-Inverse-Wishart posterior of every row of statistics
    ``[n, mean (D), M2 (D*D)]``: dict of ``mu_n``, ``k_n``, ``nu_n``, ``psi_n``."""
    d = int(hyp[0])
    k0, nu0 = hyp[1], hyp[2]
    mu0 = hyp[3:3 + d]
    psi0 = hyp[3 + d:].reshape(d, d)
    n = stats[:, 0]
    mean = stats[:, 1:1 + d]
    m2 = stats[:, 1 + d:1 + d + d * d].reshape(-1, d, d)
    k_n = k0 + n
    diff = mean - mu0
    return {
        "mu_n": (k0 * mu0 + n[:, None] * mean) / k_n[:, None],
        "k_n": k_n,
        "nu_n": nu0 + n,
        "psi_n": psi0 + m2 + (k0 * n / k_n)[:, None, None] * diff[:, :, None] * diff[:, None, :],
    }


class EmissionFamily(BaseEstimator):
    """Base class of the collapsed conjugate emission families.

    Subclasses set ``code`` (the family's branch in the numba dispatchers,
    see the module docstring) and define the methods below. Instances hold only hyperparameters;
    data-dependent quantities are returned, never stored, so one instance can
    be shared by several estimators and by :func:`sklearn.base.clone`.
    """

    #: name used in messages and in ``emission=`` strings
    name = ""

    def _check_X(self, X):
        """Validate observations; return a float64 ``(n, n_features)`` array."""
        raise NotImplementedError

    def resolve_prior(self, X=None, n_features=None):
        """The prior's hyperparameters, with data-scaled defaults filled in.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or None
            Training observations. Hyperparameters left at ``None`` are set
            from them; without ``X`` every hyperparameter must be explicit.
        n_features : int or None
            Family dimension (alphabet size or number of features); ``None``
            takes it from ``X``.

        Returns
        -------
        prior : dict
            Hyperparameter name -> value (floats or arrays). The estimator
            stores it as ``emission_prior_``.
        """
        raise NotImplementedError

    def _hyp(self, n_features, X=None, prior=None):
        """Flat float64 array of hyperparameters for the kernels, from
        ``prior`` (a :meth:`resolve_prior` result) or resolved on ``X``."""
        raise NotImplementedError

    def _n_stats(self, n_features):
        """Length of one row of per-state sufficient statistics."""
        raise NotImplementedError

    def _n_params(self, n_features):
        """Length of one row of explicit parameters (for ``pgas``)."""
        raise NotImplementedError

    def _summary(self, stats, hyp):
        """Posterior-mean parameters (dict of fitted attributes) of states."""
        raise NotImplementedError

    def _dim(self, X):
        """Dimension the kernels need: alphabet size or number of features."""
        raise NotImplementedError

    def _log_marginal_stats(self, stats, hyp):
        """Closed-form log marginal likelihood of each row of statistics."""
        raise NotImplementedError

    def _draw_many(self, summary, states, rng):
        """Observations ``(len(states), n_features)`` given states of a summary."""
        raise NotImplementedError

    def log_marginal(self, Y):
        """Closed-form log marginal likelihood of observations ``Y`` in one state.

        Used by tests (against the product of predictives) and by the exact
        enumeration of small posteriors.
        """
        raise NotImplementedError


#: Largest alphabet of :class:`Categorical` (every state stores a count per symbol).
MAX_SYMBOLS = 2**20


class Categorical(EmissionFamily):
    """Categorical emissions with a symmetric Dirichlet prior.

    Parameters
    ----------
    concentration : float, default=0.5
        Dirichlet pseudo-count added to every symbol.
    n_symbols : int or None, default=None
        Size of the alphabet. ``None`` takes ``max(X) + 1`` of the training
        data; set it when held-out data may contain symbols unseen in training.

    Examples
    --------
    >>> from sk_ihmm import InfiniteHMM
    >>> from sk_ihmm.datasets import make_categorical_hmm
    >>> from sk_ihmm.emissions import Categorical
    >>> X, states = make_categorical_hmm(600, n_states=3, n_symbols=6, random_state=0)
    >>> model = InfiniteHMM(emission=Categorical(concentration=0.5, n_symbols=6),
    ...                     max_time=0, n_chains=2, random_state=0).fit(X)
    >>> model.emissionprob_.shape[1]
    6
    >>> model.emission_prior_
    {'concentration': 0.5, 'n_symbols': 6}
    """

    name = "categorical"
    code = 0

    def __init__(self, concentration=0.5, n_symbols=None):
        self.concentration = concentration
        self.n_symbols = n_symbols

    def _validate_params(self):
        if not (np.isfinite(self.concentration) and self.concentration > 0):
            raise ValueError(
                f"Categorical concentration must be a positive float, got {self.concentration!r}."
            )
        if self.n_symbols is not None and (
            int(self.n_symbols) != self.n_symbols or self.n_symbols < 1
        ):
            raise ValueError(f"n_symbols must be a positive integer or None, got {self.n_symbols!r}.")
        if self.n_symbols is not None and self.n_symbols > MAX_SYMBOLS:
            raise ValueError(f"n_symbols must be at most {MAX_SYMBOLS}, got {self.n_symbols!r}.")

    def _check_X(self, X, n_symbols=None):
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != 1:
            raise ValueError(
                "Categorical emissions expect X of shape (n_samples, 1) holding integer "
                f"symbols; got shape {X.shape}."
            )
        if X.dtype.kind == "b":
            X = X.astype(np.int64)
        if X.dtype.kind not in "iuf":
            raise ValueError(f"Categorical emissions expect integer symbols; got dtype {X.dtype}.")
        if X.dtype.kind == "f":
            if not np.all(np.isfinite(X)):
                raise ValueError("Input X contains NaN or infinity.")
            if np.any(X != np.round(X)):
                raise ValueError("Categorical emissions expect integer symbols; X has non-integer values.")
        if X.size and X.min() < 0:
            raise ValueError(f"Categorical symbols must be non-negative; got minimum {X.min()}.")
        if n_symbols is not None and X.size and X.max() >= n_symbols:
            raise ValueError(
                f"Symbol {int(X.max())} is outside the alphabet of {n_symbols} symbols seen "
                "in fit; set emission=Categorical(n_symbols=...) to reserve room for it."
            )
        return X.astype(np.float64)

    def _dim(self, X):
        return self._resolve_n_symbols(X)

    def _log_marginal_stats(self, stats, hyp):
        counts = stats[:, :-1]
        b, V = hyp[0], counts.shape[1]
        return (gammaln(V * b) - gammaln(V * b + stats[:, -1])
                + np.sum(gammaln(counts + b) - gammaln(b), axis=1))

    def _draw_many(self, summary, states, rng):
        cdf = np.cumsum(summary["emissionprob_"][states], axis=1)
        u = rng.random(states.shape[0])[:, None] * cdf[:, -1:]
        return (u >= cdf).sum(axis=1).astype(np.int64)[:, None]

    def _resolve_n_symbols(self, X):
        if X.size and X.max() >= MAX_SYMBOLS:
            raise ValueError(
                f"Categorical symbol {int(X.max())} asks for an alphabet of {int(X.max()) + 1} "
                f"symbols (at most {MAX_SYMBOLS} are supported: every state stores a count per "
                "symbol). Code the symbols as 0..V-1, for example with "
                "sklearn.preprocessing.OrdinalEncoder."
            )
        if self.n_symbols is not None:
            if X.size and X.max() >= self.n_symbols:
                raise ValueError(
                    f"Symbol {int(X.max())} is outside the alphabet of n_symbols={self.n_symbols}."
                )
            return int(self.n_symbols)
        return int(X.max()) + 1

    def resolve_prior(self, X=None, n_features=None):
        if n_features is None:
            if X is None:
                raise ValueError("resolve_prior needs X or n_features.")
            n_features = self._resolve_n_symbols(np.asarray(X))
        return {"concentration": float(self.concentration), "n_symbols": int(n_features)}

    def _hyp(self, n_symbols, X=None, prior=None):
        return np.array([float(self.concentration), float(n_symbols)])

    def _n_stats(self, n_symbols):
        return n_symbols + 1

    def _n_params(self, n_symbols):
        return n_symbols

    def _summary(self, stats, hyp):
        counts = stats[:, :-1]
        probs = (counts + hyp[0]) / (counts.sum(axis=1, keepdims=True) + counts.shape[1] * hyp[0])
        return {"emissionprob_": probs}

    def log_marginal(self, Y, n_symbols):
        y = np.asarray(Y, dtype=np.int64).ravel()
        counts = np.bincount(y, minlength=n_symbols).astype(float)
        stats = np.concatenate([counts, [counts.sum()]])[None, :]
        return float(self._log_marginal_stats(stats, self._hyp(n_symbols))[0])


#: Data-scaled defaults of the Gaussian priors (see :doc:`/model`): the prior
#: mean of a state's covariance is this fraction of the training data's
#: covariance ...
PRIOR_COVARIANCE_FRACTION = 0.1
#: ... and the state means are spread like the data: ``mu | Sigma ~
#: N(mu0, Sigma / lambda0)`` with ``lambda0`` equal to the fraction, so that
#: ``Sigma / lambda0`` is about the data covariance.
PRIOR_MEAN_PRECISION = 0.1


def _data_moments(X):
    """Mean and covariance ``(D,), (D, D)`` of training data for data-scaled priors.

    Raises a ValueError naming the problem when the spread of the data does
    not fit in a double (values beyond about 1e150 apart), since every
    kernel works with sums of squares of the data.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"Data-scaled priors need a non-empty (n_samples, n_features) X; got shape {X.shape}.")
    mean = X.mean(axis=0)
    centred = X - mean
    with np.errstate(over="ignore", invalid="ignore"):
        cov = centred.T @ centred / X.shape[0]
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(cov))):
        raise ValueError(
            "X is too large in magnitude for the Gaussian emissions (its variance overflows a "
            f"double; largest |value| {np.max(np.abs(X)):.3g}). Rescale the data, for example "
            "with sklearn.preprocessing.StandardScaler in a Pipeline."
        )
    return mean, cov


def _positive_definite_scale(cov):
    """``cov`` made usable as a prior scale matrix.

    A constant column (zero variance) gets variance 1 and a singular
    covariance (collinear columns) a relative ridge of 1e-6 on its diagonal;
    a regular covariance is returned unchanged, which keeps the prior
    equivariant under invertible affine maps of the data.
    """
    cov = np.array(cov, dtype=np.float64)
    diag = np.diag(cov).copy()
    zero = diag <= 0.0
    if np.any(zero):
        cov[zero, :] = 0.0
        cov[:, zero] = 0.0
        cov[zero, zero] = 1.0
        diag[zero] = 1.0
    try:
        eig = np.linalg.eigvalsh(cov / np.sqrt(np.outer(diag, diag)))
    except np.linalg.LinAlgError:
        eig = np.zeros(1)
    if eig.min() < 1e-10:
        cov = cov + 1e-6 * np.diag(diag)
    return cov


class Gaussian(EmissionFamily):
    """One-dimensional Gaussian emissions with a Normal-Inverse-Gamma prior.

    ``sigma^2 ~ InvGamma(a0, b0)`` and ``mu | sigma^2 ~ N(mu0, sigma^2 / lambda0)``.

    By default the prior is scaled to the training data, as scikit-learn's
    :class:`~sklearn.mixture.BayesianGaussianMixture` does with
    ``mean_prior=None``: ``mu0`` is the mean of the training data and
    ``b0 = (a0 - 1) * PRIOR_COVARIANCE_FRACTION * var(X)``, so that the prior
    mean of a state's variance is a tenth of the data's variance, and
    ``lambda0 = PRIOR_MEAN_PRECISION`` spreads the state means like the
    data. With these defaults the posterior over state sequences is the same
    for ``X`` and ``a * X + b`` (any ``a != 0``). The resolved values are
    stored by :class:`~sk_ihmm.InfiniteHMM` in ``emission_prior_``; they are
    part of the model, so held-out data is scored under the prior of the
    training data (empirical Bayes). Explicit values always win.

    Parameters
    ----------
    mu0 : float or None, default=None
        Prior mean of the state means; ``None``: the mean of the training data.
    lambda0 : float, default=0.1
        Prior precision of a state mean, relative to the state's precision.
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
    code = 1

    def __init__(self, mu0=None, lambda0=PRIOR_MEAN_PRECISION, a0=1.5, b0=None):
        self.mu0 = mu0
        self.lambda0 = lambda0
        self.a0 = a0
        self.b0 = b0

    def _validate_params(self):
        if self.mu0 is not None and not np.isfinite(self.mu0):
            raise ValueError(f"Gaussian mu0 must be a finite float or None, got {self.mu0!r}.")
        for name in ("lambda0", "a0", "b0"):
            v = getattr(self, name)
            if name == "b0" and v is None:
                continue
            if not (isinstance(v, (int, float, np.number)) and np.isfinite(v) and v > 0):
                raise ValueError(f"Gaussian {name} must be a positive float, got {v!r}.")

    def _check_X(self, X, n_symbols=None):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 1:
            raise ValueError(
                "Gaussian emissions expect X of shape (n_samples, 1); got shape "
                f"{X.shape}. Use emission='gaussian' (a string) or MultivariateGaussian() "
                "for several features."
            )
        return X

    def resolve_prior(self, X=None, n_features=None):
        self._validate_params()
        prior = {"mu0": self.mu0, "lambda0": float(self.lambda0), "a0": float(self.a0), "b0": self.b0}
        if self.mu0 is None or self.b0 is None:
            if X is None:
                raise ValueError(
                    "Gaussian() with mu0=None or b0=None takes them from the training data; "
                    "pass X, or set them explicitly."
                )
            mean, cov = _data_moments(self._check_X(X))
            var = float(_positive_definite_scale(cov)[0, 0])
            if self.mu0 is None:
                prior["mu0"] = float(mean[0])
            if self.b0 is None:
                a0 = float(self.a0)
                prior["b0"] = (a0 - 1.0 if a0 > 1.0 else 1.0) * PRIOR_COVARIANCE_FRACTION * var
        prior["mu0"], prior["b0"] = float(prior["mu0"]), float(prior["b0"])
        return prior

    def _hyp(self, n_features, X=None, prior=None):
        p = self.resolve_prior(X) if prior is None else prior
        return np.array([p["mu0"], p["lambda0"], p["a0"], p["b0"]], dtype=np.float64)

    def _n_stats(self, n_features):
        return 13

    def _n_params(self, n_features):
        return 4

    def _summary(self, stats, hyp):
        mu_n, _, a_n, b_n = _nig_posterior_rows(stats, hyp)
        # posterior mean of sigma^2 (a_n > 1) or its mode otherwise
        var = np.where(a_n > 1, b_n / np.maximum(a_n - 1, 1e-12), b_n / (a_n + 1))
        return {"means_": mu_n[:, None], "covars_": var[:, None]}

    def _dim(self, X):
        return 1

    def _draw_many(self, summary, states, rng):
        return rng.normal(summary["means_"][states, 0], np.sqrt(summary["covars_"][states, 0]))[:, None]

    def _log_marginal_stats(self, stats, hyp):
        _, lam0, a0, b0 = hyp
        _, lam_n, a_n, b_n = _nig_posterior_rows(stats, hyp)
        return (gammaln(a_n) - gammaln(a0) + a0 * np.log(b0) - a_n * np.log(b_n)
                + 0.5 * (np.log(lam0) - np.log(lam_n)) - 0.5 * stats[:, 0] * np.log(2 * np.pi))

    def log_marginal(self, Y, n_symbols=None, hyp=None):
        """Log marginal likelihood of ``Y`` in one state (``hyp``: resolved
        hyperparameters, by default those of this instance, which must then
        be explicit)."""
        y = np.asarray(Y, dtype=np.float64).ravel()
        n = y.size
        if n == 0:
            return 0.0
        mean = y.mean()
        stats = np.array([[n, mean, np.sum((y - mean) ** 2)]])
        return float(self._log_marginal_stats(stats, self._hyp(1) if hyp is None else hyp)[0])


class MultivariateGaussian(EmissionFamily):
    """D-dimensional Gaussian emissions (full covariance) with a Normal-Inverse-Wishart prior.

    ``Sigma ~ IW(nu0, Psi0)`` and ``mu | Sigma ~ N(mu0, Sigma / kappa0)``.

    By default the prior is scaled to the training data (as
    :class:`~sklearn.mixture.BayesianGaussianMixture` does with
    ``mean_prior=None, covariance_prior=None``): ``mu0`` is the data mean and
    ``Psi0 = (nu0 - D - 1) * PRIOR_COVARIANCE_FRACTION * cov(X)``, so that the
    prior mean of a state's covariance is a tenth of the data covariance.
    The posterior over state sequences is then the same for ``X`` and
    ``X @ A.T + b`` for any invertible ``A``. Resolved values are stored by
    the estimator in ``emission_prior_``; explicit values win.

    Parameters
    ----------
    mu0 : float, array-like of shape (n_features,) or None, default=None
        ``None``: the mean of the training data.
    kappa0 : float, default=0.1
        Prior precision of a state mean, relative to the state's precision.
    nu0 : float or None, default=None
        Degrees of freedom; ``None`` means ``n_features + 2``.
    psi0 : float, array-like of shape (n_features, n_features) or None, default=None
        Scale matrix of the inverse Wishart (a float ``s`` means ``s * I``);
        ``None``: data-scaled as above.

    Examples
    --------
    ``emission="gaussian"`` (the default) uses this family for data with
    several columns:

    >>> from sk_ihmm import InfiniteHMM
    >>> from sk_ihmm.datasets import make_multivariate_gaussian_hmm
    >>> X, states = make_multivariate_gaussian_hmm(600, n_features=2, random_state=0)
    >>> model = InfiniteHMM(max_time=0, n_chains=2, random_state=0).fit(X)
    >>> model.means_.shape[1], model.covars_.shape[1:]
    (2, (2, 2))

    With states expected as broad as the data (``psi0`` is the prior mean
    of a state's covariance when ``nu0 = n_features + 2``):

    >>> import numpy as np
    >>> from sk_ihmm.emissions import MultivariateGaussian
    >>> broad = MultivariateGaussian(psi0=np.cov(X.T))
    >>> model = InfiniteHMM(emission=broad, max_time=0, n_chains=2, random_state=0).fit(X)
    >>> model.emission_prior_["nu0"]
    4.0
    """

    name = "multivariate_gaussian"
    code = 2

    def __init__(self, mu0=None, kappa0=PRIOR_MEAN_PRECISION, nu0=None, psi0=None):
        self.mu0 = mu0
        self.kappa0 = kappa0
        self.nu0 = nu0
        self.psi0 = psi0

    def _validate_params(self):
        if not (np.isscalar(self.kappa0) and np.isfinite(self.kappa0) and self.kappa0 > 0):
            raise ValueError(f"MultivariateGaussian kappa0 must be a positive float, got {self.kappa0!r}.")
        if self.mu0 is not None and not np.all(np.isfinite(np.asarray(self.mu0, dtype=float))):
            raise ValueError("MultivariateGaussian mu0 must be finite.")
        if self.psi0 is not None:
            psi = np.asarray(self.psi0, dtype=float)
            if psi.ndim == 0 and not (np.isfinite(psi) and psi > 0):
                raise ValueError(f"MultivariateGaussian psi0 must be a positive float, got {self.psi0!r}.")

    def _check_X(self, X, n_symbols=None):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"Expected X of shape (n_samples, n_features); got shape {X.shape}.")
        return X

    def _nu0(self, d):
        nu0 = d + 2.0 if self.nu0 is None else float(self.nu0)
        if nu0 <= d - 1:
            raise ValueError(f"nu0 must exceed n_features - 1 = {d - 1}; got {nu0}.")
        return nu0

    def resolve_prior(self, X=None, n_features=None):
        self._validate_params()
        if n_features is None:
            if X is None:
                raise ValueError("resolve_prior needs X or n_features.")
            n_features = np.asarray(X).shape[1]
        d = int(n_features)
        nu0 = self._nu0(d)
        if (self.mu0 is None or self.psi0 is None) and X is None:
            raise ValueError(
                "MultivariateGaussian() with mu0=None or psi0=None takes them from the training "
                "data; pass X, or set them explicitly."
            )
        if self.mu0 is None or self.psi0 is None:
            mean, cov = _data_moments(self._check_X(X))
        if self.mu0 is None:
            mu0 = mean
        else:
            mu0 = np.asarray(self.mu0, dtype=float)
            if mu0.ndim > 1 or (mu0.ndim == 1 and mu0.shape[0] not in (1, d)):
                raise ValueError(
                    f"MultivariateGaussian mu0 must be a float or have one entry per feature "
                    f"({d}); got shape {mu0.shape}."
                )
            mu0 = np.broadcast_to(mu0, (d,)).astype(float)
        if self.psi0 is None:
            psi0 = (nu0 - d - 1.0 if nu0 > d + 1.0 else 1.0) * PRIOR_COVARIANCE_FRACTION * _positive_definite_scale(cov)
        else:
            psi = np.asarray(self.psi0, dtype=float)
            if psi.ndim == 0:
                psi0 = np.eye(d) * float(psi)
            elif psi.shape == (d, d):
                psi0 = psi.copy()
                if not np.allclose(psi0, psi0.T) or np.any(np.linalg.eigvalsh(psi0) <= 0):
                    raise ValueError("MultivariateGaussian psi0 must be symmetric positive definite.")
            else:
                raise ValueError(
                    f"MultivariateGaussian psi0 must be a positive float or a ({d}, {d}) matrix; "
                    f"got shape {psi.shape}."
                )
        return {"mu0": np.array(mu0, dtype=float), "kappa0": float(self.kappa0), "nu0": nu0,
                "psi0": psi0}

    def _hyp(self, d, X=None, prior=None):
        p = self.resolve_prior(X, d) if prior is None else prior
        return np.concatenate([[d, p["kappa0"], p["nu0"]], p["mu0"], p["psi0"].ravel()]).astype(np.float64)

    def _n_stats(self, d):
        return 1 + d + d * d + (d * d + 2 * d)    # + scratch columns

    def _n_params(self, d):
        return (d + 1) * (d + 1)      # mean, Cholesky factor, log normaliser, scratch

    def _summary(self, stats, hyp):
        d, post = int(hyp[0]), _niw_posterior_rows(stats, hyp)
        nu_n = post["nu_n"]
        denom = np.where(nu_n > d + 1, nu_n - d - 1, nu_n + d + 1)
        return {"means_": post["mu_n"], "covars_": post["psi_n"] / denom[:, None, None]}

    def _dim(self, X):
        return X.shape[1]

    def _draw_many(self, summary, states, rng):
        chol = np.linalg.cholesky(summary["covars_"][states])
        z = rng.standard_normal((states.shape[0], chol.shape[1]))
        return summary["means_"][states] + np.einsum("nij,nj->ni", chol, z)

    def _log_marginal_stats(self, stats, hyp):
        from scipy.special import multigammaln

        d, post = int(hyp[0]), _niw_posterior_rows(stats, hyp)
        n, nu0, nu_n = stats[:, 0], hyp[2], post["nu_n"]
        psi0 = hyp[3 + d:].reshape(d, d)
        return (-0.5 * n * d * np.log(np.pi) + multigammaln(0.5 * nu_n, d)
                - multigammaln(0.5 * nu0, d) + 0.5 * nu0 * np.linalg.slogdet(psi0)[1]
                - 0.5 * nu_n * np.linalg.slogdet(post["psi_n"])[1]
                + 0.5 * d * (np.log(hyp[1]) - np.log(post["k_n"])))

    def log_marginal(self, Y, n_symbols=None, hyp=None):
        """Log marginal likelihood of ``Y`` in one state (``hyp``: resolved
        hyperparameters, by default those of this instance, which must then
        be explicit)."""
        y = np.asarray(Y, dtype=np.float64)
        n, d = y.shape
        if n == 0:
            return 0.0
        mean = y.mean(axis=0)
        stats = np.concatenate([[n], mean, ((y - mean).T @ (y - mean)).ravel()])[None, :]
        return float(self._log_marginal_stats(stats, self._hyp(d) if hyp is None else hyp)[0])


_FAMILIES = {
    "categorical": Categorical,
    "gaussian": Gaussian,
    "multivariate_gaussian": MultivariateGaussian,
}


def make_emission(emission, n_features=None):
    """Return an emission family instance from a string or an instance.

    The string ``"gaussian"`` names the Gaussian family for any number of
    columns: :class:`Gaussian` for one (``n_features`` 1 or ``None``),
    :class:`MultivariateGaussian` (full covariance) for several.
    """
    if isinstance(emission, EmissionFamily):
        return emission
    if isinstance(emission, str) and emission == "gaussian" and n_features is not None and n_features > 1:
        return MultivariateGaussian()
    if isinstance(emission, str) and emission in _FAMILIES:
        return _FAMILIES[emission]()
    raise ValueError(
        f"Unknown emission {emission!r}; expected one of {sorted(_FAMILIES)} or an "
        "EmissionFamily instance."
    )




# --------------------------------------------------------------------------
# Dispatch on a family code. Sampler kernels call these global functions with
# the integer ``fam`` of their problem rather than receiving the family
# kernels as first-class function arguments: numba keys its on-disk cache on
# argument types, and the type of a dispatcher argument is unique to the
# process, so kernels taking functions as arguments would recompile in every
# new process (and in every joblib worker).
# --------------------------------------------------------------------------
CATEGORICAL, GAUSSIAN, MULTIVARIATE_GAUSSIAN = 0, 1, 2


@njit(cache=True, inline="always")
def log_pred(fam, stats, k, hyp, Y, t):
    """Log posterior predictive of observation ``Y[t]`` given the statistics
    ``stats[k]`` of one state."""
    if fam == GAUSSIAN:
        return _gauss_log_pred(stats, k, hyp, Y, t)
    if fam == CATEGORICAL:
        return _cat_log_pred(stats, k, hyp, Y, t)
    return _mvn_log_pred(stats, k, hyp, Y, t)


@njit(cache=True, inline="always")
def update(fam, stats, k, Y, t, sign):
    """Add (``sign=+1``) or remove (``-1``) observation ``Y[t]`` in ``stats[k]``."""
    if fam == GAUSSIAN:
        _gauss_update(stats, k, Y, t, sign)
    elif fam == CATEGORICAL:
        _cat_update(stats, k, Y, t, sign)
    else:
        _mvn_update(stats, k, Y, t, sign)
    hold(stats)
    hold(Y)


@njit(cache=True)
def _cat_log_marginal(stats, k, hyp):
    # log p(observations of k): Dirichlet-multinomial, exactly 0 for no data
    b = hyp[0]
    V = stats.shape[1] - 1
    out = math.lgamma(V * b) - math.lgamma(V * b + stats[k, V])
    lb = math.lgamma(b)
    for v in range(V):
        if stats[k, v] > 0.0:
            out += math.lgamma(stats[k, v] + b) - lb
    return out


@njit(cache=True)
def log_marginal_sum(fam, stats, hyp):
    """``sum_k log p(observations of k)`` over the rows of ``stats`` (closed
    form, ``beta``/parameters integrated out; a row without observations adds
    0): the emission part of the samplers' ``log_joint``. Numba twin of the
    families' vectorised ``_log_marginal_stats`` (which the tests use as the
    reference), without its per-call numpy overhead; it writes only the
    scratch columns of the multivariate statistics."""
    total = 0.0
    if fam == CATEGORICAL:
        n_col = stats.shape[1] - 1
        for k in range(stats.shape[0]):
            if stats[k, n_col] > 0.0:
                total += _cat_log_marginal(stats, k, hyp)
        return total
    zero = np.zeros((1, stats.shape[1]))
    z0 = _gauss_log_marginal(zero, 0, hyp) if fam == GAUSSIAN else _mvn_log_marginal(zero, 0, hyp)
    for k in range(stats.shape[0]):
        if stats[k, 0] > 0.0:
            total += (_gauss_log_marginal(stats, k, hyp) if fam == GAUSSIAN
                      else _mvn_log_marginal(stats, k, hyp)) - z0
    return total


@njit(cache=True)
def _gauss_add_labelled(stats, x, Y):
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
        _gauss_invalidate(stats, k)


@njit(cache=True)
def add_labelled(fam, stats, x, Y):
    """Add every observation ``Y[t]`` to ``stats[x[t]]`` (``x`` of length
    ``len(Y)``): the statistics of a labelled sequence in one call. Same
    result as :func:`update` for each ``t`` in turn, up to rounding."""
    if fam == GAUSSIAN:
        _gauss_add_labelled(stats, x, Y)
    else:
        for t in range(x.shape[0]):
            update(fam, stats, x[t], Y, t, 1.0)


@njit(cache=True)
def sample_param(fam, stats, k, hyp, rng, out, j):
    """Draw explicit parameters from the posterior given ``stats[k]`` into ``out[j]``."""
    if fam == GAUSSIAN:
        _gauss_sample_param(stats, k, hyp, rng, out, j)
    elif fam == CATEGORICAL:
        _cat_sample_param(stats, k, hyp, rng, out, j)
    else:
        _mvn_sample_param(stats, k, hyp, rng, out, j)


@njit(cache=True, inline="always")
def param_loglik(fam, param, k, Y, t):
    """Log density of observation ``Y[t]`` under the explicit parameters ``param[k]``."""
    if fam == GAUSSIAN:
        return _gauss_param_loglik(param, k, Y, t)
    if fam == CATEGORICAL:
        return _cat_param_loglik(param, k, Y, t)
    return _mvn_param_loglik(param, k, Y, t)


@njit(cache=True)
def _gauss_shifted_block(param, n, Y, start, length, out):
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


#: :func:`shifted_param_loglik_block` clamps its shifted log terms here:
#: ``exp`` of them then stays in the normal floating-point range, where
#: :func:`sk_ihmm._vmath.exp_inplace` is defined and numpy's ``exp`` is fast
#: (below about -708 its result is subnormal or zero, a slow path). A term is
#: raised at most to ``exp(-700)``, about 1e-304, of the step's largest.
SHIFTED_FLOOR = -700.0


@njit(cache=True)
def shifted_param_loglik_block(fam, param, n, Y, start, length, out):
    """``out[l, k] = param_loglik(fam, param, k, Y, start + l)`` for the
    states ``k = 1..n`` and ``l < length``, then every row ``out[l, :n + 1]``
    minus its maximum, clamped at :data:`SHIFTED_FLOOR`; column 0 holds a
    term of the caller's (written before the call) that takes part in the
    maximum and is shifted too. One call, the family dispatched once, the
    loops free of reference counting: the log emission terms of a forward
    pass, ready for ``exp``."""
    if fam == GAUSSIAN:
        _gauss_shifted_block(param, n, Y, start, length, out)
        return
    for l in range(length):
        mx = out[l, 0]
        for k in range(1, n + 1):
            v = (_cat_param_loglik(param, k, Y, start + l) if fam == CATEGORICAL
                 else _mvn_param_loglik(param, k, Y, start + l))
            out[l, k] = v
            mx = v if v > mx else mx
        for k in range(n + 1):
            v = out[l, k] - mx
            out[l, k] = v if v > SHIFTED_FLOOR else SHIFTED_FLOOR


@njit(cache=True)
def log_pred_block(fam, stats, labels, n_labels, hyp, Y, start, length, out):
    """``out[l, c] = log_pred(fam, stats, labels[c], hyp, Y, start + l)`` for
    ``c < n_labels`` and ``l < length``: the emission matrix of a block.

    One call per block instead of one per entry: the Gaussian and categorical
    loops read the statistics as scalars, so the entries pay no reference
    counting (see the module docstring).
    """
    if fam == GAUSSIAN:
        _gauss_log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out, math.inf,
                              hyp[:0])
    elif fam == CATEGORICAL:
        _cat_log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out)
    else:
        for c in range(n_labels):
            for l in range(length):
                out[l, c] = _mvn_log_pred(stats, labels[c], hyp, Y, start + l)


@njit(cache=True)
def log_proposal_block(fam, stats, labels, n_labels, hyp, Y, start, length, out,
                       prior_pred, work):
    """Log emission weights of a block for a Metropolis-Hastings proposal:
    :func:`log_pred_block`, except that a 1-d Gaussian state whose Student-t
    predictive has ``(nu + 1) / 2 > PROPOSAL_QUADRATIC_HALF_NU1`` gets the
    first-order form ``log_norm - (nu + 1) / 2 * z``, ``z = (y - mu)^2 / (nu
    s^2)``, instead of ``log_norm - (nu + 1) / 2 * log1p(z)``; a Gaussian
    state without observations (the candidate ``new`` state) whose predictive
    is kept reads it, the prior predictive, from ``prior_pred`` (the
    ``Problem``'s, one value per time step) rather than computing it.

    A proposal may use any weights as long as the acceptance ratio scores
    both paths with the same ones (the blocked RCD samplers do), so the
    approximation costs acceptance, never exactness. It drops the ``log1p``
    of every state that holds more than about a hundred observations (``nu =
    2 a0 + n``), where the Student-t is Gaussian to a fraction of a nat
    within a few scales of its centre; small and new states keep their heavy
    tails, so an outlier is still proposed to them as often as the
    predictive says.

    ``out`` is label-major, ``(n_labels, length)``: ``out[c, l]`` is the
    weight of ``labels[c]`` at step ``start + l``. A label's row is then
    contiguous, so its loop over the steps vectorises, and the maximum over
    the labels of each step (:func:`sk_ihmm._messages.linear_weights`) is a
    vector operation too. The Gaussian and categorical loops, shared with
    the step-major :func:`log_pred_block`, write it through its transpose.

    ``work`` is float scratch: with at least as many entries as symbols, and
    no more symbols than steps, the categorical weights (exact values) are
    read from a table of each label's log predictive per symbol, one ``log``
    per symbol instead of one per step (:func:`_cat_log_proposal_block`).
    """
    o = out.T                          # o[l, c] is out[c, l]
    if fam == GAUSSIAN:
        _gauss_log_pred_block(stats, labels, n_labels, hyp, Y, start, length, o,
                              PROPOSAL_QUADRATIC_HALF_NU1, prior_pred)
    elif fam == CATEGORICAL:
        n_sym = stats.shape[1] - 1
        if n_sym <= length and n_sym <= work.shape[0]:
            _cat_log_proposal_block(stats, labels, n_labels, hyp, Y, start, length, out, work)
        else:
            _cat_log_pred_block(stats, labels, n_labels, hyp, Y, start, length, o)
    else:
        for c in range(n_labels):
            k = labels[c]
            for l in range(length):
                out[c, l] = (prior_pred[start + l] if stats[k, 0] == 0.0
                             else _mvn_log_pred(stats, k, hyp, Y, start + l))


def log_prior_predictive(family, Y, dim, hyp=None):
    """``log p(y_t)`` under the prior predictive (a state without
    observations) for every row of ``Y``: shape ``(n_timesteps,)``.
    ``hyp``: the resolved hyperparameters (default: the family's own, which
    must then be explicit)."""
    if hyp is None:
        hyp = family._hyp(dim)
    zero = np.zeros((1, family._n_stats(dim)))
    out = np.empty((Y.shape[0], 1))
    log_pred_block(family.code, zero, np.zeros(1, np.int64), 1, hyp, Y, 0, Y.shape[0], out)
    return out[:, 0].copy()


@njit(cache=True, inline="always")
def _gauss_block_sums(stats, Y, b, xb, work):
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


@njit(cache=True, inline="always")
def _gauss_merge_sums(stats, k, sign):
    """Add (``sign=+1``) or remove (``-1``) the block sums of
    :func:`_gauss_block_sums` in ``stats[k]`` and clear them. About the old
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
        _gauss_invalidate(stats, k)
        stats[k, 10] = 0.0
        stats[k, 11] = 0.0
        stats[k, 12] = 0.0
    hold(stats)


@njit(cache=True)
def move_stats(fam, stats, Y, b, xb, sign, work):
    """Add (``sign=+1``) or remove (``-1``) the observations ``Y[b + l]`` of
    labels ``xb[l]``: :func:`update` for each step, without the log
    predictive of :func:`move_block` (``work``: int64 scratch of at least
    ``len(xb)`` entries). The 1-d Gaussian family sums the block per label
    and merges the sums (:func:`_gauss_merge_sums`), the others update step
    by step."""
    if fam == GAUSSIAN:
        n = _gauss_block_sums(stats, Y, b, xb, work)
        for i in range(n):
            _gauss_merge_sums(stats, work[i], sign)
        return
    for l in range(xb.shape[0]):
        update(fam, stats, xb[l], Y, b + l, sign)


@njit(cache=True)
def move_block(fam, stats, hyp, Y, b, xb, sign, work):
    """Add (``sign=+1``) or remove (``sign=-1``) the observations
    ``Y[b + l]`` of labels ``xb[l]``, ``l < len(xb)``; return their log joint
    predictive ``log p(Y[b:b + L] | statistics without them)``.

    That is the emission part of Makino's RCD factors: the sum of the
    ``log_pred`` of each observation evaluated without it, adding in time
    order or removing in reverse (exchangeability makes the order
    irrelevant).  The Gaussian families compute it in closed form, as the
    change of each touched label's log marginal likelihood, instead of one
    Student-t (and one refill of the predictive cache) per step, the 1-d
    family with the statistics moved as in :func:`move_stats`; the
    categorical family multiplies the exact sequential predictives in linear
    space.  ``work`` is an int64 scratch array of at least ``len(xb)``
    entries.
    """
    if fam == CATEGORICAL:
        return _cat_move_block(stats, hyp, Y, b, xb, sign)
    if fam == GAUSSIAN:
        n = _gauss_block_sums(stats, Y, b, xb, work)
        acc = 0.0
        for i in range(n):
            k = work[i]
            acc -= _gauss_log_marginal(stats, k, hyp)
            _gauss_merge_sums(stats, k, sign)
            acc += _gauss_log_marginal(stats, k, hyp)
        return acc if sign > 0 else -acc
    L = xb.shape[0]
    n = 0
    acc = 0.0
    for l in range(L):
        k = xb[l]
        seen = False
        for i in range(n):
            if work[i] == k:
                seen = True
                break
        if not seen:
            work[n] = k
            n += 1
            acc -= _mvn_log_marginal(stats, k, hyp)
    for l in range(L):
        update(fam, stats, xb[l], Y, b + l, sign)
    for i in range(n):
        acc += _mvn_log_marginal(stats, work[i], hyp)
    return acc if sign > 0 else -acc


@njit(cache=True)
def log_emission_matrix(fam, stats, hyp, Y):
    """``(n_timesteps, n_states)`` log predictive densities of every
    observation under every state's statistics."""
    T, K = Y.shape[0], stats.shape[0]
    out = np.empty((T, K))
    log_pred_block(fam, stats, np.arange(K), K, hyp, Y, 0, T, out)
    return out
