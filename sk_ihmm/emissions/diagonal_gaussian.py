"""D-dimensional Gaussian emissions with a diagonal covariance (Normal-Inverse-Gamma per column).

Every column ``d`` of a state has its own mean and variance, ``sigma_d^2 ~
InvGamma(a0, b0_d)`` and ``mu_d | sigma_d^2 ~ N(mu0_d, sigma_d^2 /
lambda0)``, and the columns are independent given the state: hmmlearn's
``covariance_type="diag"``. The predictive is a product of Student-t's and
the marginal likelihood a product over columns of the one-column
Normal-Inverse-Gamma marginal of :mod:`~sk_ihmm.emissions.gaussian` (Murphy
2007, "Conjugate Bayesian analysis of the Gaussian distribution", section 6).
With one column it is the model of :class:`~sk_ihmm.emissions.Gaussian`.

``hyp = [D, lambda0, a0, mu0_1..D, b0_1..D]``. Statistics of a state, ``1 +
2 D`` columns: ``[n, mean_1..D, M2_1..D]``, Welford moments per column
(removal as stable as addition), all zeros without observations; the
kernels allocate nothing. Explicit parameters (``pgas``): ``[mean_1..D,
1 / (2 variance_1..D), log normaliser]``.

Invariant: with the data-scaled default prior (``mu0_d`` the column mean,
``b0_d`` proportional to the column variance) every block's marginal
likelihood is multiplied by ``prod_d |a_d|^-n`` under ``X[:, d] -> a_d X[:,
d] + b_d``, so the posterior over state sequences does not change.
"""

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from ._base import (LOG_2PI, PRIOR_COVARIANCE_FRACTION, PRIOR_MEAN_PRECISION, EmissionFamily,
                    Kernels, check_real_rows, columns_of, data_moments, family_tag,
                    warn_few_values)
from .gaussian import lgamma_half_step, warn_integer_codes

__all__ = ["DiagonalGaussian"]

DiagonalGaussianTag = family_tag("DiagonalGaussianTag", __name__)

_LOG_2PI = LOG_2PI


@njit(cache=True, nogil=True)
def _log_pred(stats, k, hyp, Y, t):
    # sum over the columns of the Student-t log densities of Y[t, d]: 2 a_n
    # degrees of freedom, location mu_n, squared scale b_n (lam_n + 1) / (a_n lam_n)
    D = Y.shape[1]
    lam0, a0 = hyp[1], hyp[2]
    n = stats[k, 0]
    lam_n = lam0 + n
    a_n = a0 + 0.5 * n
    c = lam0 * n / lam_n
    q = 0.5 * lam_n / (lam_n + 1.0)
    half_nu1 = a_n + 0.5
    out = D * (lgamma_half_step(a_n) + 0.5 * math.log(a_n)
               - 0.5 * (_LOG_2PI + math.log((lam_n + 1.0) / lam_n)))
    for d in range(D):
        mean = stats[k, 1 + d]
        mu0 = hyp[3 + d]
        diff = mean - mu0
        b_n = hyp[3 + D + d] + 0.5 * stats[k, 1 + D + d] + 0.5 * c * diff * diff
        mu_n = (lam0 * mu0 + n * mean) / lam_n
        r = Y[t, d] - mu_n
        out -= 0.5 * math.log(b_n) + half_nu1 * math.log1p(q * r * r / b_n)
    return out


@njit(cache=True, nogil=True, inline="always")
def _update(stats, k, Y, t, sign):
    D = Y.shape[1]
    n_old = stats[k, 0]
    n_new = n_old + sign
    if n_new <= 0.0:
        for i in range(stats.shape[1]):
            stats[k, i] = 0.0
        return
    # one loop per sign, no variable assigned in a branch: numba's SSA check
    # warns about such a variable when the kernel is inlined in a loop
    if sign > 0:
        for d in range(D):
            x = Y[t, d]
            m_old = stats[k, 1 + d]
            m_new = m_old + (x - m_old) / n_new
            stats[k, 1 + D + d] += (x - m_old) * (x - m_new)
            stats[k, 1 + d] = m_new
    else:
        for d in range(D):
            x = Y[t, d]
            m_old = stats[k, 1 + d]
            m_new = (n_old * m_old - x) / n_new
            stats[k, 1 + D + d] = max(stats[k, 1 + D + d] - (x - m_new) * (x - m_old), 0.0)
            stats[k, 1 + d] = m_new
    stats[k, 0] = n_new


@njit(cache=True, nogil=True)
def _log_marginal(stats, k, hyp):
    """``sum_d [lgamma(a_n) - a_n log(b_n,d) - log(lam_n) / 2] - n D log(2 pi)
    / 2``: the log marginal likelihood of the observations of ``k`` up to a
    constant of the prior (only differences are used)."""
    D = (stats.shape[1] - 1) // 2
    lam0, a0 = hyp[1], hyp[2]
    n = stats[k, 0]
    lam_n = lam0 + n
    a_n = a0 + 0.5 * n
    c = lam0 * n / lam_n
    log_b = 0.0
    for d in range(D):
        diff = stats[k, 1 + d] - hyp[3 + d]
        log_b += math.log(hyp[3 + D + d] + 0.5 * stats[k, 1 + D + d] + 0.5 * c * diff * diff)
    return D * (math.lgamma(a_n) - 0.5 * math.log(lam_n) - 0.5 * n * _LOG_2PI) - a_n * log_b


@njit(cache=True, nogil=True, inline="always")
def _count(stats, k):
    return stats[k, 0]


@njit(cache=True, nogil=True)
def _sample_param(stats, k, hyp, rng, out, j):
    # per column: variance ~ InvGamma(a_n, b_n,d), mean ~ N(mu_n,d, variance / lam_n)
    D = (stats.shape[1] - 1) // 2
    lam0, a0 = hyp[1], hyp[2]
    n = stats[k, 0]
    lam_n = lam0 + n
    a_n = a0 + 0.5 * n
    c = lam0 * n / lam_n
    log_norm = -0.5 * D * _LOG_2PI
    for d in range(D):
        mean = stats[k, 1 + d]
        mu0 = hyp[3 + d]
        diff = mean - mu0
        b_n = hyp[3 + D + d] + 0.5 * stats[k, 1 + D + d] + 0.5 * c * diff * diff
        var = b_n / rng.gamma(a_n, 1.0)
        out[j, d] = (lam0 * mu0 + n * mean) / lam_n + math.sqrt(var / lam_n) * rng.standard_normal()
        out[j, D + d] = 0.5 / var
        log_norm -= 0.5 * math.log(var)
    out[j, 2 * D] = log_norm


@njit(cache=True, nogil=True)
def _param_loglik(param, k, Y, t):
    D = Y.shape[1]
    out = param[k, 2 * D]
    for d in range(D):
        r = Y[t, d] - param[k, d]
        out -= param[k, D + d] * r * r
    return out


def _nig_posterior_rows(stats, hyp):
    """Vectorised posterior ``(mu_n (m, D), lambda_n (m,), a_n (m,), b_n (m, D))``
    of every row of statistics ``[n, mean (D), M2 (D)]``."""
    d = int(hyp[0])
    lam0, a0 = hyp[1], hyp[2]
    mu0, b0 = hyp[3:3 + d], hyp[3 + d:3 + 2 * d]
    n = stats[:, :1]
    mean, m2 = stats[:, 1:1 + d], stats[:, 1 + d:1 + 2 * d]
    lam_n = lam0 + n
    mu_n = (lam0 * mu0 + n * mean) / lam_n
    b_n = b0 + 0.5 * m2 + 0.5 * lam0 * n * (mean - mu0) ** 2 / lam_n
    return mu_n, lam_n[:, 0], a0 + 0.5 * n[:, 0], b_n


class DiagonalGaussian(EmissionFamily):
    """D-dimensional Gaussian emissions with a diagonal covariance.

    Each column ``d`` of a state has its own mean and variance under an
    independent Normal-Inverse-Gamma prior, ``sigma_d^2 ~ InvGamma(a0,
    b0_d)`` and ``mu_d | sigma_d^2 ~ N(mu0_d, sigma_d^2 / lambda0)``; the
    columns are independent given the state (hmmlearn's
    ``covariance_type="diag"``). ``InfiniteHMM(covariance_type="diag")``
    uses it for ``emission="gaussian"``; with one column it is the model of
    :class:`Gaussian`.

    By default the prior is scaled to the training data column by column,
    as :class:`Gaussian` does for one column: ``mu0_d`` is the mean of
    column ``d`` and ``b0_d = (a0 - 1) * PRIOR_COVARIANCE_FRACTION *
    var(X[:, d])`` (a constant column counts as variance 1). The posterior
    over state sequences is then the same for ``X`` and ``X * a + b`` for
    any per-column scales ``a_d != 0`` and shifts ``b_d``. The resolved
    values are stored by :class:`~sk_ihmm.InfiniteHMM` in
    ``emission_prior_``; explicit values win.

    The fitted ``covars_`` follow hmmlearn's public convention for
    ``"diag"``: full matrices of shape ``(n_states, n_features,
    n_features)``, zero off the diagonal.

    Parameters
    ----------
    mu0 : float, array-like of shape (n_features,) or None, default=None
        Prior mean of the state means (one value for every column, or one
        per column); ``None``: the column means of the training data.
    lambda0 : float, default=0.01
        Prior precision of a state mean, relative to the state's precision
        (:data:`~sk_ihmm.emissions.PRIOR_MEAN_PRECISION`).
    a0 : float, default=1.5
        Shape of the inverse-gamma prior of a state's variance (every column).
    b0 : float, array-like of shape (n_features,) or None, default=None
        Scale of that prior (one value for every column, or one per column);
        ``None``: ``(a0 - 1) * 0.1 * var(X[:, d])`` per column (``0.1 *
        var(X[:, d])`` when ``a0 <= 1``).

    Examples
    --------
    >>> from sk_ihmm import InfiniteHMM
    >>> from sk_ihmm.datasets import make_multivariate_gaussian_hmm
    >>> X, states = make_multivariate_gaussian_hmm(600, n_features=3, random_state=0)
    >>> model = InfiniteHMM(covariance_type="diag", max_time=0, n_chains=2,
    ...                     random_state=0).fit(X)
    >>> model.means_.shape[1], model.covars_.shape[1:]
    (3, (3, 3))
    >>> model.emission_prior_["b0"].shape
    (3,)
    """

    name = "diagonal_gaussian"
    tag = DiagonalGaussianTag()
    kernels = Kernels(
        log_pred=_log_pred, update=_update, log_marginal=_log_marginal, count=_count,
        sample_param=_sample_param, param_loglik=_param_loglik,
    )
    fitted_attributes = ("means_", "covars_")

    def __init__(self, mu0=None, lambda0=PRIOR_MEAN_PRECISION, a0=1.5, b0=None):
        self.mu0 = mu0
        self.lambda0 = lambda0
        self.a0 = a0
        self.b0 = b0

    def validate_params(self):
        for name in ("lambda0", "a0"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float, np.number)) and np.isfinite(v) and v > 0):
                raise ValueError(f"DiagonalGaussian {name} must be a positive float, got {v!r}.")
        if self.mu0 is not None:
            mu0 = np.asarray(self.mu0, dtype=float)
            if mu0.ndim > 1 or not np.all(np.isfinite(mu0)):
                raise ValueError(
                    f"DiagonalGaussian mu0 must be a finite float, one per column, or None; got "
                    f"{self.mu0!r}."
                )
        if self.b0 is not None:
            b0 = np.asarray(self.b0, dtype=float)
            if b0.ndim > 1 or not np.all(np.isfinite(b0)) or np.any(b0 <= 0):
                raise ValueError(
                    f"DiagonalGaussian b0 must be a positive float, one per column, or None; got "
                    f"{self.b0!r}."
                )

    def check_X(self, X, dim=None):
        return check_real_rows(X)

    def dimension(self, X):
        return X.shape[1]

    def warn_data(self, X):
        warn_integer_codes(X)
        warn_few_values(X)

    @staticmethod
    def _per_column(value, d, name):
        v = np.asarray(value, dtype=float)
        if v.ndim == 1 and v.shape[0] not in (1, d):
            raise ValueError(
                f"DiagonalGaussian {name} must be a float or have one entry per column ({d}); "
                f"got shape {v.shape}."
            )
        return np.broadcast_to(v.reshape(-1), (d,)).astype(float)

    def resolve_prior(self, X=None, dim=None):
        self.validate_params()
        dim = columns_of(X, dim)
        d, a0 = int(dim), float(self.a0)
        if self.mu0 is None or self.b0 is None:
            if X is None:
                raise ValueError(
                    "DiagonalGaussian() with mu0=None or b0=None takes them from the training "
                    "data; pass X, or set them explicitly."
                )
            mean, cov = data_moments(self.check_X(X))
            var = np.diag(cov).copy()
            var[var <= 0.0] = 1.0          # a constant column, as Gaussian does
        mu0 = mean if self.mu0 is None else self._per_column(self.mu0, d, "mu0")
        if self.b0 is None:
            b0 = (a0 - 1.0 if a0 > 1.0 else 1.0) * PRIOR_COVARIANCE_FRACTION * var
        else:
            b0 = self._per_column(self.b0, d, "b0")
        return {"mu0": np.array(mu0, dtype=float), "lambda0": float(self.lambda0), "a0": a0,
                "b0": np.array(b0, dtype=float)}

    def hyperparameters(self, dim, X=None, prior=None):
        p = self.resolve_prior(X, dim) if prior is None else prior
        return np.concatenate([[dim, p["lambda0"], p["a0"]], p["mu0"], p["b0"]]).astype(np.float64)

    def n_stats(self, dim):
        return 1 + 2 * dim

    def n_params(self, dim):
        return 2 * dim + 1

    def summary(self, stats, hyp):
        mu_n, _, a_n, b_n = _nig_posterior_rows(stats, hyp)
        # posterior mean of each variance (a_n > 1) or its mode otherwise
        denom = np.where(a_n > 1, np.maximum(a_n - 1, 1e-12), a_n + 1)
        var = b_n / denom[:, None]
        covars = np.zeros(var.shape + var.shape[1:])
        idx = np.arange(var.shape[1])
        covars[:, idx, idx] = var
        return {"means_": mu_n, "covars_": covars}

    def draw(self, summary, states, rng):
        sd = np.sqrt(np.diagonal(summary["covars_"], axis1=1, axis2=2))
        return rng.normal(summary["means_"][states], sd[states])

    def log_marginal_stats(self, stats, hyp):
        d = int(hyp[0])
        lam0, a0, b0 = hyp[1], hyp[2], hyp[3 + d:3 + 2 * d]
        _, lam_n, a_n, b_n = _nig_posterior_rows(stats, hyp)
        return (d * (gammaln(a_n) - gammaln(a0) + 0.5 * (np.log(lam0) - np.log(lam_n))
                     - 0.5 * stats[:, 0] * np.log(2 * np.pi))
                + np.sum(a0 * np.log(b0) - a_n[:, None] * np.log(b_n), axis=1))

    def log_marginal(self, Y, dim=None, hyp=None):
        """Log marginal likelihood of ``Y`` in one state, from the moments
        (``hyp``: resolved hyperparameters, by default those of this
        instance, which must then be explicit)."""
        y = np.asarray(Y, dtype=np.float64)
        y = y.reshape(len(y), -1)
        n, d = y.shape
        if n == 0:
            return 0.0
        mean = y.mean(axis=0)
        stats = np.concatenate([[n], mean, np.sum((y - mean) ** 2, axis=0)])[None, :]
        hyp = self.hyperparameters(d) if hyp is None else hyp
        return float(self.log_marginal_stats(stats, hyp)[0])
