"""Tests for sk_ihmm.datasets.

Loaders of the shared (external) data skip cleanly when the data folder is
absent; use the same pattern in other tests and benchmarks::

    def load_or_skip(loader, *args, **kwargs):
        try:
            return loader(*args, **kwargs)
        except DataNotAvailable as exc:
            pytest.skip(str(exc))
"""

from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from sk_ihmm.datasets import (
    CHAR_ALPHABET,
    ION_CHANNEL_NAMES,
    DataNotAvailable,
    load_alice_chars,
    load_alice_words,
    load_ion_channel,
    load_mocap6,
    load_well_log,
    make_ar_hmm,
    make_categorical_hmm,
    make_gaussian_hmm,
    make_multivariate_gaussian_hmm,
    make_sequence1,
    make_sequence2,
    shared_data_path,
)


def load_or_skip(loader, *args, **kwargs):
    """Call a shared-data loader, skipping the test if the data is absent."""
    try:
        return loader(*args, **kwargs)
    except DataNotAvailable as exc:
        pytest.skip(str(exc))


# --------------------------------------------------------------------------
# make_gaussian_hmm
# --------------------------------------------------------------------------
def test_gaussian_hmm_shapes_and_dtypes():
    X, states = make_gaussian_hmm(random_state=0)
    assert X.shape == (4000, 1) and X.dtype == np.float64
    assert states.shape == (4000,) and np.issubdtype(states.dtype, np.integer)
    assert set(np.unique(states)) == {0, 1, 2, 3}


def test_gaussian_hmm_reproducible():
    X1, s1 = make_gaussian_hmm(500, random_state=3)
    X2, s2 = make_gaussian_hmm(500, random_state=np.random.RandomState(3))
    X3, s3 = make_gaussian_hmm(500, random_state=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(s1, s2)
    assert not np.array_equal(X1, X3)


def test_gaussian_hmm_self_transition_rate():
    p = 0.75
    _, states = make_gaussian_hmm(random_state=1, self_transition=p)
    n = states.size - 1
    rate = np.mean(states[1:] == states[:-1])
    binomial_sd = np.sqrt(p * (1 - p) / n)
    assert abs(rate - p) < 4 * binomial_sd


def test_gaussian_hmm_switches_are_uniform_over_other_states():
    n_states = 4
    _, states = make_gaussian_hmm(20000, n_states, random_state=2)
    moved = states[1:] != states[:-1]
    offsets = (states[1:] - states[:-1])[moved] % n_states
    counts = np.bincount(offsets, minlength=n_states)
    assert counts[0] == 0
    assert chisquare(counts[1:]).pvalue > 1e-3


def test_gaussian_hmm_emissions():
    sd = 0.5
    X, states = make_gaussian_hmm(random_state=5, sd=sd)
    means = np.array([-2.0, -0.5, 1.0, 4.0])
    residuals = X[:, 0] - means[states]
    assert abs(residuals.mean()) < 4 * sd / np.sqrt(X.shape[0])
    assert abs(residuals.std() / sd - 1) < 4 / np.sqrt(2 * X.shape[0])


@pytest.mark.parametrize("n_states, expected", [
    (10, np.arange(-9.0, 10.0, 2.0)),
    (3, np.array([-2.0, 0.0, 2.0])),
    (1, np.array([0.0])),
])
def test_gaussian_hmm_default_means(n_states, expected):
    X, states = make_gaussian_hmm(20000, n_states, random_state=0, sd=0.01)
    assert set(np.unique(states)) == set(range(n_states))
    for k, mean in enumerate(expected):
        assert abs(X[states == k, 0].mean() - mean) < 0.01


def test_gaussian_hmm_custom_means_and_validation():
    X, states = make_gaussian_hmm(200, 2, random_state=0, sd=1e-6,
                                  means=[5.0, 7.0])
    np.testing.assert_allclose(X[:, 0], np.array([5.0, 7.0])[states],
                               atol=1e-4)
    with pytest.raises(ValueError):
        make_gaussian_hmm(10, 3, means=[0.0, 1.0])
    with pytest.raises(ValueError):
        make_gaussian_hmm(10, self_transition=1.5)
    with pytest.raises(ValueError):
        make_gaussian_hmm(0)
    with pytest.raises(ValueError):
        make_gaussian_hmm(10, sd=0.0)


def test_gaussian_hmm_lengths():
    lengths = [150, 300, 450]
    X, states = make_gaussian_hmm(n_timesteps=None, lengths=lengths,
                                  random_state=0, sd=0.5)
    assert X.shape == (900, 1) and X.dtype == np.float64
    assert states.shape == (900,) and states.dtype == np.int64
    # n_timesteps is ignored; lengths=[n] is the single-sequence data
    X2, s2 = make_gaussian_hmm(n_timesteps=7, lengths=np.array(lengths),
                               random_state=0, sd=0.5)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(states, s2)
    X1, s1 = make_gaussian_hmm(500, random_state=3)
    X3, s3 = make_gaussian_hmm(lengths=[500], random_state=3)
    np.testing.assert_array_equal(X1, X3)
    np.testing.assert_array_equal(s1, s3)
    # every sequence uses the same means
    means = np.array([-2.0, -0.5, 1.0, 4.0])
    residuals = X[:, 0] - means[states]
    bounds = np.cumsum([0] + lengths)
    for a, b in zip(bounds[:-1], bounds[1:]):
        assert abs(residuals[a:b].mean()) < 4 * 0.5 / np.sqrt(b - a)


def test_gaussian_hmm_sequences_start_uniformly():
    # 4000 sequences of length 1: each start state is uniform on 0..3
    _, states = make_gaussian_hmm(lengths=[1] * 4000, random_state=0)
    assert chisquare(np.bincount(states, minlength=4)).pvalue > 1e-3


@pytest.mark.parametrize("lengths", [[], [10, 0], [10, -1], [10, 2.5],
                                     "10", [[10, 20]], [True, 3]])
def test_bad_lengths_raise(lengths):
    for make in (make_gaussian_hmm, make_multivariate_gaussian_hmm,
                 make_categorical_hmm):
        with pytest.raises(ValueError, match="lengths"):
            make(lengths=lengths)


# --------------------------------------------------------------------------
# make_multivariate_gaussian_hmm
# --------------------------------------------------------------------------
def _check_gaussian_statistics(X, states, means, covars, n_sd=5.0):
    """Per-state sample means and covariances against the generating ones,
    within ``n_sd`` standard errors."""
    for k in range(means.shape[0]):
        Xk = X[states == k]
        n = Xk.shape[0]
        assert n > 50
        se_mean = np.sqrt(np.diag(covars[k]) / n)
        np.testing.assert_array_less(np.abs(Xk.mean(axis=0) - means[k]),
                                     n_sd * se_mean)
        # Var(S_ij) ~ (S_ii S_jj + S_ij^2) / n for Gaussian data
        d = np.sqrt(np.diag(covars[k]))
        se_cov = np.sqrt((np.outer(d, d) ** 2 + covars[k] ** 2) / n)
        np.testing.assert_array_less(np.abs(np.cov(Xk.T) - covars[k]),
                                     n_sd * se_cov)


def test_multivariate_shapes_and_dtypes():
    X, states = make_multivariate_gaussian_hmm(random_state=0)
    assert X.shape == (2000, 3) and X.dtype == np.float64
    assert states.shape == (2000,) and states.dtype == np.int64
    assert set(np.unique(states)) == {0, 1, 2, 3}
    X, states, params = make_multivariate_gaussian_hmm(
        300, n_states=5, n_features=2, random_state=0, return_params=True)
    assert X.shape == (300, 2)
    assert params["means"].shape == (5, 2)
    assert params["covars"].shape == (5, 2, 2)
    assert params["transmat"].shape == (5, 5)
    np.testing.assert_allclose(params["transmat"].sum(axis=1), 1.0)
    np.testing.assert_allclose(np.diag(params["transmat"]), 0.75)


def test_multivariate_reproducible():
    X1, s1 = make_multivariate_gaussian_hmm(500, random_state=3)
    X2, s2 = make_multivariate_gaussian_hmm(
        500, random_state=np.random.RandomState(3))
    X3, _ = make_multivariate_gaussian_hmm(500, random_state=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(s1, s2)
    assert not np.array_equal(X1, X3)


def test_multivariate_default_parameters_are_separated_and_correlated():
    for seed in range(5):
        _, _, params = make_multivariate_gaussian_hmm(
            50, n_states=6, random_state=seed, return_params=True)
        means, covars = params["means"], params["covars"]
        for k in range(6):
            np.testing.assert_allclose(np.diag(covars[k]), 1.0)
            assert np.linalg.eigvalsh(covars[k]).min() > 0
            for j in range(k):
                diff = means[k] - means[j]
                pooled = 0.5 * (covars[k] + covars[j])
                assert diff @ np.linalg.solve(pooled, diff) >= 9.0
        off_diagonal = covars[:, ~np.eye(3, dtype=bool)]
        assert np.abs(off_diagonal).max() > 0.2


def test_multivariate_emission_statistics():
    scales = np.array([1.0, 100.0, 0.01])
    offsets = np.array([0.0, 1500.0, -3.0])
    X, states, params = make_multivariate_gaussian_hmm(
        20000, random_state=1, scales=scales, offsets=offsets,
        return_params=True)
    _check_gaussian_statistics(X, states, params["means"], params["covars"])
    # the columns really are in different units
    sd = X.std(axis=0)
    assert sd[1] > 30 * sd[0] > 30 * 30 * sd[2]
    rate = np.mean(states[1:] == states[:-1])
    assert abs(rate - 0.75) < 4 * np.sqrt(0.75 * 0.25 / states.size)


def test_multivariate_scales_and_offsets_are_affine():
    scales, offsets = (1.0, 100.0, 0.01), (0.0, 1500.0, -3.0)
    X0, s0, p0 = make_multivariate_gaussian_hmm(
        400, random_state=2, return_params=True)
    X1, s1, p1 = make_multivariate_gaussian_hmm(
        400, random_state=2, scales=scales, offsets=offsets,
        return_params=True)
    np.testing.assert_array_equal(s0, s1)
    np.testing.assert_allclose(X1, np.array(offsets) + np.array(scales) * X0)
    np.testing.assert_allclose(
        p1["means"], np.array(offsets) + np.array(scales) * p0["means"])
    S = np.diag(scales)
    np.testing.assert_allclose(p1["covars"], S @ p0["covars"] @ S)


def test_multivariate_custom_parameters():
    means = np.array([[0.0, 0.0], [10.0, -10.0]])
    covars = np.array([[[1.0, 0.9], [0.9, 1.0]],
                       [[4.0, -1.0], [-1.0, 1.0]]])
    X, states, params = make_multivariate_gaussian_hmm(
        20000, n_states=2, n_features=2, means=means, covars=covars,
        random_state=0, return_params=True)
    np.testing.assert_array_equal(params["means"], means)
    np.testing.assert_array_equal(params["covars"], covars)
    _check_gaussian_statistics(X, states, means, covars)


def test_multivariate_lengths_share_the_model():
    lengths = [150, 300, 450, 600]
    X, states, params = make_multivariate_gaussian_hmm(
        lengths=lengths, random_state=0, return_params=True)
    assert X.shape == (1500, 3) and states.shape == (1500,)
    _, _, single = make_multivariate_gaussian_hmm(
        1500, random_state=0, return_params=True)
    for key in ("means", "covars"):
        np.testing.assert_array_equal(params[key], single[key])
    X2, s2 = make_multivariate_gaussian_hmm(
        n_timesteps=None, lengths=lengths, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(states, s2)


@pytest.mark.parametrize("kwargs, name", [
    ({"n_features": 0}, "n_features"),
    ({"n_states": 0}, "n_states"),
    ({"n_timesteps": 0}, "n_timesteps"),
    ({"self_transition": -0.1}, "self_transition"),
    ({"means": np.zeros((4, 2))}, "means"),
    ({"means": np.full((4, 3), np.nan)}, "means"),
    ({"covars": np.ones((4, 3, 3))}, "covars"),
    ({"covars": np.stack([np.eye(3)] * 3)}, "covars"),
    ({"covars": np.stack([np.eye(3) + np.triu(np.ones((3, 3)), 1)] * 4)},
     "covars"),
    ({"scales": (1.0, 0.0, 1.0)}, "scales"),
    ({"scales": (1.0, 1.0)}, "scales"),
    ({"offsets": (0.0, np.inf, 0.0)}, "offsets"),
    ({"return_params": "yes"}, "return_params"),
])
def test_multivariate_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        make_multivariate_gaussian_hmm(**kwargs)


# --------------------------------------------------------------------------
# make_categorical_hmm
# --------------------------------------------------------------------------
def test_categorical_shapes_and_dtypes():
    X, states = make_categorical_hmm(random_state=0)
    assert X.shape == (3000, 1) and X.dtype == np.int64
    assert states.shape == (3000,) and states.dtype == np.int64
    assert X.min() >= 0 and X.max() < 12
    assert set(np.unique(states)) == set(range(6))


def test_categorical_reproducible():
    X1, s1 = make_categorical_hmm(500, random_state=3)
    X2, s2 = make_categorical_hmm(500, random_state=np.random.RandomState(3))
    X3, _ = make_categorical_hmm(500, random_state=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(s1, s2)
    assert not np.array_equal(X1, X3)


def test_categorical_states_are_distinguishable():
    for seed in range(20):
        _, _, params = make_categorical_hmm(
            10, n_states=8, random_state=seed, return_params=True)
        P = params["emissionprob"]
        assert P.shape == (8, 12)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        assert np.all(P >= 0)
        tv = 0.5 * np.abs(P[:, None, :] - P[None, :, :]).sum(axis=2)
        assert tv[~np.eye(8, dtype=bool)].min() > 0.3


def test_categorical_emission_statistics():
    X, states, params = make_categorical_hmm(
        30000, random_state=1, return_params=True)
    P = params["emissionprob"]
    for k in range(P.shape[0]):
        symbols = X[states == k, 0]
        n = symbols.size
        freq = np.bincount(symbols, minlength=P.shape[1]) / n
        # binomial standard error; 2 / n allows a rare symbol a count or two
        tol = 5 * np.sqrt(P[k] * (1 - P[k]) / n) + 2.0 / n
        np.testing.assert_array_less(np.abs(freq - P[k]), tol)
    rate = np.mean(states[1:] == states[:-1])
    assert abs(rate - 0.75) < 4 * np.sqrt(0.75 * 0.25 / states.size)


def test_categorical_concentration_controls_sparsity():
    _, _, sparse = make_categorical_hmm(10, random_state=0, concentration=0.05,
                                        return_params=True)
    _, _, dense = make_categorical_hmm(10, random_state=0, concentration=5.0,
                                       min_total_variation=0.0,
                                       return_params=True)
    # largest symbol probability per state
    assert sparse["emissionprob"].max(axis=1).mean() > 0.6
    assert dense["emissionprob"].max(axis=1).mean() < 0.3


def test_categorical_lengths_share_the_model():
    lengths = [100, 250, 400]
    X, states, params = make_categorical_hmm(
        lengths=lengths, random_state=0, return_params=True)
    assert X.shape == (750, 1) and states.shape == (750,)
    _, _, single = make_categorical_hmm(750, random_state=0,
                                        return_params=True)
    np.testing.assert_array_equal(params["emissionprob"],
                                  single["emissionprob"])


@pytest.mark.parametrize("kwargs, name", [
    ({"n_symbols": 0}, "n_symbols"),
    ({"n_states": -1}, "n_states"),
    ({"n_timesteps": 0}, "n_timesteps"),
    ({"self_transition": 1.5}, "self_transition"),
    ({"concentration": 0.0}, "concentration"),
    ({"concentration": np.nan}, "concentration"),
    ({"concentration": [0.3]}, "concentration"),
    ({"concentration": "0.3"}, "concentration"),
    ({"self_transition": "high"}, "self_transition"),
    ({"min_total_variation": 1.0}, "min_total_variation"),
    ({"min_total_variation": -0.1}, "min_total_variation"),
    # rows of a large concentration are all close to uniform
    ({"concentration": 1000.0}, "concentration"),
    # 3 symbols cannot hold 6 distributions 0.9 apart
    ({"n_symbols": 3, "min_total_variation": 0.9}, "min_total_variation"),
])
def test_categorical_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        make_categorical_hmm(**kwargs)


# --------------------------------------------------------------------------
# make_sequence1
# --------------------------------------------------------------------------
# --------------------------------------------------------------------------
# make_ar_hmm
# --------------------------------------------------------------------------
def _ar_residuals(X, states, coefs, lengths, order):
    """``y_t - A_{s_t} [y_{t-1}; ...; y_{t-p}; 1]`` of every step with
    complete lags."""
    out = []
    start = 0
    for L in lengths:
        for t in range(start + order, start + L):
            x = np.concatenate([X[t - i] for i in range(1, order + 1)] + [[1.0]])
            out.append(X[t] - coefs[states[t]] @ x)
        start += L
    return np.array(out)


def test_ar_hmm_shapes_reproducible_and_sticky():
    X, states = make_ar_hmm(3000, n_states=3, n_features=2, random_state=0)
    assert X.shape == (3000, 2) and X.dtype == np.float64
    assert states.shape == (3000,) and states.dtype == np.int64
    assert set(np.unique(states)) == {0, 1, 2}
    X2, states2 = make_ar_hmm(3000, n_states=3, n_features=2, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(states, states2)
    stay = np.mean(states[1:] == states[:-1])
    assert abs(stay - 0.98) < 0.01


@pytest.mark.parametrize("order, n_features", [(1, 1), (1, 3), (3, 2)])
def test_ar_hmm_follows_its_parameters(order, n_features):
    """The returned coefficients reproduce the data up to N(0, noise^2 I)
    innovations, and every regime is stable with the requested spectral
    radius (of the companion matrix)."""
    lengths = [1500, 1000]
    X, states, params = make_ar_hmm(lengths=lengths, n_states=3, n_features=n_features,
                                    order=order, noise_scale=0.5, random_state=1,
                                    return_params=True)
    coefs = params["coefs"]
    d = n_features
    assert coefs.shape == (3, d, d * order + 1)
    resid = _ar_residuals(X, states, coefs, lengths, order)
    assert np.all(np.abs(resid.mean(axis=0)) < 0.05)
    np.testing.assert_allclose(resid.std(axis=0), 0.5, rtol=0.05)
    np.testing.assert_allclose(params["covars"], np.broadcast_to(0.25 * np.eye(d), (3, d, d)))
    for k in range(3):
        companion = np.zeros((d * order, d * order))
        companion[:d] = coefs[k][:, :d * order]
        companion[d:, :-d] = np.eye(d * (order - 1))
        assert np.isclose(np.max(np.abs(np.linalg.eigvals(companion))), 0.9)
        # the level mu_k is the fixed point of the regime's dynamics
        lag_sum = sum(coefs[k][:, i * d:(i + 1) * d] for i in range(order))
        np.testing.assert_allclose((np.eye(d) - lag_sum) @ params["means"][k], coefs[k][:, -1],
                                   atol=1e-12)
    # each sequence starts at the level of its first regime (plus one innovation)
    for s in (0, 1500):
        assert np.all(np.abs(X[s] - params["means"][states[s]]) < 5 * 0.5)


@pytest.mark.parametrize("kwargs, match", [
    (dict(order=0), "order"),
    (dict(spectral_radius=1.0), "spectral_radius"),
    (dict(noise_scale=-1.0), "noise_scale"),
    (dict(self_transition=1.5), "self_transition"),
    (dict(lengths=[10, 0]), "lengths"),
])
def test_ar_hmm_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_ar_hmm(100, **kwargs)


def test_sequence1_exact_pattern():
    X, states = make_sequence1()
    assert X.shape == (500, 1) and np.issubdtype(X.dtype, np.integer)
    assert states.shape == (500,)
    letters = "".join("ABCDE"[s] for s in X[:16, 0])
    assert letters == "ABCDBCDEABCDBCDE"
    np.testing.assert_array_equal(states, np.arange(500) % 8)


def test_sequence1_needs_eight_states():
    X, states = make_sequence1(64)
    x = X[:, 0]
    # Deterministic given the 8 cycle positions ...
    for k in range(8):
        assert np.unique(x[states == k]).size == 1
    np.testing.assert_array_equal(states[1:], (states[:-1] + 1) % 8)
    # ... but not a first-order Markov chain on the symbols: D -> B or E.
    assert set(x[1:][x[:-1] == 3]) == {1, 4}


# --------------------------------------------------------------------------
# make_sequence2
# --------------------------------------------------------------------------
def _sequence2_automaton():
    """The reconstructed automaton of Makino et al.'s Figure 3 (doc/papers.rst),
    written out independently of the generator: state p < 8 walks forwards
    at position p, state p + 8 backwards at position p."""
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    for s in range(16):
        p, back = s % 8, s // 8
        d = -1 if back else 1
        other = 8 * (1 - back)
        A[s, (p + d) % 8 + 8 * back] = 0.84  # bold: go on
        A[s, p + other] = 0.08  # dashed: turn round in place
        A[s, (p + d) % 8 + other] = 0.08  # dashed: turn round, move on
        B[s, [(p - 1) % 8, p, (p + 1) % 8]] = 1 / 3
    return A, B


def test_sequence2_shapes_and_dtypes():
    X, states = make_sequence2(random_state=0)
    assert X.shape == (2500, 1) and X.dtype == np.int64
    assert states.shape == (2500,) and states.dtype == np.int64
    assert X.min() >= 0 and X.max() <= 7
    assert states.min() >= 0 and states.max() <= 15
    assert set(np.unique(states)) == set(range(16))
    X, states = make_sequence2(1, random_state=0)
    assert X.shape == (1, 1) and states.shape == (1,)


def test_sequence2_params_are_the_automaton():
    _, _, params = make_sequence2(10, random_state=0, return_params=True)
    A, B = _sequence2_automaton()
    np.testing.assert_allclose(params["transmat"], A)
    np.testing.assert_allclose(params["emissionprob"], B)
    np.testing.assert_allclose(params["startprob"], np.full(16, 1 / 16))
    # doubly stochastic: the uniform start is stationary
    np.testing.assert_allclose(A.sum(axis=0), 1.0)


def test_sequence2_empirical_frequencies_match_automaton():
    X, states = make_sequence2(200_000, random_state=1)
    A, B = _sequence2_automaton()
    x = X[:, 0]
    trans = np.zeros((16, 16))
    np.add.at(trans, (states[:-1], states[1:]), 1)
    emit = np.zeros((16, 8))
    np.add.at(emit, (states, x), 1)
    for counts, expected in ((trans, A), (emit, B)):
        n = counts.sum(axis=1, keepdims=True)
        freq = counts / n
        # impossible moves and letters never occur ...
        assert np.all(counts[expected == 0] == 0)
        # ... and the others within 5 binomial standard deviations
        sd = np.sqrt(expected * (1 - expected) / n)
        assert np.all(np.abs(freq - expected) <= 5 * sd + 1e-12)
    # every state about equally often (stationary uniform)
    occupancy = np.bincount(states, minlength=16) / states.size
    np.testing.assert_allclose(occupancy, 1 / 16, atol=0.005)
    # the uniform start: first states over many seeds
    first = [make_sequence2(1, random_state=seed)[1][0] for seed in range(1600)]
    assert chisquare(np.bincount(first, minlength=16)).pvalue > 1e-4


def test_sequence2_reproducible():
    X1, s1 = make_sequence2(500, random_state=3)
    X2, s2 = make_sequence2(500, random_state=np.random.RandomState(3))
    X3, s3 = make_sequence2(500, random_state=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(s1, s2)
    assert not np.array_equal(X1, X3) and not np.array_equal(s1, s3)


@pytest.mark.parametrize("kwargs, exc, name", [
    ({"n_timesteps": 0}, ValueError, "n_timesteps must be positive"),
    ({"n_timesteps": -5}, ValueError, "n_timesteps must be positive"),
    ({"n_timesteps": 2.5}, TypeError, "n_timesteps must be an integer"),
    ({"n_timesteps": "100"}, TypeError, "n_timesteps must be an integer"),
    ({"n_timesteps": True}, TypeError, "n_timesteps must be an integer"),
    ({"random_state": "seed"}, ValueError, "seed"),
    ({"return_params": "yes"}, ValueError, "return_params"),
])
def test_sequence2_bad_arguments(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        make_sequence2(**kwargs)


# --------------------------------------------------------------------------
# Shared data location
# --------------------------------------------------------------------------
def test_missing_file_raises_data_not_available():
    with pytest.raises(DataNotAvailable, match="no_such_file"):
        shared_data_path("no_such_file_for_sk_ihmm.txt")
    assert issubclass(DataNotAvailable, FileNotFoundError)


def test_env_var_folder_takes_precedence(tmp_path, monkeypatch):
    (tmp_path / "well_log.txt").write_text("1.0\n2.5\n-3.0\n")
    monkeypatch.setenv("SK_IHMM_DATA", str(tmp_path))
    assert shared_data_path("well_log.txt") == (tmp_path / "well_log.txt")
    X = load_well_log()
    np.testing.assert_array_equal(X, [[1.0], [2.5], [-3.0]])


# --------------------------------------------------------------------------
# Real data (skipped when the shared folder is absent)
# --------------------------------------------------------------------------
def test_well_log():
    X = load_or_skip(load_well_log)
    assert X.shape == (4050, 1) and X.dtype == np.float64
    assert X.min() == pytest.approx(64234.38)
    assert X.max() == pytest.approx(140408.5)


@pytest.mark.parametrize("name, length", [
    ("sctrace_test2_sub100", 14800),
    ("sctrace_cluster_10kHz", 11695),
    ("ip3r2_icmcstat", 60000),
])
def test_ion_channel(name, length):
    assert name in ION_CHANNEL_NAMES
    full = load_or_skip(load_ion_channel, name, n=None)
    assert full.shape == (length, 1) and full.dtype == np.float64
    head = load_ion_channel(name)
    assert head.shape == (2000, 1)
    np.testing.assert_array_equal(head, full[:2000])


def test_ion_channel_validation():
    with pytest.raises(ValueError, match="Unknown"):
        load_ion_channel("ion_channel_sctrace_test2_sub100.txt")
    with pytest.raises(ValueError):
        load_or_skip(load_ion_channel, "sctrace_cluster_10kHz", n=10**6)


def test_alice_chars():
    X_train, X_test, alphabet = load_or_skip(load_alice_chars)
    assert X_train.shape == (1000, 1) and X_test.shape == (4000, 1)
    assert alphabet == CHAR_ALPHABET and len(alphabet) == 31
    both = np.concatenate([X_train, X_test])[:, 0]
    assert both.min() >= 0 and both.max() < len(alphabet)
    text = "".join(alphabet[i] for i in both)
    assert text.startswith(
        "chapter i. down the rabbit-hole alice was beginning to get")
    assert "  " not in text and "--" not in text
    # Train and test are consecutive pieces of one text.
    longer, _, _ = load_alice_chars(n_train=5000, n_test=0)
    np.testing.assert_array_equal(longer[:, 0], both)


def test_alice_words():
    X_train, X_test, vocabulary = load_or_skip(load_alice_words)
    assert X_test.shape == (1000, 1) and X_train.shape[1] == 1
    assert 27000 < X_train.shape[0] < 28000
    assert "EOS" in vocabulary and "UNK" in vocabulary
    assert len(set(vocabulary)) == len(vocabulary)
    tokens = [vocabulary[i] for i in np.concatenate([X_train, X_test])[:, 0]]
    assert tokens[:4] == ["alice", "was", "beginning", "to"]
    assert "chapter" not in tokens[:3]
    assert tokens[-3:] == ["summer", "days", "EOS"]
    counts = Counter(tokens)
    assert set(counts) == set(vocabulary)
    assert min(counts.values()) >= 2  # singletons became UNK
    assert all(t == t.lower() or t in ("EOS", "UNK") for t in vocabulary)
    # The held-out tokens are the last ones.
    _, X_test_short, vocab_short = load_alice_words(n_test=10)
    assert vocab_short == vocabulary
    np.testing.assert_array_equal(X_test_short, X_test[-10:])


def test_mocap6():
    X, lengths, labels, actions, channels = load_or_skip(load_mocap6)
    assert X.shape == (2058, 12) and X.dtype == np.float64 and np.all(np.isfinite(X))
    assert lengths.tolist() == [382, 205, 251, 446, 387, 387]
    assert labels.shape == (2058,) and len(actions) == 12 and len(channels) == 12
    assert actions[0] == "JumpJack" and channels[0] == "root.ty"
    assert set(np.unique(labels)) == set(range(12))


def test_load_old_faithful_ships_with_the_package():
    from sk_ihmm.datasets import load_old_faithful

    X = load_old_faithful()
    assert X.shape == (272, 2) and X.dtype == np.float64
    np.testing.assert_allclose(X[:3], [[3.6, 79], [1.8, 54], [3.333, 74]])
    # R's datasets::faithful
    np.testing.assert_allclose(X.mean(axis=0), [3.487783, 70.897059], atol=1e-6)
