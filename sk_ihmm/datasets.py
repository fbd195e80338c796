"""Synthetic generators and loaders for the benchmark data sets.

* **Synthetic sequences**, reproducible through ``random_state``:
  :func:`make_gaussian_hmm` (the Gaussian HMM of the PGAS iHMM paper [1]_),
  :func:`make_multivariate_gaussian_hmm`, :func:`make_categorical_hmm`,
  :func:`make_poisson_hmm`, :func:`make_ar_hmm`, :func:`make_sequence1` (the
  cyclic symbol sequence of Makino et al. [2]_) and :func:`make_sequence2`
  (our reconstruction of their 16-state automaton). The random ones other
  than :func:`make_sequence2` accept ``lengths`` for several independent
  sequences, concatenated (pass the same ``lengths`` to ``fit``).
* **Real data sets** of the iHMM papers [1]_ [3]_, *not* shipped: they live
  in a shared folder found by :func:`shared_data_path`, and every loader
  raises :class:`DataNotAvailable` (a :class:`FileNotFoundError`) when its
  file is absent, so tests and benchmarks can skip cleanly.

Observations are shaped ``(n_timesteps, n_features)``, as the estimators
(and hmmlearn) expect; categorical symbols are integer codes.

References
----------
.. [1] N. Tripuraneni, S. Gu, H. Ge and Z. Ghahramani, "Particle Gibbs for
   infinite hidden Markov models", NeurIPS 2015.
.. [2] T. Makino, S. Takei, I. Sato and D. Mochihashi, "Restricted collapsed
   draw: accurate sampling for hierarchical Chinese restaurant process hidden
   Markov models", arXiv:1106.0474, 2011.
.. [3] J. Van Gael, Y. Saatci, Y. W. Teh and Z. Ghahramani, "Beam sampling for
   the infinite hidden Markov model", ICML 2008.
"""

import os
import re
from collections import Counter
from numbers import Real
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "DataNotAvailable",
    "CHAR_ALPHABET",
    "ION_CHANNEL_NAMES",
    "make_gaussian_hmm",
    "make_multivariate_gaussian_hmm",
    "make_categorical_hmm",
    "make_poisson_hmm",
    "make_ar_hmm",
    "make_sequence1",
    "make_sequence2",
    "shared_data_path",
    "load_alice_chars",
    "load_alice_words",
    "load_well_log",
    "load_ion_channel",
    "load_old_faithful",
    "load_mocap6",
]

#: Environment variable naming a folder that holds the shared data files.
DATA_ENV_VAR = "SK_IHMM_DATA"

#: Symbols of :func:`load_alice_chars`; the code of a symbol is its index.
CHAR_ALPHABET = [*"abcdefghijklmnopqrstuvwxyz", " ", ".", ",", "'", "-"]

#: Recordings accepted by :func:`load_ion_channel`.
ION_CHANNEL_NAMES = (
    "sctrace_test2_sub100",
    "sctrace_cluster_10kHz",
    "ip3r2_icmcstat",
)

_ALICE_FILE = "alice_in_wonderland.txt"
_SEQUENCE1_PATTERN = np.array([0, 1, 2, 3, 1, 2, 3, 4])  # A B C D B C D E
# Sequence 2 (make_sequence2): probability of each of the three symbols a
# state emits, of the bold arrow (go on in the state's direction) and of each
# of the two dashed arrows (turn round in place; turn round and move on).
_SEQUENCE2_EMIT = 1.0 / 3.0
_SEQUENCE2_BOLD = 0.84
_SEQUENCE2_DASHED = 0.08
_PGAS_MEANS = {
    4: (-2.0, -0.5, 1.0, 4.0),
    10: tuple(float(m) for m in range(-9, 10, 2)),
}
# Punctuation classes of the character alphabet; other non-letters are dropped.
_CHAR_CLASSES = str.maketrans({
    "!": ".", "?": ".",
    ";": ",", ":": ",",
    '"': "'",
})
_CHAPTER_HEADING = re.compile(r"^CHAPTER [IVXLC]+\.")


class DataNotAvailable(FileNotFoundError):
    """A shared data file could not be found.

    Raised by :func:`shared_data_path` and by every ``load_*`` function. It
    subclasses :class:`FileNotFoundError`, so callers that do not know about
    it still see a familiar exception; test suites catch it to skip.
    """


# --------------------------------------------------------------------------
# Synthetic data
# --------------------------------------------------------------------------
def make_gaussian_hmm(n_timesteps=4000, n_states=4, random_state=None,
                      self_transition=0.75, sd=0.5, means=None, lengths=None):
    """Sample the synthetic Gaussian HMM of the PGAS iHMM paper.

    The hidden chain starts in a uniformly drawn state. At each step it stays
    in its current state with probability ``self_transition`` and otherwise
    moves to one of the other ``n_states - 1`` states chosen uniformly, i.e.
    the transition matrix has ``self_transition`` on the diagonal and
    ``(1 - self_transition) / (n_states - 1)`` everywhere else. Each
    observation is the mean of the current state plus Gaussian noise with
    standard deviation ``sd``. With the defaults this is the 4-state data set
    of Tripuraneni et al. (2015) [1]_.

    Parameters
    ----------
    n_timesteps : int, default=4000
        Length of the sequence. Ignored when ``lengths`` is given.
    n_states : int, default=4
        Number of hidden states.
    random_state : int, RandomState instance or None, default=None
        Seed or generator, as accepted by
        :func:`sklearn.utils.check_random_state`.
    self_transition : float, default=0.75
        Probability of staying in the current state, in ``[0, 1]``.
    sd : float, default=0.5
        Standard deviation of the Gaussian emission noise.
    means : array-like of shape (n_states,), default=None
        State means. By default the paper's values are used:
        ``(-2, -0.5, 1, 4)`` for 4 states and ``(-9, -7, ..., 7, 9)`` for
        10 states. For any other number of states the means are evenly spaced
        with spacing 2 and centred at 0, ``2 * (k - (n_states - 1) / 2)``.
    lengths : array-like of int, default=None
        Lengths of several independent sequences of the same model (same
        means, same transition matrix). Each sequence starts its own chain in
        a uniformly drawn state; the sequences are concatenated in order, so
        ``X`` has ``sum(lengths)`` rows and ``n_timesteps`` is ignored. Pass
        the same ``lengths`` to ``fit``. ``None`` gives one sequence of
        ``n_timesteps`` steps (with a given seed, exactly the data of
        ``lengths=[n_timesteps]``).

    Returns
    -------
    X : ndarray of shape (n_timesteps, 1), dtype float64
        Observations (``sum(lengths)`` rows when ``lengths`` is given).
    states : ndarray of shape (n_timesteps,), dtype int64
        True hidden states, coded ``0 .. n_states - 1`` in the order of
        ``means``.

    See Also
    --------
    make_multivariate_gaussian_hmm : Several correlated features.
    make_categorical_hmm : Categorical (symbol) emissions.

    References
    ----------
    .. [1] N. Tripuraneni, S. Gu, H. Ge and Z. Ghahramani, "Particle Gibbs
       for infinite hidden Markov models", NeurIPS 2015, Section 5.

    Examples
    --------
    >>> X, states = make_gaussian_hmm(1000, random_state=0)
    >>> X.shape, states.shape
    ((1000, 1), (1000,))

    Three sequences in physical units (4 states around 20, noise sd 1.5):

    >>> lengths = [100, 200, 300]
    >>> X, states = make_gaussian_hmm(
    ...     means=20 + 3 * np.array([-2.0, -0.5, 1.0, 4.0]), sd=1.5,
    ...     lengths=lengths, random_state=0)
    >>> X.shape
    (600, 1)
    """
    lens = _resolve_lengths(n_timesteps, lengths)
    n_states = _check_positive_int(n_states, "n_states")
    self_transition = _check_self_transition(self_transition)
    if not sd > 0:
        raise ValueError(f"sd must be positive, got {sd!r}.")
    if means is None:
        means = _PGAS_MEANS.get(
            n_states, 2.0 * (np.arange(n_states) - (n_states - 1) / 2.0))
    means = np.asarray(means, dtype=float)
    if means.shape != (n_states,):
        raise ValueError(
            f"means must have shape ({n_states},), got {means.shape}.")
    if not np.all(np.isfinite(means)):
        raise ValueError("means must be finite.")

    rng = check_random_state(random_state)
    states = _sample_states(rng, lens, n_states, self_transition)
    X = means[states] + sd * rng.standard_normal(states.size)
    return X.reshape(-1, 1), states


def make_multivariate_gaussian_hmm(n_timesteps=2000, n_states=4, n_features=3,
                                   random_state=None, self_transition=0.75,
                                   means=None, covars=None, scales=None,
                                   offsets=None, lengths=None,
                                   return_params=False):
    """Sample an HMM with full-covariance multivariate Gaussian emissions.

    The hidden chain is that of :func:`make_gaussian_hmm` (stay with
    probability ``self_transition``, else move to a uniformly chosen other
    state). In state ``k`` a vector ``z ~ N(means[k], covars[k])`` is drawn
    and the observation is ``offsets + scales * z``, column by column, so
    columns can be put in very different physical units (for example
    ``scales=(1, 100, 0.01)``, ``offsets=(0, 1500, -3)``) without changing
    how separated the states are.

    The default emission parameters are drawn from ``random_state`` (so the
    same seed always gives the same model) and are well separated but not
    trivially so, with correlated features:

    * ``covars[k]`` is a correlation matrix: ``W W^T + I`` with ``W``
      standard normal of shape ``(n_features, n_features)``, rescaled to unit
      diagonal (with 3 features the median absolute correlation is about
      0.3, one in twenty exceeds 0.65);
    * ``means[k]`` are drawn one after the other from
      ``N(0, 2^2 I)`` and redrawn until the Mahalanobis distance to every
      earlier mean, under the average of the two states' covariances, is at
      least 3 (the spread grows by 10 % every 100 rejected draws, so this
      always ends). Neighbouring states thus overlap at their tails, like the
      1-D data of :func:`make_gaussian_hmm` (spacing 3 sd or more).

    Parameters
    ----------
    n_timesteps : int, default=2000
        Length of the sequence. Ignored when ``lengths`` is given.
    n_states : int, default=4
        Number of hidden states.
    n_features : int, default=3
        Number of columns; must match ``means``, ``covars``, ``scales`` and
        ``offsets`` when they are given.
    random_state : int, RandomState instance or None, default=None
        Seed or generator, as accepted by
        :func:`sklearn.utils.check_random_state`.
    self_transition : float, default=0.75
        Probability of staying in the current state, in ``[0, 1]``.
    means : array-like of shape (n_states, n_features), default=None
        State means before ``scales`` and ``offsets`` are applied. Drawn as
        described above when ``None``.
    covars : array-like of shape (n_states, n_features, n_features), \
default=None
        Symmetric positive-definite state covariances before ``scales`` is
        applied. Drawn as described above when ``None``.
    scales : array-like of shape (n_features,), default=None
        Positive factor of each column (``None``: all ones).
    offsets : array-like of shape (n_features,), default=None
        Value added to each column after scaling (``None``: all zeros).
    lengths : array-like of int, default=None
        Lengths of several independent sequences of the same model (same
        means and covariances). Each sequence starts its own chain in a
        uniformly drawn state; the sequences are concatenated, so ``X`` has
        ``sum(lengths)`` rows and ``n_timesteps`` is ignored. Pass the same
        ``lengths`` to ``fit``.
    return_params : bool, default=False
        Also return the generating parameters in the units of ``X``.

    Returns
    -------
    X : ndarray of shape (n_timesteps, n_features), dtype float64
        Observations (``sum(lengths)`` rows when ``lengths`` is given).
    states : ndarray of shape (n_timesteps,), dtype int64
        True hidden states, coded ``0 .. n_states - 1``.
    params : dict
        Only with ``return_params=True``: ``"means"`` of shape
        ``(n_states, n_features)`` and ``"covars"`` of shape
        ``(n_states, n_features, n_features)`` of the observations (that
        is, after ``scales`` and ``offsets``), and ``"transmat"`` of shape
        ``(n_states, n_states)``.

    See Also
    --------
    make_gaussian_hmm : One feature, the PGAS paper's data.

    Examples
    --------
    >>> X, states = make_multivariate_gaussian_hmm(500, random_state=0)
    >>> X.shape, states.shape
    ((500, 3), (500,))

    Columns in different units, two sequences:

    >>> X, states, params = make_multivariate_gaussian_hmm(
    ...     scales=(1, 100, 0.01), offsets=(0, 1500, -3), lengths=[300, 700],
    ...     random_state=0, return_params=True)
    >>> X.shape, params["means"].shape, params["covars"].shape
    ((1000, 3), (4, 3), (4, 3, 3))
    """
    lens = _resolve_lengths(n_timesteps, lengths)
    n_states = _check_positive_int(n_states, "n_states")
    n_features = _check_positive_int(n_features, "n_features")
    self_transition = _check_self_transition(self_transition)
    shape_d = (n_features,)
    scales = _check_vector(scales, "scales", shape_d, 1.0)
    if np.any(scales <= 0):
        raise ValueError(f"scales must be positive, got {scales.tolist()}.")
    offsets = _check_vector(offsets, "offsets", shape_d, 0.0)
    if covars is not None:
        covars = np.asarray(covars, dtype=float)
        expected = (n_states, n_features, n_features)
        if covars.shape != expected:
            raise ValueError(
                f"covars must have shape {expected}, got {covars.shape}.")
        if not np.all(np.isfinite(covars)):
            raise ValueError("covars must be finite.")
        for k in range(n_states):
            if not np.allclose(covars[k], covars[k].T):
                raise ValueError(f"covars[{k}] is not symmetric.")
            try:
                np.linalg.cholesky(covars[k])
            except np.linalg.LinAlgError:
                raise ValueError(
                    f"covars[{k}] is not positive definite.") from None
    if means is not None:
        means = np.asarray(means, dtype=float)
        if means.shape != (n_states, n_features):
            raise ValueError(
                f"means must have shape ({n_states}, {n_features}), got "
                f"{means.shape}.")
        if not np.all(np.isfinite(means)):
            raise ValueError("means must be finite.")
    return_params = _check_bool(return_params, "return_params")

    rng = check_random_state(random_state)
    if covars is None:
        covars = np.array([_random_correlation(rng, n_features)
                           for _ in range(n_states)])
    if means is None:
        means = _separated_means(rng, covars)
    states = _sample_states(rng, lens, n_states, self_transition)
    chol = np.linalg.cholesky(covars)
    noise = rng.standard_normal((states.size, n_features))
    Z = means[states] + np.einsum("tij,tj->ti", chol[states], noise)
    X = offsets + scales * Z
    if not return_params:
        return X, states
    params = {
        "means": offsets + scales * means,
        "covars": covars * scales[:, None] * scales[None, :],
        "transmat": _transmat(n_states, self_transition),
    }
    return X, states, params


def make_categorical_hmm(n_timesteps=3000, n_states=6, n_symbols=12,
                         random_state=None, self_transition=0.75,
                         concentration=0.3, lengths=None,
                         min_total_variation=0.3, return_params=False):
    """Sample an HMM with categorical (integer symbol) emissions.

    The hidden chain is that of :func:`make_gaussian_hmm` (stay with
    probability ``self_transition``, else move to a uniformly chosen other
    state). Each state emits one of ``n_symbols`` symbols with its own
    probabilities, drawn from a symmetric Dirichlet distribution with
    parameter ``concentration`` (small values give sparse rows, each state
    putting most of its mass on a few symbols).

    **Distinguishable states.** Two random rows can be nearly equal, which
    would make the true number of states unidentifiable. The rows are
    therefore drawn one after the other and each is redrawn until its total
    variation distance ``0.5 * sum_s |p_k(s) - p_j(s)|`` to every earlier
    row exceeds ``min_total_variation``. At most 1000 draws per row are
    tried; a :class:`ValueError` is raised if that is not enough (for example
    with a large ``concentration``, whose rows are all close to uniform).
    With the defaults about 9 in 10 sets of 6 independent rows already
    qualify, so the rejection changes the distribution of the rows little.

    Parameters
    ----------
    n_timesteps : int, default=3000
        Length of the sequence. Ignored when ``lengths`` is given.
    n_states : int, default=6
        Number of hidden states.
    n_symbols : int, default=12
        Size of the alphabet; symbols are coded ``0 .. n_symbols - 1``. A
        symbol of low probability may not occur in a short sample.
    random_state : int, RandomState instance or None, default=None
        Seed or generator, as accepted by
        :func:`sklearn.utils.check_random_state`.
    self_transition : float, default=0.75
        Probability of staying in the current state, in ``[0, 1]``.
    concentration : float, default=0.3
        Parameter of the symmetric Dirichlet distribution of each state's
        symbol probabilities; must be positive.
    lengths : array-like of int, default=None
        Lengths of several independent sequences of the same model (same
        symbol probabilities). Each sequence starts its own chain in a
        uniformly drawn state; the sequences are concatenated, so ``X`` has
        ``sum(lengths)`` rows and ``n_timesteps`` is ignored. Pass the same
        ``lengths`` to ``fit``.
    min_total_variation : float, default=0.3
        Least total variation distance between the symbol distributions of
        any two states, in ``[0, 1)``; 0 accepts every draw.
    return_params : bool, default=False
        Also return the generating parameters.

    Returns
    -------
    X : ndarray of shape (n_timesteps, 1), dtype int64
        Symbol codes (``sum(lengths)`` rows when ``lengths`` is given).
    states : ndarray of shape (n_timesteps,), dtype int64
        True hidden states, coded ``0 .. n_states - 1``.
    params : dict
        Only with ``return_params=True``: ``"emissionprob"`` of shape
        ``(n_states, n_symbols)`` (row ``k``: the symbol probabilities of
        state ``k``) and ``"transmat"`` of shape ``(n_states, n_states)``.

    See Also
    --------
    make_sequence1 : A deterministic symbol sequence.
    make_sequence2 : A walk round a ring of letters, in noisy symbols.

    Examples
    --------
    >>> X, states = make_categorical_hmm(1000, random_state=0)
    >>> X.shape, X.dtype, int(X.min()) >= 0, int(X.max()) < 12
    ((1000, 1), dtype('int64'), True, True)

    Several sequences; the emission probabilities are shared:

    >>> X, states, params = make_categorical_hmm(
    ...     lengths=[200, 500], random_state=0, return_params=True)
    >>> X.shape, params["emissionprob"].shape
    ((700, 1), (6, 12))
    """
    lens = _resolve_lengths(n_timesteps, lengths)
    n_states = _check_positive_int(n_states, "n_states")
    n_symbols = _check_positive_int(n_symbols, "n_symbols")
    self_transition = _check_self_transition(self_transition)
    if not (_is_real(concentration) and np.isfinite(concentration)
            and concentration > 0):
        raise ValueError(
            f"concentration must be a positive number, got "
            f"{concentration!r}.")
    if not (_is_real(min_total_variation)
            and 0.0 <= min_total_variation < 1.0):
        raise ValueError(
            f"min_total_variation must be in [0, 1), got "
            f"{min_total_variation!r}.")
    return_params = _check_bool(return_params, "return_params")

    rng = check_random_state(random_state)
    emissionprob = _separated_dirichlet_rows(
        rng, n_states, n_symbols, float(concentration),
        float(min_total_variation))
    states = _sample_states(rng, lens, n_states, self_transition)
    # inverse-CDF sampling of each step's symbol from its state's row
    cdf = np.cumsum(emissionprob, axis=1)
    u = rng.random_sample(states.size)
    symbols = np.sum(u[:, None] >= cdf[states], axis=1)
    X = np.minimum(symbols, n_symbols - 1).astype(np.int64).reshape(-1, 1)
    if not return_params:
        return X, states
    params = {"emissionprob": emissionprob,
              "transmat": _transmat(n_states, self_transition)}
    return X, states, params


def make_poisson_hmm(n_timesteps=2000, n_states=4, n_features=1, random_state=None,
                     self_transition=0.75, rates=None, lengths=None):
    """Sample an HMM with Poisson (count) emissions.

    The hidden chain is that of :func:`make_gaussian_hmm` (stay with
    probability ``self_transition``, else move to a uniformly chosen other
    state). In state ``k`` column ``d`` of an observation is a Poisson count
    of rate ``rates[k, d]``, independently of the other columns.

    Parameters
    ----------
    n_timesteps : int, default=2000
        Length of the sequence. Ignored when ``lengths`` is given.
    n_states : int, default=4
        Number of hidden states.
    n_features : int, default=1
        Number of count columns.
    random_state : int, RandomState instance or None, default=None
        Seed or generator, as accepted by
        :func:`sklearn.utils.check_random_state`.
    self_transition : float, default=0.75
        Probability of staying in the current state, in ``[0, 1]``.
    rates : array-like of shape (n_states, n_features), default=None
        Poisson rates. By default state ``k`` has rate ``3 * 2**k`` in every
        column (3, 6, 12, ...: each rate twice the one below, well apart
        relative to the Poisson noise), with the columns' rates in a
        different order for every column after the first (a rotation by the
        column index), so that no single column tells every state apart.
    lengths : array-like of int, default=None
        Lengths of several independent sequences of the same model; as in
        :func:`make_gaussian_hmm`.

    Returns
    -------
    X : ndarray of shape (n_timesteps, n_features), dtype int64
        Counts (``sum(lengths)`` rows when ``lengths`` is given).
    states : ndarray of shape (n_timesteps,), dtype int64
        True hidden states, coded ``0 .. n_states - 1``.

    Examples
    --------
    >>> X, states = make_poisson_hmm(1000, random_state=0)
    >>> X.shape, X.dtype, int(X.min()) >= 0
    ((1000, 1), dtype('int64'), True)
    """
    lens = _resolve_lengths(n_timesteps, lengths)
    n_states = _check_positive_int(n_states, "n_states")
    n_features = _check_positive_int(n_features, "n_features")
    self_transition = _check_self_transition(self_transition)
    if rates is None:
        base = 3.0 * 2.0 ** np.arange(n_states)
        rates = np.stack([np.roll(base, d) for d in range(n_features)], axis=1)
    rates = np.asarray(rates, dtype=float)
    if rates.shape != (n_states, n_features):
        raise ValueError(f"rates must have shape ({n_states}, {n_features}), got {rates.shape}.")
    if not (np.all(np.isfinite(rates)) and np.all(rates >= 0)):
        raise ValueError("rates must be finite and non-negative.")
    rng = check_random_state(random_state)
    states = _sample_states(rng, lens, n_states, self_transition)
    X = rng.poisson(rates[states]).astype(np.int64)
    return X, states


def make_ar_hmm(n_timesteps=2000, n_states=3, n_features=2, order=1, random_state=None,
                self_transition=0.98, spectral_radius=0.9, noise_scale=0.3, spread=2.0,
                lengths=None, return_params=False):
    """Sample a switching vector autoregression: ``K`` regimes of stable linear dynamics.

    The hidden chain is that of :func:`make_gaussian_hmm` (stay with
    probability ``self_transition``, else move to a uniformly chosen other
    state); the default ``0.98`` gives regimes of about 50 steps. In state
    ``k`` the observation follows

    ``y_t = mu_k + A_{k,1} (y_{t-1} - mu_k) + ... + A_{k,p} (y_{t-p} - mu_k) + e_t``,
    ``e_t ~ N(0, noise_scale^2 I)``,

    so each regime pulls the signal towards its own level ``mu_k`` with its
    own (oscillating, damped) dynamics. The parameters are drawn from
    ``random_state``: the entries of ``A_{k,i}`` are standard normal, then
    rescaled (``A_{k,i} -> s^i A_{k,i}``, which scales every eigenvalue of
    the companion matrix by ``s``) so that the companion matrix has spectral
    radius exactly ``spectral_radius``: every regime is stable. The levels
    ``mu_k`` are drawn from ``N(0, spread^2 I)``. Each sequence starts at
    the level of its first state.

    Parameters
    ----------
    n_timesteps : int, default=2000
        Length of the sequence. Ignored when ``lengths`` is given.
    n_states : int, default=3
        Number of regimes.
    n_features : int, default=2
        Number of columns ``D``.
    order : int, default=1
        Number of lags ``p``.
    random_state : int, RandomState instance or None, default=None
        Seed or generator, as accepted by
        :func:`sklearn.utils.check_random_state`.
    self_transition : float, default=0.98
        Probability of staying in the current regime, in ``[0, 1]``.
    spectral_radius : float, default=0.9
        Spectral radius of every regime's companion matrix, in ``(0, 1)``.
    noise_scale : float, default=0.3
        Standard deviation of the innovations of every column.
    spread : float, default=2.0
        Standard deviation of the regimes' levels ``mu_k``.
    lengths : array-like of int, default=None
        Lengths of several independent sequences of the same model; as in
        :func:`make_gaussian_hmm`.
    return_params : bool, default=False
        Also return the generating parameters.

    Returns
    -------
    X : ndarray of shape (n_timesteps, n_features), dtype float64
        Observations (``sum(lengths)`` rows when ``lengths`` is given).
    states : ndarray of shape (n_timesteps,), dtype int64
        True regimes, coded ``0 .. n_states - 1``.
    params : dict
        Only with ``return_params=True``: ``"coefs"`` of shape ``(n_states,
        n_features, n_features * order + 1)`` (``[A_1, ..., A_p, b]`` of the
        raw form ``y_t = A [y_{t-1}; ...; y_{t-p}; 1] + e_t``, the layout of
        ``InfiniteHMM.coefs_`` with ``emission="autoregressive"``),
        ``"means"`` (the levels ``mu_k``), ``"covars"`` of shape
        ``(n_states, n_features, n_features)`` and ``"transmat"``.

    Examples
    --------
    >>> X, states = make_ar_hmm(500, random_state=0)
    >>> X.shape, states.shape
    ((500, 2), (500,))
    >>> X, states, params = make_ar_hmm(lengths=[300, 200], order=2, random_state=0,
    ...                                 return_params=True)
    >>> X.shape, params["coefs"].shape
    ((500, 2), (3, 2, 5))
    """
    lens = _resolve_lengths(n_timesteps, lengths)
    n_states = _check_positive_int(n_states, "n_states")
    n_features = _check_positive_int(n_features, "n_features")
    order = _check_positive_int(order, "order")
    self_transition = _check_self_transition(self_transition)
    if not (_is_real(spectral_radius) and 0.0 < spectral_radius < 1.0):
        raise ValueError(f"spectral_radius must be in (0, 1), got {spectral_radius!r}.")
    for name, value in (("noise_scale", noise_scale), ("spread", spread)):
        if not (_is_real(value) and np.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a non-negative float, got {value!r}.")
    return_params = _check_bool(return_params, "return_params")
    rng = check_random_state(random_state)
    d, p = n_features, order
    lags = np.empty((n_states, p, d, d))
    for k in range(n_states):
        A = rng.standard_normal((p, d, d))
        companion = np.zeros((d * p, d * p))
        companion[:d] = np.concatenate(list(A), axis=1)
        companion[d:, :-d] = np.eye(d * (p - 1))
        radius = np.max(np.abs(np.linalg.eigvals(companion)))
        scale = spectral_radius / radius
        lags[k] = A * (scale ** np.arange(1, p + 1))[:, None, None]
    means = spread * rng.standard_normal((n_states, d))
    states = _sample_states(rng, lens, n_states, self_transition)
    noise = noise_scale * rng.standard_normal((states.size, d))
    X = np.empty((states.size, d))
    start = 0
    for L in lens:
        past = np.tile(means[states[start]], (p, 1))        # y_{t-1}, ..., y_{t-p}
        for t in range(start, start + L):
            k = states[t]
            y = means[k] + noise[t]
            for i in range(p):
                y = y + lags[k, i] @ (past[i] - means[k])
            X[t] = y
            past = np.vstack([y[None, :], past[:-1]])
        start += L
    if not return_params:
        return X, states
    intercept = means - np.einsum("kij,kj->ki", lags.sum(axis=1), means)
    coefs = np.concatenate([np.concatenate(list(lags.transpose(1, 0, 2, 3)), axis=2),
                            intercept[:, :, None]], axis=2)
    params = {
        "coefs": coefs,
        "means": means,
        "covars": np.broadcast_to(noise_scale ** 2 * np.eye(d), (n_states, d, d)).copy(),
        "transmat": _transmat(n_states, self_transition),
    }
    return X, states, params


def make_sequence1(n_timesteps=500):
    """Deterministic cyclic symbol sequence ("Sequence 1" of Makino et al.).

    The symbol string ``A B C D B C D E`` is repeated, with symbols coded
    ``A=0, B=1, C=2, D=3, E=4``. The symbols alone are not Markov (``B``,
    ``C`` and ``D`` occur at two places of the cycle), but an HMM with 8
    states, one per position of the length-8 cycle, predicts the sequence
    perfectly. The true hidden state is that position, ``t mod 8``.

    Parameters
    ----------
    n_timesteps : int, default=500
        Length of the sequence.

    Returns
    -------
    X : ndarray of shape (n_timesteps, 1), dtype int64
        Symbol codes in ``0 .. 4``.
    states : ndarray of shape (n_timesteps,), dtype int64
        Position in the cycle, in ``0 .. 7``.

    References
    ----------
    .. [1] T. Makino, S. Takei, I. Sato and D. Mochihashi, "Restricted
       collapsed draw: accurate sampling for hierarchical Chinese restaurant
       process hidden Markov models", arXiv:1106.0474, 2011.

    Examples
    --------
    >>> X, states = make_sequence1(10)
    >>> X.ravel().tolist()
    [0, 1, 2, 3, 1, 2, 3, 4, 0, 1]
    """
    n_timesteps = _check_positive_int(n_timesteps, "n_timesteps")
    states = np.arange(n_timesteps, dtype=np.int64) % len(_SEQUENCE1_PATTERN)
    X = _SEQUENCE1_PATTERN[states].astype(np.int64)
    return X.reshape(-1, 1), states


def make_sequence2(n_timesteps=2500, random_state=None, return_params=False):
    """Sample "Sequence 2" of Makino et al.: a walk round a ring of 8 letters.

    Our reconstruction of the automaton of the paper's Figure 3, whose
    extracted text is garbled; the reading and the reasons for it are in
    the section "Sequence 2: our reading of Figure 3" of :doc:`/papers`. Eight positions on a ring carry the letters ``A`` to
    ``H`` (coded ``0 .. 7``). Each position has two hidden states: state
    ``p`` walks forwards (``A -> B -> ...``) and state ``p + 8`` backwards
    (the paper numbers them ``p + 1`` and ``p + 9``: the stacked pairs
    ``1/9 ... 8/16`` of the figure, each pair in one oval).

    * **Emission.** Both states of position ``p`` emit the letters
      ``p - 1``, ``p`` and ``p + 1`` (modulo 8) with probability 1/3 each,
      so a letter alone leaves three positions and both directions open.
    * **Transition.** With probability 0.84 the walk goes on one position in
      its direction and keeps it; with probability 0.08 it turns round in
      place (to the other state of the same position); with probability
      0.08 it turns round and moves on (to the other direction's state of
      the next position in the old direction). The matrix is doubly
      stochastic, so the uniform start is the stationary distribution.

    The direction is a hidden bit that persists for about six steps
    (``1 / 0.16``) and shows only through the drift of several letters,
    which makes the states strongly dependent on their neighbours in time.

    Parameters
    ----------
    n_timesteps : int, default=2500
        Length of the sequence (the paper's T = 2,500).
    random_state : int, RandomState instance or None, default=None
        Seed or generator, as accepted by
        :func:`sklearn.utils.check_random_state`.
    return_params : bool, default=False
        Also return the generating parameters.

    Returns
    -------
    X : ndarray of shape (n_timesteps, 1), dtype int64
        Letter codes in ``0 .. 7`` (``A=0``, ..., ``H=7``).
    states : ndarray of shape (n_timesteps,), dtype int64
        True hidden states in ``0 .. 15``: ``0 .. 7`` walk forwards,
        ``8 .. 15`` backwards; state ``s`` is at position ``s % 8``.
    params : dict
        Only with ``return_params=True``: ``"startprob"`` of shape ``(16,)``,
        ``"transmat"`` of shape ``(16, 16)`` and ``"emissionprob"`` of shape
        ``(16, 8)``.

    See Also
    --------
    make_sequence1 : The paper's first, deterministic, sequence.

    References
    ----------
    .. [1] T. Makino, S. Takei, I. Sato and D. Mochihashi, "Restricted
       collapsed draw: accurate sampling for hierarchical Chinese restaurant
       process hidden Markov models", arXiv:1106.0474, 2011 (Section 5.2
       and Figure 3).

    Examples
    --------
    >>> X, states = make_sequence2(random_state=0)
    >>> X.shape, X.dtype, states.shape, int(states.max()) <= 15
    ((2500, 1), dtype('int64'), (2500,), True)
    >>> X, states, params = make_sequence2(100, random_state=0,
    ...                                    return_params=True)
    >>> params["transmat"].shape, params["emissionprob"].shape
    ((16, 16), (16, 8))
    """
    n_timesteps = _check_positive_int(n_timesteps, "n_timesteps")
    return_params = _check_bool(return_params, "return_params")
    rng = check_random_state(random_state)
    n_pos = 8
    # uniform start; then per step one of three moves: go on (0), turn round
    # in place (1), turn round and move on (2)
    first = rng.randint(2 * n_pos)
    u = rng.random_sample(n_timesteps - 1)
    move = np.where(u < _SEQUENCE2_BOLD, 0,
                    np.where(u < _SEQUENCE2_BOLD + _SEQUENCE2_DASHED, 1, 2))
    backward = np.empty(n_timesteps, dtype=np.int64)
    backward[0] = first // n_pos
    backward[1:] = (backward[0] + np.cumsum(move != 0)) % 2
    step = np.where(backward[:-1] == 1, -1, 1) * (move != 1)
    position = np.empty(n_timesteps, dtype=np.int64)
    position[0] = first % n_pos
    position[1:] = (position[0] + np.cumsum(step)) % n_pos
    states = position + n_pos * backward
    offset = rng.randint(-1, 2, size=n_timesteps)
    X = ((position + offset) % n_pos).astype(np.int64).reshape(-1, 1)
    if not return_params:
        return X, states
    return X, states, _sequence2_params()


def _sequence2_params():
    """Start, transition and emission probabilities of :func:`make_sequence2`."""
    n_pos = 8
    transmat = np.zeros((2 * n_pos, 2 * n_pos))
    emissionprob = np.zeros((2 * n_pos, n_pos))
    for back in (0, 1):
        d = -1 if back else 1
        for p in range(n_pos):
            s = p + n_pos * back
            other = n_pos * (1 - back)
            transmat[s, (p + d) % n_pos + n_pos * back] += _SEQUENCE2_BOLD
            transmat[s, p + other] += _SEQUENCE2_DASHED
            transmat[s, (p + d) % n_pos + other] += _SEQUENCE2_DASHED
            for o in (-1, 0, 1):
                emissionprob[s, (p + o) % n_pos] += _SEQUENCE2_EMIT
    return {"startprob": np.full(2 * n_pos, 1.0 / (2 * n_pos)),
            "transmat": transmat, "emissionprob": emissionprob}


# --------------------------------------------------------------------------
# Real data (kept outside the package)
# --------------------------------------------------------------------------
def shared_data_path(name):
    """Locate a file of the shared (external) data folder.

    The candidate folders are tried in order:

    1. the folder named by the environment variable ``SK_IHMM_DATA``, if set;
    2. ``<repository root>/../shared/data``, where the repository root is the
       parent folder of the ``sk_ihmm`` package.

    The data files are never copied into the project.

    Parameters
    ----------
    name : str or path-like
        File name relative to the data folder, e.g. ``"well_log.txt"`` or
        ``"mocap6/metadata_per_seq.csv"``.

    Returns
    -------
    path : pathlib.Path
        Absolute path of the first existing candidate.

    Raises
    ------
    DataNotAvailable
        If the file exists in none of the candidate folders.
    """
    folders = []
    env_folder = os.environ.get(DATA_ENV_VAR)
    if env_folder:
        folders.append(Path(env_folder).expanduser())
    repo_root = Path(__file__).resolve().parent.parent
    folders.append(repo_root.parent / "shared" / "data")
    for folder in folders:
        path = folder / name
        if path.is_file():
            return path.resolve()
    searched = ", ".join(str(folder) for folder in folders)
    raise DataNotAvailable(
        f"Data file {str(name)!r} not found; searched: {searched}. Set the "
        f"environment variable {DATA_ENV_VAR} to the folder that holds it.")


def load_alice_chars(n_train=1000, n_test=4000):
    """Characters of *Alice's Adventures in Wonderland* as integer symbols.

    The text starts at the line ``CHAPTER I.`` (the Project Gutenberg header
    is skipped) and ends before the closing ``THE END`` line. It is
    lower-cased and mapped onto the 31 symbols of :data:`CHAR_ALPHABET`:

    * codes 0-25: the letters ``a``-``z``;
    * code 26: a space, standing for any run of whitespace (line breaks
      included);
    * code 27 ``"."``: sentence ends ``.``, ``!`` and ``?``;
    * code 28 ``","``: pauses ``,``, ``;`` and ``:``;
    * code 29 ``"'"``: quotation marks ``'`` and ``"``;
    * code 30 ``"-"``: a hyphen, or a dash ``--`` (a run of hyphens is one
      symbol).

    Every other character (brackets, ``*``, ``_``) is dropped. The first
    ``n_train`` symbols form the training sequence and the next ``n_test``
    symbols the test sequence; with the defaults both lie in chapter I.

    Parameters
    ----------
    n_train : int, default=1000
        Length of the training sequence.
    n_test : int, default=4000
        Length of the test sequence, which directly follows the training one.

    Returns
    -------
    X_train : ndarray of shape (n_train, 1), dtype int64
        Training symbol codes.
    X_test : ndarray of shape (n_test, 1), dtype int64
        Test symbol codes.
    alphabet : list of str
        The symbol of each code (a copy of :data:`CHAR_ALPHABET`).

    Raises
    ------
    DataNotAvailable
        If ``alice_in_wonderland.txt`` is not in the shared data folder.
    ValueError
        If the book is shorter than ``n_train + n_test`` symbols.
    """
    n_train = _check_positive_int(n_train, "n_train")
    n_test = _check_positive_int(n_test, "n_test", allow_zero=True)
    text = "\n".join(_alice_body_lines()).lower().translate(_CHAR_CLASSES)
    code = {symbol: i for i, symbol in enumerate(CHAR_ALPHABET)}
    text = "".join(ch for ch in text if ch in code or ch.isspace())
    text = re.sub(r"-+", "-", text)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) < n_train + n_test:
        raise ValueError(
            f"The text has {len(text)} symbols; n_train + n_test = "
            f"{n_train + n_test} is too many.")
    codes = np.fromiter((code[ch] for ch in text[:n_train + n_test]),
                        dtype=np.int64, count=n_train + n_test)
    codes = codes.reshape(-1, 1)
    return codes[:n_train], codes[n_train:], list(CHAR_ALPHABET)


def load_alice_words(n_test=1000):
    """Words of *Alice's Adventures in Wonderland* as integer symbols.

    The word-level set-up of the iHMM papers: the whole book, from the line
    ``CHAPTER I.`` up to the ``THE END`` line, with

    * chapter heading lines (``CHAPTER II. The Pool of Tears`` ...) dropped;
    * the text split into sentences at every run of ``.``, ``!`` or ``?``,
      and the token ``"EOS"`` appended after each non-empty sentence;
    * text lower-cased and punctuation removed: apostrophes are deleted
      (``didn't`` becomes ``didnt``) and every other non-alphanumeric
      character separates words (``rabbit-hole`` gives ``rabbit``, ``hole``);
    * every word that occurs only once in the whole book replaced by
      ``"UNK"``.

    The last ``n_test`` tokens are held out as the test sequence. The result
    has about 28,250 tokens (about 26,600 words and 1,630 sentences) and a
    vocabulary of about 1,490 types; the papers report 27,120 training plus
    1,000 test words, so their tokenisation differed slightly.

    Parameters
    ----------
    n_test : int, default=1000
        Number of final tokens held out for testing.

    Returns
    -------
    X_train : ndarray of shape (n_tokens - n_test, 1), dtype int64
        Training token codes.
    X_test : ndarray of shape (n_test, 1), dtype int64
        Test token codes.
    vocabulary : list of str
        The token of each code, sorted by decreasing corpus frequency (ties
        alphabetically); it contains ``"EOS"`` and ``"UNK"``.

    Raises
    ------
    DataNotAvailable
        If ``alice_in_wonderland.txt`` is not in the shared data folder.
    ValueError
        If ``n_test`` is not smaller than the number of tokens.
    """
    n_test = _check_positive_int(n_test, "n_test", allow_zero=True)
    lines = [line for line in _alice_body_lines()
             if not _CHAPTER_HEADING.match(line)]
    text = "\n".join(lines).lower()
    tokens = []
    for sentence in re.split(r"[.!?]+", text):
        words = re.findall(r"[a-z0-9]+", sentence.replace("'", ""))
        if words:
            tokens.extend(words)
            tokens.append("EOS")
    counts = Counter(tokens)
    tokens = ["UNK" if counts[token] == 1 else token for token in tokens]
    counts = Counter(tokens)
    if n_test >= len(tokens):
        raise ValueError(
            f"n_test={n_test} must be smaller than the number of tokens "
            f"({len(tokens)}).")
    vocabulary = sorted(counts, key=lambda token: (-counts[token], token))
    code = {token: i for i, token in enumerate(vocabulary)}
    codes = np.array([code[token] for token in tokens], dtype=np.int64)
    codes = codes.reshape(-1, 1)
    split = len(tokens) - n_test
    return codes[:split], codes[split:], vocabulary


def load_well_log():
    """The well-log data (nuclear magnetic response down a bore-hole).

    The classic change-point series of O Ruanaidh & Fitzgerald (1996), used by
    Fearnhead & Clifford (2003) and many HDP-HMM papers: 4,050 raw instrument
    readings (arbitrary units, range about 64,000-140,000) with well-known
    outliers. Values are returned unscaled.

    Returns
    -------
    X : ndarray of shape (4050, 1), dtype float64
        The series.

    Raises
    ------
    DataNotAvailable
        If ``well_log.txt`` is not in the shared data folder.
    """
    return _load_column(shared_data_path("well_log.txt"))


def load_old_faithful():
    """The Old Faithful geyser data (shipped with the package).

    272 eruptions of the Old Faithful geyser, identical to R's
    ``datasets::faithful`` (Azzalini & Bowman 1990; Härdle 1991), in the
    order of the source: eruption time and waiting time to the next
    eruption, both in minutes. Provenance: ``sk_ihmm/data/README.md``.

    Returns
    -------
    X : ndarray of shape (272, 2), dtype float64
        Columns ``eruptions`` and ``waiting`` (minutes).

    Examples
    --------
    >>> from sk_ihmm.datasets import load_old_faithful
    >>> load_old_faithful().shape
    (272, 2)
    """
    path = Path(__file__).resolve().parent / "data" / "old_faithful.csv"
    return np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)


def load_mocap6():
    """Six motion-capture sequences with the exercise performed at every step.

    The CMU motion-capture set of Fox, Hughes, Sudderth and Jordan (2014,
    "Joint modeling of multiple time series via the beta process with
    application to motion capture segmentation"): subjects 13 (trials 29, 30,
    31) and 14 (trials 6, 14, 20), 12 channels (joint angles and a position,
    each made zero-mean and block-averaged to 10 frames per second), and one
    of 12 exercises per step (jumping jacks, jogging, squats, ...). The
    sequences have 382, 205, 251, 446, 387 and 387 steps. Read in place from
    ``mocap6/`` of the shared data folder (see :func:`shared_data_path`).

    Returns
    -------
    X : ndarray of shape (2058, 12), dtype float64
        The six sequences, concatenated (pass ``lengths`` to ``fit``).
    lengths : ndarray of shape (6,), dtype int64
        Steps of each sequence.
    labels : ndarray of shape (2058,), dtype int64
        The exercise of each step, as an index into ``actions``.
    actions : list of str
        Exercise names, in order of first appearance.
    channels : list of str
        Names of the 12 columns of ``X``.

    Raises
    ------
    DataNotAvailable
        If the ``mocap6`` files are not in the shared data folder.
    """
    import csv

    sensors = shared_data_path("mocap6/sensor_data_per_tstep.csv")
    actions_path = shared_data_path("mocap6/actions_per_tstep.csv")
    with open(sensors, newline="") as fh:
        rows = list(csv.reader(fh))
    channels = rows[0][2:]
    keys = [(int(r[0]), int(r[1])) for r in rows[1:]]
    X = np.array([[float(v) for v in r[2:]] for r in rows[1:]], dtype=np.float64)
    with open(actions_path, newline="") as fh:
        act_rows = list(csv.reader(fh))[1:]
    action_of = {(int(r[0]), int(r[1])): r[2] for r in act_rows}
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    X = X[order]
    keys = [keys[i] for i in order]
    names = [action_of[key] for key in keys]
    actions = list(dict.fromkeys(names))
    labels = np.array([actions.index(name) for name in names], dtype=np.int64)
    seq = np.array([key[0] for key in keys])
    lengths = np.array([np.sum(seq == s) for s in dict.fromkeys(seq.tolist())], dtype=np.int64)
    return X, lengths, labels, actions, channels


def load_ion_channel(name="sctrace_test2_sub100", n=2000):
    """A single-channel patch-clamp current recording (in pA).

    Parameters
    ----------
    name : {"sctrace_test2_sub100", "sctrace_cluster_10kHz", \
"ip3r2_icmcstat"}, default="sctrace_test2_sub100"
        Which recording, the file ``ion_channel_<name>.txt`` of the shared
        data folder:

        * ``"sctrace_test2_sub100"``: DC-Progs sample ``test2.abf`` (66.7 kHz)
          keeping every 100th sample, as in the PGAS iHMM paper, 14,800
          values; closed level about -1.2 pA, open level about +1.6 pA. The
          first 2,000 values match the length used in that paper.
        * ``"sctrace_cluster_10kHz"``: DC-Progs sample ``cluster.abf`` at
          10 kHz, 11,695 values; closed about -1.2 pA, open about +4.5 pA.
        * ``"ip3r2_icmcstat"``: type-2 IP3 receptor recording of Wagner & Yule
          (2012), 60,000 values; mostly closed (about 0 pA) with rare large
          openings.
    n : int or None, default=2000
        Number of leading values returned; ``None`` returns the whole
        recording.

    Returns
    -------
    X : ndarray of shape (n, 1), dtype float64
        Current in pA.

    Raises
    ------
    DataNotAvailable
        If the file is not in the shared data folder.
    ValueError
        If ``name`` is unknown or ``n`` exceeds the recording's length.
    """
    if name not in ION_CHANNEL_NAMES:
        raise ValueError(
            f"Unknown ion-channel recording {name!r}; expected one of "
            f"{ION_CHANNEL_NAMES}.")
    X = _load_column(shared_data_path(f"ion_channel_{name}.txt"))
    if n is None:
        return X
    n = _check_positive_int(n, "n")
    if n > len(X):
        raise ValueError(
            f"n={n} exceeds the length of recording {name!r} ({len(X)}).")
    return X[:n].copy()


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------
def _check_positive_int(value, name, allow_zero=False):
    """Validate a positive (or non-negative) integer argument."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {bound}, got {value!r}.")
    return int(value)


def _is_real(value):
    """Whether ``value`` is a real number (not a bool, array or string)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, Real):
        return True
    return (isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) == 0
            and value.dtype.kind in "iuf")


def _check_self_transition(value):
    """Validate a probability of staying in the current state."""
    if not (_is_real(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"self_transition must be in [0, 1], got {value!r}.")
    return float(value)


def _check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def _check_vector(value, name, shape, default):
    """A finite float vector of the given shape (``default`` when None)."""
    if value is None:
        return np.full(shape, default, dtype=float)
    arr = np.asarray(value, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}.")
    return arr


def _resolve_lengths(n_timesteps, lengths):
    """Validated sequence lengths: ``lengths`` or ``[n_timesteps]``."""
    if lengths is None:
        return [_check_positive_int(n_timesteps, "n_timesteps")]
    if isinstance(lengths, (str, bytes)) or np.ndim(lengths) != 1:
        raise ValueError(
            f"lengths must be a 1-D sequence of positive integers, got "
            f"{lengths!r}.")
    lens = list(lengths)
    if not lens:
        raise ValueError("lengths must not be empty.")
    for value in lens:
        if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, np.integer)) or value <= 0:
            raise ValueError(
                f"lengths must hold positive integers, got {lengths!r}.")
    return [int(value) for value in lens]


def _sample_chain(rng, n_timesteps, n_states, self_transition):
    """One hidden chain: uniform start, stay or move to another state."""
    first = rng.randint(n_states)
    if n_states == 1:
        increments = np.zeros(n_timesteps - 1, dtype=np.int64)
    else:
        # Moving by an offset drawn uniformly from 1 .. K-1 (mod K) is a move
        # to a uniformly chosen *other* state, so the chain is a cumulative
        # sum of increments taken modulo K.
        stay = rng.random_sample(n_timesteps - 1) < self_transition
        offsets = rng.randint(1, n_states, size=n_timesteps - 1)
        increments = np.where(stay, 0, offsets)
    states = np.empty(n_timesteps, dtype=np.int64)
    states[0] = first
    states[1:] = first + np.cumsum(increments)
    states %= n_states
    return states


def _sample_states(rng, lengths, n_states, self_transition):
    """Independent chains of the given lengths, concatenated."""
    return np.concatenate([
        _sample_chain(rng, n, n_states, self_transition) for n in lengths])


def _transmat(n_states, self_transition):
    """Transition matrix of :func:`_sample_chain`."""
    if n_states == 1:
        return np.ones((1, 1))
    off = (1.0 - self_transition) / (n_states - 1)
    return np.full((n_states, n_states), off) + (
        self_transition - off) * np.eye(n_states)


def _random_correlation(rng, n_features):
    """A random correlation matrix, ``W W^T + I`` rescaled to unit
    diagonal."""
    W = rng.standard_normal((n_features, n_features))
    S = W @ W.T + np.eye(n_features)
    d = np.sqrt(np.diag(S))
    C = S / np.outer(d, d)
    return 0.5 * (C + C.T)


def _separated_means(rng, covars, spread=2.0, min_distance=3.0):
    """Means drawn one by one from ``N(0, spread^2 I)``, each redrawn until
    its Mahalanobis distance (average covariance of the pair) to every
    earlier mean is at least ``min_distance``; ``spread`` grows by 10 %
    every 100 rejections."""
    n_states, n_features = covars.shape[:2]
    means = np.empty((n_states, n_features))
    for k in range(n_states):
        rejected = 0
        while True:
            candidate = spread * rng.standard_normal(n_features)
            ok = True
            for j in range(k):
                diff = candidate - means[j]
                pooled = 0.5 * (covars[k] + covars[j])
                if diff @ np.linalg.solve(pooled, diff) < min_distance ** 2:
                    ok = False
                    break
            if ok:
                break
            rejected += 1
            if rejected % 100 == 0:
                spread *= 1.1
        means[k] = candidate
    return means


def _separated_dirichlet_rows(rng, n_states, n_symbols, concentration,
                              min_tv, max_draws=1000):
    """Dirichlet rows drawn one by one, each redrawn until its total
    variation distance to every earlier row exceeds ``min_tv``."""
    alpha = np.full(n_symbols, concentration)
    rows = np.empty((n_states, n_symbols))
    for k in range(n_states):
        for _ in range(max_draws):
            row = rng.dirichlet(alpha)
            # tiny concentrations can underflow every gamma draw to 0
            if not np.all(np.isfinite(row)):
                continue
            tv = 0.5 * np.abs(rows[:k] - row).sum(axis=1)
            if np.all(tv > min_tv):
                rows[k] = row
                break
        else:
            raise ValueError(
                f"Could not draw {n_states} symbol distributions with "
                f"pairwise total variation > {min_tv} (state {k} failed "
                f"{max_draws} draws); lower concentration (got "
                f"{concentration}) or min_total_variation, or use fewer "
                "states or more symbols.")
    return rows


def _alice_body_lines():
    """Lines of the book from ``CHAPTER I.`` up to (excluding) ``THE END``."""
    path = shared_data_path(_ALICE_FILE)
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    try:
        start = next(i for i, line in enumerate(lines)
                     if line.startswith("CHAPTER I."))
        stop = next(i for i in range(start, len(lines))
                    if lines[i].strip() == "THE END")
    except StopIteration:
        raise ValueError(
            f"{path} does not contain the expected 'CHAPTER I.' and "
            "'THE END' lines.") from None
    return lines[start:stop]


def _load_column(path):
    """Read a one-value-per-line text file into a ``(n, 1)`` float array."""
    return np.loadtxt(path, dtype=np.float64, ndmin=1).reshape(-1, 1)
