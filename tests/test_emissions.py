"""Emission families: predictive kernels agree with the closed-form marginals."""

import numpy as np
import pytest

from sk_ihmm.emissions import Categorical, Gaussian, MultivariateGaussian, make_emission


def _sequential(family, Y, dim):
    """log of prod_t p(y_t | y_<t) through the kernels, then remove everything."""
    log_pred, update, _, _ = family.kernels
    hyp = family._hyp(dim)
    stats = np.zeros(family._n_stats(dim))
    total = 0.0
    for y in Y:
        total += log_pred(stats, hyp, y)
        update(stats, y, 1.0)
    return total, stats, hyp


CASES = [
    (Categorical(concentration=0.7), np.array([[0], [2], [2], [1], [0], [2]], float), 4),
    (Gaussian(mu0=0.3, lambda0=0.5, a0=2.0, b0=0.7), np.random.default_rng(0).normal(1, 2, (9, 1)), 1),
    (MultivariateGaussian(mu0=0.1, kappa0=0.5, psi0=2.0), np.random.default_rng(1).normal(0, 1, (8, 3)), 3),
]


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_chain_rule_equals_marginal(family, Y, dim):
    seq, stats, hyp = _sequential(family, Y, dim)
    assert np.isclose(seq, family.log_marginal(Y, dim), rtol=1e-10, atol=1e-10)
    assert np.isclose(family._log_marginal_stats(stats[None, :], hyp)[0], seq, rtol=1e-10)


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_remove_undoes_add(family, Y, dim):
    log_pred, update, _, _ = family.kernels
    hyp = family._hyp(dim)
    stats = np.zeros(family._n_stats(dim))
    for y in Y[:-1]:
        update(stats, y, 1.0)
    before = log_pred(stats.copy(), hyp, Y[-1])
    update(stats, Y[-1], 1.0)
    update(stats, Y[-1], -1.0)
    assert np.isclose(log_pred(stats, hyp, Y[-1]), before, rtol=1e-10)
    for y in Y[:-1]:
        update(stats, y, -1.0)
    prior = log_pred(np.zeros_like(stats), hyp, Y[0])
    assert np.isclose(log_pred(stats, hyp, Y[0]), prior, rtol=1e-9)


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_sampled_parameters_match_posterior_predictive(family, Y, dim):
    """Averaging the likelihood under posterior parameter draws gives the
    posterior predictive (Monte-Carlo check of sample_param/param_loglik)."""
    log_pred, update, sample_param, param_loglik = family.kernels
    hyp = family._hyp(dim)
    stats = np.zeros(family._n_stats(dim))
    for y in Y[:-1]:
        update(stats, y, 1.0)
    rng = np.random.default_rng(0)
    out = np.zeros(family._n_params(dim))
    vals = np.empty(20000)
    for i in range(vals.size):
        sample_param(stats, hyp, rng, out)
        vals[i] = np.exp(param_loglik(out, Y[-1]))
    target = np.exp(log_pred(stats, hyp, Y[-1]))
    se = vals.std() / np.sqrt(vals.size)
    assert abs(vals.mean() - target) < 5 * se


def test_gaussian_welford_is_stable_for_large_offsets():
    family = Gaussian(mu0=1e6, b0=1.0)
    _, update, _, _ = family.kernels
    rng = np.random.default_rng(0)
    Y = 1e6 + rng.normal(0, 1, (2000, 1))
    stats = np.zeros(family._n_stats(1))
    for y in Y:
        update(stats, y, 1.0)
    for y in Y[:1000]:
        update(stats, y, -1.0)
    assert np.isclose(stats[2] / 999, Y[1000:].var(ddof=1), rtol=1e-6)


def test_make_emission():
    assert isinstance(make_emission("categorical"), Categorical)
    g = Gaussian(b0=3.0)
    assert make_emission(g) is g
    with pytest.raises(ValueError, match="Unknown emission"):
        make_emission("poisson")
