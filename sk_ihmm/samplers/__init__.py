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
sufficient statistics per label), ``hyp`` (the emission family's
hyperparameters, the chain's own copy, which a family that samples them
updates) and ``log_joint`` (the collapsed samplers': of their one seating;
``pgas``'s: at the level of table counts). That is all the chain driver
needs to record traces and posterior snapshots, whatever the sampler.
doc/internals.rst, "Adding a sampler", has the checklist.

``problem`` is a :class:`sk_ihmm._chain.Problem`: data, sequence boundaries,
emission kernels, hyperpriors and sampler options. Randomness only comes from
the ``numpy.random.Generator`` passed in.
"""

from collections import namedtuple
from numbers import Integral

from sklearn.utils._param_validation import Interval, StrOptions

Sampler = namedtuple("Sampler", ["init", "step", "options"])
Sampler.__doc__ = """A registered sampler: its ``(init, step)`` pair and the names of the
:data:`OPTIONS` it reads."""

Option = namedtuple("Option", ["default", "constraints", "doc"])
Option.__doc__ = """A sampler option: its default (also the estimator's), its
scikit-learn parameter constraints and a one-line description."""

#: Every sampler option: the single source of the defaults and validation of
#: the estimator's parameters of the same names, and of what the samplers
#: read from ``problem.options`` (through :func:`option`).
OPTIONS = {
    "block_size": Option(
        None, [Interval(Integral, 1, None, closed="left"), None],
        "Block length of rcd_blocked / rcd_beam (None: 32 for rcd_blocked, 64 for rcd_beam, "
        "at most an eighth of the training steps and at least 2)."),
    "split_merge_trials": Option(
        3, [Interval(Integral, 0, None, closed="left")],
        "Split-merge proposals per sweep of split_merge."),
    "split_merge_width": Option(
        3, [Interval(Integral, 1, None, closed="left")],
        "Largest width of the chain proposals of split_merge, split_merge_trials of them per sweep (1: none)."),
    "base_sampler": Option(
        "rcd_blocked", [StrOptions({"rcd_gibbs", "rcd_blocked", "rcd_beam", "none"})],
        "Sampler interleaved with the split-merge moves (\"none\": only split-merge moves)."),
    "n_particles": Option(
        10, [Interval(Integral, 2, None, closed="left")],
        "Particles of pgas."),
    "proposal": Option(
        "posterior", [StrOptions({"posterior", "prior"})],
        "Proposal of pgas."),
}

SAMPLERS = {}


def register(name, init, step, options=()):
    """Register a sampler under ``name``.

    Parameters
    ----------
    name : str
        The value of ``InfiniteHMM(sampler=...)`` that selects it.
    init, step : callable
        The ``(init, step)`` pair (see the protocol above).
    options : sequence of str
        Names of the :data:`OPTIONS` it reads; an option not there yet must
        be added to :data:`OPTIONS` (and to ``InfiniteHMM.__init__``) first.
    """
    unknown = [o for o in options if o not in OPTIONS]
    if unknown:
        raise ValueError(f"Unknown sampler options {unknown}; known: {sorted(OPTIONS)}.")
    SAMPLERS[name] = Sampler(init, step, tuple(options))


def option(problem, name):
    """Sampler option ``name`` of ``problem.options``, or its :data:`OPTIONS`
    default when absent or ``None`` (the estimator validated it)."""
    value = problem.options.get(name)
    return OPTIONS[name].default if value is None else value


def get_sampler(name):
    try:
        return SAMPLERS[name]
    except KeyError:
        raise ValueError(
            f"Unknown sampler {name!r}; available samplers: {sorted(SAMPLERS)}."
        ) from None


from . import _pgas, _rcd_blocked, _rcd_gibbs, _split_merge  # noqa: E402  (they import option)

register("rcd_gibbs", _rcd_gibbs.init, _rcd_gibbs.step)
register("rcd_blocked", _rcd_blocked.init, _rcd_blocked.step_blocked, ["block_size"])
register("rcd_beam", _rcd_blocked.init, _rcd_blocked.step_beam, ["block_size"])
register("split_merge", _split_merge.init, _split_merge.step,
         ["split_merge_trials", "split_merge_width", "base_sampler", "block_size"])
register("pgas", _pgas.init, _pgas.step, ["n_particles", "proposal"])
