"""The sampler registry is the one source of the samplers' options."""

import inspect

import numpy as np
import pytest

from sk_ihmm import InfiniteHMM
from sk_ihmm import samplers
from sk_ihmm.samplers import OPTIONS, SAMPLERS, register


def test_estimator_parameters_follow_the_registry():
    signature = inspect.signature(InfiniteHMM.__init__).parameters
    doc = InfiniteHMM.__doc__
    for name, opt in OPTIONS.items():
        assert signature[name].default == opt.default, name
        assert InfiniteHMM._parameter_constraints[name] == list(opt.constraints), name
        assert f"    {name} : " in doc, f"{name} is not documented"
    for name, entry in SAMPLERS.items():
        assert set(entry.options) <= set(OPTIONS), name
    assert set(SAMPLERS) == {"rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge", "pgas"}


def test_register_rejects_unknown_options():
    with pytest.raises(ValueError, match="Unknown sampler options"):
        register("bad", SAMPLERS["rcd_gibbs"].init, SAMPLERS["rcd_gibbs"].step, ["n_walkers"])
    assert "bad" not in SAMPLERS


def test_a_registered_sampler_is_accepted_by_the_estimator():
    gibbs = SAMPLERS["rcd_gibbs"]
    register("my_gibbs", gibbs.init, gibbs.step)
    try:
        X = np.r_[np.zeros(30), 5 + np.zeros(30)][:, None] + np.random.default_rng(0).normal(size=(60, 1))
        kw = dict(max_time=0, n_chains=1, n_samples=5, n_burnin=5, random_state=0)
        mine = InfiniteHMM(sampler="my_gibbs", **kw).fit(X)
        ref = InfiniteHMM(sampler="rcd_gibbs", **kw).fit(X)
        np.testing.assert_array_equal(mine.state_samples_[0], ref.state_samples_[0])
    finally:
        del SAMPLERS["my_gibbs"]
    with pytest.raises(ValueError, match="sampler"):
        InfiniteHMM(sampler="my_gibbs", **kw).fit(X)


def test_samplers_read_defaults_from_the_registry():
    problem = type("P", (), {"options": {"n_particles": None, "proposal": "prior"}})()
    assert samplers.option(problem, "n_particles") == OPTIONS["n_particles"].default
    assert samplers.option(problem, "proposal") == "prior"
    assert samplers.option(problem, "split_merge_trials") == 3
