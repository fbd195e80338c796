"""Gibbs updates of the concentration parameters given the seating.

The auxiliary-variable method of Escobar & West (1995) and Teh et al. (2006,
appendix A): a Beta variable ``w_j ~ Beta(c_j, n_j)`` per restaurant with
customers (``c_0 = alpha``, ``c_j = alpha + kappa``) and ``eta ~ Beta(gamma,
M)`` for the root make independent Gamma priors on ``alpha``, ``gamma`` and
``kappa`` conjugate. With Fox et al. (2011)'s sticky prior instead
(``s = alpha + kappa ~ Gamma``, ``rho = kappa / s ~ Beta``; ``priors[3, 0] >
0``), ``s`` is drawn given ``rho`` and ``rho`` from a tilted Beta through a
Poisson auxiliary variable. The derivation, and why the start restaurant
couples ``s`` and ``rho``: doc/internals.rst, "Concentration updates
(_hyper.py)".

Invariant: each update is an exact Gibbs step of the augmented posterior, so
the chain keeps the posterior over (states, tables, alpha, gamma, kappa)
invariant. After changing this module, clear the callers' numba caches
(numba checks only the caller's file).
"""

import math

import numpy as np
from numba import njit

__all__ = ["resample_concentrations", "rho_prior"]

_TINY = np.finfo(float).tiny


@njit(cache=True, nogil=True, inline="always")
def _log_beta_auxiliaries(alpha, kappa, nj, rng):
    """The auxiliary variables of Teh et al. (2006, appendix A): ``log w_j``,
    ``w_j ~ Beta(alpha (+ kappa for a state restaurant), n_j)`` for every
    restaurant with customers. Returns ``(sum over all, sum over the state
    restaurants, log w_0)``."""
    s_all = 0.0
    s_states = 0.0
    lw0 = 0.0
    for j in range(nj.shape[0]):
        if nj[j] > 0:
            c = alpha + kappa if j > 0 else alpha
            # clip: a Beta draw with a tiny shape can underflow to exactly 0
            # a float count: numba's Beta would compile a second standard
            # Gamma for an integer shape (same draws: counts are exact floats)
            lw = math.log(max(rng.beta(c, float(nj[j])), _TINY))
            s_all += lw
            if j > 0:
                s_states += lw
            else:
                lw0 = lw
    return s_all, s_states, lw0


def rho_prior(priors):
    """The ``rho_beta`` argument of :func:`resample_concentrations` for a
    problem's ``priors``: their fourth row when it selects Fox et al.'s prior,
    else ``None``, so that default fits never compile that branch."""
    return priors[3] if priors.shape[0] > 3 and priors[3, 0] > 0.0 else None


# compiled into its callers' cache entries (_pgas, _collapsed): after a change,
# clear their numba caches too (numba checks only the caller's file)
@njit(cache=True, nogil=True)
def resample_concentrations(alpha, gamma, kappa, nj, root_tables, override_tables, n_dishes,
                            priors, rho_beta, resample, rng, out):
    """Draw new ``alpha, gamma, kappa`` given the seating counts, into ``out``.

    Parameters
    ----------
    alpha, gamma, kappa : float
        Current values.
    nj : ndarray of shape (n_restaurants,), int64
        Customers per restaurant; restaurant 0 is the start restaurant.
    root_tables, override_tables : int
        Total numbers of root (non-override) and override tables.
    n_dishes : int
        Number of dishes (hidden states) served by the root.
    priors : ndarray of shape (3, 2) or (4, 2)
        Gamma (shape, rate) priors of alpha, gamma and kappa.
    rho_beta : ndarray of shape (2,) or None
        ``(a_rho, b_rho)``, ``a_rho > 0``: Fox et al.'s prior instead, with
        ``priors[0]`` the Gamma prior of ``alpha + kappa``, ``rho_beta`` the
        Beta prior of ``rho = kappa / (alpha + kappa)`` and ``priors[2]``
        unused (doc/internals.rst, "Concentration updates").
        :func:`rho_prior` gives it from ``priors``; ``None`` prunes the
        branch at compile time.
    resample : ndarray of shape (3,), bool
        Which of alpha, gamma, kappa to update (with Fox et al.'s prior,
        alpha and kappa are updated together when ``resample[0]``).
    rng : numpy.random.Generator
    out : ndarray of shape (3,)
        Receives the new values (the current ones where not resampled); may
        be the array the current values were read from.
    """
    out[0], out[1], out[2] = alpha, gamma, kappa
    if rho_beta is not None and resample[0]:
        _, s_states, lw0 = _log_beta_auxiliaries(alpha, kappa, nj, rng)
        rho = kappa / (alpha + kappa)
        total = rng.gamma(priors[0, 0] + root_tables + override_tables,
                          1.0 / (priors[0, 1] - s_states - (1.0 - rho) * lw0))
        k = rng.poisson(-total * lw0 * rho) if rho > 0.0 else 0
        g1 = rng.gamma(rho_beta[0] + override_tables + k, 1.0)
        g2 = rng.gamma(rho_beta[1] + root_tables, 1.0)
        out[0] = max(total * (g2 / (g1 + g2)), _TINY)
        out[2] = total * (g1 / (g1 + g2))
    elif resample[0] or resample[2]:
        s_all, s_states, _ = _log_beta_auxiliaries(alpha, kappa, nj, rng)
        if resample[0]:
            out[0] = rng.gamma(priors[0, 0] + root_tables, 1.0 / (priors[0, 1] - s_all))
        if resample[2]:
            out[2] = rng.gamma(priors[2, 0] + override_tables,
                               1.0 / (priors[2, 1] - s_states))
    if resample[1]:
        eta = max(rng.beta(gamma, float(root_tables)), _TINY) if root_tables > 0 else 1.0
        out[1] = rng.gamma(priors[1, 0] + n_dishes, 1.0 / (priors[1, 1] - math.log(eta)))
