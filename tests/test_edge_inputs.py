"""Inputs at the edges get a clear error or the right answer, never a crash or a NaN."""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sk_ihmm import Categorical, InfiniteHMM, MultivariateGaussian
from sk_ihmm.datasets import make_gaussian_hmm

FAST = dict(max_time=0, n_samples=3, n_burnin=3, n_chains=1, n_score_samples=2,
            n_score_particles=20, random_state=0)
X, _ = make_gaussian_hmm(200, 3, random_state=0)


pytestmark = pytest.mark.usefixtures("no_convergence_warnings")


@pytest.fixture(scope="module")
def model():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return InfiniteHMM(**FAST).fit(X)


def test_huge_held_out_value_is_an_error_not_nan(model):
    bad = X[:20].copy()
    bad[5] = 1e155
    for method in (model.score, model.predict_proba, model.predict):
        with pytest.raises(ValueError, match="magnitude 1e\\+155"):
            method(bad)


def test_huge_training_data_is_an_error():
    with pytest.raises(ValueError, match="Rescale"):
        InfiniteHMM(**FAST).fit(1e200 * (1 + X))


def test_prior_mean_of_the_wrong_length_is_named():
    with pytest.raises(ValueError, match="mu0 must be a float or have one entry per feature"):
        InfiniteHMM(emission=MultivariateGaussian(mu0=[0, 0, 0]), **FAST).fit(np.hstack([X, X ** 2]))


def test_huge_categorical_symbol_is_an_error():
    Y = np.array([[0], [1], [10**9], [1]])
    with pytest.raises(ValueError, match="OrdinalEncoder"):
        InfiniteHMM(emission="categorical", **FAST).fit(Y)
    with pytest.raises(ValueError, match="n_symbols must be at most"):
        InfiniteHMM(emission=Categorical(n_symbols=10**9), **FAST).fit(Y[:2])


def test_nested_emission_parameter_with_a_string_emission():
    est = InfiniteHMM(**FAST).set_params(emission__b0=2.0)
    assert est.emission.b0 == 2.0 and est.emission.name == "gaussian"
    est = InfiniteHMM(**FAST).set_params(emission="categorical", emission__concentration=0.2)
    assert est.emission.concentration == 0.2
    with pytest.raises(ValueError, match="Invalid parameter"):
        InfiniteHMM(**FAST).set_params(emission__psi0=2.0)


def test_score_with_positional_lengths_is_an_error(model):
    with pytest.raises(ValueError, match="pass score\\(X, lengths=...\\)"):
        model.score(X[:100], [50, 50])
    ids = np.repeat([0, 1], 50)     # with sequence_ids, y is not read as lengths
    assert model.score(X[:100], [50, 50], sequence_ids=ids) == model.score(X[:100],
                                                                           sequence_ids=ids)
    by_keyword = model.score(X[:100], lengths=[50, 50])
    assert by_keyword == pytest.approx(model.score_sequences(X[:100], [50, 50]).sum())
    assert model.score(X[:100], lengths=[50, 50]) != model.score(X[:100])


def test_fit_with_positional_lengths_is_an_error():
    with pytest.raises(ValueError, match="pass fit\\(X, lengths=...\\)"):
        InfiniteHMM(**FAST).fit(X[:100], [50, 50])
    # a y of one entry per row (a Pipeline passing y through) is ignored
    a = InfiniteHMM(**FAST).fit(X[:100], np.zeros(100))
    b = InfiniteHMM(**FAST).fit(X[:100])
    assert np.array_equal(a.state_samples_[0], b.state_samples_[0])


def test_a_series_as_one_row_is_an_error_naming_the_reshape():
    series = X[:, 0]
    with pytest.raises(ValueError, match="a single series is X.reshape\\(-1, 1\\)") as info:
        InfiniteHMM(**FAST).fit(series.reshape(1, -1))
    assert f"and {series.size} features" in str(info.value)
    with pytest.raises(ValueError, match="pass X.T; .* X.reshape\\(-1, 1\\) with lengths="):
        InfiniteHMM(**FAST).fit(np.vstack([series, series]))
    with pytest.raises(ValueError, match="1 sample"):      # scikit-learn's check_fit2d_1sample
        InfiniteHMM(**FAST).fit(X[:1].T.repeat(3, axis=1))
    # as many columns as rows is still data
    assert InfiniteHMM(**FAST).fit(np.hstack([X[:3]] * 3)).n_features_in_ == 3


def test_a_1d_series_is_an_error_naming_the_reshape(model):
    for call in (InfiniteHMM(**FAST).fit, model.predict, model.score):
        with pytest.raises(ValueError, match="Reshape your data.*reshape\\(-1, 1\\)"):
            call(X[:50, 0])


def test_sequences_as_a_ragged_list_get_the_concatenation_hint():
    seqs = [X[:30, 0], X[30:70, 0]]
    with pytest.raises(ValueError, match="np.concatenate\\(seqs\\), lengths="):
        InfiniteHMM(**FAST).fit(seqs)


def test_a_3d_array_gets_the_concatenation_hint(model):
    X3 = np.stack([X[:40], X[40:80], X[80:120]])      # (3 sequences, 40 steps, 1 feature)
    for call in (InfiniteHMM(**FAST).fit, model.predict, model.score):
        with pytest.raises(ValueError, match="3-D array of shape \\(3, 40, 1\\).*"
                                             "fit\\(X.reshape\\(-1, X.shape\\[-1\\]\\), "
                                             "lengths=\\[40\\] \\* 3\\)"):
            call(X3)


def test_lengths_must_be_positive():
    for bad in ([60, 0, 60], [130, -10]):
        with pytest.raises(ValueError, match="lengths must be positive .*; got (0|-10)"):
            InfiniteHMM(**FAST).fit(X[:120], lengths=bad)


def test_sample_length_must_be_positive(model):
    for bad in (-1, 0, 2.5, True):
        with pytest.raises(ValueError, match="n_samples must be a positive integer"):
            model.sample(bad)
    assert model.sample(np.int64(4))[0].shape == (4, 1)


def test_warnings_point_at_the_callers_line():
    """The file and line of a warning are the user's call, directly and
    through a Pipeline (scikit-learn's frames in between)."""
    codes = np.tile(np.arange(5.0), 40)[:, None]
    for fit in (lambda: InfiniteHMM(**FAST).fit(codes),
                lambda: make_pipeline(StandardScaler(with_std=False, with_mean=False),
                                      InfiniteHMM(**FAST)).fit(codes)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit()
        assert caught, "expected warnings (integer codes, unconverged chains)"
        kinds = {w.category for w in caught}
        assert {UserWarning, ConvergenceWarning} <= kinds
        for w in caught:
            if w.category in (UserWarning, ConvergenceWarning):
                assert w.filename == __file__, (w.category, w.filename)


def test_warnings_in_worker_threads_point_at_scikit_learn_not_the_thread_pool():
    """A parallel grid search fits in worker threads, whose stacks hold no
    user frame: the warning points at scikit-learn's call, not at the
    standard library's thread pool."""
    import sysconfig
    from sklearn.utils.parallel import Parallel, delayed

    codes = np.tile(np.arange(5.0), 40)[:, None]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Parallel(n_jobs=2, backend="threading")(
            delayed(InfiniteHMM(**FAST).fit)(codes) for _ in range(2))
    ours = [w for w in caught if w.category in (UserWarning, ConvergenceWarning)]
    assert ours
    sklearn_dir = sklearn.__file__.rsplit("/", 1)[0]
    for w in ours:
        assert not w.filename.startswith(sysconfig.get_paths()["stdlib"] + "/threading"), w.filename
        assert w.filename.startswith(sklearn_dir), w.filename


def test_lengths_are_used_the_same_way_by_every_method(model):
    L = [60, 40]
    per_seq = model.score_sequences(X[:100], L)
    assert per_seq.shape == (2,)
    assert np.exp(-per_seq.sum() / 100) == pytest.approx(model.perplexity(X[:100], L))
    assert model.predict(X[:100], L).shape == (100,)
    assert model.predict_proba(X[:100], L).shape[0] == 100


def test_pipeline_grid_search_with_routed_sequence_ids():
    """The README's use: a Pipeline ending in InfiniteHMM, GroupKFold on sequence_ids."""
    Xs, _ = make_gaussian_hmm(240, n_states=3, random_state=2)
    Xs = 1000 * Xs + 50
    ids = np.repeat(np.arange(6), 40)
    with sklearn.config_context(enable_metadata_routing=True):
        hmm = InfiniteHMM(**FAST)
        hmm.set_fit_request(sequence_ids=True).set_score_request(sequence_ids=True)
        pipe = make_pipeline(StandardScaler(), hmm)
        grid = GridSearchCV(pipe, {"infinitehmm__emission__b0": [0.05, 0.5]},
                            cv=GroupKFold(n_splits=3), error_score="raise")
        grid.fit(Xs, groups=ids, sequence_ids=ids)
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))
    assert np.all(np.isfinite(grid.cv_results_["split0_test_score"]))
