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
    load_well_log,
    make_gaussian_hmm,
    make_sequence1,
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


# --------------------------------------------------------------------------
# make_sequence1
# --------------------------------------------------------------------------
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
