"""What a user who sets nothing gets: data-scaled priors and their equivariance.

With the default (data-scaled) Gaussian priors the posterior over state
sequences must not depend on the units of the data: ``fit(a * X + b)`` gives
the same state samples as ``fit(X)`` (1-D, any ``a != 0``), and with several
columns the same holds for ``X @ A.T + b`` with any invertible ``A`` (full
covariance) and for ``X * a + b`` with per-column ``a_d != 0`` and ``b_d``
(diagonal covariance). Checked on the exact posterior (enumerated partitions,
with the Normal-Inverse-Gamma and Normal-Inverse-Wishart marginal likelihoods
written out here) and on the chains of every sampler.
"""

import math
import re
import time
import warnings

import numpy as np
import pytest
from scipy.special import gammaln, multigammaln
from sklearn.exceptions import ConvergenceWarning

from exact_posterior import empirical, exact_posterior, tv_distance, tv_threshold
from sampler_harness import _iat
from sk_ihmm import InfiniteHMM
from sk_ihmm._chain import make_problem, run_chain
from sk_ihmm._diagnostics import kept_sweeps
from sk_ihmm.datasets import make_gaussian_hmm
from sk_ihmm.emissions import (PRIOR_COVARIANCE_FRACTION, PRIOR_MEAN_PRECISION, AutoRegressive,
                               DiagonalGaussian, Gaussian, MultivariateGaussian)
from sk_ihmm.emissions.autoregressive import PRIOR_COEFFICIENT_WEIGHT

SAMPLERS = ["rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge", "pgas"]


# ------------------------------------------------------------ written out
def nig_log_marginal(y, mu0, lambda0, a0, b0):
    """Normal-Inverse-Gamma marginal likelihood of 1-D observations ``y``."""
    y = np.asarray(y, float).ravel()
    n = y.size
    if n == 0:
        return 0.0
    ybar = y.mean()
    lam_n = lambda0 + n
    a_n = a0 + n / 2
    b_n = b0 + 0.5 * np.sum((y - ybar) ** 2) + lambda0 * n * (ybar - mu0) ** 2 / (2 * lam_n)
    return (gammaln(a_n) - gammaln(a0) + a0 * math.log(b0) - a_n * math.log(b_n)
            + 0.5 * math.log(lambda0 / lam_n) - 0.5 * n * math.log(2 * math.pi))


def niw_log_marginal(Y, mu0, kappa0, nu0, psi0):
    """Normal-Inverse-Wishart marginal likelihood of the rows of ``Y``."""
    Y = np.asarray(Y, float)
    n, d = Y.shape
    if n == 0:
        return 0.0
    ybar = Y.mean(axis=0)
    S = (Y - ybar).T @ (Y - ybar)
    k_n, nu_n = kappa0 + n, nu0 + n
    diff = (ybar - mu0)[:, None]
    psi_n = psi0 + S + kappa0 * n / k_n * diff @ diff.T
    return (-0.5 * n * d * math.log(math.pi) + multigammaln(nu_n / 2, d) - multigammaln(nu0 / 2, d)
            + 0.5 * nu0 * np.linalg.slogdet(psi0)[1] - 0.5 * nu_n * np.linalg.slogdet(psi_n)[1]
            + 0.5 * d * math.log(kappa0 / k_n))


# ------------------------------------------------------------ resolution
def test_gaussian_prior_is_scaled_to_the_data():
    X = np.array([[1450.0], [1475.0], [1500.0], [1560.0]])
    prior = Gaussian().resolve_prior(X)
    # the documented defaults (doc/model.rst); AutoRegressive keeps its own weight
    assert (PRIOR_COVARIANCE_FRACTION, PRIOR_MEAN_PRECISION) == (0.1, 0.01)
    assert AutoRegressive().kappa0 == PRIOR_COEFFICIENT_WEIGHT == 0.1
    assert prior["mu0"] == pytest.approx(X.mean())
    assert prior["b0"] == pytest.approx((prior["a0"] - 1) * PRIOR_COVARIANCE_FRACTION * X.var())
    assert prior["lambda0"] == PRIOR_MEAN_PRECISION
    # explicit values win
    assert Gaussian(mu0=3.0, b0=2.0).resolve_prior(X) == {"mu0": 3.0, "lambda0": PRIOR_MEAN_PRECISION,
                                                         "a0": 1.5, "b0": 2.0}
    with pytest.raises(ValueError, match="training data"):
        Gaussian().resolve_prior()


def test_multivariate_prior_is_scaled_to_the_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) @ np.array([[2.0, 0, 0], [0.5, 30.0, 0], [0, 1.0, 0.01]]) + [5, 1500, -3]
    prior = MultivariateGaussian().resolve_prior(X)
    cov = np.cov(X.T, bias=True)
    np.testing.assert_allclose(prior["mu0"], X.mean(axis=0))
    np.testing.assert_allclose(prior["psi0"], (prior["nu0"] - 4) * PRIOR_COVARIANCE_FRACTION * cov)
    explicit = MultivariateGaussian(mu0=[0, 0, 0], psi0=2.0).resolve_prior(X)
    np.testing.assert_array_equal(explicit["psi0"], 2.0 * np.eye(3))
    with pytest.raises(ValueError, match="one entry per feature"):
        MultivariateGaussian(mu0=[0, 0]).resolve_prior(X)


def test_diagonal_prior_is_scaled_to_the_data_per_column():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) * [2.0, 30.0, 0.01] + [5, 1500, -3]
    X[:, 2] = X[:, 0] + 1e-3 * X[:, 2]      # collinear columns need no ridge
    prior = DiagonalGaussian().resolve_prior(X)
    np.testing.assert_allclose(prior["mu0"], X.mean(axis=0))
    np.testing.assert_allclose(prior["b0"],
                               (prior["a0"] - 1) * PRIOR_COVARIANCE_FRACTION * X.var(axis=0))
    assert prior["lambda0"] == PRIOR_MEAN_PRECISION
    # a constant column counts as variance 1, as with Gaussian
    constant = DiagonalGaussian().resolve_prior(np.column_stack([X[:, 0], np.full(50, 7.0)]))
    assert constant["b0"][1] == pytest.approx((prior["a0"] - 1) * PRIOR_COVARIANCE_FRACTION)
    explicit = DiagonalGaussian(mu0=0.0, b0=[1.0, 2.0, 3.0]).resolve_prior(X)
    np.testing.assert_array_equal(explicit["mu0"], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(explicit["b0"], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="one entry per column"):
        DiagonalGaussian(b0=[1.0, 2.0]).resolve_prior(X)
    with pytest.raises(ValueError, match="training data"):
        DiagonalGaussian().resolve_prior(dim=3)


def test_fitted_prior_is_stored_and_default_gaussian_takes_columns():
    X, _ = make_gaussian_hmm(120, 3, random_state=0)
    model = InfiniteHMM(max_time=0, n_samples=3, n_burnin=3, n_chains=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(1000 * X + 5)
        assert model.emission_prior_["mu0"] == pytest.approx(1000 * X.mean() + 5)
        X2 = np.hstack([X, 3 * X + np.random.default_rng(0).normal(size=X.shape)])
        model.fit(X2)
    assert model.emission_prior_["psi0"].shape == (2, 2)
    assert model.means_.shape == (model.n_states_, 2)


def test_integer_codes_with_gaussian_emission_warn():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 12, size=(200, 1))
    with pytest.warns(UserWarning, match="emission='categorical'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            InfiniteHMM(max_time=0, n_samples=2, n_burnin=2, n_chains=1, random_state=0).fit(X)


@pytest.mark.parametrize("covariance_type", ["full", "diag"])
def test_columns_of_few_values_warn(covariance_type):
    # such a column decides the fit: 12 values drawn independently of the
    # states gave 12 states, one per value (doc/model.rst)
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    quick = dict(max_time=0, n_samples=2, n_burnin=2, n_chains=1, random_state=0,
                 covariance_type=covariance_type)
    cases = [(np.full(300, 3.0), "column 1 is constant \\(3\\)"),
             (rng.integers(0, 12, 300).astype(float), "column 1 takes only 12 distinct values "
                                                      "\\(0 to 11\\)")]
    for column, message in cases:
        with pytest.warns(UserWarning, match=message):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                InfiniteHMM(**quick).fit(np.column_stack([x, column]))
    for X in (np.column_stack([x, rng.normal(size=300)]), np.ones((300, 2))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.filterwarnings("error", message=".*distinct values|.*is constant")
            InfiniteHMM(**quick).fit(X)


# ------------------------------------------------------- exact posterior
Y1 = np.array([-1.0, -0.8, 1.1, 0.9, -1.2, 1.3])[:, None]
Y2 = np.array([[-1.0, 0.2], [-0.8, 0.1], [1.1, -0.7], [0.9, -0.4], [-1.2, 0.5], [1.3, -1.0]])
A2 = np.array([[3.0, 1.0], [-0.5, 0.02]])
B2 = np.array([1500.0, -3.0])


def _exact_nig(Y, lengths=(6,)):
    p = Gaussian().resolve_prior(Y)
    return exact_posterior(list(lengths), lambda idx: nig_log_marginal(Y[idx], p["mu0"], p["lambda0"], p["a0"], p["b0"]),
                           alpha=1.0, gamma=1.0)


def _exact_niw(Y, lengths=(6,)):
    p = MultivariateGaussian().resolve_prior(Y)
    return exact_posterior(list(lengths), lambda idx: niw_log_marginal(Y[idx], p["mu0"], p["kappa0"], p["nu0"], p["psi0"]),
                           alpha=1.0, gamma=1.0)


def _exact_diag(Y, lengths=(6,)):
    p = DiagonalGaussian().resolve_prior(Y)

    def lml(idx):
        return sum(nig_log_marginal(Y[idx, d], p["mu0"][d], p["lambda0"], p["a0"], p["b0"][d])
                   for d in range(Y.shape[1]))
    return exact_posterior(list(lengths), lml, alpha=1.0, gamma=1.0)


#: per-column scales (of both signs, far apart) and shifts
A_DIAG = np.array([-250.0, 0.003])
B_DIAG = np.array([1450.0, -7.0])


@pytest.mark.parametrize("a, b", [(1000.0, 1450.0), (-0.01, 3.0), (1e-3, -20.0)])
def test_exact_posterior_is_equivariant_1d(a, b):
    base, moved = _exact_nig(Y1), _exact_nig(a * Y1 + b)
    assert max(abs(base[z] - moved[z]) for z in base) < 1e-9


def test_exact_posterior_is_equivariant_full_covariance():
    base, moved = _exact_niw(Y2), _exact_niw(Y2 @ A2.T + B2)
    assert max(abs(base[z] - moved[z]) for z in base) < 1e-9
    # and the prior is not trivially flat: the data decide
    assert max(base.values()) > 5 * min(base.values())


def test_exact_posterior_is_equivariant_diagonal_covariance():
    """Per-column scales and shifts leave the posterior unchanged; a map that
    mixes the columns changes it (the diagonal model is not equivariant
    under it, so the comparison has power)."""
    base, moved = _exact_diag(Y2), _exact_diag(Y2 * A_DIAG + B_DIAG)
    assert max(abs(base[z] - moved[z]) for z in base) < 1e-9
    assert max(base.values()) > 5 * min(base.values())
    mixed = _exact_diag(Y2 @ A2.T + B2)
    assert max(abs(base[z] - mixed[z]) for z in base) > 0.01


def test_exact_posterior_is_not_equivariant_with_a_fixed_prior():
    """The test has power: a fixed prior (the old default) is not equivariant."""
    def post(Y):
        return exact_posterior([6], lambda idx: nig_log_marginal(Y[idx], 0.0, 1.0, 1.0, 1.0), 1.0, 1.0)
    base, moved = post(Y1), post(1000 * Y1 + 1450)
    assert max(abs(base[z] - moved[z]) for z in base) > 0.05


@pytest.mark.parametrize("sampler, family, Y, transform", [
    ("rcd_gibbs", Gaussian(), Y1, lambda Y: -250.0 * Y + 1450.0),
    ("rcd_blocked", Gaussian(), Y1, lambda Y: 0.001 * Y - 7.0),
    ("pgas", Gaussian(), Y1, lambda Y: -40.0 * Y + 3.0),
    ("rcd_gibbs", MultivariateGaussian(), Y2, lambda Y: Y @ A2.T + B2),
    ("pgas", MultivariateGaussian(), Y2, lambda Y: Y @ A2.T + B2),
])
def test_sampler_on_data_in_other_units_targets_the_exact_posterior(sampler, family, Y, transform):
    """A chain on transformed data, default prior, matches the exact posterior of the original data."""
    exact = _exact_nig(Y) if Y.shape[1] == 1 else _exact_niw(Y)
    Z = transform(Y)
    prob = make_problem(family, Z, Y.shape[1], [6], conc0=(1.0, 1.0, 0.0),
                        resample=(False, False, False))
    n = 20000
    out = run_chain(sampler, prob, (np.arange(6) % 2 + 1).astype(np.int64), 500, n, 1,
                    np.random.SeedSequence(1))
    samples = out["samples"]
    tv = tv_distance(exact, empirical(samples))
    # effective sample size as in sampler_harness.check_exact: the largest
    # autocorrelation time of the number of states and of the indicators of
    # the four most probable partitions
    keys = [tuple(row) for row in samples]
    taus = [_iat(out["trace"]["n_states"][500:])]
    taus += [_iat([k == z for k in keys]) for z in sorted(exact, key=exact.get, reverse=True)[:4]]
    thr = tv_threshold(exact, n / max(taus), quantile=0.999, n_sim=1000, seed=0)
    assert tv < thr, (tv, thr)


# ------------------------------------------------------------- chains
def _fit(X, sampler, **kw):
    model = InfiniteHMM(sampler=sampler, max_time=0, n_samples=15, n_burnin=15, n_chains=2,
                        random_state=3, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X)


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_chains_are_equivariant_1d(sampler):
    """Same seed, same state samples. pgas draws explicit means as ``mu_n +
    sd * z``, which maps onto the draw for ``a * X + b`` only when ``a > 0``;
    for ``a < 0`` it is equivariant in law (the exact test above)."""
    X, _ = make_gaussian_hmm(150, 3, random_state=1)
    base = _fit(X, sampler)
    cases = [(25.0, 1500.0), (0.003, -2.0)] if sampler == "pgas" else [(25.0, 1500.0), (-0.003, 2.0)]
    for a, b in cases:
        moved = _fit(a * X + b, sampler)
        for s0, s1 in zip(base.state_samples_, moved.state_samples_):
            np.testing.assert_array_equal(s0, s1)


@pytest.mark.parametrize("sampler", ["rcd_gibbs", "rcd_blocked", "rcd_beam"])
def test_chains_are_equivariant_full_covariance(sampler):
    """Same seed, same state samples under ``X @ A.T + b``. (pgas draws an
    explicit covariance through a Bartlett decomposition, which is
    equivariant in law only: the exact test above.)"""
    X, _ = make_gaussian_hmm(120, 3, random_state=2)
    rng = np.random.default_rng(0)
    X2 = np.hstack([X, 0.5 * X + rng.normal(size=X.shape)])
    base = _fit(X2, sampler)
    moved = _fit(X2 @ A2.T + B2, sampler)
    for s0, s1 in zip(base.state_samples_, moved.state_samples_):
        np.testing.assert_array_equal(s0, s1)


@pytest.mark.parametrize("sampler, a", [
    ("rcd_gibbs", A_DIAG),
    ("rcd_blocked", A_DIAG),
    ("pgas", np.abs(A_DIAG)),
], ids=["rcd_gibbs", "rcd_blocked", "pgas"])
def test_chains_are_equivariant_diagonal_covariance(sampler, a):
    """Same seed, same state samples under per-column ``X * a + b`` with
    ``covariance_type="diag"``. (pgas draws explicit means as ``mu_n + sd *
    z``: identical draws need ``a_d > 0``, as in 1-D.)"""
    X, _ = make_gaussian_hmm(120, 3, random_state=2)
    rng = np.random.default_rng(0)
    X2 = np.hstack([X, 0.5 * X + rng.normal(size=X.shape)])
    base = _fit(X2, sampler, covariance_type="diag")
    moved = _fit(X2 * a + B_DIAG, sampler, covariance_type="diag")
    assert isinstance(moved._family, DiagonalGaussian)
    for s0, s1 in zip(base.state_samples_, moved.state_samples_):
        np.testing.assert_array_equal(s0, s1)


# ------------------------------------------------- autoregressive family
# a 2-D series of 7 steps (6 scored after the conditioning first step)
Y_AR = np.array([[0.2, 0.0], [1.1, -0.3], [2.1, -0.5], [2.9, -0.6], [1.4, 0.9], [0.8, 0.5],
                 [0.3, 0.4]])
#: per-column scales (one negative) and shifts, and a full invertible map
SCALES, SHIFTS = np.array([250.0, -0.004]), np.array([1450.0, -3.0])


def _exact_ar(X, family=None):
    from test_exact_families import mniw_marginal

    from sk_ihmm.emissions import AutoRegressive

    family = family or AutoRegressive()
    T = X.shape[0]
    Y = family.prepare(X, [0], [T])
    p = family.resolve_prior(Y)
    # the prior is stored in centred coordinates: the written-out marginal
    # takes the centre, M0, K0, nu0 and Psi0 as they are
    lml = mniw_marginal(p["center"], p["M0"], p["K0"], p["nu0"], p["psi0"])
    return exact_posterior([T], lambda idx: lml(Y[[i for i in idx if i > 0]]) if max(idx) > 0 else 0.0,
                           alpha=1.0, gamma=1.0)


def test_autoregressive_prior_is_scaled_to_the_data():
    from sk_ihmm.emissions import AutoRegressive
    from sk_ihmm.emissions.autoregressive import PRIOR_NOISE_FRACTION

    rng = np.random.default_rng(0)
    X = np.cumsum(rng.normal(size=(60, 2)), axis=0) * [3.0, 0.01] + [1500.0, -3.0]
    family = AutoRegressive(order=2)
    Y = family.prepare(X, [0, 30], [30, 30])
    assert np.isnan(Y[[0, 1, 30, 31]]).all() and not np.isnan(np.delete(Y, [0, 1, 30, 31], 0)).any()
    prior = family.resolve_prior(Y)
    rows = Y[~np.isnan(Y[:, 0])]
    mu = rows[:, :2].mean(axis=0)
    Xc = np.hstack([rows[:, 2:] - np.tile(mu, 2), np.ones((rows.shape[0], 1))])
    resid = np.linalg.lstsq(Xc, rows[:, :2] - mu, rcond=None)[0]
    resid = rows[:, :2] - mu - Xc @ resid
    np.testing.assert_allclose(prior["center"], mu)
    np.testing.assert_array_equal(prior["M0"], np.zeros((2, 5)))
    np.testing.assert_allclose(prior["K0"], PRIOR_COEFFICIENT_WEIGHT * Xc.T @ Xc / rows.shape[0])
    assert prior["nu0"] == 4.0
    # prior mean of a state's noise covariance (nu0 - D - 1 = 1): the residual covariance
    np.testing.assert_allclose(prior["psi0"], PRIOR_NOISE_FRACTION * resid.T @ resid / rows.shape[0])
    assert PRIOR_NOISE_FRACTION == 1.0
    with pytest.raises(ValueError, match="prepare"):
        AutoRegressive().resolve_prior(X)          # raw X, as wide as prepared 1-D rows
    explicit = AutoRegressive(center=0.0, K0=2.0, psi0=1.0).resolve_prior(dim=1)
    np.testing.assert_array_equal(explicit["K0"], 2.0 * np.eye(2))
    with pytest.raises(ValueError, match="training data"):
        AutoRegressive().resolve_prior(dim=1)


@pytest.mark.parametrize("transform", [
    lambda X: SCALES * X + SHIFTS,              # per column, one scale negative
    lambda X: X @ A2.T + B2,                    # any invertible affine map
], ids=["per_column", "full"])
def test_exact_posterior_is_equivariant_autoregressive(transform):
    """The default AutoRegressive prior: the exact posterior over partitions
    is the same for X and for X in other units (the marginal likelihood of
    every block changes by the same Jacobian factor per scored step)."""
    base, moved = _exact_ar(Y_AR), _exact_ar(transform(Y_AR))
    assert max(abs(base[z] - moved[z]) for z in base) < 1e-9
    assert max(base.values()) > 5 * min(base.values())


def test_exact_posterior_is_not_equivariant_autoregressive_with_a_fixed_prior():
    """Power check: an explicit prior in the data's units is not equivariant."""
    from sk_ihmm.emissions import AutoRegressive

    fixed = AutoRegressive(center=0.0, K0=1.0, psi0=1.0)
    base, moved = _exact_ar(Y_AR, fixed), _exact_ar(SCALES * Y_AR + SHIFTS, fixed)
    assert max(abs(base[z] - moved[z]) for z in base) > 0.05


@pytest.mark.parametrize("sampler, scales", [
    ("rcd_gibbs", SCALES),
    ("rcd_blocked", SCALES),
    # pgas draws Sigma_k and A_k through Cholesky factors, which map onto the
    # draws for the transformed data only for positive scales (otherwise
    # equivariant in law: the exact test above)
    ("pgas", np.abs(SCALES)),
])
def test_chains_are_equivariant_autoregressive(sampler, scales):
    """Same seed, same state samples for X and per-column ``a * X + b``."""
    from sk_ihmm.datasets import make_ar_hmm

    # regimes close together and short: the chains keep moving
    X, _ = make_ar_hmm(150, n_states=3, self_transition=0.9, spread=0.5, random_state=0)
    base = _fit(X, sampler, emission="autoregressive", kappa=5.0)
    moved = _fit(scales * X + SHIFTS, sampler, emission="autoregressive", kappa=5.0)
    for s0, s1 in zip(base.state_samples_, moved.state_samples_):
        np.testing.assert_array_equal(s0, s1)


# --------------------------------------------------------- convergence
def test_unconverged_fit_warns_with_figures():
    X, _ = make_gaussian_hmm(200, 3, random_state=0)
    model = InfiniteHMM(max_time=0, n_samples=5, n_burnin=5, n_chains=2, random_state=0)
    with pytest.warns(ConvergenceWarning,
                      match=r"R-hat .* bulk ESS .*targets: R-hat <= 1\.01") as rec:
        model.fit(X)
    _check_projection(model, rec)
    report = model.convergence_
    assert report["converged"] is False and report["n_rounds"] == 1
    assert set(report["n_states"]) == {"r_hat", "ess_bulk", "ess_tail"}
    assert report["thresholds"] == {"r_hat_max": 1.01, "ess_min": 200}
    assert model.n_sweeps_ == 10 and model.n_burnin_ == 5
    # continued: the projection covers the whole chain and its window now
    model.set_params(warm_start=True, n_burnin=0)
    with pytest.warns(ConvergenceWarning) as rec:
        model.fit(X)
    assert model.n_sweeps_ == 15
    _check_projection(model, rec)


def _check_projection(model, rec):
    """The warning's projection is that of the fitted model's report and window."""
    from sk_ihmm._diagnostics import _rough, projected_sweeps

    message = next(str(w.message) for w in rec if w.category is ConvergenceWarning)
    report, window = model.convergence_, model.n_sweeps_ - model.n_burnin_
    sweeps = projected_sweeps(report, window)
    assert sweeps is not None and sweeps > model.n_sweeps_
    assert re.search(rf"comes from the last {window} sweeps of each chain\), an ESS of 200 needs "
                     rf"about {_rough(sweeps)} sweeps per chain, {_rough(sweeps - model.n_sweeps_)}"
                     r" more, (about [\d.,]+ s|under a second) at this fit's pace\.", message)


def test_budget_mode_runs_rounds_until_converged():
    """Rounds double the chains until the diagnostics pass; no warning then,
    the diagnostics and the kept samples (n_samples to 2 * n_samples of
    them) cover the last three quarters of every chain, and with
    max_time=None the result depends only on the seed."""
    X, _ = make_gaussian_hmm(100, 1, random_state=0, sd=0.3)
    kw = dict(sampler="rcd_blocked", n_samples=50, n_burnin=50, n_chains=2, max_time=None,
              max_sweeps=20000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = InfiniteHMM(**kw).fit(X)
    report = model.convergence_
    assert report["converged"] and report["n_rounds"] > 1
    assert model.n_burnin_ <= model.n_sweeps_ // 4 < model.n_burnin_ + model.thin_
    kept = kept_sweeps(model.n_sweeps_, model.n_burnin_, model.thin_)
    assert 50 <= len(kept) <= 100 and kept[-1] == model.n_sweeps_ - 1
    assert model.state_samples_[0].shape == (len(kept), 100)
    assert model.state_samples_[0].dtype == np.uint8
    again = InfiniteHMM(**kw).fit(X)
    for s0, s1 in zip(model.state_samples_, again.state_samples_):
        np.testing.assert_array_equal(s0, s1)


def test_default_block_size_is_at_most_an_eighth_of_the_observed_steps():
    from sk_ihmm.samplers._rcd_blocked import _block_size

    def size(lengths, block_size=None, beam=False, n_missing=0):
        Y = np.zeros((sum(lengths), 1))
        Y[:n_missing] = np.nan
        prob = make_problem(Gaussian(mu0=0.0, b0=1.0), Y, 1, lengths, missing=n_missing > 0,
                            options={"block_size": block_size})
        return _block_size(prob, beam)

    assert size([10, 10, 10]) == 3 and size([10]) == 2 and size([3]) == 2
    assert size([1000]) == 32 and size([1000], beam=True) == 64
    assert size([100, 100], beam=True) == 25
    assert size([160], n_missing=80) == 10          # missing rows do not count
    assert size([30], block_size=32) == 32           # an explicit size is kept


@pytest.mark.parametrize("sampler", ["rcd_blocked", "rcd_beam"])
def test_default_blocks_move_on_a_short_sequence(sampler):
    """On 30 steps a default block is at most 3 steps (an eighth of the
    data). With one block over the whole sequence the proposal is drawn
    from nearly the prior and the chains never left their initial state."""
    X = np.random.default_rng(5).normal(size=(30, 1))
    model = InfiniteHMM(sampler=sampler, max_time=0, n_burnin=100, n_samples=200,
                        random_state=0).fit(X)
    for chain in model.state_samples_:
        assert len({row.tobytes() for row in chain}) > 5


def test_mixed_start_shows_a_chain_stuck_with_too_many_states():
    """On 100 steps of 5-D white noise the particle filter starts with dozens
    of states and the chains stay there; the default init="mixed" starts the
    odd-numbered chains in one state, where they stay, so the split R-hat
    sees the disagreement and the fit warns (with init="particle_filter"
    every chain was stuck alike: R-hat 1.003 after 3,200 sweeps)."""
    X = np.random.default_rng(0).normal(size=(100, 5))
    kw = dict(max_time=0, n_burnin=100, n_samples=300, random_state=0)
    with pytest.warns(ConvergenceWarning):
        model = InfiniteHMM(**kw).fit(X)
    K = model.trace_["n_states"][:, 100:]
    assert K[0::2].min() > K[1::2].max()
    assert model.convergence_["n_states"]["r_hat"] > 1.5


def test_a_chain_run_in_rounds_equals_one_long_run():
    from sk_ihmm._chain import advance_chain, start_chain

    X, _ = make_gaussian_hmm(100, 3, random_state=0)
    prob = make_problem(Gaussian(), X, 1, [100])
    x0 = (np.arange(100) % 3 + 1).astype(np.int64)
    for sampler in SAMPLERS:
        one = advance_chain(start_chain(sampler, prob, x0, np.random.SeedSequence(5)), prob, 30, 0, 1)
        two = start_chain(sampler, prob, x0, np.random.SeedSequence(5))
        advance_chain(two, prob, 12, 0, 1)
        advance_chain(two, prob, 18, 0, 1)
        np.testing.assert_array_equal(one.samples[-18:], two.samples)
        np.testing.assert_array_equal(one.trace["log_joint"], two.trace["log_joint"])


def test_compile_clock_counts_compilation_only():
    from numba import njit

    from sk_ihmm._compile_clock import compile_clock

    def fresh(x):          # a new function: compiled on its first call
        total = 0.0
        for i in range(x.shape[0]):
            total += math.sqrt(x[i])
        return total

    kernel = njit(fresh)
    with compile_clock() as clock:
        kernel(np.ones(3))
        compiled = clock.seconds
        kernel(np.ones(3))                 # already compiled: nothing to add
        time.sleep(0.05)
    assert compiled > 0 and clock.seconds == compiled
    with compile_clock() as idle:
        kernel(np.ones(3))
    assert idle.seconds == 0.0


def test_compile_clock_of_all_threads():
    """A clock counts its own thread's compilations; ``other_threads=True``
    those of the other threads (chains run in threads) instead."""
    import threading

    from numba import njit

    from sk_ihmm._compile_clock import compile_clock

    def fresh(x):
        return math.sqrt(x) + 1.0

    kernel = njit(fresh)
    with compile_clock() as own, compile_clock(other_threads=True) as others:
        worker = threading.Thread(target=kernel, args=(2.0,))
        worker.start()
        worker.join()
    assert own.seconds == 0.0 and others.seconds > 0
    with compile_clock() as own, compile_clock(other_threads=True) as others:
        njit(lambda x: x + 2.0)(1.0)
    assert own.seconds > 0 and others.seconds == 0.0


def test_max_time_leaves_out_compilation(monkeypatch):
    """max_time counts the fit's wall time minus the compile clock's."""
    import sk_ihmm._estimator as est

    def clock_reading(counted):
        class FakeClock:      # reports all but ``counted`` seconds of the fit as compiling
            def __enter__(self):
                self.t0 = time.perf_counter()
                return self

            def __exit__(self, *exc):
                return False

            @property
            def seconds(self):
                return time.perf_counter() - self.t0 - counted
        return FakeClock

    X, _ = make_gaussian_hmm(100, 1, random_state=0, sd=0.3)
    kw = dict(n_samples=50, n_burnin=50, n_chains=2, max_sweeps=20000, random_state=0)
    unlimited = InfiniteHMM(max_time=None, **kw).fit(X)
    assert unlimited.convergence_["n_rounds"] > 1
    # every sweep "takes" a microsecond: every round fits in 0.15 s
    monkeypatch.setattr(est, "round_seconds", lambda chains, n, n_jobs, measured: 1e-6 * n)
    monkeypatch.setattr(est, "compile_clock", clock_reading(0.0))
    model = InfiniteHMM(max_time=0.15, **kw).fit(X)
    assert model.convergence_["n_rounds"] == unlimited.convergence_["n_rounds"]
    assert model.convergence_["compile_seconds"] > 0
    monkeypatch.setattr(est, "compile_clock", clock_reading(1.0))
    with pytest.warns(ConvergenceWarning):
        short = InfiniteHMM(max_time=0.15, **kw).fit(X)
    assert short.convergence_["n_rounds"] == 1


def test_next_round_fills_the_budget():
    """Budget-mode rounds: as long as all the sweeps before them, or cut to
    what fits in max_sweeps or max_time, while that adds at least a quarter
    to the window; each extends the window (its thinning a multiple of the
    window's, so that the last three quarters hold at most 2 * n_samples)."""
    from sk_ihmm._budget import next_round

    # after 800 sweeps the window is the last 600, every 4th kept
    def plan(left, max_sweeps=100_000, thin=4):
        return next_round(800, 200, thin, 100, max_sweeps, left, 0.01)

    assert next_round(200, 100, 1, 100, 100_000, None, 1.0) == (200, 2, True)
    assert next_round(250, 100, 1, 100, 100_000, None, 1.0) == (300, 3, True)  # n_samples * thin
    assert plan(10.0) == (800, 8, True)           # fits: 8 s of 10; sweeps 400-1599 every 8th
    assert plan(5.0) == (496, 8, True)            # cut to the 5 s left, a multiple of the thinning
    assert plan(5.03) == (496, 8, True)
    assert plan(1.6) == (160, 4, True)            # over a quarter of the window
    assert plan(1.4) is None                      # under a quarter
    assert plan(-1.0) is None                     # out of time
    assert plan(None, max_sweeps=1400) == (600, 8, True)    # cut to max_sweeps
    assert plan(None, max_sweeps=800) is None
    # samples not evenly kept (after a warm start): a cut round replaces the window
    assert plan(5.0, thin=None) == (500, 5, False)
    assert plan(3.0, thin=None) is None           # 300 < 800 / 2
    # a long first-round burn-in: the extension keeps every 16th sweep, so
    # the window from sweep 5000 holds at most 2 * n_samples samples
    assert next_round(5100, 5000, 1, 100, 100_000, 30.0, 0.01) == (2992, 16, True)


def test_a_cut_round_extends_the_window_to_the_last_three_quarters(monkeypatch):
    """With max_sweeps between two doublings the last round is cut: the fit
    uses every allowed sweep, and the diagnostics and kept samples cover the
    last three quarters of each chain, every thin_-th sweep from n_burnin_
    on (the snapshots' joints are those traced at those sweeps)."""
    from sk_ihmm._diagnostics import kept_sweeps

    X, _ = make_gaussian_hmm(60, 3, random_state=0)
    # rounds of 100, 100, 200, 400 sweeps (800 in all), then an extension of 200
    model = InfiniteHMM(n_samples=50, n_burnin=50, n_chains=2, max_time=None, max_sweeps=1000,
                        random_state=0)
    import sk_ihmm._diagnostics as diag

    real = diag.convergence_report
    monkeypatch.setattr(diag, "convergence_report",       # never converged: every round runs
                        lambda trace, start, **kw: {**real(trace, start, **kw), "converged": False})
    with pytest.warns(ConvergenceWarning):
        model.fit(X)
    assert model.n_sweeps_ == 1000 and model.convergence_["n_rounds"] == 5
    assert model.thin_ == 8 and model.n_burnin_ == 248      # 94 samples from sweep 255 on
    kept = kept_sweeps(model.n_sweeps_, model.n_burnin_, model.thin_)
    assert kept[0] >= model.n_sweeps_ // 4 and kept[-1] == model.n_sweeps_ - 1
    for c in range(2):
        assert model.state_samples_[c].shape == (94, 60)
        np.testing.assert_array_equal([snap.log_joint for snap in model.snapshots_[c]],
                                      model.trace_["log_joint"][c, kept])


@pytest.mark.parametrize("n_samples, n_burnin, thin", [(100, 0, 1), (100, 100, 3), (50, 37, 2),
                                                       (7, 5, 1), (2, 1, 7), (2, 1, 1), (333, 1000, 2)])
def test_rounds_keep_an_even_grid_of_n_samples_to_twice_as_many(n_samples, n_burnin, thin):
    """The budget mode's bookkeeping, without chains: after every round,
    full or cut short at any sweep, the kept sweeps are those kept_sweeps
    reads from (n_burnin_, thin_), between n_samples and 2 * n_samples of
    them, the last sweep among them, and n_burnin_ >= 0."""
    from types import SimpleNamespace

    from sk_ihmm._budget import move_window, next_round

    for max_sweeps in list(range(n_burnin + n_samples * thin + 1, 20_000, 997)) + [999, 17_094]:
        n = n_burnin + n_samples * thin
        chain = SimpleNamespace(n_sweeps=n, snapshots=list(kept_sweeps(n, n_burnin, thin)))
        chain.samples = np.array(chain.snapshots)
        nb, th = n_burnin, thin
        while (plan := next_round(chain.n_sweeps, nb, th, n_samples, max_sweeps, None, 1.0)):
            n_next, round_thin, extend = plan
            assert extend
            chain.snapshots += [chain.n_sweeps + s for s in kept_sweeps(n_next, 0, round_thin)]
            chain.samples = np.array(chain.snapshots)
            chain.n_sweeps += n_next
            nb, th = move_window([chain], nb, th, n_next, round_thin, n_samples)
            kept = list(kept_sweeps(chain.n_sweeps, nb, th))
            assert chain.snapshots == kept and kept[-1] == chain.n_sweeps - 1
            assert n_samples <= len(kept) <= 2 * n_samples and nb >= 0


def test_move_window_keeps_the_extension_grid():
    """After an extension with a coarser thinning the kept samples are those
    on the extension's grid from the last three quarters on, evenly spaced to the last
    sweep, as kept_sweeps(n_burnin_, thin_) reads them."""
    from types import SimpleNamespace

    from sk_ihmm._diagnostics import kept_sweeps
    from sk_ihmm._budget import move_window

    # every sweep kept from 10 to 49, then an extension of 48 sweeps keeping
    # every third (52, 55, ..., 97)
    sweeps = list(range(10, 50)) + list(range(52, 98, 3))
    chain = SimpleNamespace(n_sweeps=98, snapshots=list(sweeps), samples=np.array(sweeps)[:, None])
    n_burnin, thin = move_window([chain], 10, 1, 48, 3, n_samples=10)
    kept = kept_sweeps(98, n_burnin, thin)
    assert (n_burnin, thin) == (23, 3) and list(kept) == list(range(25, 98, 3))
    assert chain.snapshots == list(kept) == list(chain.samples[:, 0])


def _report(r_hat, ess, tail=None):
    tail = ess if tail is None else tail
    rows = {key: {"r_hat": r, "ess_bulk": e, "ess_tail": et}
            for key, r, e, et in zip(("n_states", "log_lik"), r_hat, ess, tail)}
    return {**rows, "converged": False, "thresholds": {"r_hat_max": 1.01, "ess_min": 400},
            "n_sweeps": 1000, "n_rounds": 3, "seconds": 1.0}


@pytest.mark.parametrize("r_hat, ess, tail, log_lik, near", [
    ((1.015, 1.002), (450, 3000), None, 0.0, True),    # phys1d / split_merge in bench_defaults
    ((1.02, 1.0), (200, 900), None, 0.0, True),        # the limits themselves
    ((1.021, 1.0), (900, 900), None, 0.0, False),      # R-hat beyond the noise of 400 draws
    ((1.005, 1.0), (199, 900), None, 0.0, False),      # bulk ESS under half the target
    ((1.005, 1.0), (900, 900), (900, 150), 0.0, False),  # tail ESS under half the target
    ((1.012, math.nan), (500, math.nan), None, 0.0, True),  # a constant quantity: no objection
    ((1.012, math.nan), (500, math.nan), None, -np.inf, False),  # non-finite draws: not near
    ((math.nan, math.nan), (math.nan, math.nan), None, 0.0, False),  # too few draws
])
def test_warning_says_when_the_figures_are_near_the_targets(r_hat, ess, tail, log_lik, near):
    """Within the diagnostics' own noise the warning says that the chains may
    only be short of draws; further off, or without usable draws, it does not."""
    from sk_ihmm._diagnostics import convergence_message, near_thresholds

    report = _report(r_hat, ess, tail)
    trace = {"n_states": np.array([[5, 5, 6, 5], [6, 5, 5, 5]]),
             "log_lik": np.array([[-10.0, -10.0, -10.0, -10.0], [-10.0, -10.0, log_lik, -10.0]])}
    assert near_thresholds(report, trace) is near
    message = convergence_message(report, trace)
    assert ("near the targets" in message) is near
    assert "(targets: R-hat <= 1.01, ESS >= 400)" in message


def test_warning_projects_the_sweeps_the_ess_target_needs():
    """The warning says how many sweeps the lowest ESS would need to reach its
    target if it grew in proportion to the sweeps: the window scaled by
    target / ESS, after the current burn-in or a quarter of the chain."""
    from sk_ihmm._diagnostics import convergence_message, projected_sweeps

    trace = {"n_states": np.array([[5, 5, 6, 5], [6, 5, 5, 5]]),
             "log_lik": np.full((2, 4), -10.0)}
    # lowest ESS 100 (log_lik's tail) of a 750-sweep window of 1,000 sweeps:
    # 3,000 sweeps of window, 4,000 in all, 3,000 more
    report = _report((1.015, 1.005), (200, 900), (300, 100))
    assert projected_sweeps(report, 750) == 4000
    message = convergence_message(report, trace, n_window=750, sweep_seconds=0.0123,
                                  max_sweeps=100_000)
    assert ("(the lowest here, the tail ESS of log_lik, 100, comes from the last 750 sweeps of "
            "each chain), an ESS of 400 needs about 4,000 sweeps per chain, 3,000 more, about "
            "37 s at this fit's pace.") in message
    assert "max_sweeps" not in message.split("pace.")[1].split("The chains end")[0]
    assert "lower bound" not in message
    assert "more than max_sweeps=3000" in convergence_message(report, trace, n_window=750,
                                                              max_sweeps=3000)
    # a short window after a long burn-in: the burn-in stays, so the figure is
    # always more than the sweeps run; R-hat far off: a lower bound; an ESS
    # under 10 shows its first decimal; seconds under one say so
    report = _report((1.2, 1.0), (20, 900))
    assert projected_sweeps(report, 100) == 900 + 2000
    message = convergence_message(report, trace, n_window=100)
    assert "needs about 2,900 sweeps per chain, 1,900 more." in message
    assert "lower bound" in message
    report = _report((1.005, 1.0), (3.46, 900))
    assert projected_sweeps(report, 100) == math.ceil(math.ceil(100 * 400 / 3.46) / 0.75)
    message = convergence_message(report, trace, n_window=100, sweep_seconds=1e-5)
    assert "the bulk ESS of n_states, 3.5," in message and "lower bound" not in message
    assert "15,000 sweeps per chain, 14,000 more, under a second at this fit's pace" in message
    # only R-hat misses its target, or no usable ESS: no projection
    assert projected_sweeps(_report((1.015, 1.002), (450, 3000)), 750) is None
    assert projected_sweeps(_report((math.nan, math.nan), (math.nan, math.nan)), 750) is None
    assert "sweeps per chain," not in convergence_message(
        _report((1.015, 1.002), (450, 3000)), trace, n_window=750)
    assert "sweeps per chain," not in convergence_message(report, trace)


def test_warning_figures_are_not_rounded_onto_the_target():
    """A figure that misses its target never reads as meeting it: R-hat is
    rounded up (1.0104 reads 1.011, not 1.01 against '<= 1.01') and ESS down
    (399.6 reads 399, not 400 against '>= 400'); one round is 'round'."""
    from sk_ihmm._diagnostics import convergence_message

    report = _report((1.0104, 1.0), (399.6, 900.2), (1000, 412.9))
    report["n_rounds"] = 1
    trace = {"n_states": np.array([[5, 5, 6, 5], [6, 5, 5, 5]]),
             "log_lik": np.full((2, 4), -10.0)}
    message = convergence_message(report, trace)
    assert "n_states: R-hat 1.011, bulk ESS 399, tail ESS 1000" in message
    assert "log_lik: R-hat 1.000, bulk ESS 900, tail ESS 412" in message
    assert "(1 round, " in message
    # max_time leaves out compiling, so the time says how much of it there was
    report["seconds"], report["compile_seconds"] = 25.7, 20.8
    assert "(1 round, 25.7 s, of which 20.8 s compiling): " in convergence_message(report, trace)
    report["compile_seconds"] = 0.0
    assert "(1 round, 25.7 s): " in convergence_message(report, trace)
    # a first round longer than max_time ran whole: the warning says so and what to lower
    note = "The first round (1000 sweeps, n_burnin + n_samples * thin) always runs whole"
    assert (note + " and alone took 25.7 s, more than max_time=15: lower n_burnin and n_samples"
            in convergence_message(report, trace, max_time=15))
    assert note not in convergence_message(report, trace, max_time=30)
    assert note not in convergence_message(report, trace)
    assert note not in convergence_message(report, trace, max_time=0)   # one round asked for
    report["n_rounds"] = 2
    assert note not in convergence_message(report, trace, max_time=15)
