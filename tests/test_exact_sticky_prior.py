"""Fox et al. (2011)'s sticky hyperprior (``rho_prior``): ``alpha + kappa ~
Gamma`` and ``rho = kappa / (alpha + kappa) ~ Beta``, resampled together.

* The concentration update alone, on fixed seating counts, against the exact
  posterior of ``(alpha + kappa, rho)`` given the counts (a 2-D grid of the
  density written out from the seating probability), by Kolmogorov-Smirnov
  distances of both marginals.
* Whole chains of rcd_gibbs, rcd_blocked and pgas against the exact
  partition posterior with ``(alpha + kappa, rho)`` integrated out on a 2-D
  grid (:func:`exact_posterior.exact_posterior` with ``rho_prior``).
"""

import math

import numpy as np
import pytest
from scipy.special import gammaln

from sampler_harness import _iat, check_exact
from sk_ihmm._hyper import resample_concentrations, rho_prior

#: Gamma prior of alpha + kappa (row 0), of gamma (row 1), unused kappa row,
#: Beta prior of rho (row 3)
FOX = ((2.0, 1.0), (2.0, 2.0), (1.0, 1.0), (2.0, 2.0))


def _update_draws(nj, R, O, priors, n, seed=0):
    rng = np.random.default_rng(seed)
    pri = np.array(priors, float)
    resample = np.array([True, False, True])
    conc = np.array([1.0, 1.0, 1.0])
    out = np.empty((n, 2))
    for i in range(n):
        resample_concentrations(conc[0], conc[1], conc[2], np.asarray(nj, np.int64), R, O, 3,
                                pri, rho_prior(pri), resample, rng, conc)
        out[i] = conc[0] + conc[2], conc[2] / (conc[0] + conc[2])
    return out


def _exact_marginal_cdfs(nj, R, O, priors, s_grid, r_grid):
    """CDFs of s = alpha + kappa and rho under
    p(s, rho | counts) ∝ Gamma(s) Beta(rho) alpha^R kappa^O
    Gamma(alpha) / Gamma(alpha + n_0) prod_{j>=1} Gamma(s) / Gamma(s + n_j),
    with alpha = (1 - rho) s, kappa = rho s (the start restaurant j = 0 has
    concentration alpha)."""
    (a_s, b_s), (a_r, b_r) = priors[0], priors[3]
    S, Rho = np.meshgrid(s_grid, r_grid, indexing="ij")
    A, K = (1 - Rho) * S, Rho * S
    logp = ((a_s - 1) * np.log(S) - b_s * S + (a_r - 1) * np.log(Rho) + (b_r - 1) * np.log1p(-Rho)
            + R * np.log(A) + O * np.log(K) + gammaln(A) - gammaln(A + nj[0]))
    for n_j in nj[1:]:
        if n_j > 0:
            logp += gammaln(S) - gammaln(S + n_j)
    p = np.exp(logp - logp.max())
    ps, pr = p.sum(axis=1), p.sum(axis=0)
    return np.cumsum(ps) / ps.sum(), np.cumsum(pr) / pr.sum()


def _ks(draws, grid, cdf):
    emp = np.searchsorted(np.sort(draws), grid, side="right") / draws.size
    return float(np.max(np.abs(emp - cdf)))


# several sequences: the start restaurant (concentration alpha only) matters
COUNTS = [
    dict(nj=[4, 6, 3, 5], R=7, O=3),
    dict(nj=[1, 9, 2], R=3, O=4),
]


@pytest.mark.parametrize("counts", COUNTS, ids=lambda c: f"n0={c['nj'][0]}")
def test_fox_update_targets_concentration_posterior(counts):
    nj, R, O = counts["nj"], counts["R"], counts["O"]
    draws = _update_draws(nj, R, O, FOX, 40000)[500:]
    s_grid = np.linspace(1e-4, 30.0, 6000)
    r_grid = np.linspace(1e-5, 1 - 1e-5, 4000)
    cdf_s, cdf_r = _exact_marginal_cdfs(nj, R, O, FOX, s_grid, r_grid)
    for col, grid, cdf in ((0, s_grid, cdf_s), (1, r_grid, cdf_r)):
        n_eff = draws.shape[0] / _iat(draws[:, col])
        ks = _ks(draws[:, col], grid, cdf)
        assert ks < 1.95 / math.sqrt(n_eff), (col, ks, n_eff)   # KS 0.999 quantile


CASES = [
    dict(kind="categorical", lengths=(5,)),
    dict(kind="gaussian", lengths=(2, 3)),
    dict(kind="categorical", lengths=(1, 2, 2)),
]


def _id(case):
    return f"{case['kind']}-{'x'.join(map(str, case['lengths']))}"


@pytest.mark.parametrize("case", CASES, ids=_id)
@pytest.mark.parametrize("sampler,options", [
    ("rcd_gibbs", None),
    ("rcd_blocked", {"block_size": 2}),
    ("pgas", {"n_particles": 3, "proposal": "posterior"}),
], ids=["rcd_gibbs", "rcd_blocked", "pgas"])
def test_fox_prior_exact(sampler, options, case):
    check_exact(sampler, kappa=1.0, resample=(True, True, True), priors=FOX, options=options,
                n_sweeps=15000, **case)


def test_fox_prior_in_the_estimator():
    """rho_prior reaches the chains: kappa moves from its start and the
    problem carries the (alpha + kappa) Gamma and rho Beta rows."""
    from sk_ihmm import InfiniteHMM
    from sk_ihmm.datasets import make_gaussian_hmm

    X, _ = make_gaussian_hmm(300, n_states=3, random_state=0)
    model = InfiniteHMM(sampler="rcd_gibbs", rho_prior=(3.0, 1.0), alpha_kappa_prior=(2.0, 0.5),
                        kappa=0.5, n_samples=20, n_burnin=20, n_chains=1, max_time=None,
                        init="random", random_state=0, progress=False).fit(X)
    pri = model._problem_.priors
    np.testing.assert_allclose(pri[0], (2.0, 0.5))
    np.testing.assert_allclose(pri[3], (3.0, 1.0))
    assert model._problem_.resample.all()
    kappa = np.asarray(model.trace_["kappa"])
    assert np.ptp(kappa) > 0


@pytest.mark.parametrize("params,match", [
    (dict(rho_prior=(1.0, 1.0), kappa_prior=(1.0, 1.0)), "not both"),
    (dict(rho_prior=(0.0, 1.0)), "rho_prior"),
    (dict(rho_prior=(1.0, 1.0), alpha_kappa_prior=(1.0, -1.0)), "alpha_kappa_prior"),
])
def test_fox_prior_validation(params, match):
    from sk_ihmm import InfiniteHMM

    X = np.random.default_rng(0).normal(size=(20, 1))
    with pytest.raises(ValueError, match=match):
        InfiniteHMM(n_samples=2, n_burnin=2, n_chains=1, progress=False, **params).fit(X)
