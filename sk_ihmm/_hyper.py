"""Gibbs updates of the concentration parameters given the seating.

Auxiliary-variable method (Escobar & West 1995; Teh et al. 2006, App. A), in
the form that needs one Beta variable per restaurant and no mixture:

    Gamma(c) / Gamma(c + n) = B(c, n) / Gamma(n) = 1/Gamma(n) * int_0^1 w^(c-1) (1-w)^(n-1) dw,

so with ``w_j ~ Beta(c_j, n_j)`` for every restaurant with ``n_j > 0`` the
seating likelihood becomes ``prod_j w_j^(c_j) * alpha^R * kappa^O`` (``R``
root tables, ``O`` override tables), and independent Gamma priors are
conjugate:

    alpha | w ~ Gamma(a_alpha + R, b_alpha - sum_all_j log w_j)
    kappa | w ~ Gamma(a_kappa + O, b_kappa - sum_{j >= 1} log w_j)
    gamma | eta ~ Gamma(a_gamma + K, b_gamma - log eta),  eta ~ Beta(gamma, M)

(the start restaurant ``j = 0`` has concentration ``alpha``, state restaurants
``alpha + kappa``). Each update is an exact Gibbs step of the augmented
posterior, so the chain keeps the posterior over (states, tables, alpha,
gamma, kappa) invariant.

Fox et al. (2011)'s parameterisation of the sticky prior (``priors[3, 0] > 0``)
----------------------------------------------------------------------------
``s = alpha + kappa ~ Gamma(a_s, b_s)`` (``priors[0]``) and
``rho = kappa / s ~ Beta(a_rho, b_rho)`` (``priors[3]``), independent. With
``alpha = (1 - rho) s`` and ``kappa = rho s`` the augmented seating likelihood
above is

    s^(R + O) (1 - rho)^R rho^O  *  prod_{j >= 1} w_j^s  *  w_0^((1 - rho) s),

``R`` counting the root tables of *every* restaurant, the start restaurant's
included. The start restaurant, whose concentration is ``alpha`` alone, couples
``s`` and ``rho`` (Fox et al.'s model has no such restaurant, and there
``rho | tables ~ Beta(a_rho + O, b_rho + R)``). Here:

    s | rho, w ~ Gamma(a_s + R + O, b_s - sum_{j >= 1} log w_j - (1 - rho) log w_0)
    rho | s, w  has density  Beta(rho; a_rho + O, b_rho + R) * exp(lambda rho),
                lambda = -s log w_0 >= 0,

a tilted Beta, drawn exactly by one more auxiliary variable: since
``exp(lambda rho) = sum_k (lambda rho)^k / k!``, ``k | rho ~ Poisson(lambda rho)``
and ``rho | k ~ Beta(a_rho + O + k, b_rho + R)``. The update draws ``w``, then
``s`` given ``rho`` (``k`` summed out), then ``k`` given ``rho`` and the new
``s``, then ``rho`` given ``k``: each an exact (collapsed) Gibbs step.
``rho`` is drawn as ``g1 / (g1 + g2)`` of two Gamma variables, so that
``alpha = s g2 / (g1 + g2)`` has no cancellation.
"""

import math

import numpy as np
from numba import njit

__all__ = ["resample_concentrations", "rho_prior"]

_TINY = np.finfo(float).tiny


@njit(cache=True, inline="always")
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
    """The ``rho_prior`` argument of :func:`resample_concentrations` for a
    problem's ``priors``: their fourth row when it selects Fox et al.'s prior,
    else ``None``, so that default fits never compile that branch."""
    return priors[3] if priors.shape[0] > 3 and priors[3, 0] > 0.0 else None


# compiled into its callers' cache entries (_pgas, _collapsed): after a change,
# clear their numba caches too (numba checks only the caller's file)
@njit(cache=True)
def resample_concentrations(alpha, gamma, kappa, nj, root_tables, override_tables, n_dishes,
                            priors, rho_prior, resample, rng, out):
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
    rho_prior : ndarray of shape (2,) or None
        ``(a_rho, b_rho)``, ``a_rho > 0``: Fox et al.'s prior instead, with
        ``priors[0]`` the Gamma prior of ``alpha + kappa``, ``rho_prior`` the
        Beta prior of ``rho = kappa / (alpha + kappa)`` and ``priors[2]``
        unused (see the module docstring). :func:`rho_prior` gives it from
        ``priors``; ``None`` prunes the branch at compile time.
    resample : ndarray of shape (3,), bool
        Which of alpha, gamma, kappa to update (with Fox et al.'s prior,
        alpha and kappa are updated together when ``resample[0]``).
    rng : numpy.random.Generator
    out : ndarray of shape (3,)
        Receives the new values (the current ones where not resampled); may
        be the array the current values were read from.
    """
    out[0], out[1], out[2] = alpha, gamma, kappa
    if rho_prior is not None and resample[0]:
        _, s_states, lw0 = _log_beta_auxiliaries(alpha, kappa, nj, rng)
        rho = kappa / (alpha + kappa)
        total = rng.gamma(priors[0, 0] + root_tables + override_tables,
                          1.0 / (priors[0, 1] - s_states - (1.0 - rho) * lw0))
        k = rng.poisson(-total * lw0 * rho) if rho > 0.0 else 0
        g1 = rng.gamma(rho_prior[0] + override_tables + k, 1.0)
        g2 = rng.gamma(rho_prior[1] + root_tables, 1.0)
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
