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
"""

import numpy as np

__all__ = ["resample_concentrations"]


def resample_concentrations(conc, nj, root_tables, override_tables, n_dishes,
                            priors, resample, rng):
    """Return new ``[alpha, gamma, kappa]`` drawn given the seating counts.

    Parameters
    ----------
    conc : ndarray of shape (3,)
        Current ``alpha, gamma, kappa``.
    nj : ndarray of shape (n_restaurants,)
        Customers per restaurant; restaurant 0 is the start restaurant.
    root_tables, override_tables : int
        Total numbers of root (non-override) and override tables.
    n_dishes : int
        Number of dishes (hidden states) served by the root.
    priors : sequence of three (shape, rate) pairs
        Gamma priors of alpha, gamma and kappa.
    resample : sequence of three bool
        Which of alpha, gamma, kappa to update.
    rng : numpy.random.Generator
    """
    alpha, gamma, kappa = (float(v) for v in conc)
    out = np.array([alpha, gamma, kappa])
    if resample[0] or resample[2]:
        active = np.flatnonzero(nj > 0)
        c = np.where(active > 0, alpha + kappa, alpha)
        # clip: a Beta draw with a tiny shape can underflow to exactly 0
        logw = np.log(np.maximum(rng.beta(c, nj[active]), np.finfo(float).tiny))
        if resample[0]:
            a, b = priors[0]
            out[0] = rng.gamma(a + root_tables, 1.0 / (b - logw.sum()))
        if resample[2]:
            a, b = priors[2]
            out[2] = rng.gamma(a + override_tables, 1.0 / (b - logw[active > 0].sum()))
    if resample[1]:
        a, b = priors[1]
        eta = max(rng.beta(gamma, root_tables), np.finfo(float).tiny) if root_tables > 0 else 1.0
        out[1] = rng.gamma(a + n_dishes, 1.0 / (b - np.log(eta)))
    return out
