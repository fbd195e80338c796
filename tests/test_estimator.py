"""The InfiniteHMM estimator: API, validation, reproducibility, sklearn integration."""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sk_ihmm import Categorical, DiagonalGaussian, Gaussian, InfiniteHMM, MultivariateGaussian
from sk_ihmm.datasets import make_categorical_hmm, make_gaussian_hmm, make_sequence1

FAST = dict(n_samples=5, n_burnin=5, n_chains=2, random_state=0)


@pytest.fixture(scope="module")
def gauss_data():
    X, z = make_gaussian_hmm(300, n_states=3, random_state=1)
    return X, z


def test_fit_predict_score_sample(gauss_data):
    X, z = gauss_data
    model = InfiniteHMM(max_time=0, **FAST).fit(X)
    assert len(model.state_samples_) == 2
    assert model.state_samples_[0].shape == (5, 300)
    assert model.n_features_in_ == 1
    K = model.n_states_
    assert model.transmat_.shape == (K, K)
    np.testing.assert_allclose(model.transmat_.sum(axis=1), 1.0)
    np.testing.assert_allclose(model.startprob_.sum(), 1.0)
    assert model.means_.shape == (K, 1)
    for key in ("n_states", "log_joint", "alpha", "gamma", "kappa", "accept_rate"):
        assert model.trace_[key].shape == (2, 10)
    pred = model.predict(X)
    assert pred.shape == (300,) and pred.min() >= 0 and pred.max() < K
    proba = model.predict_proba(X)
    assert proba.shape == (300, K)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    s = model.score(X[:50])
    assert np.isfinite(s) and s < 0
    assert np.isclose(model.perplexity(X[:50]), np.exp(-s / 50))
    Xs, zs = model.sample(40, random_state=3)
    assert Xs.shape == (40, 1) and zs.shape == (40,)


def test_categorical_sequence1():
    X, z = make_sequence1(120)
    model = InfiniteHMM(max_time=0, emission="categorical", **FAST).fit(X)
    assert model.emissionprob_.shape == (model.n_states_, 5)
    assert model.predict(X).shape == (120,)
    assert np.isfinite(model.score(X[:16]))


def test_multivariate_and_several_sequences():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-2, 0.5, (60, 2)), rng.normal(2, 0.5, (60, 2))])
    model = InfiniteHMM(max_time=0, emission="multivariate_gaussian", **FAST).fit(X, lengths=[50, 70])
    assert model.means_.shape == (model.n_states_, 2)
    assert model.covars_.shape == (model.n_states_, 2, 2)
    assert np.isfinite(model.score(X[:20], lengths=[10, 10]))
    assert model.score_sequences(X[:20], lengths=[10, 10]).shape == (2,)


@pytest.mark.parametrize("sampler", ["rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge",
                                     "pgas"])
@pytest.mark.parametrize("emission", ["gaussian", "categorical", "multivariate_gaussian",
                                      "autoregressive"])
def test_every_sampler_fits_every_family(sampler, emission):
    rng = np.random.default_rng(1)
    z = np.repeat([0, 1, 0, 1], 15)
    if emission == "categorical":
        X = np.where(rng.random(60) < 0.9, z, 1 - z)[:, None]
    else:
        d = 2 if emission == "multivariate_gaussian" else 1
        X = rng.normal(4.0 * z[:, None] - 2.0, 0.5, (60, d))
    model = InfiniteHMM(max_time=0, sampler=sampler, emission=emission, **FAST).fit(X, lengths=[25, 35])
    assert model.predict(X, lengths=[25, 35]).shape == (60,)
    assert np.isfinite(model.score(X, lengths=[25, 35]))
    assert np.all(np.isfinite(model.trace_["log_joint"]))


@pytest.mark.parametrize("sampler,kappa_prior", [("rcd_gibbs", None), ("rcd_blocked", (1.0, 1.0)),
                                                 ("pgas", (1.0, 1.0))])
def test_representative_by_count_level_joint(gauss_data, sampler, kappa_prior):
    """The representative sample maximises log p(x, m, o, y) over the kept
    samples with the modal K. For pgas that is its log_joint; for a collapsed
    sampler it sums out the seatings with the sample's table counts, so it is
    at least the log_joint of the one seating the chain holds, and larger
    wherever a pair has two tables or more."""
    from sk_ihmm._chain import count_log_joints

    X, _ = gauss_data
    model = InfiniteHMM(max_time=0, sampler=sampler, kappa_prior=kappa_prior, **FAST).fit(X)
    problem = model._problem_
    count = [count_log_joints(snaps, problem) for snaps in model.snapshots_]
    native = [np.array([s.log_joint for s in snaps]) for snaps in model.snapshots_]
    for c, n in zip(count, native):
        if sampler == "pgas":
            np.testing.assert_allclose(c, n, rtol=1e-12)
        else:
            assert np.all(c >= n - 1e-9) and np.all(c > n + 1.0)
    # major states: at least 1% of the steps (min_state_fraction), counted
    # here from the transition counts into each state
    ks = np.array([[int(np.sum(s.n[:, 1:].sum(axis=0) >= 0.01 * X.shape[0])) for s in snaps]
                   for snaps in model.snapshots_])
    values, counts = np.unique(ks, return_counts=True)
    best = max(count[c][i] for c in range(len(count)) for i in range(len(count[c]))
               if ks[c, i] == values[np.argmax(counts)])
    ch, i = model.representative_
    assert ks[ch, i] == values[np.argmax(counts)] and count[ch][i] == best
    assert model.n_states_ == ks[ch, i] == len(model.major_states_)


def test_minor_states_are_left_out_of_the_point_summary(gauss_data):
    """States under min_state_fraction of the steps leave the point summary;
    with min_state_fraction=0 every occupied state stays, and the chains are
    the same either way (it is only a summary)."""
    X, _ = gauss_data
    # 6 states, one of them holding 2 of 300 steps
    rng = np.random.default_rng(0)
    z = np.repeat(np.arange(5), 60)
    Xs = (z * 10.0 + rng.normal(size=300))[:, None]
    Xs[[100, 250], 0] = 1000.0
    # both chains from the particle filter: a chain started in one state
    # (init="mixed") has not split into the five states in 40 sweeps. The
    # outliers make the data-scaled prior's state sd 25 times the true one; under
    # the default weak mean prior (lambda0=0.01) a new state's predictive is
    # so broad that after these 40 sweeps the chains hold 3 major states
    # (doc/model.rst), so this test keeps lambda0=0.1
    kw = dict(max_time=0, sampler="rcd_blocked", n_chains=2, n_samples=20, n_burnin=20,
              init="particle_filter", random_state=0, emission=Gaussian(lambda0=0.1))
    full = InfiniteHMM(min_state_fraction=0, **kw).fit(Xs)
    pruned = InfiniteHMM(**kw).fit(Xs)
    for a, b in zip(full.state_samples_, pruned.state_samples_):
        np.testing.assert_array_equal(a, b)
    ch, i = pruned.representative_
    labels = pruned.state_samples_[ch][i]
    occupancy = np.bincount(labels)
    assert occupancy.min() < 3 and np.all(occupancy[pruned.major_states_] >= 3)
    assert pruned.n_states_ == len(pruned.major_states_) == np.sum(occupancy >= 3)
    # with every state kept, n_states_ is the modal number of occupied states
    assert full.n_states_ == full.n_states_posterior_.argmax() > pruned.n_states_ == 5
    assert pruned.transmat_.shape == (pruned.n_states_, pruned.n_states_)
    np.testing.assert_allclose(pruned.transmat_.sum(axis=1), 1.0)
    assert pruned.means_.shape == (pruned.n_states_, 1)
    proba = pruned.predict_proba(Xs)
    assert proba.shape == (300, pruned.n_states_)
    labels_pred = pruned.predict(Xs)
    assert labels_pred.max() < pruned.n_states_
    # the outliers are decoded to a major state; every other step keeps its state
    kept = np.isin(labels, pruned.major_states_)
    remap = np.full(labels.max() + 1, -1)
    remap[pruned.major_states_] = np.arange(pruned.n_states_)
    assert np.mean(labels_pred[kept] == remap[labels[kept]]) > 0.95


@pytest.mark.parametrize("n_jobs, backend", [(None, None), (2, None), (2, "loky")])
def test_reproducible_across_n_jobs(gauss_data, n_jobs, backend):
    """Serial chains equal chains run at once: in threads (``n_jobs=None``,
    one per chain up to the cores, and ``n_jobs=2``) and in worker
    processes (a joblib ``loky`` backend)."""
    import contextlib

    from joblib import parallel_config

    X, _ = gauss_data
    a = InfiniteHMM(max_time=0, n_jobs=1, **FAST).fit(X)
    with parallel_config(backend=backend) if backend else contextlib.nullcontext():
        b = InfiniteHMM(max_time=0, n_jobs=n_jobs, **FAST).fit(X)
    for sa, sb in zip(a.state_samples_, b.state_samples_):
        np.testing.assert_array_equal(sa, sb)
    for key in a.trace_:
        if key != "seconds":
            np.testing.assert_array_equal(a.trace_[key], b.trace_[key])
    assert a.score(X[:30]) == b.score(X[:30])
    c = InfiniteHMM(max_time=0, n_jobs=1, **{**FAST, "random_state": 1}).fit(X)
    assert not all(np.array_equal(s, t) for s, t in zip(a.state_samples_, c.state_samples_))


@pytest.mark.parametrize("sampler", ["rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge", "pgas"])
@pytest.mark.parametrize("emission", ["gaussian", "categorical"])
def test_threads_match_serial(sampler, emission):
    """Chains run at once in threads (the default) share nothing: every
    sampler gives the chains it gives one chain after the other, over two
    rounds (``max_sweeps`` allows a second one)."""
    X = (make_gaussian_hmm(200, n_states=3, random_state=2)[0] if emission == "gaussian"
         else make_categorical_hmm(200, n_states=3, n_symbols=5, random_state=2)[0])
    kw = dict(sampler=sampler, emission=emission, n_chains=3, n_burnin=5, n_samples=10,
              max_time=None, max_sweeps=40, random_state=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        serial = InfiniteHMM(n_jobs=1, **kw).fit(X)
        threads = InfiniteHMM(n_jobs=3, **kw).fit(X)
    assert serial.convergence_["n_rounds"] == threads.convergence_["n_rounds"] == 2
    for a, b in zip(serial.state_samples_, threads.state_samples_):
        np.testing.assert_array_equal(a, b)
    for key in serial.trace_:
        if key != "seconds":
            np.testing.assert_array_equal(serial.trace_[key], threads.trace_[key])


def test_random_init_and_fixed_hyperparameters(gauss_data):
    X, _ = gauss_data
    model = InfiniteHMM(max_time=0, init="random", n_init_states=7, resample_hyperparameters=False,
                        alpha=2.0, gamma=3.0, **FAST).fit(X)
    assert np.all(model.trace_["alpha"] == 2.0)
    assert np.all(model.trace_["gamma"] == 3.0)


def test_input_not_modified(gauss_data):
    X, _ = gauss_data
    X0 = X.copy()
    lengths = np.array([100, 200])
    model = InfiniteHMM(max_time=0, **FAST).fit(X, lengths=lengths)
    model.predict(X, lengths=lengths)
    model.score(X, lengths=lengths)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(lengths, [100, 200])


@pytest.mark.parametrize(
    "kwargs, X, fit_kwargs, match",
    [
        ({}, np.array([[0.0], [np.nan], [1.0]]), {}, "NaN"),
        ({}, np.array([[0.0], [np.inf], [1.0]]), {}, "infinity"),
        ({"emission": Gaussian()}, np.zeros((4, 2)), {}, "shape"),
        ({}, np.full((4, 1), 1e200) * [[1], [-1], [1], [-1]], {}, "Rescale"),
        ({"emission": MultivariateGaussian(mu0=[0, 0, 0])}, np.zeros((4, 2)), {}, "mu0"),
        ({}, np.zeros((5, 1)), {"lengths": [2, 2]}, "sum to 4"),
        ({}, np.zeros((5, 1)), {"lengths": [5, 0]}, "lengths must be positive"),
        ({}, np.zeros((5, 1)), {"lengths": [2.5, 2.5]}, "integers"),
        ({}, np.zeros((5, 1)), {"sequence_ids": [0, 0, 1]}, "one entry per row"),
        ({}, np.zeros((5, 1)), {"sequence_ids": [0, 1, 0, 1, 1]}, "contiguous"),
        ({"emission": "categorical"}, np.array([[0], [-1], [2]]), {}, "non-negative"),
        ({"emission": "categorical"}, np.array([[0.0], [1.5], [2.0]]), {}, "non-integer"),
        ({"emission": "zipf"}, np.zeros((5, 1)), {}, "emission"),
        ({"sampler": "nuts"}, np.zeros((5, 1)), {}, "sampler"),
        ({"alpha": -1.0}, np.zeros((5, 1)), {}, "alpha"),
        ({"alpha_prior": (1.0, -2.0)}, np.zeros((5, 1)), {}, "alpha_prior"),
        ({"emission": Gaussian(b0=0.0)}, np.zeros((5, 1)), {}, "b0"),
        ({"emission": Categorical(concentration=-1)}, np.zeros((5, 1)), {}, "concentration"),
    ],
)
def test_validation_errors(kwargs, X, fit_kwargs, match):
    with pytest.raises(ValueError, match=match):
        InfiniteHMM(max_time=0, **{**FAST, **kwargs}).fit(X, **fit_kwargs)


def test_empty_input():
    with pytest.raises(ValueError):
        InfiniteHMM(max_time=0, **FAST).fit(np.zeros((0, 1)))


def test_predict_validation(gauss_data):
    X, _ = gauss_data
    model = InfiniteHMM(max_time=0, **FAST).fit(X)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="sum to"):
        model.predict(X[:10], lengths=[3, 3])
    cat = InfiniteHMM(max_time=0, emission="categorical", **FAST).fit(np.array([[0], [1], [2], [1]]))
    with pytest.raises(ValueError, match="alphabet"):
        cat.score(np.array([[0], [3]]))


def test_unfitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        InfiniteHMM().predict(np.zeros((3, 1)))


def test_clone_and_params():
    model = InfiniteHMM(max_time=0, emission=Categorical(concentration=0.3), alpha=2.0)
    params = model.get_params()
    assert params["emission__concentration"] == 0.3
    model.set_params(emission__concentration=0.7)
    assert model.emission.concentration == 0.7
    c = clone(model)
    assert c.emission is not model.emission and c.emission.concentration == 0.7


def test_pipeline_with_scaler(gauss_data):
    X, _ = gauss_data
    pipe = make_pipeline(StandardScaler(), InfiniteHMM(max_time=0, **FAST))
    pipe.fit(X * 100 + 5)
    assert pipe.predict(X * 100 + 5).shape == (300,)
    assert np.isfinite(pipe.score(X[:30] * 100 + 5))


def test_grid_search_with_sequence_ids():
    X, _ = make_gaussian_hmm(240, n_states=3, random_state=2)
    ids = np.repeat(np.arange(6), 40)
    with sklearn.config_context(enable_metadata_routing=True):
        est = InfiniteHMM(max_time=0, n_samples=3, n_burnin=3, n_chains=1, n_score_samples=2,
                          n_score_particles=20, random_state=0)
        est.set_fit_request(sequence_ids=True).set_score_request(sequence_ids=True)
        grid = GridSearchCV(est, {"emission__b0": [0.5, 2.0]}, cv=GroupKFold(n_splits=3))
        grid.set_params(estimator__emission=Gaussian())
        grid.fit(X, groups=ids, sequence_ids=ids)
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))
    assert grid.best_params_["emission__b0"] in (0.5, 2.0)


def test_covariance_type_diag(no_convergence_warnings):
    """``covariance_type="diag"`` fits a DiagonalGaussian to ``"gaussian"``
    data of any number of columns; ``covars_`` are diagonal matrices
    (hmmlearn's public shape)."""
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal([-2, 0, 5], [0.5, 1.0, 0.1], (60, 3)),
                        rng.normal([2, 0, 5], [0.5, 3.0, 0.1], (60, 3))])
    model = InfiniteHMM(max_time=0, covariance_type="diag", **FAST).fit(X, lengths=[50, 70])
    assert model.get_params()["covariance_type"] == "diag"
    assert isinstance(model._family, DiagonalGaussian)
    K = model.n_states_
    assert model.means_.shape == (K, 3) and model.covars_.shape == (K, 3, 3)
    off = ~np.eye(3, dtype=bool)
    assert np.all(model.covars_[:, off] == 0) and np.all(np.diagonal(model.covars_, 0, 1, 2) > 0)
    assert model.emission_prior_["b0"].shape == (3,)
    assert model.predict(X, lengths=[50, 70]).shape == (120,)
    assert np.isfinite(model.score(X[:30]))
    Xs, _ = model.sample(10, random_state=0)
    assert Xs.shape == (10, 3)
    one = InfiniteHMM(max_time=0, covariance_type="diag", **FAST).fit(X[:, :1])
    assert isinstance(one._family, DiagonalGaussian) and one.covars_.shape[1:] == (1, 1)
    # nested parameters of a string emission reach the diagonal family
    tuned = InfiniteHMM(covariance_type="diag").set_params(emission__a0=3.0)
    assert isinstance(tuned.emission, DiagonalGaussian) and tuned.emission.a0 == 3.0
    c = clone(InfiniteHMM(covariance_type="diag"))
    assert c.covariance_type == "diag"


@pytest.mark.parametrize("kwargs, match", [
    ({"covariance_type": "spherical"}, "covariance_type"),
    ({"covariance_type": "diag", "emission": "categorical"}, "covariance_type='diag'"),
    ({"covariance_type": "diag", "emission": MultivariateGaussian()}, "covariance_type='diag'"),
    ({"covariance_type": "diag", "emission": "multivariate_gaussian"}, "covariance_type='diag'"),
])
def test_covariance_type_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        InfiniteHMM(max_time=0, **{**FAST, **kwargs}).fit(np.array([[0.0, 1.0], [1.0, 0.0]]))


def test_multivariate_gaussian_rejects_bad_nu0():
    with pytest.raises(ValueError, match="nu0"):
        InfiniteHMM(max_time=0, emission=MultivariateGaussian(nu0=0.5), **FAST).fit(np.zeros((6, 3)))


def test_chains_at_once():
    """``n_jobs=None`` runs one thread per chain up to the cores numba may
    use; inside a joblib worker process (a parallel grid search) that is
    one, so nested fits do not oversubscribe the machine."""
    from joblib import Parallel, cpu_count, delayed
    from numba import config

    from sk_ihmm._budget import chains_at_once

    assert chains_at_once(None, 4) == min(4, config.NUMBA_NUM_THREADS, cpu_count())
    assert chains_at_once(None, 1) == 1
    assert chains_at_once(1, 4) == 1
    assert chains_at_once(-1, 64) == cpu_count()
    assert chains_at_once(3, 2) == 2
    if cpu_count() > 1:
        in_workers = Parallel(n_jobs=2, backend="loky")(delayed(chains_at_once)(None, 4) for _ in range(2))
        assert in_workers == [max(1, cpu_count() // 2)] * 2
