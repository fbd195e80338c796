"""The emission-family plug-in layer, the Poisson family and missing observations
through the estimator (exactness is in test_exact_families.py)."""

import warnings

import numpy as np
import pytest
from numba.core.errors import TypingError
from sklearn.exceptions import ConvergenceWarning

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import (make_ar_hmm, make_categorical_hmm, make_gaussian_hmm,
                              make_multivariate_gaussian_hmm, make_poisson_hmm)
from sk_ihmm.emissions import (FAMILIES, Categorical, EmissionFamily, Gaussian, Poisson,
                               family_tag, log_pred, make_emission, register_family)
from sk_ihmm.emissions.gaussian import GaussianTag

QUICK = dict(n_chains=2, n_samples=20, n_burnin=20, max_time=0, random_state=0)

UnknownTag = family_tag("UnknownTag", __name__)


class _Unregistered(Gaussian):
    name = "unregistered_gaussian"
    tag = UnknownTag()


def test_registry_lists_the_families():
    assert {"gaussian", "multivariate_gaussian", "categorical", "poisson",
            "autoregressive"} <= set(FAMILIES)
    for name, cls in FAMILIES.items():
        assert cls.name == name and issubclass(cls, EmissionFamily)
        assert set(cls.fitted_attributes) and cls.kernels is not None


def test_unknown_families_raise():
    with pytest.raises(ValueError, match="Unknown emission 'zipf'"):
        make_emission("zipf")
    with pytest.raises(ValueError, match="not registered"):
        make_emission(_Unregistered())
    with pytest.raises(ValueError, match="not registered"):
        InfiniteHMM(emission=_Unregistered(), **QUICK).fit(np.zeros((10, 1)))
    # the kernels refuse a tag nobody registered, at compile time
    with pytest.raises(TypingError, match="not the tag of a registered emission family"):
        log_pred(UnknownTag(), np.zeros((1, 13)), 0, np.ones(4), np.zeros((1, 1)), 0)
    with pytest.raises(TypeError, match="EmissionFamily subclass"):
        register_family(int)
    with pytest.raises(ValueError, match="taken by Gaussian"):
        register_family(type("Other", (_Unregistered,), {"name": "gaussian"}))


def test_register_family_makes_a_name_usable():
    cls = type("Renamed", (Gaussian,), {"name": "gaussian_alias", "tag": GaussianTag()})
    try:
        register_family(cls)
        X, _ = make_gaussian_hmm(200, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = InfiniteHMM(emission="gaussian_alias", **QUICK).fit(X)
        assert isinstance(model._family, cls) and model.means_.shape[1] == 1
    finally:
        FAMILIES.pop("gaussian_alias", None)


# ------------------------------------------------------------------ Poisson
def test_poisson_default_prior_is_scaled_to_the_data():
    X, _ = make_poisson_hmm(500, n_features=2, random_state=0)
    prior = Poisson().resolve_prior(X)
    np.testing.assert_allclose(prior["b0"], 1.0 / X.mean(axis=0))
    assert prior["a0"] == 1.0
    explicit = Poisson(a0=2.0, b0=0.5).resolve_prior(X)
    np.testing.assert_array_equal(explicit["b0"], [0.5, 0.5])
    # a column of zeros gets b0 = a0
    assert Poisson().resolve_prior(np.zeros((5, 1)))["b0"][0] == 1.0
    with pytest.raises(ValueError, match="one entry per column"):
        Poisson(b0=[1.0, 2.0, 3.0]).resolve_prior(X)
    with pytest.raises(ValueError, match="Poisson a0 must be a positive float"):
        Poisson(a0=-1.0).resolve_prior(X)


@pytest.mark.parametrize("X, match", [
    (np.array([[1.0], [-1.0]]), "non-negative"),
    (np.array([[1.5], [2.0]]), "non-integer"),
    (np.array([[1.0], [np.inf]]), "infinity"),
])
def test_poisson_rejects_bad_counts(X, match):
    with pytest.raises(ValueError, match=match):
        InfiniteHMM(emission="poisson", **QUICK).fit(X)


def test_poisson_fit_finds_the_states_and_samples_counts():
    X, states = make_poisson_hmm(1500, n_states=3, n_features=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = InfiniteHMM(emission="poisson", max_time=None, max_sweeps=3200,
                            random_state=0).fit(X)
    from sklearn.metrics import normalized_mutual_info_score

    assert model.n_states_ == 3
    # Viterbi with the true parameters reaches 0.793 on these data
    assert normalized_mutual_info_score(states, model.predict(X)) > 0.75
    assert model.lambdas_.shape == (3, 2)
    Xs, zs = model.sample(200, random_state=1)
    assert Xs.dtype.kind == "i" and Xs.shape == (200, 2) and Xs.min() >= 0
    assert np.isfinite(model.score(X[:300]))


def test_integer_codes_warning_names_poisson():
    X = np.random.default_rng(0).poisson(3.0, (300, 1)).astype(float)
    with pytest.warns(UserWarning, match="emission='poisson'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            InfiniteHMM(**QUICK).fit(X)


# ---------------------------------------------------------- missing values
def _with_gaps(X, fraction=0.2, seed=0):
    Xm = X.astype(float).copy()
    miss = np.random.default_rng(seed).random(X.shape[0]) < fraction
    Xm[miss] = np.nan
    return Xm, miss


def test_nan_is_an_error_by_default_and_names_the_option():
    X, _ = make_gaussian_hmm(100, random_state=0)
    Xm, _ = _with_gaps(X)
    with pytest.raises(ValueError, match="allow_missing=True"):
        InfiniteHMM(**QUICK).fit(Xm)
    model = InfiniteHMM(**QUICK).fit(X)
    with pytest.raises(ValueError, match="allow_missing=True"):
        model.predict(Xm)


@pytest.mark.parametrize("emission, make", [
    ("gaussian", lambda: make_gaussian_hmm(1200, random_state=0)),
    ("gaussian", lambda: make_multivariate_gaussian_hmm(1200, n_features=2, random_state=0)),
    ("poisson", lambda: make_poisson_hmm(1200, n_states=3, rates=[[2.0], [15.0], [40.0]],
                                         random_state=0)),
    (Categorical(), lambda: make_categorical_hmm(1200, n_states=3, n_symbols=6, concentration=0.1,
                                                 min_total_variation=0.6, random_state=0)),
])
def test_missing_rows_fit_predict_and_score(emission, make):
    X, states = make()
    Xm, miss = _with_gaps(X)
    if X.shape[1] > 1:
        Xm[np.flatnonzero(~miss)[:5], 1] = np.nan     # one NaN column: the whole row is missing
        miss[np.flatnonzero(~miss)[:5]] = True
    before = Xm.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # a budget in sweeps, not seconds: the same fit on any machine
        model = InfiniteHMM(emission=emission, allow_missing=True, max_time=None,
                            max_sweeps=3200, random_state=0).fit(Xm)
    np.testing.assert_array_equal(Xm, before)            # the input is not modified
    from sklearn.metrics import normalized_mutual_info_score

    pred = model.predict(Xm)
    # (the fits without gaps reach 0.77 on the categorical data, above 0.9 on the others)
    assert normalized_mutual_info_score(states[~miss], pred[~miss]) > 0.6
    proba = model.predict_proba(Xm)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    # a missing step is predicted from its neighbours: mostly the state of the step before
    inside = np.flatnonzero(miss[1:-1] & ~miss[:-2] & ~miss[2:]) + 1
    assert np.mean(pred[inside] == pred[inside - 1]) > 0.6
    # score leaves missing steps out: the same as scoring the gaps as no observation at all
    s = model.score(Xm[:400])
    assert np.isfinite(s)
    n_obs = int(np.sum(~miss[:400]))
    assert np.isclose(model.perplexity(Xm[:400]), np.exp(-s / n_obs))
    # held-out data with gaps for a model fitted with gaps, and without
    assert np.isfinite(model.score(X[:400]))


def test_held_out_gaps_for_a_model_fitted_without_any():
    X, states = make_gaussian_hmm(800, random_state=0)
    model = InfiniteHMM(allow_missing=True, **QUICK).fit(X)
    Xm, miss = _with_gaps(X[:300])
    assert np.isfinite(model.score(Xm))
    # an all-missing sequence scores 0 (nothing is predicted)
    assert abs(model.score(np.full((5, 1), np.nan))) < 1e-12
    assert model.predict(Xm).shape == (300,)


def test_all_missing_training_data_is_an_error():
    with pytest.raises(ValueError, match="Every row of X is missing"):
        InfiniteHMM(allow_missing=True, **QUICK).fit(np.full((20, 1), np.nan))


# ------------------------------------------------------------ autoregressive
def test_autoregressive_fit_predict_score_and_sample():
    """Switching dynamics through the estimator: the regimes are found,
    ``coefs_`` are close to the generating ones, the first ``order`` steps of
    each sequence are not scored, and ``sample`` simulates the dynamics."""
    from sklearn.metrics import normalized_mutual_info_score

    from sk_ihmm.emissions import AutoRegressive

    lengths = [500, 400]
    X, states, params = make_ar_hmm(lengths=lengths, n_states=3, order=2, random_state=0,
                                    return_params=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = InfiniteHMM(emission=AutoRegressive(order=2), kappa=10.0, max_time=None,
                            max_sweeps=3200, random_state=0).fit(X, lengths=lengths)
    pred = model.predict(X, lengths=lengths)
    assert normalized_mutual_info_score(states, pred) > 0.9
    assert model.coefs_.shape == (model.n_states_, 2, 5)
    assert model.covars_.shape == (model.n_states_, 2, 2)
    # the state that covers most of regime 0 has its coefficients
    k = np.bincount(pred[states == 0]).argmax()
    np.testing.assert_allclose(model.coefs_[k], params["coefs"][0], atol=0.25)
    assert model.emission_prior_["K0"].shape == (5, 5)
    # conditioning steps: no emission likelihood, so perplexity divides by
    # the scored steps, and a sequence of `order` steps scores 0
    score = model.score(X[:300], lengths=[150, 150])
    assert np.isclose(model.perplexity(X[:300], lengths=[150, 150]), np.exp(-score / 296))
    assert abs(model.score_sequences(X[:2])[0]) < 1e-12
    assert np.allclose(model.predict_proba(X[:300]).sum(axis=1), 1.0)
    Xs, ss = model.sample(300, random_state=1)
    assert Xs.shape == (300, 2) and np.all(np.isfinite(Xs))
    # the sample follows the fitted dynamics: residuals have the fitted covariance
    resid = [Xs[t] - model.coefs_[ss[t]] @ np.r_[Xs[t - 1], Xs[t - 2], 1.0] for t in range(2, 300)]
    assert np.all(np.abs(np.std(resid, axis=0) / np.sqrt(np.diagonal(model.covars_[0])) - 1) < 0.5)


def test_autoregressive_beats_the_gaussian_on_dynamics():
    """On smooth switching dynamics a Gaussian per state cuts the path into
    many states; the autoregressive family finds the regimes."""
    from sklearn.metrics import normalized_mutual_info_score

    X, states = make_ar_hmm(800, n_states=2, n_features=2, spectral_radius=0.99,
                            noise_scale=0.1, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ar = InfiniteHMM(emission="autoregressive", kappa=10.0, **QUICK).fit(X)
        gauss = InfiniteHMM(kappa=10.0, **QUICK).fit(X)
    assert normalized_mutual_info_score(states, ar.predict(X)) > 0.9
    assert ar.n_states_ < gauss.n_states_


def test_autoregressive_short_sequences_and_missing_rows():
    from sk_ihmm.emissions import AutoRegressive

    X, _ = make_ar_hmm(200, n_features=1, random_state=0)
    with pytest.raises(ValueError, match="conditioning values"):
        InfiniteHMM(emission=AutoRegressive(order=2), **QUICK).fit(X[:6], lengths=[2, 2, 2])
    # a missing step and the `order` steps after it are not scored
    Xm = X.copy()
    Xm[50] = np.nan
    family = AutoRegressive(order=2)
    Y = family.prepare(family.check_X(Xm), np.array([0, 100]), np.array([100, 100]))
    assert np.flatnonzero(np.isnan(Y[:, 0])).tolist() == [0, 1, 50, 51, 52, 100, 101]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = InfiniteHMM(emission=family, allow_missing=True, **QUICK).fit(Xm, lengths=[100, 100])
    assert model.predict(Xm, lengths=[100, 100]).shape == (200,)
    score = model.score(Xm, lengths=[100, 100])
    assert np.isclose(model.perplexity(Xm, lengths=[100, 100]), np.exp(-score / 193))
    # a string emission takes nested parameters
    est = InfiniteHMM(emission="autoregressive").set_params(emission__order=3)
    assert est.emission.order == 3


# ------------------------------------------------------------ HCRP categorical
def test_hcrp_categorical_fit_keeps_per_sample_hyperparameters():
    from sk_ihmm.emissions import HCRPCategorical

    X, states = make_categorical_hmm(1500, n_states=3, n_symbols=20, concentration=0.1,
                                     random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = InfiniteHMM(emission="hcrp_categorical", max_time=None, max_sweeps=1600,
                            random_state=0).fit(X[:1200])
    assert isinstance(model._family, HCRPCategorical)
    snaps = [s for chain in model.snapshots_ for s in chain]
    hyps = np.array([s.hyp for s in snaps])
    assert hyps.shape[1] == 8 + 20
    # beta and the concentrations move from sample to sample; the pseudo-counts sum to alpha_e
    assert np.ptp(hyps[:, 1]) > 0 and np.ptp(hyps[:, 2]) > 0
    np.testing.assert_allclose(hyps[:, 8:].sum(axis=1), hyps[:, 1], rtol=1e-10)
    assert np.allclose(model.emissionprob_.sum(axis=1), 1.0)
    assert np.isfinite(model.score(X[1200:]))
    assert model.emission_prior_["resample"] is True
    # fixed concentrations stay fixed; beta is still sampled
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fixed = InfiniteHMM(emission=HCRPCategorical(resample=False, concentration=2.0),
                            **QUICK).fit(X[:300])
    hyps = np.array([s.hyp for chain in fixed.snapshots_ for s in chain])
    assert np.all(hyps[:, 1] == 2.0) and np.ptp(hyps[:, 8]) > 0


def test_hcrp_categorical_rejects_bad_hyperparameters():
    from sk_ihmm.emissions import HCRPCategorical

    for kwargs, match in [({"concentration": 0.0}, "concentration must be a positive"),
                          ({"base_concentration_prior": (1.0,)}, "base_concentration_prior"),
                          ({"n_symbols": 0}, "n_symbols")]:
        with pytest.raises(ValueError, match=match):
            InfiniteHMM(emission=HCRPCategorical(**kwargs), **QUICK).fit(np.zeros((10, 1), int))


@pytest.mark.parametrize("emission", ["categorical", "hcrp_categorical"])
def test_an_unseen_symbol_names_the_family_to_widen(emission):
    X = make_categorical_hmm(300, n_states=2, n_symbols=4, random_state=0)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = InfiniteHMM(emission=emission, **QUICK).fit(X)
    name = "HCRPCategorical" if emission == "hcrp_categorical" else "Categorical"
    with pytest.raises(ValueError, match=f"Symbol 9 is outside the alphabet of 4 symbols seen in "
                                         f"fit; set emission={name}\\(n_symbols=...\\)"):
        model.score(np.array([[0], [9]]))
