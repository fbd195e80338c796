"""warm_start continues every chain (state and generator) and appends its samples."""

import pickle
import warnings

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.exceptions import ConvergenceWarning

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import make_gaussian_hmm

X, _ = make_gaussian_hmm(200, 3, random_state=0)


pytestmark = pytest.mark.usefixtures("no_convergence_warnings")


@pytest.mark.parametrize("sampler", ["rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge", "pgas"])
def test_n_then_m_equals_n_plus_m(sampler):
    kw = dict(sampler=sampler, max_time=0, n_chains=2, random_state=0)
    one = InfiniteHMM(n_burnin=10, n_samples=30, **kw).fit(X)
    two = InfiniteHMM(n_burnin=10, n_samples=12, warm_start=True, **kw).fit(X)
    two.set_params(n_burnin=0, n_samples=18).fit(X)
    for a, b in zip(one.state_samples_, two.state_samples_):
        np.testing.assert_array_equal(a, b)
    for key in ("n_states", "log_joint", "alpha"):
        np.testing.assert_array_equal(one.trace_[key], two.trace_[key])
    assert two.n_sweeps_ == 40 and two.convergence_["n_rounds"] == 2
    assert one.score(X[:40]) == two.score(X[:40])


def test_a_pickled_model_continues():
    model = InfiniteHMM(max_time=0, n_burnin=5, n_samples=5, n_chains=2, warm_start=True,
                        random_state=1).fit(X)
    again = pickle.loads(pickle.dumps(model))
    again.set_params(n_burnin=0).fit(X)
    model.set_params(n_burnin=0).fit(X)
    for a, b in zip(model.state_samples_, again.state_samples_):
        np.testing.assert_array_equal(a, b)
    assert model.state_samples_[0].shape[0] == 10


def test_other_data_starts_new_chains_with_a_warning():
    model = InfiniteHMM(max_time=0, n_burnin=5, n_samples=5, n_chains=2, warm_start=True,
                        random_state=1).fit(X)
    # (the default emission prior is scaled to the data, so it changes too)
    with pytest.warns(UserWarning, match="the data and prior of this fit differ from the previous "
                                         "fit's.*starting new chains"):
        model.fit(X[:150])
    assert model.n_sweeps_ == 10 and model.state_samples_[0].shape == (5, 150)
    # the warning names what changed
    with pytest.warns(UserWarning, match="the sampler and n_chains of this fit differ "):
        model.set_params(sampler="rcd_gibbs", n_chains=1).fit(X[:150])
    with pytest.warns(UserWarning, match="the prior of this fit differs "):
        model.set_params(alpha=2.0).fit(X[:150])


def test_without_warm_start_a_refit_starts_over():
    model = InfiniteHMM(max_time=0, n_burnin=5, n_samples=5, n_chains=2, random_state=1)
    first = model.fit(X).state_samples_
    second = model.fit(X).state_samples_
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("sampler", ["rcd_gibbs", "pgas"])
def test_parallel_rounds_on_long_sequences(sampler):
    """Chains sent back to joblib workers for a second round keep writable
    state arrays (joblib memmaps arguments above 1 MB read-only by default;
    here the labels alone are 1.1 MB)."""
    X, _ = make_gaussian_hmm(140_000, 3, random_state=0)
    kw = dict(sampler=sampler, n_chains=2, n_burnin=1, n_samples=1, init="random",
              max_time=None, max_sweeps=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with parallel_config(backend="loky"):       # worker processes, not threads
            parallel = InfiniteHMM(n_jobs=2, **kw).fit(X)
        serial = InfiniteHMM(n_jobs=1, **kw).fit(X)
    assert parallel.convergence_["n_rounds"] == 2
    for a, b in zip(parallel.state_samples_, serial.state_samples_):
        np.testing.assert_array_equal(a, b)
