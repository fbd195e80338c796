"""D-dimensional Gaussian emissions (full covariance) with a Normal-Inverse-Wishart prior.

``Sigma ~ IW(nu0, Psi0)`` and ``mu | Sigma ~ N(mu0, Sigma / kappa0)``; the
predictive is a multivariate Student-t (Murphy 2007, section 9). ``hyp =
[D, kappa0, nu0, mu0 (D), Psi0 (D*D)]``.

Statistics of a state: ``[n, mean (D), M2 (D*D, row-major) | scratch: S
(D*D), mu_n (D), z (D)]``. The scratch columns let the kernels work without
allocating (so that kernels calling them can run with numba's reference
counting switched off, see :mod:`sk_ihmm._nrt`); they hold no state between
calls. Explicit parameters (``pgas``): ``[mean (D), lower Cholesky factor of
the covariance (D*D), log normaliser | scratch (D)]``.
"""

import math

import numpy as np
from numba import njit

from ._base import (LOG_2PI, PRIOR_COVARIANCE_FRACTION, PRIOR_MEAN_PRECISION, EmissionFamily,
                    Kernels, check_real_rows, columns_of, data_moments, family_tag,
                    positive_definite_scale, warn_few_values)
from ._wishart import sample_inverse_wishart_cholesky

__all__ = ["MultivariateGaussian"]

MultivariateGaussianTag = family_tag("MultivariateGaussianTag", __name__)

_LOG_2PI = LOG_2PI


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _dim_of(n_stats):
    # n_stats = 2 D^2 + 3 D + 1
    return int(round((math.sqrt(8.0 * n_stats + 1.0) - 3.0) / 4.0))


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True, inline="always")
def _student(stats, k, hyp):
    """The predictive Student-t of state ``k``: its scale's Cholesky factor
    and ``mu_n`` into the row's scratch, and ``(d, dof, const)`` with
    ``log p(y) = const - (dof + d) / 2 * log1p(maha / dof)``."""
    d, k_n, nu_n = _niw_posterior_scratch(stats, k, hyp)
    dof = nu_n - d + 1.0
    logdet = _cholesky_scratch(stats, k, 1 + d + d * d, d, (k_n + 1.0) / (k_n * dof))
    const = (math.lgamma(0.5 * (dof + d)) - math.lgamma(0.5 * dof)
             - 0.5 * d * math.log(dof * math.pi) - logdet)
    return d, dof, const


@njit(cache=True, nogil=True, inline="always")
def _maha(stats, k, d, Y, t):
    """``|z|^2`` for ``L z = y_t - mu_n`` (forward substitution with the
    factor :func:`_student` left in the scratch; ``z`` goes there too)."""
    o_s = 1 + d + d * d
    o_mu = o_s + d * d
    o_z = o_mu + d
    maha = 0.0
    for i in range(d):
        r = Y[t, i] - stats[k, o_mu + i]
        for j in range(i):
            r -= stats[k, o_s + i * d + j] * stats[k, o_z + j]
        zi = r / stats[k, o_s + i * d + i]
        stats[k, o_z + i] = zi
        maha += zi * zi
    return maha


@njit(cache=True, nogil=True)
def _log_pred(stats, k, hyp, Y, t):
    d, dof, const = _student(stats, k, hyp)
    return const - 0.5 * (dof + d) * math.log1p(_maha(stats, k, d, Y, t) / dof)


@njit(cache=True, nogil=True)
def _student_block(stats, labels, n_labels, hyp, Y, start, length, out, prior_pred):
    # out[l, c] = _log_pred(stats, labels[c], hyp, Y, start + l), with the
    # Student-t factored once per label rather than once per step; a state
    # without observations reads prior_pred when that is not empty (as the
    # generic log_proposal_block does)
    read_prior = prior_pred.shape[0] > 0
    for c in range(n_labels):
        k = labels[c]
        if read_prior and stats[k, 0] == 0.0:
            for l in range(length):
                out[l, c] = prior_pred[start + l]
            continue
        d, dof, const = _student(stats, k, hyp)
        half = 0.5 * (dof + d)
        for l in range(length):
            out[l, c] = const - half * math.log1p(_maha(stats, k, d, Y, start + l) / dof)


@njit(cache=True, nogil=True)
def _log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out):
    _student_block(stats, labels, n_labels, hyp, Y, start, length, out, hyp[:0])


@njit(cache=True, nogil=True)
def _log_proposal_block(stats, labels, n_labels, hyp, Y, start, length, out, prior_pred, work):
    # out is label-major
    _student_block(stats, labels, n_labels, hyp, Y, start, length, out.T, prior_pred)


@njit(cache=True, nogil=True)
def _log_marginal(stats, k, hyp):
    # log p(observations of k) up to a constant of the prior
    d, k_n, nu_n = _niw_posterior_scratch(stats, k, hyp)
    logdet = _cholesky_scratch(stats, k, 1 + d + d * d, d, 1.0)
    out = -0.5 * stats[k, 0] * d * math.log(math.pi) - 0.5 * d * math.log(k_n) - nu_n * logdet
    for i in range(d):
        out += math.lgamma(0.5 * (nu_n - i))
    return out


@njit(cache=True, nogil=True)
def _update(stats, k, Y, t, sign):
    d = _dim_of(stats.shape[1])
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


@njit(cache=True, nogil=True)
def _sample_param(stats, k, hyp, rng, out_all, j):
    # out[j] = [mean (D), lower Cholesky factor of the covariance (D*D, row-major),
    # log normaliser -D/2 log(2 pi) - log det(chol) | scratch (D)]: the scratch
    # columns hold the whitened residual of _param_loglik, which then
    # allocates nothing
    out = out_all[j]
    d, mu_n, k_n, nu_n, psi = _niw_posterior(stats[k], hyp)
    chol = sample_inverse_wishart_cholesky(psi, nu_n, rng)
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


@njit(cache=True, nogil=True)
def _param_loglik(param_all, k, Y, t):
    # row layout of _sample_param: (D + 1)^2 entries
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


@njit(cache=True, nogil=True, inline="always")
def _count(stats, k):
    return stats[k, 0]


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
    kappa0 : float, default=0.01
        Prior precision of a state mean, relative to the state's precision
        (:data:`~sk_ihmm.emissions.PRIOR_MEAN_PRECISION`).
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
    tag = MultivariateGaussianTag()
    kernels = Kernels(
        log_pred=_log_pred, update=_update, log_marginal=_log_marginal, count=_count,
        sample_param=_sample_param, param_loglik=_param_loglik,
        log_pred_block=_log_pred_block, log_proposal_block=_log_proposal_block,
    )
    fitted_attributes = ("means_", "covars_")

    def __init__(self, mu0=None, kappa0=PRIOR_MEAN_PRECISION, nu0=None, psi0=None):
        self.mu0 = mu0
        self.kappa0 = kappa0
        self.nu0 = nu0
        self.psi0 = psi0

    def validate_params(self):
        if not (np.isscalar(self.kappa0) and np.isfinite(self.kappa0) and self.kappa0 > 0):
            raise ValueError(f"MultivariateGaussian kappa0 must be a positive float, got {self.kappa0!r}.")
        if self.mu0 is not None and not np.all(np.isfinite(np.asarray(self.mu0, dtype=float))):
            raise ValueError("MultivariateGaussian mu0 must be finite.")
        if self.psi0 is not None:
            psi = np.asarray(self.psi0, dtype=float)
            if psi.ndim == 0 and not (np.isfinite(psi) and psi > 0):
                raise ValueError(f"MultivariateGaussian psi0 must be a positive float, got {self.psi0!r}.")

    def check_X(self, X, dim=None):
        return check_real_rows(X)

    def _nu0(self, d):
        nu0 = d + 2.0 if self.nu0 is None else float(self.nu0)
        if nu0 <= d - 1:
            raise ValueError(f"nu0 must exceed n_features - 1 = {d - 1}; got {nu0}.")
        return nu0

    def resolve_prior(self, X=None, dim=None):
        self.validate_params()
        dim = columns_of(X, dim)
        d = int(dim)
        nu0 = self._nu0(d)
        if (self.mu0 is None or self.psi0 is None) and X is None:
            raise ValueError(
                "MultivariateGaussian() with mu0=None or psi0=None takes them from the training "
                "data; pass X, or set them explicitly."
            )
        if self.mu0 is None or self.psi0 is None:
            mean, cov = data_moments(self.check_X(X))
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
            psi0 = (nu0 - d - 1.0 if nu0 > d + 1.0 else 1.0) * PRIOR_COVARIANCE_FRACTION * positive_definite_scale(cov)
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

    def hyperparameters(self, d, X=None, prior=None):
        p = self.resolve_prior(X, d) if prior is None else prior
        return np.concatenate([[d, p["kappa0"], p["nu0"]], p["mu0"], p["psi0"].ravel()]).astype(np.float64)

    def n_stats(self, d):
        return 1 + d + d * d + (d * d + 2 * d)    # + scratch columns

    def n_params(self, d):
        return (d + 1) * (d + 1)      # mean, Cholesky factor, log normaliser, scratch

    def summary(self, stats, hyp):
        d, post = int(hyp[0]), _niw_posterior_rows(stats, hyp)
        nu_n = post["nu_n"]
        denom = np.where(nu_n > d + 1, nu_n - d - 1, nu_n + d + 1)
        return {"means_": post["mu_n"], "covars_": post["psi_n"] / denom[:, None, None]}

    def dimension(self, X):
        return X.shape[1]

    def warn_data(self, X):
        warn_few_values(X)

    def draw(self, summary, states, rng):
        chol = np.linalg.cholesky(summary["covars_"][states])
        z = rng.standard_normal((states.shape[0], chol.shape[1]))
        return summary["means_"][states] + np.einsum("nij,nj->ni", chol, z)

    def log_marginal_stats(self, stats, hyp):
        from scipy.special import multigammaln

        d, post = int(hyp[0]), _niw_posterior_rows(stats, hyp)
        n, nu0, nu_n = stats[:, 0], hyp[2], post["nu_n"]
        psi0 = hyp[3 + d:].reshape(d, d)
        return (-0.5 * n * d * np.log(np.pi) + multigammaln(0.5 * nu_n, d)
                - multigammaln(0.5 * nu0, d) + 0.5 * nu0 * np.linalg.slogdet(psi0)[1]
                - 0.5 * nu_n * np.linalg.slogdet(post["psi_n"])[1]
                + 0.5 * d * (np.log(hyp[1]) - np.log(post["k_n"])))

    def log_marginal(self, Y, dim=None, hyp=None):
        """Log marginal likelihood of ``Y`` in one state (``hyp``: resolved
        hyperparameters, by default those of this instance, which must then
        be explicit)."""
        y = np.asarray(Y, dtype=np.float64)
        n, d = y.shape
        if n == 0:
            return 0.0
        mean = y.mean(axis=0)
        stats = np.concatenate([[n], mean, ((y - mean).T @ (y - mean)).ravel()])[None, :]
        return float(self.log_marginal_stats(stats, self.hyperparameters(d) if hyp is None else hyp)[0])
