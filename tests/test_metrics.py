"""Tests for sk_ihmm.metrics."""

import numpy as np
import pytest
from scipy.signal import lfilter
from sklearn.metrics import adjusted_rand_score, mutual_info_score

from sk_ihmm.metrics import (
    effective_sample_size,
    integrated_autocorrelation_time,
    mutual_information,
    normalized_mutual_information,
    point_estimate_states,
    posterior_similarity_matrix,
    split_rhat,
)


def ar1(rho, shape, seed):
    """Stationary AR(1) draws with unit marginal variance."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(shape) * np.sqrt(1 - rho**2)
    x = lfilter([1.0], [1.0, -rho], noise, axis=-1)
    # Start in the stationary distribution: add the decayed initial state.
    start = rng.standard_normal(shape[:-1] + (1,))
    return x + start * rho ** np.arange(1, shape[-1] + 1)


# --------------------------------------------------------------------------
# Mutual information
# --------------------------------------------------------------------------
def test_mutual_information_of_identical_labelings_is_entropy():
    labels = np.repeat([0, 1, 2, 3], [10, 20, 30, 40])
    p = np.array([10, 20, 30, 40]) / 100
    entropy = -np.sum(p * np.log(p))
    assert mutual_information(labels, labels) == pytest.approx(entropy)
    assert normalized_mutual_information(labels, labels) == pytest.approx(1)


def test_mutual_information_invariant_to_relabelling():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, 500)
    h = np.where(rng.random(500) < 0.7, x, rng.integers(0, 6, 500))
    relabelled = np.array([17, -3, 5, 100, 8, 2])[h]
    mi = mutual_information(x, h)
    assert mi > 0.1
    assert mutual_information(x, relabelled) == pytest.approx(mi)
    assert mutual_information(h, x) == pytest.approx(mi)
    assert mi == pytest.approx(mutual_info_score(x, h))
    assert normalized_mutual_information(x, relabelled) == pytest.approx(
        normalized_mutual_information(x, h))


def test_mutual_information_of_independent_labelings_is_zero():
    t = np.arange(400)
    assert mutual_information(t % 2, (t // 2) % 2) == pytest.approx(0,
                                                                     abs=1e-12)
    assert mutual_information(t % 3, np.zeros(400)) == 0.0


def test_mutual_information_validation():
    with pytest.raises(ValueError):
        mutual_information([0, 1], [0, 1, 2])
    with pytest.raises(ValueError):
        mutual_information(np.zeros((2, 2)), np.zeros((2, 2)))


# --------------------------------------------------------------------------
# Integrated autocorrelation time
# --------------------------------------------------------------------------
def test_iat_matches_makino_formula_with_fixed_lag():
    x = np.random.default_rng(1).standard_normal(50).cumsum()
    T, mu, var = x.size, x.mean(), x.var()
    acf = [np.sum((x[:T - t] - mu) * (x[t:] - mu)) / ((T - t) * var)
           for t in range(1, 6)]
    assert integrated_autocorrelation_time(x, max_lag=5) == pytest.approx(
        0.5 + sum(acf))
    assert integrated_autocorrelation_time(x, max_lag=0) == 0.5


@pytest.mark.parametrize("window", ["geyer", "sokal"])
def test_iat_of_white_noise_is_one_half(window):
    n = 100_000
    x = np.random.default_rng(2).standard_normal(n)
    # The estimate sums a handful of ACF values, each with sd 1/sqrt(n).
    tol = 10 / np.sqrt(n)
    assert integrated_autocorrelation_time(x, window=window) == pytest.approx(
        0.5, abs=tol)


@pytest.mark.parametrize("window", ["geyer", "sokal"])
def test_iat_of_ar1_matches_analytic_value(window):
    rho, n = 0.9, 200_000
    expected = (1 + rho) / (1 - rho) / 2  # 9.5
    x = ar1(rho, (n,), seed=3)
    # Sokal's variance formula: var(tau_hat) ~ 2 (2M + 1) / n * tau^2, with
    # tau = 2 * ACT and a window M of about 5 tau.
    window_size = 5 * 2 * expected
    sd = expected * np.sqrt(2 * (2 * window_size + 1) / n)
    act = integrated_autocorrelation_time(x, window=window)
    assert abs(act - expected) < 4 * sd


def test_iat_of_constant_chain_is_nan():
    assert np.isnan(integrated_autocorrelation_time(np.full(100, 3.0)))


def test_iat_validation():
    with pytest.raises(ValueError):
        integrated_autocorrelation_time(np.zeros((10, 2)))
    with pytest.raises(ValueError):
        integrated_autocorrelation_time(np.arange(10.0), max_lag=10)
    with pytest.raises(ValueError):
        integrated_autocorrelation_time(np.arange(10.0), window="bogus")


# --------------------------------------------------------------------------
# ESS and R-hat
# --------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["bulk", "tail", "basic"])
def test_ess_of_independent_draws_is_sample_size(method):
    chains = np.random.default_rng(4).standard_normal((4, 1000))
    # Over seeds the estimate has a relative sd of about 0.045.
    assert effective_sample_size(chains, method) == pytest.approx(4000,
                                                                  rel=0.2)


def test_ess_is_arviz_ess():
    """Bulk and tail ESS are Stan's and ArviZ's to rounding, on continuous and
    on tied (integer) draws: the same rank normalisation and the same
    truncation of the autocorrelations, including Stan's extra even term. The
    reference values are ArviZ 0.23.4's; with ArviZ installed, any draws."""
    x = ar1(0.9, (4, 500), seed=11)
    tied = np.round(x / 2)
    reference = {(0, "bulk"): 137.35817655200086, (0, "tail"): 323.8700721006747,
                 (1, "bulk"): 164.22778995013138, (1, "tail"): 219.82913145633054}
    for (i, method), value in reference.items():
        assert effective_sample_size((x, tied)[i], method) == pytest.approx(value, rel=1e-12)
    try:
        import arviz as az
    except ImportError:
        return
    rng = np.random.default_rng(12)
    for draws in (ar1(0.5, (4, 37), seed=13), np.round(ar1(0.95, (4, 300), seed=14)),
                  rng.standard_normal((2, 9)), ar1(0.99, (2, 1000), seed=15)):
        for method in ("bulk", "tail"):
            assert effective_sample_size(draws, method) == pytest.approx(
                float(az.ess(draws, method=method)), rel=1e-12)


def test_ess_of_ar1_chains():
    rho = 0.9
    chains = ar1(rho, (4, 5000), seed=5)
    expected = chains.size * (1 - rho) / (1 + rho)  # about 1053
    # Over seeds the estimate has a relative sd of about 0.095.
    assert effective_sample_size(chains) == pytest.approx(expected, rel=0.4)
    assert effective_sample_size(chains, "basic") == pytest.approx(
        expected, rel=0.4)
    # A single chain of the same total length gives the same answer.
    single = ar1(rho, (chains.size,), seed=6)
    assert effective_sample_size(single) == pytest.approx(expected, rel=0.4)


def test_rhat_of_mixed_chains_is_one():
    chains = np.random.default_rng(6).standard_normal((4, 1000))
    assert abs(split_rhat(chains) - 1) < 0.01
    assert abs(split_rhat(chains, rank_normalize=False) - 1) < 0.01


def test_rhat_detects_shifted_chain():
    chains = np.random.default_rng(7).standard_normal((4, 1000))
    chains[3] += 2.0
    assert split_rhat(chains) > 1.1
    assert split_rhat(chains, rank_normalize=False) > 1.1


def test_split_rhat_detects_drift_within_one_chain():
    x = np.random.default_rng(8).standard_normal(1000) + np.linspace(0, 3,
                                                                     1000)
    assert split_rhat(x) > 1.1


def test_rank_normalized_rhat_detects_scale_difference():
    chains = np.random.default_rng(9).standard_normal((4, 1000))
    chains[0] *= 3.0
    assert split_rhat(chains, rank_normalize=False) < 1.01
    assert split_rhat(chains) > 1.05


def test_classic_split_rhat_formula():
    chains = np.random.default_rng(10).standard_normal((2, 9))
    halves = np.vstack([chains[:, :4], chains[:, -4:]])
    n = 4
    w = halves.var(axis=1, ddof=1).mean()
    b = n * halves.mean(axis=1).var(ddof=1)
    expected = np.sqrt(((n - 1) / n * w + b / n) / w)
    assert split_rhat(chains, rank_normalize=False) == pytest.approx(expected)


def test_constant_chains_give_nan():
    chains = np.ones((3, 50))
    assert np.isnan(effective_sample_size(chains))
    assert np.isnan(split_rhat(chains))
    assert np.isnan(split_rhat(chains, rank_normalize=False))


def test_chain_validation():
    with pytest.raises(ValueError):
        split_rhat(np.ones((2, 3)))
    with pytest.raises(ValueError):
        effective_sample_size(np.ones((2, 2, 10)))
    with pytest.raises(ValueError):
        effective_sample_size(np.ones((2, 10)), method="median")


# --------------------------------------------------------------------------
# Posterior similarity matrix and point estimate
# --------------------------------------------------------------------------
def planted_samples(seed, n_samples=40, exact_copy_at=None):
    """Noisy, randomly relabelled copies of a 3-block partition."""
    rng = np.random.default_rng(seed)
    truth = np.repeat([0, 1, 2], [60, 90, 50])
    samples = []
    for s in range(n_samples):
        noisy = truth.copy()
        if s != exact_copy_at:
            flip = rng.random(truth.size) < 0.05 + 0.25 * rng.random()
            noisy[flip] = rng.integers(0, 5, flip.sum())
        samples.append(rng.permutation(9)[noisy] + 100 * s)
    return truth, np.array(samples)


def test_psm_properties():
    _, samples = planted_samples(11)
    psm = posterior_similarity_matrix(samples)
    assert psm.shape == (200, 200) and psm.dtype == np.float32
    np.testing.assert_array_equal(psm, psm.T)
    np.testing.assert_array_equal(np.diag(psm), 1.0)
    assert psm.min() >= 0 and psm.max() <= 1
    naive = np.mean([np.equal.outer(s, s) for s in samples], axis=0)
    np.testing.assert_allclose(psm, naive, atol=1e-6)
    psm64 = posterior_similarity_matrix(samples, dtype=np.float64)
    assert psm64.dtype == np.float64
    np.testing.assert_allclose(psm64, naive, atol=1e-12)


def test_psm_is_label_invariant_and_batches(monkeypatch):
    _, samples = planted_samples(12)
    psm = posterior_similarity_matrix(samples)
    permuted = np.random.default_rng(0).permutation(10_000)[samples]
    np.testing.assert_array_equal(posterior_similarity_matrix(permuted), psm)
    # Force many small batches: same result.
    import sk_ihmm.metrics as metrics
    monkeypatch.setattr(metrics, "_BATCH_ENTRIES", 1000)
    np.testing.assert_array_equal(posterior_similarity_matrix(samples), psm)


def test_psm_of_single_sample():
    psm = posterior_similarity_matrix([0, 0, 1, 0])
    expected = np.array([[1, 1, 0, 1], [1, 1, 0, 1],
                         [0, 0, 1, 0], [1, 1, 0, 1]], dtype=float)
    np.testing.assert_array_equal(psm, expected)


def test_point_estimate_recovers_planted_partition():
    truth, samples = planted_samples(13, exact_copy_at=17)
    # Degenerate candidates (one state; one state per step) must lose.
    samples[3] = 0
    samples[4] = np.arange(truth.size)
    states, index = point_estimate_states(samples, return_index=True)
    assert index == 17
    np.testing.assert_array_equal(states, truth)  # first-appearance labels
    assert adjusted_rand_score(truth, states) == 1.0


def test_point_estimate_prefers_least_noisy_sample():
    truth, samples = planted_samples(14)
    aris = [adjusted_rand_score(truth, s) for s in samples]
    psm = posterior_similarity_matrix(samples)
    states = point_estimate_states(samples, psm=psm)
    assert adjusted_rand_score(truth, states) >= np.sort(aris)[-3]
    assert set(np.unique(states)) == set(range(np.unique(states).size))


def test_point_estimate_validation():
    _, samples = planted_samples(15, n_samples=3)
    with pytest.raises(ValueError):
        point_estimate_states(samples, psm=np.eye(5))
    with pytest.raises(ValueError):
        posterior_similarity_matrix(samples + 0.5)


def test_point_estimate_without_the_matrix_matches_the_matrix_route():
    """Long sequences score candidates by contingency tables; same scores as the PSM."""
    from sk_ihmm import metrics

    rng = np.random.default_rng(3)
    base = rng.integers(0, 4, size=300)
    samples = np.array([np.where(rng.random(300) < 0.15, rng.integers(0, 6, size=300), base)
                        for _ in range(25)])
    psm = metrics.posterior_similarity_matrix(samples, dtype=np.float64)
    cand = np.arange(25)
    rows = np.arange(300)
    via_psm = []
    for z in samples:
        one_hot = np.zeros((300, z.max() + 1))
        one_hot[rows, z] = 1
        via_psm.append(np.sum(np.bincount(z) ** 2.0) - 2 * np.sum(one_hot * (psm @ one_hot)))
    np.testing.assert_allclose(metrics._binder_scores_by_contingency(samples, cand), via_psm,
                               rtol=1e-10)
    old = metrics.POINT_ESTIMATE_MATRIX_MAX_T
    try:
        metrics.POINT_ESTIMATE_MATRIX_MAX_T = 100
        linear = metrics.point_estimate_states(samples, return_index=True)
    finally:
        metrics.POINT_ESTIMATE_MATRIX_MAX_T = old
    matrix = metrics.point_estimate_states(samples, return_index=True)
    assert linear[1] == matrix[1]
    np.testing.assert_array_equal(linear[0], matrix[0])


def test_posterior_similarity_refuses_huge_matrices():
    from sk_ihmm import _diagnostics

    samples = [np.zeros((2, 40000), np.uint8)]
    with pytest.raises(ValueError, match="GiB. Pass steps="):
        _diagnostics.posterior_similarity(samples)
    psm = _diagnostics.posterior_similarity(samples, steps=np.arange(0, 40000, 1000))
    assert psm.shape == (40, 40) and np.all(psm == 1)
