"""Chains dispatched to a dask cluster through joblib give the n_jobs=1 result."""

import numpy as np
import pytest

from sk_ihmm import InfiniteHMM


def _fit_kwargs():
    return dict(n_samples=6, n_burnin=4, n_chains=3, random_state=7)


def _same_fit(a, b):
    assert len(a.state_samples_) == len(b.state_samples_)
    for sa, sb in zip(a.state_samples_, b.state_samples_):
        np.testing.assert_array_equal(sa, sb)
    assert set(a.trace_) == set(b.trace_)
    for key in a.trace_:
        if key != "seconds":                       # CPU time differs, of course
            np.testing.assert_array_equal(a.trace_[key], b.trace_[key], err_msg=key)
    assert a.representative_ == b.representative_
    np.testing.assert_array_equal(a.transmat_, b.transmat_)


def test_dask_backend_matches_serial():
    pytest.importorskip("dask")
    distributed = pytest.importorskip("dask.distributed")
    from joblib import parallel_config

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-2, 0.5, 40), rng.normal(2, 0.5, 40)])[:, None]
    serial = InfiniteHMM(max_time=0, n_jobs=1, **_fit_kwargs()).fit(X)
    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1,
                            dashboard_address=None) as client:
        with parallel_config(backend="dask"), distributed.get_task_stream(client) as stream:
            distributed_fit = InfiniteHMM(max_time=0, n_jobs=-1, **_fit_kwargs()).fit(X)
    # the chains really ran as dask tasks
    keys = [str(task["key"]) for task in stream.data]
    assert any("chain_task" in key for key in keys), keys
    _same_fit(serial, distributed_fit)
    assert distributed_fit.score(X[:20]) == serial.score(X[:20])
