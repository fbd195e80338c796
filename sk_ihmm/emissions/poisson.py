"""Poisson counts with a Gamma prior on each column's rate.

Every column ``d`` of a state has its own rate, ``lambda_d ~ Gamma(a0,
b0_d)`` (shape, rate), and the columns are independent given the state: D
columns of counts (spike counts of D neurons, reads of D regions). The
collapsed predictive of a count is negative binomial,

    p(y | n, S) = Gamma(a + y) / (Gamma(a) y!) (b / (b + 1))^a (b + 1)^-y,
    a = a0 + S_d,  b = b0_d + n,

``n`` the state's observations and ``S_d`` their sum in column ``d``
(Gelman et al., Bayesian Data Analysis, section 2.6).

``hyp = [D, a0, b0_1, ..., b0_D]``. Statistics of a state: ``[n, S_1, ...,
S_D, L]`` with ``L = sum log(y!)`` over its observations, so that the log
marginal likelihood, ``sum_d [lgamma(a0 + S_d) - lgamma(a0) + a0 log b0_d -
(a0 + S_d) log(b0_d + n)] - L``, is exact. Explicit parameters (``pgas``):
``[log lambda_1..D, lambda_1..D]``.
"""

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from ._base import EmissionFamily, Kernels, check_integer_codes, columns_of, family_tag

__all__ = ["Poisson"]

PoissonTag = family_tag("PoissonTag", __name__)

#: Largest count :class:`Poisson` accepts: counts are stored as doubles,
#: exact up to 2**53, and their sums must stay exact too.
MAX_COUNT = 2**40


@njit(cache=True, nogil=True)
def _log_pred(stats, k, hyp, Y, t):
    D = Y.shape[1]
    a0 = hyp[1]
    n = stats[k, 0]
    out = 0.0
    for d in range(D):
        y = Y[t, d]
        a = a0 + stats[k, 1 + d]
        b = hyp[2 + d] + n
        out += (math.lgamma(a + y) - math.lgamma(a) - math.lgamma(y + 1.0)
                + a * math.log(b / (b + 1.0)) - y * math.log1p(b))
    return out


@njit(cache=True, nogil=True, inline="always")
def _update(stats, k, Y, t, sign):
    D = Y.shape[1]
    n = stats[k, 0] + sign
    if n <= 0.0:
        for i in range(stats.shape[1]):
            stats[k, i] = 0.0
        return
    stats[k, 0] = n
    for d in range(D):
        y = Y[t, d]
        stats[k, 1 + d] += sign * y
        stats[k, 1 + D] += sign * math.lgamma(y + 1.0)


@njit(cache=True, nogil=True)
def _log_marginal(stats, k, hyp):
    D = stats.shape[1] - 2
    a0 = hyp[1]
    n = stats[k, 0]
    out = -stats[k, 1 + D]
    for d in range(D):
        a = a0 + stats[k, 1 + d]
        b0 = hyp[2 + d]
        out += math.lgamma(a) - math.lgamma(a0) + a0 * math.log(b0) - a * math.log(b0 + n)
    return out


@njit(cache=True, nogil=True, inline="always")
def _count(stats, k):
    return stats[k, 0]


@njit(cache=True, nogil=True)
def _sample_param(stats, k, hyp, rng, out, j):
    D = stats.shape[1] - 2
    for d in range(D):
        rate = rng.gamma(hyp[1] + stats[k, 1 + d], 1.0) / (hyp[2 + d] + stats[k, 0])
        rate = max(rate, 1e-300)
        out[j, d] = math.log(rate)
        out[j, D + d] = rate


@njit(cache=True, nogil=True)
def _param_loglik(param, k, Y, t):
    D = Y.shape[1]
    out = 0.0
    for d in range(D):
        y = Y[t, d]
        out += y * param[k, d] - param[k, D + d] - math.lgamma(y + 1.0)
    return out


class Poisson(EmissionFamily):
    """Poisson emissions (counts) with a Gamma prior on each column's rate.

    ``lambda_d ~ Gamma(a0, b0_d)`` (shape, rate) for every state and column
    ``d``; the columns are independent given the state.

    By default the prior is scaled to the training data: ``b0_d = a0 /
    mean(X[:, d])``, so that the prior mean of a state's rate is the
    column's mean count, and ``a0 = 1`` (an exponential prior, as broad as
    its mean). The resolved values are stored by
    :class:`~sk_ihmm.InfiniteHMM` in ``emission_prior_``; explicit values win.

    Parameters
    ----------
    a0 : float, default=1.0
        Shape of the Gamma prior of a rate.
    b0 : float, array-like of shape (n_features,) or None, default=None
        Rate of the Gamma prior (one value for every column, or one per
        column); ``None``: ``a0 / mean(X[:, d])`` per column (``a0`` for a
        column of zeros).

    Examples
    --------
    >>> from sk_ihmm import InfiniteHMM
    >>> from sk_ihmm.datasets import make_poisson_hmm
    >>> X, states = make_poisson_hmm(600, n_states=3, random_state=0)
    >>> model = InfiniteHMM(emission="poisson", max_time=0, n_chains=2, random_state=0).fit(X)
    >>> model.lambdas_.shape[1]
    1
    """

    name = "poisson"
    tag = PoissonTag()
    kernels = Kernels(
        log_pred=_log_pred, update=_update, log_marginal=_log_marginal, count=_count,
        sample_param=_sample_param, param_loglik=_param_loglik,
    )
    discrete = True
    fitted_attributes = ("lambdas_",)

    def __init__(self, a0=1.0, b0=None):
        self.a0 = a0
        self.b0 = b0

    def validate_params(self):
        if not (isinstance(self.a0, (int, float, np.number)) and np.isfinite(self.a0) and self.a0 > 0):
            raise ValueError(f"Poisson a0 must be a positive float, got {self.a0!r}.")
        if self.b0 is not None:
            b0 = np.asarray(self.b0, dtype=float)
            if b0.ndim > 1 or not np.all(np.isfinite(b0)) or np.any(b0 <= 0):
                raise ValueError(
                    f"Poisson b0 must be a positive float, one per column, or None; got {self.b0!r}."
                )

    def check_X(self, X, dim=None):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"Poisson emissions expect X of shape (n_samples, n_features); got shape {X.shape}.")
        X = check_integer_codes(X, "Poisson", "counts")
        observed = X[~np.isnan(X)]
        if observed.size and observed.max() > MAX_COUNT:
            raise ValueError(f"Poisson counts must be at most {MAX_COUNT}; got {observed.max():.0f}.")
        return X

    def dimension(self, X):
        return X.shape[1]

    def resolve_prior(self, X=None, dim=None):
        self.validate_params()
        dim = columns_of(X, dim)
        d, a0 = int(dim), float(self.a0)
        if self.b0 is None:
            if X is None:
                raise ValueError(
                    "Poisson() with b0=None takes it from the training data; pass X, or set it "
                    "explicitly."
                )
            X = self.check_X(X)
            observed = X[~np.isnan(X).any(axis=1)]
            mean = observed.mean(axis=0) if observed.shape[0] else np.zeros(d)
            b0 = np.where(mean > 0, a0 / np.where(mean > 0, mean, 1.0), a0)
        else:
            b0 = np.asarray(self.b0, dtype=float)
            if b0.ndim == 1 and b0.shape[0] not in (1, d):
                raise ValueError(
                    f"Poisson b0 must be a float or have one entry per column ({d}); got shape "
                    f"{b0.shape}."
                )
            b0 = np.broadcast_to(b0.reshape(-1), (d,))
        return {"a0": a0, "b0": np.array(b0, dtype=float)}

    def hyperparameters(self, dim, X=None, prior=None):
        p = self.resolve_prior(X, dim) if prior is None else prior
        return np.concatenate([[dim, p["a0"]], p["b0"]]).astype(np.float64)

    def n_stats(self, dim):
        return dim + 2

    def n_params(self, dim):
        return 2 * dim

    def summary(self, stats, hyp):
        d = int(hyp[0])
        rates = (hyp[1] + stats[:, 1:1 + d]) / (hyp[2:2 + d] + stats[:, :1])
        return {"lambdas_": rates}

    def draw(self, summary, states, rng):
        return rng.poisson(summary["lambdas_"][states]).astype(np.int64)

    def log_marginal_stats(self, stats, hyp):
        d = int(hyp[0])
        a0, b0 = hyp[1], hyp[2:2 + d]
        n, sums = stats[:, :1], stats[:, 1:1 + d]
        return (np.sum(gammaln(a0 + sums) - gammaln(a0) + a0 * np.log(b0)
                       - (a0 + sums) * np.log(b0 + n), axis=1) - stats[:, 1 + d])
