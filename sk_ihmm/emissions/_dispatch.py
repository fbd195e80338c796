"""The emission kernels every sampler calls, dispatched on the family's tag.

Each function takes the family's tag (``family.tag``, or
:func:`missing_aware` of it) as its first argument ``fam``. The tag's numba
type names the family, so numba compiles a caller once per family a fit
uses, and the dispatch below happens at compile time: the family's own
kernel where its :class:`~sk_ihmm.emissions.Kernels` has one, else the
generic version written here on the required kernels. A tag that is not
registered is a typing error.

A tag wrapped by :func:`missing_aware` marks observations whose first
column is NaN as missing: they add no emission likelihood (``log_pred``,
``param_loglik`` return 0), no statistics (``update`` skips them), and the
block functions take the generic route, which calls those two. The family's
fast paths never see a NaN, and a fit without missing observations pays
nothing for the option.

Why dispatch on a type rather than pass kernels as arguments: numba keys its
on-disk cache on argument types, and the type of a function argument is
unique to the process, so kernels taking functions would recompile in every
new process and in every joblib worker. The tags are picklable classes.

Functions taking whole arrays and row indices rather than row views, and
the inlined per-observation ones, spare the inner loops numba's reference
counting (doc/internals.rst, "Writing kernels").
"""

import math
from collections import namedtuple

import numpy as np
from numba import njit
from numba.core.errors import TypingError
from numba.extending import overload

from .._nrt import hold
from ._base import SHIFTED_FLOOR

__all__ = [
    "MissingTag", "missing_aware", "log_pred", "update", "param_loglik", "sample_param",
    "log_marginal_sum", "add_labelled", "log_pred_block", "log_proposal_block", "move_stats",
    "move_block", "shifted_param_loglik_block", "resample_hyperparameters",
    "log_prior_predictive", "log_emission_matrix",
]

#: The tag of a family whose observations may be missing (NaN rows).
MissingTag = namedtuple("MissingTag", ["family"], module=__name__)


def missing_aware(tag):
    """The tag that makes the kernels of ``tag``'s family skip NaN rows."""
    return MissingTag(tag)


def _resolve(fam):
    """``(kernels, missing)`` of the numba type of a tag (at compile time)."""
    from ._registry import kernels_for_tag

    cls = getattr(fam, "instance_class", None)
    missing = cls is MissingTag
    if missing:
        cls = getattr(fam.types[0], "instance_class", None)
    kernels = kernels_for_tag(cls)
    if kernels is None:
        raise TypingError(f"{fam} is not the tag of a registered emission family")
    return kernels, missing


def _own(fam, name):
    """The family's fast path ``name``, or None for the generic version."""
    kernels, missing = _resolve(fam)
    return None if missing else getattr(kernels, name)


def _step(fam, name):
    """``(kernel, missing)``: the family's per-step kernel ``name``, which a
    generic block version calls directly (not through the dispatching
    function, whose inlining costs reference counts in the loop) and skips
    for NaN rows when ``missing``."""
    kernels, missing = _resolve(fam)
    return getattr(kernels, name), missing


# ---------------------------------------------------------------- per step
def _log_pred(fam, stats, k, hyp, Y, t):
    raise NotImplementedError


@overload(_log_pred, inline="always")
def _log_pred_ol(fam, stats, k, hyp, Y, t):
    kernels, missing = _resolve(fam)
    f = kernels.log_pred
    if missing:
        def impl(fam, stats, k, hyp, Y, t):
            if math.isnan(Y[t, 0]):
                return 0.0
            return f(stats, k, hyp, Y, t)
        return impl
    return lambda fam, stats, k, hyp, Y, t: f(stats, k, hyp, Y, t)


@njit(cache=True, nogil=True, inline="always")
def log_pred(fam, stats, k, hyp, Y, t):
    """Log posterior predictive of observation ``Y[t]`` given the statistics
    ``stats[k]`` of one state (all zeros: the prior predictive)."""
    return _log_pred(fam, stats, k, hyp, Y, t)


def _update(fam, stats, k, Y, t, sign):
    raise NotImplementedError


@overload(_update, inline="always")
def _update_ol(fam, stats, k, Y, t, sign):
    kernels, missing = _resolve(fam)
    f = kernels.update
    if missing:
        def impl(fam, stats, k, Y, t, sign):
            if not math.isnan(Y[t, 0]):
                f(stats, k, Y, t, sign)
        return impl

    def impl(fam, stats, k, Y, t, sign):
        f(stats, k, Y, t, sign)
    return impl


@njit(cache=True, nogil=True, inline="always")
def update(fam, stats, k, Y, t, sign):
    """Add (``sign=+1``) or remove (``-1``) observation ``Y[t]`` in ``stats[k]``."""
    _update(fam, stats, k, Y, t, sign)
    hold(stats)
    hold(Y)


def _param_loglik(fam, param, k, Y, t):
    raise NotImplementedError


@overload(_param_loglik, inline="always")
def _param_loglik_ol(fam, param, k, Y, t):
    kernels, missing = _resolve(fam)
    f = kernels.param_loglik
    if missing:
        def impl(fam, param, k, Y, t):
            if math.isnan(Y[t, 0]):
                return 0.0
            return f(param, k, Y, t)
        return impl
    return lambda fam, param, k, Y, t: f(param, k, Y, t)


@njit(cache=True, nogil=True, inline="always")
def param_loglik(fam, param, k, Y, t):
    """Log density of observation ``Y[t]`` under the explicit parameters ``param[k]``."""
    return _param_loglik(fam, param, k, Y, t)


def _sample_param(fam, stats, k, hyp, rng, out, j):
    raise NotImplementedError


@overload(_sample_param)
def _sample_param_ol(fam, stats, k, hyp, rng, out, j):
    f = _resolve(fam)[0].sample_param

    def impl(fam, stats, k, hyp, rng, out, j):
        f(stats, k, hyp, rng, out, j)
    return impl


@njit(cache=True, nogil=True)
def sample_param(fam, stats, k, hyp, rng, out, j):
    """Draw explicit parameters from the posterior given ``stats[k]`` into ``out[j]``."""
    _sample_param(fam, stats, k, hyp, rng, out, j)


def _count(fam, stats, k):
    raise NotImplementedError


@overload(_count, inline="always")
def _count_ol(fam, stats, k):
    f = _resolve(fam)[0].count
    return lambda fam, stats, k: f(stats, k)


def _log_marginal(fam, stats, k, hyp):
    raise NotImplementedError


@overload(_log_marginal)
def _log_marginal_ol(fam, stats, k, hyp):
    f = _resolve(fam)[0].log_marginal
    return lambda fam, stats, k, hyp: f(stats, k, hyp)


# -------------------------------------------------------------- whole table
@njit(cache=True, nogil=True)
def log_marginal_sum(fam, stats, hyp):
    """``sum_k log p(observations of k)`` over the rows of ``stats`` (closed
    form, parameters integrated out; a row without observations adds 0):
    the emission part of the samplers' ``log_joint``. Numba twin of the
    families' vectorised ``log_marginal_stats`` (the tests' reference); it
    writes only scratch columns of the statistics."""
    zero = np.zeros((1, stats.shape[1]))
    z0 = _log_marginal(fam, zero, 0, hyp)
    total = 0.0
    for k in range(stats.shape[0]):
        if _count(fam, stats, k) > 0.0:
            total += _log_marginal(fam, stats, k, hyp) - z0
    return total


def _add_labelled(fam, stats, x, Y):
    raise NotImplementedError


@overload(_add_labelled, inline="always")
def _add_labelled_ol(fam, stats, x, Y):
    f = _own(fam, "add_labelled")
    if f is not None:
        return lambda fam, stats, x, Y: f(stats, x, Y)
    upd, missing = _step(fam, "update")

    def impl(fam, stats, x, Y):
        for t in range(x.shape[0]):
            if not (missing and math.isnan(Y[t, 0])):
                upd(stats, x[t], Y, t, 1.0)
    return impl


@njit(cache=True, nogil=True)
def add_labelled(fam, stats, x, Y):
    """Add every observation ``Y[t]`` to ``stats[x[t]]`` (``x`` of length
    ``len(Y)``): the statistics of a labelled sequence in one call. Same
    result as :func:`update` for each ``t`` in turn, up to rounding."""
    _add_labelled(fam, stats, x, Y)


# ------------------------------------------------------------------ blocks
def _log_pred_block(fam, stats, labels, n_labels, hyp, Y, start, length, out):
    raise NotImplementedError


@overload(_log_pred_block, inline="always")
def _log_pred_block_ol(fam, stats, labels, n_labels, hyp, Y, start, length, out):
    f = _own(fam, "log_pred_block")
    if f is not None:
        def impl(fam, stats, labels, n_labels, hyp, Y, start, length, out):
            f(stats, labels, n_labels, hyp, Y, start, length, out)
        return impl
    lp, missing = _step(fam, "log_pred")

    def impl(fam, stats, labels, n_labels, hyp, Y, start, length, out):
        for c in range(n_labels):
            for l in range(length):
                t = start + l
                out[l, c] = 0.0 if missing and math.isnan(Y[t, 0]) else lp(stats, labels[c], hyp, Y, t)
    return impl


@njit(cache=True, nogil=True)
def log_pred_block(fam, stats, labels, n_labels, hyp, Y, start, length, out):
    """``out[l, c] = log_pred(fam, stats, labels[c], hyp, Y, start + l)`` for
    ``c < n_labels`` and ``l < length``: the emission matrix of a block, in
    one call (the family's loop reads the statistics as scalars)."""
    _log_pred_block(fam, stats, labels, n_labels, hyp, Y, start, length, out)


def _log_proposal_block(fam, stats, labels, n_labels, hyp, Y, start, length, out, prior_pred,
                        work):
    raise NotImplementedError


@overload(_log_proposal_block, inline="always")
def _log_proposal_block_ol(fam, stats, labels, n_labels, hyp, Y, start, length, out, prior_pred,
                           work):
    f = _own(fam, "log_proposal_block")
    if f is not None:
        def impl(fam, stats, labels, n_labels, hyp, Y, start, length, out, prior_pred, work):
            f(stats, labels, n_labels, hyp, Y, start, length, out, prior_pred, work)
        return impl
    lp, missing = _step(fam, "log_pred")
    count = _resolve(fam)[0].count

    def impl(fam, stats, labels, n_labels, hyp, Y, start, length, out, prior_pred, work):
        read_prior = prior_pred.shape[0] > 0
        for c in range(n_labels):
            k = labels[c]
            if read_prior and count(stats, k) == 0.0:
                for l in range(length):
                    out[c, l] = prior_pred[start + l]
            else:
                for l in range(length):
                    t = start + l
                    out[c, l] = 0.0 if missing and math.isnan(Y[t, 0]) else lp(stats, k, hyp, Y, t)
    return impl


@njit(cache=True, nogil=True)
def log_proposal_block(fam, stats, labels, n_labels, hyp, Y, start, length, out,
                       prior_pred, work):
    """Log emission weights of a block for a Metropolis-Hastings proposal,
    label-major: ``out[c, l]`` for label ``labels[c]`` at step ``start + l``
    (a label's row is contiguous, so loops over steps vectorise).

    The values of :func:`log_pred_block`, or a cheaper stand-in where the
    family has one: a proposal may use any weights as long as the
    acceptance ratio scores both paths with the same ones (the blocked RCD
    samplers do), so an approximation costs acceptance, never exactness.
    A state without observations reads its values, the prior predictive,
    from ``prior_pred`` (one value per time step) unless that is empty.
    ``work`` is float scratch for the family.
    """
    _log_proposal_block(fam, stats, labels, n_labels, hyp, Y, start, length, out, prior_pred,
                        work)


def _move_stats(fam, stats, Y, b, xb, sign, work):
    raise NotImplementedError


@overload(_move_stats, inline="always")
def _move_stats_ol(fam, stats, Y, b, xb, sign, work):
    f = _own(fam, "move_stats")
    if f is not None:
        def impl(fam, stats, Y, b, xb, sign, work):
            f(stats, Y, b, xb, sign, work)
        return impl
    upd, missing = _step(fam, "update")

    def impl(fam, stats, Y, b, xb, sign, work):
        for l in range(xb.shape[0]):
            if not (missing and math.isnan(Y[b + l, 0])):
                upd(stats, xb[l], Y, b + l, sign)
    return impl


@njit(cache=True, nogil=True)
def move_stats(fam, stats, Y, b, xb, sign, work):
    """Add (``sign=+1``) or remove (``-1``) the observations ``Y[b + l]`` of
    labels ``xb[l]``: :func:`update` for each step, without the log
    predictive of :func:`move_block` (``work``: int64 scratch of at least
    ``len(xb)`` entries)."""
    _move_stats(fam, stats, Y, b, xb, sign, work)


def _move_block(fam, stats, hyp, Y, b, xb, sign, work):
    raise NotImplementedError


@overload(_move_block, inline="always")
def _move_block_ol(fam, stats, hyp, Y, b, xb, sign, work):
    f = _own(fam, "move_block")
    if f is not None:
        return lambda fam, stats, hyp, Y, b, xb, sign, work: f(stats, hyp, Y, b, xb, sign, work)
    upd, missing = _step(fam, "update")
    lm = _resolve(fam)[0].log_marginal

    def impl(fam, stats, hyp, Y, b, xb, sign, work):
        # the change of each touched label's log marginal likelihood
        L = xb.shape[0]
        n = 0
        acc = 0.0
        for l in range(L):
            k = xb[l]
            seen = False
            for i in range(n):
                if work[i] == k:
                    seen = True
                    break
            if not seen:
                work[n] = k
                n += 1
                acc -= lm(stats, k, hyp)
        for l in range(L):
            if not (missing and math.isnan(Y[b + l, 0])):
                upd(stats, xb[l], Y, b + l, sign)
        for i in range(n):
            acc += lm(stats, work[i], hyp)
        return acc if sign > 0 else -acc
    return impl


@njit(cache=True, nogil=True)
def move_block(fam, stats, hyp, Y, b, xb, sign, work):
    """Add (``sign=+1``) or remove (``sign=-1``) the observations
    ``Y[b + l]`` of labels ``xb[l]``, ``l < len(xb)``; return their log joint
    predictive ``log p(Y[b:b + L] | statistics without them)``.

    That is the emission part of Makino's RCD factors: the sum of the
    ``log_pred`` of each observation evaluated without it, adding in time
    order or removing in reverse (exchangeability makes the order
    irrelevant); the generic version takes it as the change of each touched
    label's log marginal likelihood. ``work`` is an int64 scratch array of
    at least ``len(xb)`` entries.
    """
    return _move_block(fam, stats, hyp, Y, b, xb, sign, work)


def _shifted_param_loglik_block(fam, param, n, Y, start, length, out):
    raise NotImplementedError


@overload(_shifted_param_loglik_block, inline="always")
def _shifted_param_loglik_block_ol(fam, param, n, Y, start, length, out):
    f = _own(fam, "shifted_param_loglik_block")
    if f is not None:
        def impl(fam, param, n, Y, start, length, out):
            f(param, n, Y, start, length, out)
        return impl
    pl, missing = _step(fam, "param_loglik")

    def impl(fam, param, n, Y, start, length, out):
        for l in range(length):
            mx = out[l, 0]
            skip = missing and math.isnan(Y[start + l, 0])
            for k in range(1, n + 1):
                v = 0.0 if skip else pl(param, k, Y, start + l)
                out[l, k] = v
                mx = v if v > mx else mx
            for k in range(n + 1):
                v = out[l, k] - mx
                out[l, k] = v if v > SHIFTED_FLOOR else SHIFTED_FLOOR
    return impl


@njit(cache=True, nogil=True)
def shifted_param_loglik_block(fam, param, n, Y, start, length, out):
    """``out[l, k] = param_loglik(fam, param, k, Y, start + l)`` for the
    states ``k = 1..n`` and ``l < length``, then every row ``out[l, :n + 1]``
    minus its maximum, clamped at :data:`~sk_ihmm.emissions.SHIFTED_FLOOR`;
    column 0 holds a term of the caller's (written before the call) that
    takes part in the maximum and is shifted too: the log emission terms of
    a forward pass, ready for ``exp``."""
    _shifted_param_loglik_block(fam, param, n, Y, start, length, out)


def _resample_hyperparameters(fam, stats, hyp, rng):
    raise NotImplementedError


@overload(_resample_hyperparameters)
def _resample_hyperparameters_ol(fam, stats, hyp, rng):
    f = _resolve(fam)[0].resample_hyperparameters   # missing rows add no statistics
    if f is None:
        return lambda fam, stats, hyp, rng: None

    def impl(fam, stats, hyp, rng):
        f(stats, hyp, rng)
    return impl


@njit(cache=True, nogil=True)
def resample_hyperparameters(fam, stats, hyp, rng):
    """Draw the family's sampled hyperparameters in ``hyp`` (in place) given
    the statistics ``stats`` of the used states; nothing for a family whose
    hyperparameters are fixed. ``rng``: a numpy Generator."""
    _resample_hyperparameters(fam, stats, hyp, rng)


# ------------------------------------------------------------ from Python
def log_prior_predictive(fam, n_stats, hyp, Y):
    """``log p(y_t)`` under the prior predictive (a state without
    observations) for every row of ``Y``: shape ``(n_timesteps,)``."""
    zero = np.zeros((1, n_stats))
    out = np.empty((Y.shape[0], 1))
    log_pred_block(fam, zero, np.zeros(1, np.int64), 1, hyp, Y, 0, Y.shape[0], out)
    return out[:, 0].copy()


@njit(cache=True, nogil=True)
def log_emission_matrix(fam, stats, hyp, Y):
    """``(n_timesteps, n_states)`` log predictive densities of every
    observation under every state's statistics."""
    T, K = Y.shape[0], stats.shape[0]
    out = np.empty((T, K))
    # np.int64(0), not 0: a literal int compiles a second specialisation
    log_pred_block(fam, stats, np.arange(K), K, hyp, Y, np.int64(0), T, out)
    return out
