"""MCMC samplers of the HCRP-HMM, each an ``(init, step)`` pair of plain functions.

The protocol (what the estimator and the chain driver rely on)
--------------------------------------------------------------
``init(problem, x0, rng) -> state``
    Build a chain state from an initial labelling ``x0`` (int64, labels
    ``>= 1``; label 0 is the start restaurant).
``step(state, problem, rng) -> dict``
    One sweep, *including* the hyperparameter updates the problem asks for;
    returns per-sweep statistics (at least ``"accept_rate"``) that go into the
    trace. It may replace arrays of ``state`` (capacity growth) but never
    touches ``problem``.

A state exposes ``x`` (labels), ``conc`` (``[alpha, gamma, kappa]``),
``n`` / ``m`` / ``o`` (transition counts, root-table counts and override-table
counts, indexed by label, restaurant 0 = start), ``stats`` (emission
sufficient statistics per label) and ``log_joint``. That is all the chain
driver needs to record traces and posterior snapshots, whatever the sampler.

``problem`` is a :class:`sk_ihmm._chain.Problem`: data, sequence boundaries,
emission kernels, hyperpriors and sampler options. Randomness only comes from
the ``numpy.random.Generator`` passed in.
"""

from collections import namedtuple

from . import _pgas, _rcd_blocked, _rcd_gibbs, _split_merge

Sampler = namedtuple("Sampler", ["init", "step"])

SAMPLERS = {
    "rcd_gibbs": Sampler(_rcd_gibbs.init, _rcd_gibbs.step),
    "rcd_blocked": Sampler(_rcd_blocked.init, _rcd_blocked.step_blocked),
    "rcd_beam": Sampler(_rcd_blocked.init, _rcd_blocked.step_beam),
    "pgas": Sampler(_pgas.init, _pgas.step),
    "split_merge": Sampler(_split_merge.init, _split_merge.step),
}


def register(name, init, step):
    """Register a sampler under ``name`` (used by the sampler modules)."""
    SAMPLERS[name] = Sampler(init, step)


def get_sampler(name):
    try:
        return SAMPLERS[name]
    except KeyError:
        raise ValueError(
            f"Unknown sampler {name!r}; available samplers: {sorted(SAMPLERS)}."
        ) from None
