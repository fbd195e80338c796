"""The contract of an emission family, and the helpers the families share.

A family is two things (see :doc:`/internals`, "Adding an emission family"):

* a subclass of :class:`EmissionFamily`, an sklearn-style estimator holding
  only hyperparameters, whose methods the estimator and the chain driver call
  (validate data, resolve the prior, size the statistics, summarise, draw);
* a :class:`Kernels` set of numba functions on per-state sufficient
  statistics, which ``sk_ihmm.emissions._dispatch`` calls for every
  sampler. Six are required; the others are fast paths with generic
  fall-backs.

Invariants: an instance never stores data-dependent values (one instance
can serve several estimators and :func:`sklearn.base.clone`); statistics of
a state are one row of a ``(capacity, n_stats)`` float64 array, all zeros
for a state without observations; observations are rows of one
``(n_timesteps, n_features)`` float64 array (a symbol or a count is stored
as a float holding an integer).
"""

import math
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from sklearn.base import BaseEstimator

from .._warn import warn

__all__ = ["EmissionFamily", "Kernels", "family_tag"]

LOG_2PI = math.log(2.0 * math.pi)

#: Data-scaled defaults of the Gaussian priors (see :doc:`/model`): the prior
#: mean of a state's covariance is this fraction of the training data's
#: covariance ...
PRIOR_COVARIANCE_FRACTION = 0.1
#: ... and a state's mean is ``mu | Sigma ~ N(mu0, Sigma / lambda0)`` with
#: this ``lambda0``: ``Sigma / lambda0`` is about ten times the data
#: covariance, a weak prior that puts state means anywhere within about
#: three standard deviations of the data mean. Why not ``0.1`` (state means
#: spread like the data): :doc:`/model`, "Default emission priors".
PRIOR_MEAN_PRECISION = 0.01

#: :func:`sk_ihmm.emissions.shifted_param_loglik_block` clamps its shifted log terms here:
#: ``exp`` of them then stays in the normal floating-point range, where
#: :func:`sk_ihmm._vmath.exp_inplace` is defined and numpy's ``exp`` is fast
#: (below about -708 its result is subnormal or zero, a slow path). A term is
#: raised at most to ``exp(-700)``, about 1e-304, of the step's largest.
SHIFTED_FLOOR = -700.0


def family_tag(name, module):
    """A new field-less namedtuple class: the numba type of a family.

    Samplers receive an instance of it (``family.tag``) as their ``fam``
    argument, so numba compiles each kernel once per family a fit uses, and
    the kernel functions of ``sk_ihmm.emissions._dispatch`` pick the
    family's kernels at compile time. Assign the result to a module-level name equal to ``name``: numba's
    on-disk cache pickles the class by reference.
    """
    return namedtuple(name, [], module=module)


@dataclass(frozen=True)
class Kernels:
    """The numba kernels of a family. ``stats`` is the ``(capacity, n_stats)``
    table, ``k`` a row, ``Y`` the observations, ``t`` a row of ``Y``.

    Required
    --------
    log_pred(stats, k, hyp, Y, t) -> float
        Log posterior predictive of ``Y[t]`` given ``stats[k]`` (all zeros:
        the prior predictive). May write cache columns of ``stats[k]``.
    update(stats, k, Y, t, sign)
        Add (``sign=+1``) or remove (``-1``) ``Y[t]`` in ``stats[k]``; a row
        left without observations must be all zeros.
    log_marginal(stats, k, hyp) -> float
        Log marginal likelihood of the observations of ``stats[k]``, up to a
        constant that is the same for every row.
    count(stats, k) -> float
        Number of observations in ``stats[k]``.
    sample_param(stats, k, hyp, rng, out, j)
        Draw explicit parameters from the posterior given ``stats[k]`` into
        ``out[j]`` (for ``pgas``).
    param_loglik(param, k, Y, t) -> float
        Log density of ``Y[t]`` under the explicit parameters ``param[k]``.

    Optional fast paths
    -------------------
    Same signatures as the functions of ``sk_ihmm.emissions._dispatch``
    without the leading ``fam``, and the same results (up to rounding);
    ``log_proposal_block`` may return any weights that do not depend on
    which of the scored paths is current. Left ``None``, the generic
    version built from the required kernels runs.

    Hyperparameters sampled with the states
    ---------------------------------------
    resample_hyperparameters(stats, hyp, rng)
        Draw new values of the hyperparameters in ``hyp`` (in place, the
        chain's own copy) given the statistics of the used states, leaving
        their conditional posterior invariant; called at the end of a sweep (by
        ``split_merge`` also after its base sweep). Left
        ``None``, ``hyp`` stays fixed.
    """

    log_pred: Any
    update: Any
    log_marginal: Any
    count: Any
    sample_param: Any
    param_loglik: Any
    log_pred_block: Optional[Any] = None
    log_proposal_block: Optional[Any] = None
    move_stats: Optional[Any] = None
    move_block: Optional[Any] = None
    add_labelled: Optional[Any] = None
    shifted_param_loglik_block: Optional[Any] = None
    resample_hyperparameters: Optional[Any] = None


class EmissionFamily(BaseEstimator):
    """Base class of the collapsed conjugate emission families.

    A subclass sets the class attributes below and defines the methods that
    raise :class:`NotImplementedError` here; it is registered with
    :func:`sk_ihmm.emissions.register_family`. The estimator, the chain
    driver and the samplers call only these methods and attributes: none of
    them tests a family's name.

    ``dim`` below is the family's dimension: the number of columns of ``X``
    for the continuous families, the alphabet size for a categorical one
    (see :meth:`dimension`).
    """

    #: name used in messages and in ``emission=`` strings
    name = ""
    #: instance of the family's :func:`family_tag` class (the kernels' ``fam``)
    tag = None
    #: the family's numba :class:`Kernels`
    kernels = None
    #: True when ``X`` holds integer codes (symbols, counts): the estimator
    #: then validates it without converting to float first
    discrete = False
    #: names of the fitted attributes :meth:`summary` returns, set on the estimator
    fitted_attributes = ()

    @property
    def samples_hyperparameters(self):
        """True when the family draws its hyperparameters with the states
        (its :class:`Kernels` has ``resample_hyperparameters``): every chain
        then keeps its own ``hyp``, and every kept sample a copy."""
        return self.kernels is not None and self.kernels.resample_hyperparameters is not None

    # -- hyperparameters ---------------------------------------------------
    def validate_params(self):
        """Raise ValueError naming a hyperparameter that is out of range."""

    def resolve_prior(self, X=None, dim=None):
        """The prior's hyperparameters, with data-scaled defaults filled in.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or None
            Training observations (rows of NaN, missing observations, are
            ignored). Hyperparameters left at ``None`` are set from them;
            without ``X`` every hyperparameter must be explicit.
        dim : int or None
            Family dimension; ``None`` takes it from ``X``.

        Returns
        -------
        prior : dict
            Hyperparameter name -> value (floats or arrays). The estimator
            stores it as ``emission_prior_``.
        """
        raise NotImplementedError

    def hyperparameters(self, dim, X=None, prior=None):
        """Flat float64 array ``hyp`` of hyperparameters for the kernels, from
        ``prior`` (a :meth:`resolve_prior` result) or resolved on ``X``."""
        raise NotImplementedError

    # -- data --------------------------------------------------------------
    def check_X(self, X, dim=None):
        """Validate observations; return a float64 ``(n_samples, n_features)``
        array. ``dim``: the dimension of the fit, for held-out data; rows
        that are all NaN (missing observations) must pass."""
        raise NotImplementedError

    def dimension(self, X):
        """The family's dimension for training data ``X`` (validated by
        :meth:`check_X`, then
        :meth:`~sk_ihmm.emissions.EmissionFamily.prepare`)."""
        raise NotImplementedError

    #: Number of leading steps of every sequence whose observations only
    #: condition later steps (the lags of an autoregressive family):
    #: :meth:`prepare` makes them missing rows, so they add no emission
    #: likelihood and are not scored.
    conditioning_steps = 0

    def prepare(self, X, starts, lengths):
        """The observations the kernels see, from ``X`` validated by :meth:`check_X`.

        One row per time step, as many rows as ``X``; a row of NaN is a
        step without emission likelihood (a missing observation, or one of
        the :attr:`~sk_ihmm.emissions.EmissionFamily.conditioning_steps` of a
        sequence). ``starts`` and
        ``lengths`` delimit the sequences. Every method below that takes
        data (:meth:`dimension`, :meth:`resolve_prior`,
        :meth:`hyperparameters`, :meth:`log_marginal`) and the kernels take
        the prepared rows. Default: ``X`` itself.
        """
        return X

    def warn_data(self, X):
        """Warn when ``X`` looks like data for another family (default: no check)."""

    # -- sizes -------------------------------------------------------------
    def n_stats(self, dim):
        """Length of one row of per-state sufficient statistics."""
        raise NotImplementedError

    def n_params(self, dim):
        """Length of one row of explicit parameters (for ``pgas``)."""
        raise NotImplementedError

    # -- results -----------------------------------------------------------
    def summary(self, stats, hyp):
        """Posterior-mean parameters of the states whose statistics are the
        rows of ``stats``: dict ``{name: array}`` over ``fitted_attributes``."""
        raise NotImplementedError

    def draw(self, summary, states, rng):
        """Observations ``(len(states), n_features)`` of the given states under
        a :meth:`summary`."""
        raise NotImplementedError

    def log_marginal_stats(self, stats, hyp):
        """Closed-form log marginal likelihood of each row of statistics
        (numpy; the reference the tests hold the kernels to)."""
        raise NotImplementedError

    def log_marginal(self, Y, dim=None, hyp=None):
        """Log marginal likelihood of the observations ``Y`` in one state.

        ``hyp``: resolved hyperparameters, by default those of this instance
        (which must then be explicit). Used by tests, against the product of
        predictives, and by the exact enumeration of small posteriors.
        """
        Y = np.asarray(Y, dtype=np.float64).reshape(len(Y), -1)
        dim = self.dimension(Y) if dim is None else dim
        hyp = self.hyperparameters(dim) if hyp is None else hyp
        if Y.shape[0] == 0:
            return 0.0
        from ._dispatch import update

        stats = np.zeros((1, self.n_stats(dim)))
        for t in range(Y.shape[0]):
            update(self.tag, stats, 0, Y, t, 1.0)
        return float(self.log_marginal_stats(stats, hyp)[0])


def data_moments(X):
    """Mean and covariance ``(D,), (D, D)`` of training data for data-scaled
    priors, over the rows without NaN.

    Raises a ValueError naming the problem when the spread of the data does
    not fit in a double (values beyond about 1e150 apart), since every
    kernel works with sums of squares of the data.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 2:
        X = X[~np.isnan(X).any(axis=1)]
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(
            "Data-scaled priors need a non-empty (n_samples, n_features) X with observed "
            f"rows; got shape {X.shape}."
        )
    mean = X.mean(axis=0)
    centred = X - mean
    with np.errstate(over="ignore", invalid="ignore"):
        cov = centred.T @ centred / X.shape[0]
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(cov))):
        raise ValueError(
            "X is too large in magnitude for the Gaussian emissions (its variance overflows a "
            f"double; largest |value| {np.max(np.abs(X)):.3g}). Rescale the data, for example "
            "with sklearn.preprocessing.StandardScaler in a Pipeline."
        )
    return mean, cov


def positive_definite_scale(cov):
    """``cov`` made usable as a prior scale matrix.

    A constant column (zero variance) gets variance 1 and a singular
    covariance (collinear columns) a relative ridge of 1e-6 on its diagonal;
    a regular covariance is returned unchanged, which keeps the prior
    equivariant under invertible affine maps of the data.
    """
    cov = np.array(cov, dtype=np.float64)
    diag = np.diag(cov).copy()
    zero = diag <= 0.0
    if np.any(zero):
        cov[zero, :] = 0.0
        cov[:, zero] = 0.0
        cov[zero, zero] = 1.0
        diag[zero] = 1.0
    try:
        eig = np.linalg.eigvalsh(cov / np.sqrt(np.outer(diag, diag)))
    except np.linalg.LinAlgError:
        eig = np.zeros(1)
    if eig.min() < 1e-10:
        cov = cov + 1e-6 * np.diag(diag)
    return cov


#: A column of multi-column Gaussian data with at most this many distinct
#: values draws a warning (:func:`warn_few_values`).
FEW_VALUES_MAX_DISTINCT = 50


def warn_few_values(X):
    """Warn when a column of multi-column Gaussian data takes few distinct values.

    A Gaussian state whose steps share one value of a column has zero
    variance there, which the marginal likelihood rewards more, the more
    steps share the value, so the states follow such a column instead of the
    others: with a column of 12 values drawn independently of the states,
    a default fit found 12 states, one per value (NMI 0.003). One column is
    left to :func:`sk_ihmm.emissions.gaussian.warn_integer_codes`; data whose
    every column is constant have one state, the right answer.
    """
    if X.ndim != 2 or X.shape[1] < 2:
        return
    found = []
    for d in range(X.shape[1]):
        v = X[:, d]
        v = v[~np.isnan(v)]
        values = np.unique(v)
        if values.shape[0] <= FEW_VALUES_MAX_DISTINCT and v.shape[0] >= 2 * values.shape[0]:
            found.append((d, values))
    if not found or len(found) == X.shape[1] and all(v.shape[0] == 1 for _, v in found):
        return

    def say(d, values):
        if values.shape[0] == 1:
            return f"column {d} is constant ({values[0]:g})"
        return (f"column {d} takes only {values.shape[0]} distinct values "
                f"({values[0]:g} to {values[-1]:g})")

    listed = "; ".join(say(d, v) for d, v in found[:5]) + ("; ..." if len(found) > 5 else "")
    warn(
        f"In X ({X.shape[0]:,} rows, {X.shape[1]} columns) {listed}. With Gaussian emissions a "
        "state whose steps share one value of a column has zero variance in it, which the "
        "marginal likelihood rewards more, the more steps share the value, so the states "
        "follow such columns (often one state per value) rather than the others. Drop constant "
        "columns (sklearn.feature_selection.VarianceThreshold); fit category codes or counts "
        "on their own with emission='categorical' or 'poisson'; for a measurement rounded to "
        "a step h, add uniform noise on (-h/2, h/2).",
        UserWarning,
    )


def check_integer_codes(X, family, what):
    """``X`` of non-negative integers (NaN rows allowed) as float64; a
    ValueError naming ``family`` and ``what`` ("symbols", "counts") otherwise."""
    X = np.asarray(X)
    if X.dtype.kind == "b":
        X = X.astype(np.int64)
    if X.dtype.kind not in "iuf":
        raise ValueError(f"{family} emissions expect integer {what}; got dtype {X.dtype}.")
    X = X.astype(np.float64)
    observed = X[~np.isnan(X)]
    if not np.all(np.isfinite(observed)):
        raise ValueError("Input X contains infinity.")
    if np.any(observed != np.round(observed)):
        raise ValueError(f"{family} emissions expect integer {what}; X has non-integer values.")
    if observed.size and observed.min() < 0:
        raise ValueError(f"{family} {what} must be non-negative; got minimum {observed.min():.0f}.")
    return X


#: Largest magnitude of a continuous observation: squares (sums of squares
#: over up to 10^8 steps) must stay finite in a double.
MAX_ABS_VALUE = 1e140


def check_magnitude(Y):
    """Raise a ValueError when the squares of ``Y`` would overflow."""
    finite = Y[~np.isnan(Y)]
    largest = float(np.max(np.abs(finite))) if finite.size else 0.0
    if largest > MAX_ABS_VALUE:
        raise ValueError(
            f"X has a value of magnitude {largest:.3g}; the Gaussian emissions work with "
            f"squares of the data, which overflow beyond {MAX_ABS_VALUE:.0e}. Rescale "
            "the data (for example with sklearn.preprocessing.StandardScaler in a Pipeline)."
        )


def check_real_rows(X):
    """``X`` as a 2-D float64 array of observations (one row per step),
    with finite magnitudes checked (:func:`check_magnitude`)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"Expected X of shape (n_samples, n_features); got shape {X.shape}.")
    check_magnitude(X)
    return X


def columns_of(X, dim):
    """The number of columns: ``dim`` when given, else ``X``'s (for
    :meth:`EmissionFamily.resolve_prior`, which takes either)."""
    if dim is not None:
        return int(dim)
    if X is None:
        raise ValueError("resolve_prior needs X or dim.")
    return int(np.asarray(X).shape[1])
