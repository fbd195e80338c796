"""Inverse-Wishart draws shared by the full-covariance families.

:class:`~sk_ihmm.emissions.MultivariateGaussian` (normal-inverse-Wishart)
and :class:`~sk_ihmm.emissions.AutoRegressive` (matrix-normal
inverse-Wishart) both draw a covariance ``Sigma ~ IW(nu, Psi)`` when a
sampler needs explicit parameters (``pgas``). Bartlett's decomposition:
``W = L A A^T L^T ~ Wishart(nu, Psi^-1)`` with ``L L^T = Psi^-1``, ``A`` lower
triangular, ``A_ii^2 ~ chi^2(nu - i)`` and ``A_ic ~ N(0, 1)`` below the
diagonal; then ``Sigma = W^-1``.

Invariant: the random draws come in a fixed order (row by row: the
diagonal's gamma, then the row's normals), so a chain's stream does not
depend on which family calls.
"""

import math

import numpy as np
from numba import njit

__all__ = ["sample_inverse_wishart_cholesky"]


@njit(cache=True, nogil=True)
def sample_inverse_wishart_cholesky(psi, nu, rng):
    """Lower Cholesky factor of one draw ``Sigma ~ IW(nu, psi)``.

    Parameters
    ----------
    psi : ndarray of shape (d, d)
        Scale matrix (symmetric positive definite).
    nu : float
        Degrees of freedom, ``nu > d - 1``.
    rng : numpy.random.Generator
        Source of the ``d`` gamma and ``d (d - 1) / 2`` normal draws.
    """
    d = psi.shape[0]
    lpsi_inv = np.linalg.cholesky(np.linalg.inv(psi))
    a = np.zeros((d, d))
    for i in range(d):
        a[i, i] = math.sqrt(2.0 * rng.gamma(0.5 * (nu - i), 1.0))
        for c in range(i):
            a[i, c] = rng.standard_normal()
    la = lpsi_inv @ a
    sigma = np.linalg.inv(la @ la.T)
    sigma = 0.5 * (sigma + sigma.T)     # symmetric to the last bit, for cholesky
    return np.linalg.cholesky(sigma)
