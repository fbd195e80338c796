"""Emission families: predictive kernels agree with the closed-form marginals."""

import numpy as np
import pytest

from sk_ihmm.emissions import (
    SHIFTED_FLOOR,
    AutoRegressive,
    Categorical,
    DiagonalGaussian,
    Gaussian,
    MultivariateGaussian,
    Poisson,
    add_labelled,
    log_marginal_sum,
    log_pred,
    log_pred_block,
    make_emission,
    move_block,
    move_stats,
    param_loglik,
    sample_param,
    shifted_param_loglik_block,
    update,
)


def _sequential(family, Y, dim):
    """log of prod_t p(y_t | y_<t) through the kernels (statistics in row 1
    of a two-row table: the kernels index rows, never take views)."""
    hyp = family.hyperparameters(dim)
    stats = np.zeros((2, family.n_stats(dim)))
    total = 0.0
    for t in range(len(Y)):
        total += log_pred(family.tag, stats, 1, hyp, Y, t)
        update(family.tag, stats, 1, Y, t, 1.0)
    return total, stats, hyp


def _ar_case(d, p, seed):
    """An AutoRegressive family with an explicit prior and the prepared rows
    ``[y_t, y_{t-1}, ..., y_{t-p}]`` of a random walk far from the origin
    (the conditioning rows dropped)."""
    rng = np.random.default_rng(seed)
    m = d * p + 1
    A = rng.normal(size=(m, m))
    B = rng.normal(size=(d, d))
    family = AutoRegressive(order=p, center=rng.normal(50.0, 1.0, d), M0=0.3 * rng.normal(size=(d, m)),
                            K0=A @ A.T / m + 0.5 * np.eye(m), nu0=d + 1.5, psi0=B @ B.T + np.eye(d))
    X = 50.0 + np.cumsum(rng.normal(size=(9 + p, d)), axis=0)
    Y = family.prepare(X, [0], [len(X)])
    return family, Y[p:], d


CASES = [
    (Categorical(concentration=0.7), np.array([[0], [2], [2], [1], [0], [2]], float), 4),
    (Gaussian(mu0=0.3, lambda0=0.5, a0=2.0, b0=0.7), np.random.default_rng(0).normal(1, 2, (9, 1)), 1),
    (MultivariateGaussian(mu0=0.1, kappa0=0.5, psi0=2.0), np.random.default_rng(1).normal(0, 1, (8, 3)), 3),
    (Poisson(a0=1.5, b0=0.7), np.random.default_rng(2).poisson(4.0, (9, 1)).astype(float), 1),
    (Poisson(a0=2.0, b0=[0.5, 1.5]), np.random.default_rng(3).poisson([1.0, 9.0], (8, 2)).astype(float), 2),
    (DiagonalGaussian(mu0=[0.1, -0.5, 2.0], lambda0=0.5, a0=2.0, b0=[0.7, 2.0, 0.05]),
     np.random.default_rng(4).normal([0.0, 1.0, 2.0], [1.0, 3.0, 0.2], (9, 3)), 3),
    _ar_case(1, 1, 4),
    _ar_case(2, 2, 5),
]


def _n_suff(family, Y, dim, n_stats):
    """Number of leading columns of a row of statistics that are sufficient
    statistics (not caches or scratch)."""
    W = Y.shape[1]
    return {"gaussian": 3, "multivariate_gaussian": 1 + dim + dim * dim,
            "autoregressive": 1 + W + W * W}.get(family.name, n_stats)


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_chain_rule_equals_marginal(family, Y, dim):
    seq, stats, hyp = _sequential(family, Y, dim)
    assert np.isclose(seq, family.log_marginal(Y, dim), rtol=1e-10, atol=1e-10)
    assert np.isclose(family.log_marginal_stats(stats[1:], hyp)[0], seq, rtol=1e-10)
    assert not np.any(stats[0]), "a kernel wrote outside its row"


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_remove_undoes_add(family, Y, dim):
    fam, hyp, T = family.tag, family.hyperparameters(dim), len(Y)
    stats = np.zeros((2, family.n_stats(dim)))
    for t in range(T - 1):
        update(fam, stats, 0, Y, t, 1.0)
    before = log_pred(fam, stats.copy(), 0, hyp, Y, T - 1)
    update(fam, stats, 0, Y, T - 1, 1.0)
    update(fam, stats, 0, Y, T - 1, -1.0)
    assert np.isclose(log_pred(fam, stats, 0, hyp, Y, T - 1), before, rtol=1e-10)
    for t in range(T - 1):
        update(fam, stats, 0, Y, t, -1.0)
    prior = log_pred(fam, np.zeros_like(stats), 1, hyp, Y, 0)
    assert np.isclose(log_pred(fam, stats, 0, hyp, Y, 0), prior, rtol=1e-9)


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_sampled_parameters_match_posterior_predictive(family, Y, dim):
    """Averaging the likelihood under posterior parameter draws gives the
    posterior predictive (Monte-Carlo check of sample_param/param_loglik)."""
    fam, hyp, T = family.tag, family.hyperparameters(dim), len(Y)
    stats = np.zeros((3, family.n_stats(dim)))
    for t in range(T - 1):
        update(fam, stats, 2, Y, t, 1.0)
    rng = np.random.default_rng(0)
    out = np.zeros((2, family.n_params(dim)))
    vals = np.empty(20000)
    for i in range(vals.size):
        sample_param(fam, stats, 2, hyp, rng, out, 1)
        vals[i] = np.exp(param_loglik(fam, out, 1, Y, T - 1))
    assert not np.any(out[0]), "sample_param wrote outside its row"
    target = np.exp(log_pred(fam, stats, 2, hyp, Y, T - 1))
    se = vals.std() / np.sqrt(vals.size)
    assert abs(vals.mean() - target) < 5 * se


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_shifted_param_loglik_block(family, Y, dim):
    """The block kernel of pgas's emission terms: param_loglik of states
    1..n for steps start.., plus the caller's column 0, each row minus its
    maximum; rows past the block and columns past n untouched."""
    fam, hyp, T = family.tag, family.hyperparameters(dim), len(Y)
    stats = np.zeros((1, family.n_stats(dim)))
    for t in range(T):
        update(fam, stats, 0, Y, t, 1.0)
    rng = np.random.default_rng(3)
    n = 3
    param = np.zeros((n + 1, family.n_params(dim)))
    for k in range(1, n + 1):
        sample_param(fam, stats, 0, hyp, rng, param, k)
    start, length = 2, T - 3
    col0 = rng.normal(-3.0, 2.0, size=length)
    out = np.full((length + 1, n + 2), 7.0)
    out[:length, 0] = col0
    shifted_param_loglik_block(fam, param, n, Y, start, length, out)
    want = np.column_stack([col0] + [[param_loglik(fam, param, k, Y, start + l)
                                      for l in range(length)] for k in range(1, n + 1)])
    want -= want.max(axis=1, keepdims=True)
    np.testing.assert_allclose(out[:length, :n + 1], want, rtol=1e-12, atol=1e-12)
    assert np.all(out[length] == 7.0) and np.all(out[:, n + 1] == 7.0)
    # a caller's term far below the others is clamped at SHIFTED_FLOOR
    out[:length, 0] = -1e4
    shifted_param_loglik_block(fam, param, n, Y, start, length, out)
    assert np.all(out[:length, 0] == SHIFTED_FLOOR)
    raw = want[:, 1:] - want[:, 1:].max(axis=1, keepdims=True)
    np.testing.assert_allclose(out[:length, 1:n + 1], np.maximum(raw, SHIFTED_FLOOR),
                               rtol=1e-12, atol=1e-12)


def test_gaussian_welford_is_stable_for_large_offsets():
    family = Gaussian(mu0=1e6, b0=1.0)
    rng = np.random.default_rng(0)
    Y = 1e6 + rng.normal(0, 1, (2000, 1))
    stats = np.zeros((1, family.n_stats(1)))
    for t in range(2000):
        update(family.tag, stats, 0, Y, t, 1.0)
    for t in range(1000):
        update(family.tag, stats, 0, Y, t, -1.0)
    assert np.isclose(stats[0, 2] / 999, Y[1000:].var(ddof=1), rtol=1e-6)


def test_make_emission():
    assert isinstance(make_emission("categorical"), Categorical)
    g = Gaussian(b0=3.0)
    assert make_emission(g) is g
    with pytest.raises(ValueError, match="Unknown emission"):
        make_emission("negative_binomial")


def test_make_emission_covariance_type():
    """``"gaussian"`` with ``covariance_type``: full (1-D or NIW) or diagonal
    for any number of columns; "diag" with another family is an error naming
    it, and a diagonal family is accepted with either value."""
    assert type(make_emission("gaussian", 1)) is Gaussian
    assert type(make_emission("gaussian", 3)) is MultivariateGaussian
    for n_features in (None, 1, 3):
        assert type(make_emission("gaussian", n_features, "diag")) is DiagonalGaussian
    diag = DiagonalGaussian(a0=3.0)
    assert make_emission(diag, 2, "diag") is diag and make_emission(diag, 2) is diag
    assert type(make_emission("diagonal_gaussian", 2, "diag")) is DiagonalGaussian
    for other in ("categorical", "multivariate_gaussian", Gaussian(), Poisson()):
        with pytest.raises(ValueError, match="covariance_type='diag' applies to emission="):
            make_emission(other, 2, "diag")
    with pytest.raises(ValueError, match="covariance_type must be 'full' or 'diag'"):
        make_emission("gaussian", 2, "spherical")


def test_diagonal_gaussian_with_one_column_is_the_gaussian():
    """One column: the same hyperparameters, log marginal likelihood and
    predictives (kernels) as the 1-D Normal-Inverse-Gamma family, with the
    data-scaled prior too."""
    rng = np.random.default_rng(5)
    Y = rng.normal(1450.0, 30.0, (12, 1))
    gauss, diag = Gaussian(), DiagonalGaussian()
    pg, pd = gauss.resolve_prior(Y), diag.resolve_prior(Y)
    assert pd["mu0"].tolist() == [pg["mu0"]] and pd["b0"].tolist() == [pg["b0"]]
    assert (pd["lambda0"], pd["a0"]) == (pg["lambda0"], pg["a0"])
    hg, hd = gauss.hyperparameters(1, prior=pg), diag.hyperparameters(1, prior=pd)
    for idx in ([0], [1, 5], list(range(12))):
        assert np.isclose(diag.log_marginal(Y[idx], 1, hd), gauss.log_marginal(Y[idx], 1, hg),
                          rtol=1e-12)
    sg, sd = np.zeros((1, gauss.n_stats(1))), np.zeros((1, diag.n_stats(1)))
    for t in range(len(Y)):
        assert np.isclose(log_pred(diag.tag, sd, 0, hd, Y, t), log_pred(gauss.tag, sg, 0, hg, Y, t),
                          rtol=1e-12)
        update(diag.tag, sd, 0, Y, t, 1.0)
        update(gauss.tag, sg, 0, Y, t, 1.0)
    assert np.isclose(log_marginal_sum(diag.tag, sd, hd), log_marginal_sum(gauss.tag, sg, hg),
                      rtol=1e-12)


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_log_pred_block_matches_log_pred(family, Y, dim):
    """The block kernel gives entry by entry what log_pred gives, for labels
    in any order (a free, all-zero label included), and touches only
    ``out[:length, :n_labels]``."""
    fam, hyp, T = family.tag, family.hyperparameters(dim), len(Y)
    stats = np.zeros((4, family.n_stats(dim)))
    for t in range(T):
        update(fam, stats, 1 + t % 2, Y, t, 1.0)        # labels 1 and 2; 3 stays free
    labels = np.array([2, 3, 1, 2], np.int64)
    out = np.full((T, 5), 7.0)
    log_pred_block(fam, stats, labels, 3, hyp, Y, 1, T - 2, out)
    expect = np.array([[log_pred(fam, stats, k, hyp, Y, t) for k in labels[:3]]
                       for t in range(1, T - 1)])
    np.testing.assert_allclose(out[:T - 2, :3], expect, rtol=1e-12)
    assert np.all(out[T - 2:] == 7.0) and np.all(out[:, 3:] == 7.0)


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_move_block_is_the_sum_of_sequential_predictives(family, Y, dim):
    """``move_block`` (closed form for the Gaussian families) returns what the
    RCD factors collect one observation at a time, both ways, and leaves the
    same statistics as ``update``."""
    fam, hyp, T = family.tag, family.hyperparameters(dim), len(Y)
    labels = np.array([1 + (t % 3 == 0) for t in range(T)], dtype=np.int64)   # labels 1, 2
    b, L = 2, T - 3
    xb = labels[b:b + L].copy()
    stats = np.zeros((3, family.n_stats(dim)))
    for t in range(T):
        update(fam, stats, labels[t], Y, t, 1.0)
    ref = stats.copy()
    # removal: reverse time order, each predictive right after its removal
    expected_rm = 0.0
    for l in range(L - 1, -1, -1):
        update(fam, ref, xb[l], Y, b + l, -1.0)
        expected_rm += log_pred(fam, ref, xb[l], hyp, Y, b + l)
    work = np.empty(L, np.int64)
    got_rm = move_block(fam, stats, hyp, Y, b, xb, -1.0, work)
    assert np.isclose(got_rm, expected_rm, rtol=1e-9, atol=1e-9)
    # sufficient statistics only (not the Gaussian predictive cache, nor the
    # multivariate scratch columns)
    n_suff = _n_suff(family, Y, dim, stats.shape[1])
    np.testing.assert_allclose(stats[:, :n_suff], ref[:, :n_suff], rtol=1e-10, atol=1e-12)
    # addition in time order, each predictive right before its addition
    expected_add = 0.0
    for l in range(L):
        expected_add += log_pred(fam, ref, xb[l], hyp, Y, b + l)
        update(fam, ref, xb[l], Y, b + l, 1.0)
    got_add = move_block(fam, stats, hyp, Y, b, xb, 1.0, work)
    assert np.isclose(got_add, expected_add, rtol=1e-9, atol=1e-9)
    assert np.isclose(got_add, got_rm, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(stats[:, :n_suff], ref[:, :n_suff], rtol=1e-10, atol=1e-12)
    assert not np.any(stats[0]), "move_block wrote outside the labels it moves"


@pytest.mark.parametrize("runs", [False, True], ids=["short_runs", "long_runs"])
@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_add_labelled_equals_sequential_updates(family, Y, dim, runs):
    """``add_labelled`` leaves the statistics ``update`` leaves one observation
    at a time, also on rows that already hold observations (the Gaussian
    batch is merged into them), and the predictives read them the same way;
    with labels in runs of one or two and in long runs (the Gaussian family
    sums a run before adding it to its row)."""
    fam, hyp, T = family.tag, family.hyperparameters(dim), len(Y)
    if runs:   # 1 1 1 2 2 2 ... 1 1 3: long runs, a label coming back, the last one alone
        labels = np.array([1 + (t * 3 // T) % 2 for t in range(T)], np.int64)
        labels[-1] = 3
    else:
        labels = np.array([1 + (t % 3 == 0) + (t == T - 1) for t in range(T)], np.int64)  # 1, 2, 3
    start = np.zeros((5, family.n_stats(dim)))
    for t in range(0, T, 2):                       # rows 1 and 2 hold data before
        update(fam, start, 1 + t % 4 // 2, Y, t, 1.0)
    log_pred(fam, start, 1, hyp, Y, 0)              # fills the Gaussian caches:
    log_marginal_sum(fam, start, hyp)               # predictive and marginal
    ref, got = start.copy(), start.copy()
    for t in range(T):
        update(fam, ref, labels[t], Y, t, 1.0)
    add_labelled(fam, got, labels, Y)
    n_suff = _n_suff(family, Y, dim, got.shape[1])
    np.testing.assert_allclose(got[:, :n_suff], ref[:, :n_suff], rtol=1e-10, atol=1e-12)
    assert not np.any(got[0]) and not np.any(got[4])
    for k in (1, 2, 3, 4):
        assert np.isclose(log_pred(fam, got, k, hyp, Y, 1), log_pred(fam, ref, k, hyp, Y, 1),
                          rtol=1e-10)
    assert np.isclose(log_marginal_sum(fam, got, hyp), log_marginal_sum(fam, ref, hyp),
                      rtol=1e-12)


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_move_stats_equals_sequential_updates(family, Y, dim):
    """``move_stats`` (block sums merged per label for the 1-d Gaussian)
    leaves the statistics ``update`` leaves step by step: adding a block to
    rows that hold data and to an empty row, then removing it again, which
    empties that row; the caches are invalidated (filled before each move)
    and the block sums are cleared."""
    fam, hyp, T = family.tag, family.hyperparameters(dim), len(Y)
    b, L = 1, T - 2
    xb = np.array([1 + (t % 3 == 0) + 2 * (t == 2) for t in range(L)], np.int64)  # 1, 2, 3
    start = np.zeros((5, family.n_stats(dim)))
    for t in (0, T - 1):                           # rows 1 and 2 hold data, 3 is empty
        update(fam, start, 1 + (t == 0), Y, t, 1.0)
    n_suff = _n_suff(family, Y, dim, start.shape[1])
    work = np.empty(L, np.int64)
    got, ref = start.copy(), start.copy()
    for sign in (1.0, -1.0):
        for k in (1, 2, 3):
            log_pred(fam, got, k, hyp, Y, 0)        # fills the Gaussian caches:
        log_marginal_sum(fam, got, hyp)             # predictive and marginal
        for l in range(L) if sign > 0 else range(L - 1, -1, -1):
            update(fam, ref, xb[l], Y, b + l, sign)
        move_stats(fam, got, Y, b, xb, sign, work)
        np.testing.assert_allclose(got[:, :n_suff], ref[:, :n_suff], rtol=1e-10, atol=1e-12)
        for k in (1, 2, 3):
            assert np.isclose(log_pred(fam, got, k, hyp, Y, 1), log_pred(fam, ref, k, hyp, Y, 1),
                              rtol=1e-10)
        assert np.isclose(log_marginal_sum(fam, got, hyp), log_marginal_sum(fam, ref, hyp),
                          rtol=1e-12)
        if family.name == "gaussian":
            assert not np.any(got[:, 10:]), "block sums left behind"
    assert not np.any(got[3, :n_suff]) and not np.any(got[0]) and not np.any(got[4])


def test_gaussian_block_moves_are_stable_for_large_offsets():
    """Block sums are taken about each label's mean (an empty label's first
    observation), so a far-off mean loses no precision."""
    family = Gaussian(mu0=1e6, b0=1.0)
    hyp = family.hyperparameters(1)
    Y = 1e6 + np.random.default_rng(0).normal(0, 1, (2000, 1))
    stats = np.zeros((2, family.n_stats(1)))
    work = np.empty(2000, np.int64)
    ones = np.ones(1000, np.int64)
    move_block(family.tag, stats, hyp, Y, 0, ones, 1.0, work)
    move_stats(family.tag, stats, Y, 1000, ones, 1.0, work)
    assert np.isclose(stats[1, 2] / 1999, Y.var(ddof=1), rtol=1e-9)
    move_stats(family.tag, stats, Y, 0, ones[:999], -1.0, work)
    assert np.isclose(stats[1, 2] / 1000, Y[999:].var(ddof=1), rtol=1e-9)
    assert np.isclose(stats[1, 1], Y[999:].mean(), rtol=1e-15)


@pytest.mark.parametrize("family, Y, dim", CASES, ids=lambda c: getattr(c, "name", ""))
def test_log_marginal_sum_matches_the_vectorised_marginals(family, Y, dim):
    """The numba sum used by the samplers' ``log_joint`` equals the families'
    vectorised closed forms summed over the rows with observations (rows
    without any add nothing)."""
    fam, hyp, T = family.tag, family.hyperparameters(dim), len(Y)
    stats = np.zeros((5, family.n_stats(dim)))
    for t in range(T):
        update(fam, stats, 1 + (t % 3 == 0) + (t == T - 1), Y, t, 1.0)   # rows 1-3; 0, 4 empty
    used = stats[:, -1 if family.discrete else 0] > 0
    expect = family.log_marginal_stats(stats[used][:, :family.n_stats(dim)], hyp).sum()
    assert np.isclose(log_marginal_sum(fam, stats, hyp), expect, rtol=1e-12, atol=1e-10)
    assert log_marginal_sum(fam, np.zeros_like(stats), hyp) == 0.0


def test_lgamma_half_step_series():
    """The Student-t normaliser's lgamma(a + 1/2) - lgamma(a) - log(a)/2, by
    its asymptotic series from a = 30 on and by lgamma below, against values
    computed with mpmath at 40 digits. The series is held to 1e-17 absolute
    (a difference of two lgammas could not be: each is about a log(a));
    the lgamma form to its own rounding."""
    from sk_ihmm.emissions.gaussian import HALF_STEP_SERIES_MIN, lgamma_half_step

    assert HALF_STEP_SERIES_MIN == 30.0
    exact = {0.5: -0.22579135264472743236, 3.7: -0.033683099529887493026,
             29.9: -0.0041804072288376332638, 30.0: -0.0041664738296783739425,
             30.5: -0.004098177145926908018, 47.25: -0.0026454532787010900082,
             120.0: -0.0010416636526476666047, 2001.5: -0.000062453159480323604277,
             100000.0: -1.2499999999947916667e-6}
    for a, want in exact.items():
        tol = 1e-17 if a >= 30.0 else 5e-14
        assert abs(lgamma_half_step(a) - want) < tol, (a, lgamma_half_step(a) - want)


def test_gaussian_log_marginal_stirling_branch():
    """The 1-d Gaussian log marginal takes lgamma(a_n) from Stirling's series
    from a_n = 30 on: the series' tail against values computed with mpmath
    at 40 digits (to 1e-18), and the marginal against scipy's gammaln form,
    within the rounding of its terms (a few ulps of a_n log(a_n)) on both
    sides of the switch and up to a million observations."""
    from scipy.special import gammaln

    from sk_ihmm.emissions.gaussian import _STIRLING_MIN, _nig_posterior, _stirling_tail
    from sk_ihmm.emissions.gaussian import _log_marginal as _gauss_log_marginal

    assert _STIRLING_MIN == 30.0
    exact = {30.0: 0.002777674929752693603595, 30.5: 0.002732142563757402033514,
             47.25: 0.001763642101205841802643, 200.0: 0.0004166663194469245566733,
             500001.5: 1.666661666681444401445e-7}
    for a, want in exact.items():
        assert abs(_stirling_tail(a) - want) < 1e-18, (a, _stirling_tail(a) - want)
    family = Gaussian(mu0=0.3, lambda0=0.5, a0=1.5, b0=0.7)
    hyp = family.hyperparameters(1)
    for n, mean, m2 in [(3, 0.2, 1.1), (56, -1.0, 40.0), (57, 2.0, 80.0), (58, 0.0, 1e-3),
                        (400, 5.0, 900.0), (10**6, -3.0, 2.5e6)]:
        stats = np.zeros((1, family.n_stats(1)))
        stats[0, :3] = n, mean, m2
        _, lam_n, a_n, b_n = _nig_posterior(float(n), mean, m2, hyp)
        want = gammaln(a_n) - a_n * np.log(b_n) - np.log(lam_n) / 2 - n * np.log(2 * np.pi) / 2
        got = _gauss_log_marginal(stats, 0, hyp)
        scale = a_n * max(1.0, np.log(a_n)) + abs(a_n * np.log(b_n)) + n
        assert abs(got - want) < 8 * np.finfo(float).eps * scale, (n, got - want)
        assert stats[0, 8] == 1.0 and stats[0, 9] == got      # cached
