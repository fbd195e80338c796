"""The scikit-learn style estimator :class:`InfiniteHMM`.

It only validates input, orchestrates independent chains and summarises
them. The model lives in :mod:`sk_ihmm._hcrp` and :mod:`sk_ihmm.emissions`,
the samplers in :mod:`sk_ihmm.samplers`, message passing in
:mod:`sk_ihmm._messages`, the predictive particle filter in
:mod:`sk_ihmm._particle`, and the budget mode's rounds and windows in
:mod:`sk_ihmm._budget`.
"""

import os
import time
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from . import _messages
from . import _diagnostics
from ._budget import chains_at_once, move_window, next_round, round_seconds
from ._chain import (advance_chain, count_log_joints, first_round, make_problem, sequence_flags,
                     snapshot_hyp)
from . import _compile_clock
from ._compile_clock import compile_clock
from ._hcrp import pred_weights
from ._interrupt import check_interrupt, deferred_interrupts, request_stop, stop_file, take_interrupt
from ._particle import initial_labels, snapshot_log_likelihoods
from ._simulate import sample_markov_chain
from ._warn import warn
from .emissions import FAMILIES, EmissionFamily, log_emission_matrix, make_emission, missing_aware
from .samplers import OPTIONS as SAMPLER_OPTIONS
from .samplers import SAMPLERS

__all__ = ["InfiniteHMM"]


def _prior_pair(value, name, what="(shape, rate)"):
    try:
        a, b = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a {what} pair of positive floats; got {value!r}.") from None
    if not (a > 0 and b > 0 and np.isfinite(a) and np.isfinite(b)):
        raise ValueError(f"{name} must be a {what} pair of positive floats; got {value!r}.")
    return a, b


def _seed_sequence(random_state):
    """A SeedSequence from ``random_state`` (None, int, RandomState or a
    SeedSequence, returned as it is)."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if random_state is None or isinstance(random_state, (Integral, np.integer)):
        return np.random.SeedSequence(None if random_state is None else int(random_state))
    rs = check_random_state(random_state)
    return np.random.SeedSequence(int(rs.randint(0, 2**31 - 1)))


def _check_layout(X):
    """Clear errors for a 1-D ``X`` and for sequences passed as a ragged list,
    before scikit-learn's generic messages (whose advice for a 1-D array,
    ``reshape(1, -1)`` for a single sample, would make a series one wide row)."""
    ndim = getattr(X, "ndim", None)   # arrays, DataFrames, sparse matrices
    if ndim is None:
        try:
            ndim = np.ndim(X)
        except ValueError:            # numpy refuses ragged nested lists
            raise ValueError(
                "X looks like a list of sequences of different lengths. InfiniteHMM takes them "
                "concatenated, one row per time step, with their lengths: "
                "fit(np.concatenate(seqs), lengths=[len(s) for s in seqs]) (each sequence of "
                "shape (n_steps, n_features), or 1-D for one feature: then concatenate and "
                "reshape(-1, 1))."
            ) from None
    if ndim is not None and ndim >= 3:
        shape = tuple(int(v) for v in np.shape(X))
        raise ValueError(
            f"Expected a 2-D X of shape (n_samples, n_features), one row per time step; got a "
            f"{ndim}-D array of shape {shape}. Several sequences of equal length go in "
            "concatenated, with their lengths: for X of shape (n_sequences, n_steps, "
            f"n_features), fit(X.reshape(-1, X.shape[-1]), lengths=[{shape[1]}] * {shape[0]})."
        )
    if ndim == 1:
        raise ValueError(
            f"Expected a 2-D X of shape (n_samples, n_features), one row per time step; got a 1-D "
            f"array of {_num_samples(X)} values. Reshape your data: a single series of one "
            "feature is np.asarray(X).reshape(-1, 1) (X.to_frame() for a pandas Series)."
        )


def _check_not_wide(X):
    """A fit on more columns than rows is almost always a transposed array
    (a series as one row, or sequences stored as rows); the Gaussian
    families would also hold a (n_features, n_features) covariance per
    state."""
    n, d = X.shape
    if d > n:
        fixes = ("a single series is X.reshape(-1, 1)." if n == 1 else
                 "if each row is one variable over time, pass X.T; if each row is a separate "
                 f"series of one variable, X.reshape(-1, 1) with lengths=[{d}] * {n}.")
        raise ValueError(
            f"X has {n} sample{'' if n == 1 else 's'} (rows: time steps) and {d} features "
            "(columns). InfiniteHMM reads each row as one time step, so more columns than rows "
            f"is most likely a transposed array: {fixes}"
        )


def _reject_lengths_as_y(method, X, y, lengths, sequence_ids):
    """``y`` is ignored (scikit-learn's ``fit(X, y)``, ``score(X, y)``), but
    hmmlearn takes ``lengths`` second: when neither ``lengths`` nor
    ``sequence_ids`` is given, a ``y`` that looks like sequence lengths
    (fewer entries than rows of ``X``, summing to them) raises rather than
    being silently ignored."""
    if y is None or lengths is not None or sequence_ids is not None:
        return
    y_arr = np.asarray(y)
    n_rows = _num_samples(X)
    if (y_arr.ndim == 1 and y_arr.dtype.kind in "iuf" and 0 < y_arr.shape[0] < n_rows
            and y_arr.sum() == n_rows):
        raise ValueError(
            f"{method}(X, y, lengths=None): the second argument is y, which is ignored; "
            f"{y_arr.tolist()[:5]}{'...' if y_arr.shape[0] > 5 else ''} looks like "
            f"sequence lengths: pass {method}(X, lengths=...)."
        )


def _sequence_bounds(n_rows, lengths, sequence_ids):
    """Start indices and lengths of the sequences in ``X`` (validated)."""
    if lengths is not None and sequence_ids is not None:
        raise ValueError("Pass either lengths or sequence_ids, not both.")
    if sequence_ids is not None:
        ids = np.asarray(sequence_ids)
        if ids.ndim != 1 or ids.shape[0] != n_rows:
            raise ValueError(
                f"sequence_ids must be 1-D with one entry per row of X ({n_rows}); "
                f"got shape {ids.shape}."
            )
        change = np.flatnonzero(ids[1:] != ids[:-1]) + 1
        starts = np.concatenate([[0], change]).astype(np.int64)
        run_ids = ids[starts]
        if np.unique(run_ids).shape[0] != run_ids.shape[0]:
            raise ValueError(
                "Each sequence id must label one contiguous block of rows; some id "
                "appears in separate blocks."
            )
        lens = np.diff(np.concatenate([starts, [n_rows]]))
        return starts, lens
    if lengths is None:
        return np.array([0], np.int64), np.array([n_rows], np.int64)
    lens = np.asarray(lengths)
    if lens.ndim != 1 or lens.size == 0:
        raise ValueError(f"lengths must be a non-empty 1-D sequence of integers; got {lengths!r}.")
    if lens.dtype.kind == "f" and np.all(lens == np.round(lens)):
        lens = lens.astype(np.int64)
    if lens.dtype.kind not in "iu":
        raise ValueError(f"lengths must hold integers; got dtype {lens.dtype}.")
    if np.any(lens <= 0):
        raise ValueError(f"lengths must be positive (each sequence has at least one step); "
                         f"got {int(lens.min())}.")
    if lens.sum() != n_rows:
        raise ValueError(
            f"lengths sum to {int(lens.sum())} but X has {n_rows} rows; they must be equal."
        )
    lens = lens.astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    return starts, lens


class InfiniteHMM(BaseEstimator):
    """Infinite hidden Markov model (HDP-HMM) fitted by MCMC.

    The prior is the hierarchical Chinese restaurant process described in
    :doc:`/model`: a root CRP with concentration ``gamma`` whose dishes are
    the hidden states, one restaurant per state (concentration
    ``alpha + kappa``, sticky when ``kappa > 0``) and a start restaurant
    (concentration ``alpha``). Emission parameters are integrated out under a
    conjugate prior.

    Parameters
    ----------
    sampler : {"rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge", "pgas"}, default="rcd_blocked"
        MCMC strategy (see :doc:`/samplers`). Only registered samplers are
        accepted. The default, ``rcd_blocked``, moved the number of states
        fastest per CPU second in ``benchmarks/results/mixing.txt`` and
        passed the convergence checks on more of the generated sets of
        ``benchmarks/results/defaults.txt`` than ``rcd_gibbs``.
    emission : str or EmissionFamily, default="gaussian"
        A family's name (``"gaussian"``, ``"multivariate_gaussian"``,
        ``"diagonal_gaussian"``, ``"categorical"``, ``"hcrp_categorical"``,
        ``"poisson"``, ``"autoregressive"``, or any registered with
        :func:`sk_ihmm.emissions.register_family`) or an instance of
        :mod:`sk_ihmm.emissions` (whose parameters can be tuned as
        ``emission__<name>``). ``"gaussian"`` is the Gaussian family for any
        number of columns, with the covariance of ``covariance_type``.
    covariance_type : {"full", "diag"}, default="full"
        Covariance of each state's Gaussian when ``emission="gaussian"``, as
        in hmmlearn. ``"full"``: :class:`~sk_ihmm.emissions.Gaussian` for
        one column, :class:`~sk_ihmm.emissions.MultivariateGaussian` for
        several. ``"diag"``: :class:`~sk_ihmm.emissions.DiagonalGaussian`
        (independent columns, a variance each) for any number of columns;
        with one column it is the same model as ``"full"``. Any other
        ``emission`` raises a ValueError with ``"diag"`` (a
        ``DiagonalGaussian`` aside).
    allow_missing : bool, default=False
        Treat rows of ``X`` holding a NaN as missing observations, in
        ``fit``, ``predict``, ``predict_proba`` and ``score``: a missing step
        adds no emission likelihood, but its state is still sampled (and
        predicted) through the transitions, and ``score`` and
        ``perplexity`` leave it out. A row with a NaN in any column is
        missing as a whole. ``False``: a NaN is an error.
    alpha, gamma, kappa : float, default=1.0, 1.0, 0.0
        Concentrations (starting values when resampled). ``kappa > 0`` gives
        the sticky HDP-HMM.
    alpha_prior, gamma_prior : (float, float), default=(1.0, 1.0)
        Gamma (shape, rate) priors of ``alpha`` and ``gamma``.
    kappa_prior : (float, float) or None, default=None
        Gamma (shape, rate) prior of ``kappa``; ``None`` keeps ``kappa`` fixed.
    rho_prior : (float, float) or None, default=None
        Fox et al. (2011)'s sticky hyperprior, as in the PGAS paper
        (Tripuraneni et al. 2015): a Beta ``(a, b)`` prior on
        ``rho = kappa / (alpha + kappa)`` with ``alpha + kappa ~
        Gamma(alpha_kappa_prior)``, instead of independent Gamma priors on
        ``alpha`` and ``kappa`` (``alpha_prior`` and ``kappa_prior`` are then
        unused; ``kappa_prior`` must be ``None``). ``alpha`` and ``kappa``
        (their starting values) are resampled together, exactly (see
        :doc:`/sticky`). ``None``: the independent priors.
    alpha_kappa_prior : (float, float), default=(1.0, 1.0)
        Gamma (shape, rate) prior of ``alpha + kappa``; used only with
        ``rho_prior``.
    resample_hyperparameters : bool, default=True
        Resample the concentrations after every sweep (auxiliary variables).
    min_state_fraction : float in [0, 1), default=0.01
        States of a sample that hold fewer than this fraction of the training
        steps are *minor*: the point summary (``n_states_``, ``predict``,
        ``predict_proba``, ``startprob_``, ``transmat_``, the emission
        parameters and ``sample``) leaves the minor states of the
        representative sample out, as it leaves out the mass of a new state,
        and decodes their steps to the other states. The posterior of a
        Dirichlet-process model keeps creating small states of a few
        scattered steps (Miller & Harrison 2013), so counting every occupied
        state overstates the number of states; ``n_states_posterior_`` and
        the convergence diagnostics still count every occupied state, and
        ``score`` uses the full posterior. ``0``: keep every state.
    n_samples : int, default=100
        Samples kept per chain: ``n_samples`` after the first round, then
        between ``n_samples`` and ``2 * n_samples`` (see ``max_sweeps``).
    n_burnin : int, default=100
        Sweeps discarded at the start of each chain (first round).
    thin : int, default=1
        Keep every ``thin``-th sweep after burn-in (first round).
    n_chains : int, default=4
        Independent chains.
    max_sweeps : int, default=100_000
        Budget mode: after the first round of ``n_burnin + n_samples * thin``
        sweeps, while the convergence diagnostics (``convergence_``) miss
        their thresholds, every chain runs another round as long as all the
        sweeps before it, or cut to what fits when that would take it past
        ``max_sweeps`` sweeps. After a round the diagnostics and the kept
        samples (every ``thin_``-th sweep, a multiple of the thinning before
        it chosen so that at most ``2 * n_samples`` are kept) cover the last
        three quarters of each chain's sweeps, but not the first
        ``n_burnin``; the first quarter becomes burn-in (doc/convergence.rst
        says why a quarter is enough). The diagnostics start at
        ``n_burnin_``, the first sweep of the thinning interval that ends at
        the first kept sample: up to ``thin_ - 1`` sweeps before the quarter
        (or ``n_burnin``). A round shorter than a quarter of the sweeps the
        diagnostics look at is not run. Set ``max_sweeps`` to at most the
        first round (or ``max_time=0``) for a single round.
    max_time : float or None, default=60.0
        Budget mode's limit in wall-clock seconds: a round whose expected
        end (from the time of the rounds so far) is past ``max_time``
        seconds after the start of ``fit`` is cut to the sweeps that fit in
        the time left, as for ``max_sweeps``. The time does not count
        the time numba spends compiling kernels (tens of seconds in the
        first fit after installing; ``convergence_["compile_seconds"]``).
        ``None``: no limit in time. A fit that stops on time, not on
        convergence, depends on the machine's speed; set ``max_time=None``
        for results that depend only on ``random_state``. The first round
        (``n_burnin + n_samples * thin`` sweeps per chain) always runs
        whole, so on long sequences a fit can take longer than
        ``max_time``; lower ``n_burnin`` and ``n_samples`` for a shorter
        first round.
    warm_start : bool, default=False
        When True, a ``fit`` on the same data (same sampler, chains and
        model) continues every chain of the previous fit from its last state
        and generator: it runs ``n_burnin + n_samples * thin`` more sweeps per
        chain and appends the kept samples, so fitting ``n`` samples and then
        ``m`` more gives the samples of one fit of ``n + m``. While the
        diagnostics then miss their thresholds, the first budget-mode round
        after it replaces the kept samples with ``n_samples`` of its own
        (the appended ones are not evenly spaced; a round cut by the budget
        runs only if it is at least half as long as the chains), and the
        rounds after that extend it (their window never starts before its
        start: the sweeps before it are no longer kept). With other data or
        settings new chains
        start (with a warning). Pickling a fitted model keeps its chains, so
        a saved model can be continued later.
    progress : "auto" or bool, default="auto"
        Show a progress line on ``stderr`` while fitting, redrawn every
        second: per chain the sweeps done in the current round, sweeps per
        second and the current number of states, the time left in the
        round, and how long numba has been compiling kernels when it is
        (a first fit after installing). ``"auto"``: on when ``stderr`` is a
        terminal or the code runs in a Jupyter kernel, off otherwise.
    init : {"mixed", "particle_filter", "single", "random"}, default="mixed"
        Initial state sequences of the chains: a particle filter on the HCRP
        predictive (``"particle_filter"``, ``n_init_particles`` particles,
        Makino et al. 2011), every step in one state (``"single"``), uniform
        labels over ``n_init_states`` states (``"random"``), or ``"mixed"``:
        the even-numbered chains (0, 2, ...) from the particle filter, the
        odd-numbered ones from one state (with ``n_chains=1``, the particle
        filter only). Dispersed starting points let the split R-hat see a
        chain that is stuck (Vehtari et al. 2021): the particle filter can
        start with far too many states, which the samplers merge slowly.
        It can also start with too few, like the one-state chains; a short,
        unconverged fit can then summarise itself with too few states (it
        warns).
    n_init_states : int, default=10
        Number of states of ``init="random"``.
    n_init_particles : int, default=100
        Particles of the particle-filter start (``init="particle_filter"``
        and the even-numbered chains of ``"mixed"``).
    block_size : int or None, default=None
        Block length of ``rcd_blocked`` / ``rcd_beam`` (``None``: 32 for
        ``rcd_blocked`` and 64 for ``rcd_beam``, but at most an eighth of
        the training steps, and at least 2).
    split_merge_trials : int, default=3
        Split-merge proposals per sweep of ``split_merge``.
    split_merge_width : int, default=3
        When above 1, every sweep of ``split_merge`` adds
        ``split_merge_trials`` chain proposals, each of a width ``w``
        uniform in ``2 .. split_merge_width``, that split (or merge) the
        states of ``w`` consecutive steps together, by their context
        (1: Makino et al.'s one-state moves only).
    base_sampler : {"rcd_gibbs", "rcd_blocked", "rcd_beam", "none"}, default="rcd_blocked"
        Sampler interleaved with split-merge moves (``"none"``: only
        split-merge moves). At about the same cost per sweep as
        ``"rcd_beam"``, ``"rcd_blocked"`` mixes the number of states and
        the log-likelihood faster (doc/samplers.rst has the figures).
    n_particles : int, default=10
        Particles of ``pgas``.
    proposal : {"posterior", "prior"}, default="posterior"
        Proposal of ``pgas``.
    n_score_particles : int, default=100
        Particles per posterior sample in :meth:`score`.
    n_score_samples : int, default=20
        Posterior samples (spread evenly over all kept samples of all chains)
        used by :meth:`score`.
    n_jobs : int or None, default=None
        Chains run at once, with joblib, and particle filters of
        :meth:`score` (one per posterior sample); the results do not depend
        on it.
        ``None``: one thread per chain, up to the cores this process may use
        (``joblib.cpu_count()``) and numba's ``NUMBA_NUM_THREADS``, which
        joblib lowers inside its own workers, so that a grid search run in
        parallel does not oversubscribe the machine. An int is read as
        joblib does (``-1``: all cores). The chains run in threads, since the
        compiled sweeps release the GIL, unless a joblib backend chosen by
        the user (``joblib.parallel_config``, e.g. dask or loky) runs them
        in its own workers.
    random_state : int, RandomState instance or None, default=None
        Seeds every chain (through :class:`numpy.random.SeedSequence`) and
        the scoring particle filters; with ``max_time=None`` the fit depends
        on nothing else.
    verbose : int, default=0
        ``2`` prints a line per chain every tenth of its sweeps in a round;
        ``verbose`` is also passed to joblib.

    Attributes
    ----------
    state_samples_ : list of ndarray of shape (n_kept, n_timesteps)
        Kept hidden-state sequences of the training data, one array per chain,
        labelled ``0..K-1`` by first appearance within each sample, in the
        smallest unsigned integer type that holds the labels; ``n_kept`` is
        ``n_samples`` after one round, between ``n_samples`` and ``2 *
        n_samples`` after more (see ``max_sweeps``).
    convergence_ : dict
        Convergence diagnostics over every sweep after burn-in of all
        chains (Vehtari et al. 2021): for ``"n_states"`` and ``"log_lik"``
        (``log p(y | x)``, the data's log marginal likelihood given the
        sampled state partition) a dict with ``r_hat`` (rank-normalised split R-hat),
        ``ess_bulk`` and ``ess_tail``; ``"converged"`` (every R-hat at most
        ``1.01`` and every ESS at least ``100`` per chain; a quantity
        constant over all chains counts as converged), ``"thresholds"``,
        ``"n_sweeps"`` per chain, ``"n_rounds"``, ``"seconds"`` (the
        fit's wall time) and ``"compile_seconds"`` (the part of it numba
        spent compiling kernels, not counted by ``max_time``). A fit that ends
        unconverged raises :class:`~sklearn.exceptions.ConvergenceWarning`.
    n_states_posterior_ : ndarray of shape (max_n_states + 1,)
        Posterior probability of each number of states: the fraction of the
        kept samples of all chains with ``k`` states at index ``k``.
    emission_prior_ : dict
        The emission prior's hyperparameters as used, with data-scaled
        defaults resolved on the training data (see :mod:`sk_ihmm.emissions`).
    n_sweeps_ : int
        Sweeps run per chain, burn-in included (after an interrupt, the
        most any chain completed; the warning lists each chain's).
    n_burnin_, thin_ : int
        The burn-in and thinning that define the kept sweeps (sweep ``s``,
        0-based, is kept when ``s >= n_burnin_`` and
        ``(s - n_burnin_ + 1) % thin_ == 0``); the diagnostics look at every
        sweep from ``n_burnin_`` on. ``n_burnin`` and ``thin`` when the fit
        took one round. After a warm start, or an interrupted round, they
        describe the kept sweeps of the rounds before; the samples of that
        round are appended to those.
    trace_ : dict of ndarray of shape (n_chains, n_sweeps)
        Per-sweep ``n_states``, ``log_joint`` (``log p(x, tables, y)``),
        ``log_lik`` (``log p(y | x)``),
        ``alpha``, ``gamma``, ``kappa``, ``accept_rate``, ``seconds`` (the
        chain's own CPU time, cumulative) and any sampler-specific statistics.
    n_states_ : int
        Number of major states of the representative sample: its states
        that hold at least ``min_state_fraction`` of the training steps.
    major_states_ : ndarray of int
        The representative sample's labels (``0..K-1``, as in
        ``state_samples_``) of its major states, in order; label ``j`` of
        :meth:`predict` is its state ``major_states_[j]``.
    snapshots_ : list of list
        Compact posterior state (counts, emission statistics,
        concentrations) of every kept sample, one list per chain; used by
        :meth:`score` and :meth:`predict`.
    alpha_, gamma_, kappa_ : float
        Concentrations of the representative sample.
    representative_ : (int, int)
        ``(chain, sample)`` of the representative sample: among the kept
        samples of all chains whose number of major states (see
        ``min_state_fraction``) is the most frequent one, the sample with
        the highest joint log-likelihood at the level of table counts,
        ``log p(x, m, o, y | alpha, gamma, kappa)`` (seatings with the
        sample's table counts summed out; ``pgas``'s ``log_joint``).
        Labels are only meaningful within one sample (label switching), so
        point summaries and :meth:`predict` use this one sample.
    startprob_, transmat_ : ndarray
        Predictive start and transition probabilities of the representative
        sample (Makino et al. Eq. 31), renormalised over its ``n_states_``
        major states (the mass of a new state and of minor states is
        dropped).
    means_, covars_ / emissionprob_ / lambdas_ / coefs_, covars_ : ndarray
        Posterior-mean emission parameters of the representative sample
        (the family's ``fitted_attributes``).
    n_features_in_ : int

    Notes
    -----
    The default Gaussian prior is scaled to the training data (its mean and
    covariance), so ``InfiniteHMM().fit(X)`` gives the same state sequences
    for data in any units; see :class:`sk_ihmm.emissions.Gaussian`. With
    ``emission="gaussian"`` data with several columns get the
    full-covariance :class:`~sk_ihmm.emissions.MultivariateGaussian`, or with
    ``covariance_type="diag"`` the diagonal
    :class:`~sk_ihmm.emissions.DiagonalGaussian`, whose default prior makes
    the posterior the same under any per-column scales and shifts.

    Examples
    --------
    >>> from sk_ihmm import InfiniteHMM
    >>> from sk_ihmm.datasets import make_gaussian_hmm
    >>> X, states = make_gaussian_hmm(1200, n_states=3, random_state=0)
    >>> model = InfiniteHMM(max_time=0, n_chains=2, random_state=0).fit(X[:1000])
    >>> model.predict(X[1000:]).shape
    (200,)
    >>> proba = model.predict_proba(X[1000:])
    >>> proba.shape == (200, model.n_states_)
    True
    >>> bool(model.score(X[1000:]) < 0)
    True
    >>> sorted(model.convergence_)
    ['compile_seconds', 'converged', 'log_lik', 'n_rounds', 'n_states', 'n_sweeps', 'seconds', 'thresholds']
    """

    _parameter_constraints = {
        # a live view: a sampler registered later is accepted too
        "sampler": [StrOptions(SAMPLERS.keys())],
        # a live view: a family registered later is accepted too
        "emission": [StrOptions(FAMILIES.keys()), EmissionFamily],
        "covariance_type": [StrOptions({"full", "diag"})],
        "allow_missing": ["boolean"],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "kappa": [Interval(Real, 0, None, closed="left")],
        "alpha_prior": [tuple, list],
        "gamma_prior": [tuple, list],
        "kappa_prior": [tuple, list, None],
        "rho_prior": [tuple, list, None],
        "alpha_kappa_prior": [tuple, list],
        "resample_hyperparameters": ["boolean"],
        "min_state_fraction": [Interval(Real, 0, 1, closed="left")],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_burnin": [Interval(Integral, 0, None, closed="left")],
        "thin": [Interval(Integral, 1, None, closed="left")],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "max_sweeps": [Interval(Integral, 1, None, closed="left")],
        "max_time": [Interval(Real, 0, None, closed="left"), None],
        "warm_start": ["boolean"],
        "progress": [StrOptions({"auto"}), "boolean"],
        "init": [StrOptions({"mixed", "particle_filter", "single", "random"})],
        "n_init_states": [Interval(Integral, 1, None, closed="left")],
        "n_init_particles": [Interval(Integral, 1, None, closed="left")],
        # the samplers' options: constraints from their registry
        **{name: list(opt.constraints) for name, opt in SAMPLER_OPTIONS.items()},
        "n_score_particles": [Interval(Integral, 1, None, closed="left")],
        "n_score_samples": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        sampler="rcd_blocked",
        emission="gaussian",
        covariance_type="full",
        allow_missing=False,
        alpha=1.0,
        gamma=1.0,
        kappa=0.0,
        alpha_prior=(1.0, 1.0),
        gamma_prior=(1.0, 1.0),
        kappa_prior=None,
        rho_prior=None,
        alpha_kappa_prior=(1.0, 1.0),
        resample_hyperparameters=True,
        min_state_fraction=0.01,
        n_samples=100,
        n_burnin=100,
        thin=1,
        n_chains=4,
        max_sweeps=100_000,
        max_time=60.0,
        warm_start=False,
        progress="auto",
        init="mixed",
        n_init_states=10,
        n_init_particles=100,
        block_size=None,
        split_merge_trials=3,
        split_merge_width=3,
        base_sampler="rcd_blocked",
        n_particles=10,
        proposal="posterior",
        n_score_particles=100,
        n_score_samples=20,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.sampler = sampler
        self.emission = emission
        self.covariance_type = covariance_type
        self.allow_missing = allow_missing
        self.alpha = alpha
        self.gamma = gamma
        self.kappa = kappa
        self.alpha_prior = alpha_prior
        self.gamma_prior = gamma_prior
        self.kappa_prior = kappa_prior
        self.rho_prior = rho_prior
        self.alpha_kappa_prior = alpha_kappa_prior
        self.resample_hyperparameters = resample_hyperparameters
        self.min_state_fraction = min_state_fraction
        self.n_samples = n_samples
        self.n_burnin = n_burnin
        self.thin = thin
        self.n_chains = n_chains
        self.max_sweeps = max_sweeps
        self.max_time = max_time
        self.warm_start = warm_start
        self.progress = progress
        self.init = init
        self.n_init_states = n_init_states
        self.n_init_particles = n_init_particles
        self.block_size = block_size
        self.split_merge_trials = split_merge_trials
        self.split_merge_width = split_merge_width
        self.base_sampler = base_sampler
        self.n_particles = n_particles
        self.proposal = proposal
        self.n_score_particles = n_score_particles
        self.n_score_samples = n_score_samples
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ input
    def _check_data(self, X, lengths, sequence_ids, reset):
        family = make_emission(self.emission, None, self.covariance_type) if reset else self._family
        _check_layout(X)
        X = validate_data(
            self, X, reset=reset, dtype=None if family.discrete else np.float64,
            ensure_all_finite="allow-nan", ensure_min_samples=1,
        )
        if reset:
            _check_not_wide(X)
        if not self.allow_missing and X.dtype.kind == "f" and np.isnan(X).any():
            raise ValueError(
                f"Input X contains NaN ({int(np.isnan(X).any(axis=1).sum())} rows). Pass "
                "allow_missing=True to treat rows with a NaN as missing observations, or impute "
                "them (sklearn.impute) in a Pipeline."
            )
        if reset and isinstance(self.emission, str):
            # "gaussian" is the Gaussian family for the data's number of columns
            family = make_emission(self.emission, X.shape[1], self.covariance_type)
        Y = family.check_X(X, None if reset else self._dim)
        missing = np.isnan(Y).any(axis=1)
        if missing.any():
            # a row with a NaN is missing as a whole; the kernels test column 0
            Y = Y.copy()
            Y[missing] = np.nan
            if reset and missing.all():
                raise ValueError("Every row of X is missing (NaN); fit needs observed rows.")
        starts, lens = _sequence_bounds(Y.shape[0], lengths, sequence_ids)
        # the kernels' rows (lagged rows for an autoregressive family, whose
        # first steps of each sequence become missing: conditioning values)
        Y = np.ascontiguousarray(family.prepare(Y, starts, lens), dtype=np.float64)
        if reset and family.conditioning_steps and np.isnan(Y[:, 0]).all():
            raise ValueError(
                f"No step of X has an emission likelihood: with {family.name} emissions the first "
                f"{family.conditioning_steps} steps of every sequence are conditioning values, "
                "and the other steps are missing or absent. Sequences must be longer."
            )
        first, last = sequence_flags(Y.shape[0], lens)
        return family, Y, starts, lens, first, last

    def _problem(self, family, Y, lens, dim, emission_prior):
        resample = bool(self.resample_hyperparameters)
        kappa_prior = (1.0, 1.0) if self.kappa_prior is None else _prior_pair(self.kappa_prior, "kappa_prior")
        priors = (
            _prior_pair(self.alpha_prior, "alpha_prior"),
            _prior_pair(self.gamma_prior, "gamma_prior"),
            kappa_prior,
        )
        sticky_resampled = resample and self.kappa_prior is not None
        if self.rho_prior is not None:
            if self.kappa_prior is not None:
                raise ValueError("Give kappa_prior (independent Gamma priors on alpha and kappa) or "
                                 "rho_prior (Fox et al.'s prior on alpha + kappa and "
                                 "kappa / (alpha + kappa)), not both.")
            priors = (_prior_pair(self.alpha_kappa_prior, "alpha_kappa_prior"), priors[1], kappa_prior,
                      _prior_pair(self.rho_prior, "rho_prior", "Beta (a, b)"))
            sticky_resampled = resample
        options = {name: getattr(self, name) for name in SAMPLER_OPTIONS}
        return make_problem(
            family, Y, dim, lens, conc0=(self.alpha, self.gamma, self.kappa), priors=priors,
            resample=(resample, resample, sticky_resampled),
            options=options, emission_prior=emission_prior, missing=_has_missing(Y),
        )

    # -------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, lengths=None, sequence_ids=None):
        """Run ``n_chains`` MCMC chains on the sequences in ``X``.

        The chains run a first round of ``n_burnin + n_samples * thin``
        sweeps, then further rounds while the convergence diagnostics miss
        their thresholds and the budget (``max_sweeps``, ``max_time``)
        allows; see ``convergence_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Observations of all sequences, concatenated. For categorical
            emissions a single column of non-negative integer symbols.
            ``n_features`` may not exceed ``n_samples`` (a transposed array).
        y : Ignored
            scikit-learn's ``fit(X, y)``. ``lengths`` are keyword-only (unlike
            hmmlearn's ``fit(X, lengths)``): a ``y`` that looks like sequence
            lengths (fewer entries than rows of ``X``, summing to them) raises
            a ValueError rather than being ignored.
        lengths : array-like of int, optional
            Lengths of the sequences; they must sum to ``n_samples``.
        sequence_ids : array-like of shape (n_samples,), optional
            Per-row sequence identifier (consecutive rows with the same id
            form one sequence). Unlike ``lengths`` it can be split by
            cross-validation (``GroupKFold`` with metadata routing).

        Returns
        -------
        self : InfiniteHMM

        Warns
        -----
        ConvergenceWarning
            When the chains end without passing the convergence thresholds.
        UserWarning
            When Gaussian emissions get a single column of small
            non-negative integers (probably categories or counts).
        """
        t_start = time.perf_counter()
        _reject_lengths_as_y("fit", X, y, lengths, sequence_ids)
        # max_time leaves out compiling the kernels (the first fit after installing)
        with compile_clock() as clock:
            return self._fit(X, lengths, sequence_ids, t_start, clock)

    def _fit(self, X, lengths, sequence_ids, t_start, clock):
        make_emission(self.emission, None, self.covariance_type).validate_params()
        family, Y, _, lens, _, _ = self._check_data(X, lengths, sequence_ids, reset=True)
        self._family = family
        family.warn_data(Y)
        dim = family.dimension(Y)
        self._dim = dim
        self.emission_prior_ = family.resolve_prior(Y, dim)
        problem = self._problem(family, Y, lens, dim, self.emission_prior_)
        fingerprint = _fingerprint(self, problem)
        warm = (self.warm_start and getattr(self, "_chains", None) is not None
                and getattr(self, "_fingerprint", None) == fingerprint)
        if self.warm_start and getattr(self, "_chains", None) is not None and not warm:
            before = getattr(self, "_fingerprint", None)
            before = before if isinstance(before, dict) else {}
            changed = [k for k in fingerprint if before.get(k) != fingerprint[k]]
            names = (", ".join(changed[:-1]) + " and " if len(changed) > 1 else "") + changed[-1]
            verb = "differs" if len(changed) == 1 else "differ"
            warn(f"warm_start=True, but the {names} of this fit {verb} from the previous "
                 "fit's, whose chains therefore cannot continue: starting new chains.",
                 UserWarning)
        if self.warm_start and getattr(self, "_interrupted", False):
            warn("warm_start=True, but the previous fit was interrupted, and interrupted chains "
                 "cannot continue: starting new chains. To stop a long run and resume it, fit "
                 "it in pieces with warm_start=True (the user guide's 'Long runs').", UserWarning)
        if warm:
            problem, root = self._problem_, self._seed_root
            n_burnin, thin, n_rounds = self.n_burnin_, self.thin_, self.convergence_["n_rounds"] + 1
            tasks = [(advance_chain, (chain, problem, self.n_burnin + self.n_samples * self.thin,
                                      self.n_burnin, self.thin, self.verbose, c, True))
                     for c, chain in enumerate(self._chains)]
        else:
            root = _seed_sequence(self.random_state)
            n_burnin, thin, n_rounds = int(self.n_burnin), int(self.thin), 1
            tasks = [(first_round, (self.sampler, problem, self._initializer(problem, c), seed,
                                     self.n_burnin + self.n_samples * self.thin,
                                     self.n_burnin, self.thin, self.verbose, c))
                     for c, seed in enumerate(root.spawn(self.n_chains))]
        previous, self._chains = (self._chains if warm else None), None
        # a Ctrl-C between rounds (in this Python code, not in a chain) is
        # deferred too and ends the rounds like one inside them
        with _progress_display(self.progress, self.n_chains) as display, deferred_interrupts():
            runner = _ChainRunner(self.n_jobs, self.verbose, display)

            def budget_seconds():
                return (time.perf_counter() - t_start - clock.seconds
                        - runner.worker_compile_seconds)

            chains, n_burnin, thin, n_rounds, report, measured = self._run_rounds(
                runner, tasks, previous, problem, n_burnin, thin, n_rounds, budget_seconds)
            runner.interrupted |= take_interrupt()
        self._interrupted = runner.interrupted
        if runner.interrupted and not any(len(chain.snapshots) for chain in chains):
            raise KeyboardInterrupt         # nothing kept yet: the model stays as it was
        # a Ctrl-C while the results are summarised waits for the summary, so
        # the model is whole when the KeyboardInterrupt comes
        with deferred_interrupts():
            report["n_rounds"] = n_rounds
            report["seconds"] = time.perf_counter() - t_start
            report["compile_seconds"] = clock.seconds + runner.worker_compile_seconds
            self._problem_ = problem
            self._seed_root = root
            # the child after the chains' (what root.spawn(1) gave after spawning them)
            self._score_seed = np.random.SeedSequence(root.entropy,
                                                      spawn_key=root.spawn_key + (len(chains),))
            self._fingerprint = fingerprint
            self._chains = None if runner.interrupted else chains
            self.n_sweeps_ = int(max(chain.n_sweeps for chain in chains))
            self.n_burnin_, self.thin_ = int(n_burnin), int(thin)
            self.state_samples_ = [chain.samples for chain in chains]
            self.snapshots_ = [chain.snapshots for chain in chains]
            self.trace_ = _stack_trace(chains)
            self.convergence_ = report
            if runner.interrupted:
                kept = [c for c, snaps in enumerate(self.snapshots_) if len(snaps)]
                self.state_samples_ = [self.state_samples_[c] for c in kept]
                self.snapshots_ = [self.snapshots_[c] for c in kept]
                done = ", ".join(str(chain.n_sweeps) for chain in chains)
                warn(f"fit was interrupted: the chains completed {done} sweeps; the model keeps the "
                     f"samples drawn so far ({sum(len(s) for s in self.snapshots_)} from "
                     f"{len(kept)} chains), unconverged.", UserWarning)
            elif not report["converged"]:
                # wall seconds a sweep of every chain takes (here, where every
                # chain has run its sweeps: an interrupted one may have none)
                sweep_seconds = round_seconds(chains, 1, self.n_jobs, measured)
                warn(_diagnostics.convergence_message(
                    report, self.trace_, n_window=self.n_sweeps_ - self.n_burnin_,
                    sweep_seconds=sweep_seconds, max_sweeps=self.max_sweeps,
                    max_time=self.max_time),
                     ConvergenceWarning)
            # the number of states of the posterior pooled over chains; the
            # representative is the best kept sample (joint at the level of table
            # counts) among those with the most frequent number of major states,
            # so neither depends on which chain happened to win
            flat = [(c, i, snap) for c, snaps in enumerate(self.snapshots_) for i, snap in enumerate(snaps)]
            lj = count_log_joints([snap for _, _, snap in flat], problem)
            ks = np.array([snap.n.shape[0] - 1 for _, _, snap in flat])
            self.n_states_posterior_ = np.bincount(ks) / ks.size
            majors = np.array([int(np.sum(self._major_states(snap))) for _, _, snap in flat])
            lj = np.where(majors == int(np.argmax(np.bincount(majors))), lj, -np.inf)
            c, i, _ = flat[int(np.argmax(lj))]
            self.representative_ = (int(c), int(i))
            self._set_point_summary(self.snapshots_[c][i])
        if runner.interrupted:
            raise KeyboardInterrupt
        return self

    def _run_rounds(self, runner, tasks, previous, problem, n_burnin, thin, n_rounds,
                    budget_seconds):
        """The first round, then more while unconverged and within the budget
        (``budget_seconds()``: the time spent so far that counts against
        ``max_time``). Returns the chains, the window (``n_burnin``,
        ``thin``), the rounds, the last report and the wall seconds per
        sweep of the last round after the first (``None`` after one
        round)."""
        chains = runner(tasks, previous)
        report = _diagnostics.convergence_report(_stack_trace(chains), n_burnin)
        measured = None     # budget seconds per sweep of the last round after the first
        # the kept samples are every thin-th sweep from n_burnin to the last
        # one (not after a warm start's round, which appends to older ones)
        evenly_kept = previous is None
        while not report["converged"]:
            if runner.interrupted or take_interrupt():
                runner.interrupted = True
                break
            n_done = chains[0].n_sweeps
            left = None if self.max_time is None else self.max_time - budget_seconds()
            plan = next_round(n_done, n_burnin, thin if evenly_kept else None, self.n_samples,
                              self.max_sweeps, left, round_seconds(chains, 1, self.n_jobs, measured))
            if plan is None:
                break
            n_next, round_thin, extend = plan
            spent = budget_seconds()
            chains = runner([(advance_chain, (chain, problem, n_next, 0, round_thin, self.verbose, c,
                                              extend))
                             for c, chain in enumerate(chains)], chains)
            measured = (budget_seconds() - spent) / n_next
            if not runner.interrupted:
                n_rounds += 1
                if extend:
                    n_burnin, thin = move_window(chains, n_burnin, thin, n_next, round_thin,
                                                 self.n_samples)
                else:
                    n_burnin, thin, evenly_kept = n_done, round_thin, True
            report = _diagnostics.convergence_report(_stack_trace(chains), n_burnin)
        return chains, n_burnin, thin, n_rounds, report, measured

    def _initializer(self, problem, chain_id):
        """The initial labels of chain ``chain_id``: a callable of its Generator."""
        T = problem.Y.shape[0]
        if self.init == "random":
            return _RandomInit(int(self.n_init_states), T)
        if self.init == "single" or (self.init == "mixed" and chain_id % 2 == 1):
            return _RandomInit(1, T)
        return _ParticleInit(problem, int(self.n_init_particles))

    def _major_states(self, snap):
        """Mask of the states of ``snap`` that hold at least
        ``min_state_fraction`` of the training steps (and at least one)."""
        occupancy = snap.n[:, 1:].sum(axis=0)
        return occupancy >= max(1.0, self.min_state_fraction * occupancy.sum())

    def _set_point_summary(self, snap):
        alpha, gamma, kappa = snap.conc
        pi = pred_weights(snap.n.astype(float), snap.m.sum(axis=0).astype(float),
                          alpha, gamma, kappa)
        major = self._major_states(snap)
        self.major_states_ = np.flatnonzero(major)
        keep = np.concatenate([[0], 1 + self.major_states_])
        pi = pi[np.ix_(keep, keep[1:])]
        pi /= pi.sum(axis=1, keepdims=True)
        self.n_states_ = int(major.sum())
        self.startprob_ = pi[0]
        self.transmat_ = pi[1:]
        self.alpha_, self.gamma_, self.kappa_ = float(alpha), float(gamma), float(kappa)
        hyp = snapshot_hyp(snap, self._problem_)
        for key, val in self._family.summary(snap.stats[1:][major], hyp).items():
            setattr(self, key, val)

    # ---------------------------------------------------------------- predict
    def _log_emissions(self, Y):
        snap = self.snapshots_[self.representative_[0]][self.representative_[1]]
        prob = self._problem_
        # a writable copy: log_pred caches predictive constants in the rows
        # (a model pickled before major_states_ existed keeps every state)
        major = getattr(self, "major_states_", slice(None))
        return log_emission_matrix(self._tag_for(Y), np.array(snap.stats[1:][major]),
                                   snapshot_hyp(snap, prob), Y)

    def _tag_for(self, Y):
        """The kernels' tag for observations ``Y`` (missing-aware if needed)."""
        return missing_aware(self._family.tag) if _has_missing(Y) else self._family.tag

    def _decode(self, X, lengths, sequence_ids, posterior):
        check_is_fitted(self, "state_samples_")
        _, Y, starts, lens, _, _ = self._check_data(X, lengths, sequence_ids, reset=False)
        log_B = self._log_emissions(Y)
        log_A = np.log(self.transmat_)
        log_pi = np.log(self.startprob_)
        if posterior:
            out = np.empty((Y.shape[0], self.n_states_))
        else:
            out = np.empty(Y.shape[0], np.int64)
        with deferred_interrupts():
            for s, L in zip(starts, lens):
                check_interrupt()
                if posterior:
                    _, out[s:s + L] = _messages.forward_backward(log_pi, log_A, log_B[s:s + L])
                else:
                    _, out[s:s + L] = _messages.viterbi(log_pi, log_A, log_B[s:s + L])
        return out

    def predict(self, X, lengths=None, *, sequence_ids=None):
        """Most likely state sequence (Viterbi) under the representative sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Observations of one or more sequences, concatenated, with the
            columns (or symbols) of the training data.
        lengths : array-like of int, default=None
            Lengths of the sequences in ``X``; they must sum to
            ``n_samples``. ``None``: one sequence.
        sequence_ids : array-like of shape (n_samples,), default=None
            Per-row sequence identifier, instead of ``lengths``.

        Returns
        -------
        states : ndarray of shape (n_samples,)
            Labels ``0..n_states_-1`` of the representative sample.
        """
        return self._decode(X, lengths, sequence_ids, posterior=False)

    def predict_proba(self, X, lengths=None, *, sequence_ids=None):
        """Posterior state marginals (forward-backward) under the representative sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Observations of one or more sequences, concatenated, with the
            columns (or symbols) of the training data.
        lengths : array-like of int, default=None
            Lengths of the sequences in ``X``; they must sum to
            ``n_samples``. ``None``: one sequence.
        sequence_ids : array-like of shape (n_samples,), default=None
            Per-row sequence identifier, instead of ``lengths``.

        Returns
        -------
        proba : ndarray of shape (n_samples, ``n_states_``)
        """
        return self._decode(X, lengths, sequence_ids, posterior=True)

    # ------------------------------------------------------------------ score
    def _score_snapshots(self):
        flat = [s for snaps in self.snapshots_ for s in snaps]
        n = min(len(flat), int(self.n_score_samples))
        idx = np.unique(np.linspace(0, len(flat) - 1, n).round().astype(int))
        return [flat[i] for i in idx]

    def score_sequences(self, X, lengths=None, *, sequence_ids=None):
        """Held-out log predictive likelihood of each sequence.

        Each sequence is scored on its own given the training data, by the
        protocol of Makino et al. (2011, Eq. 38-39): for every used posterior
        sample a particle filter with ``n_score_particles`` particles gives
        the per-observation predictive likelihoods ``l(y_t | s_z)``; these are
        averaged over samples, ``l(y_t) = mean_z l(y_t | s_z)``, and the
        sequence score is ``sum_t log l(y_t)`` over the scored steps: missing
        rows and the conditioning steps of an autoregressive family (the
        first ``order`` steps of each sequence, see
        :class:`~sk_ihmm.emissions.AutoRegressive`) are left out.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Observations of one or more sequences, concatenated, with the
            columns (or symbols) of the training data.
        lengths : array-like of int, default=None
            Lengths of the sequences in ``X``; they must sum to
            ``n_samples``. ``None``: one sequence.
        sequence_ids : array-like of shape (n_samples,), default=None
            Per-row sequence identifier, instead of ``lengths``.

        Returns
        -------
        scores : ndarray of shape (n_sequences,)
        """
        check_is_fitted(self, "state_samples_")
        _, Y, starts, lens, first, _ = self._check_data(X, lengths, sequence_ids, reset=False)
        snaps = self._score_snapshots()
        base = self._score_seed
        at_once = chains_at_once(self.n_jobs, len(snaps))
        out = np.empty(len(starts))
        with deferred_interrupts():
            for i, (s, L) in enumerate(zip(starts, lens)):
                # a generator per (sequence, sample), from the seed alone: the
                # filters run in threads and the score does not depend on n_jobs
                rngs = [np.random.default_rng(np.random.SeedSequence(
                    base.entropy, spawn_key=base.spawn_key + (i, j))) for j in range(len(snaps))]
                ll = snapshot_log_likelihoods(
                    self._problem_, snaps, Y[s:s + L], first[s:s + L], int(self.n_score_particles),
                    rngs, fam=self._tag_for(Y[s:s + L]), n_jobs=at_once,
                )
                per_step = logsumexp(ll, axis=0) - np.log(ll.shape[0])
                # a step left out (missing, or conditioning an autoregressive
                # family: a nan row of Y) adds exactly 0, not rounding noise
                per_step[np.isnan(Y[s:s + L, 0])] = 0.0
                out[i] = float(np.sum(per_step))
        return out

    def score(self, X, y=None, lengths=None, *, sequence_ids=None, sample_weight=None):
        """Total held-out log predictive likelihood (higher is better).

        The sum of :meth:`score_sequences`. ``y`` is ignored (scikit-learn's
        ``score(X, y)``); pass ``lengths`` by keyword. A ``y`` that looks
        like sequence lengths (fewer entries than rows of ``X``, summing to
        them) raises a ValueError rather than being ignored.
        ``sample_weight`` must be None: it is in the signature because a
        ``Pipeline`` under metadata routing passes ``sample_weight=None`` to
        its last step's ``score``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Held-out observations of one or more sequences, concatenated.
        y : Ignored
        lengths : array-like of int, default=None
            Lengths of the sequences in ``X``. ``None``: one sequence.
        sequence_ids : array-like of shape (n_samples,), default=None
            Per-row sequence identifier, instead of ``lengths``.
        sample_weight : None
            Must be None.

        Returns
        -------
        score : float
        """
        if sample_weight is not None:
            raise ValueError("InfiniteHMM.score does not support sample_weight; it must be None.")
        _reject_lengths_as_y("score", X, y, lengths, sequence_ids)
        return float(np.sum(self.score_sequences(X, lengths, sequence_ids=sequence_ids)))

    def perplexity(self, X, lengths=None, *, sequence_ids=None):
        """``exp(-score / n_observations)`` (Makino et al. Eq. 38).

        ``n_observations`` counts the scored steps (without missing rows and
        the conditioning steps of an autoregressive family).

        The effective number of equally likely observations per step (lower
        is better); a uniform guess over ``V`` symbols has perplexity ``V``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Observations of one or more sequences, concatenated, with the
            columns (or symbols) of the training data.
        lengths : array-like of int, default=None
            Lengths of the sequences in ``X``; they must sum to
            ``n_samples``. ``None``: one sequence.
        sequence_ids : array-like of shape (n_samples,), default=None
            Per-row sequence identifier, instead of ``lengths``.

        Returns
        -------
        perplexity : float
            ``nan`` when no step is scored.
        """
        score = self.score(X, lengths=lengths, sequence_ids=sequence_ids)
        # missing rows (and conditioning steps) are not predicted, so they do not count
        _, Y, _, _, _, _ = self._check_data(X, lengths, sequence_ids, reset=False)
        n_scored = int(np.sum(~np.isnan(Y[:, 0])))
        return float(np.exp(-score / n_scored)) if n_scored else float("nan")

    # ----------------------------------------------------------------- sample
    def sample(self, n_samples=1, random_state=None):
        """Generate a sequence from the point summary (representative sample).

        Parameters
        ----------
        n_samples : int, default=1
            Number of time steps to generate.
        random_state : int, RandomState instance or None, default=None
            ``None``: the estimator's ``random_state``.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        states : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "state_samples_")
        if (not isinstance(n_samples, (Integral, np.integer)) or isinstance(n_samples, bool)
                or n_samples < 1):
            raise ValueError(f"n_samples must be a positive integer (time steps to generate); "
                             f"got {n_samples!r}.")
        rng = np.random.default_rng(_seed_sequence(random_state if random_state is not None else self.random_state))
        states = sample_markov_chain(self.startprob_, self.transmat_, int(n_samples), rng)
        summary = {k: getattr(self, k) for k in self._family.fitted_attributes}
        X = self._family.draw(summary, states, rng)
        return X, states

    def __getstate__(self):
        """Pickle the kept labels and the chains' states compressed (zlib):
        they are most of a fitted model, and label sequences of few states
        compress well."""
        import copy
        import pickle
        import zlib

        state = dict(super().__getstate__())     # may be the live __dict__
        samples = state.get("state_samples_")
        if samples is not None:
            state["state_samples_"] = [
                (a.dtype.str, a.shape, zlib.compress(np.ascontiguousarray(a).tobytes(), 1))
                for a in samples
            ]
            if state.get("_chains") is not None:
                chains = []
                for chain in state["_chains"]:
                    chain = copy.copy(chain)
                    chain.samples = None     # the same arrays as state_samples_
                    chains.append(chain)
                state["_chains"] = ("zlib", zlib.compress(pickle.dumps(chains, protocol=5), 1))
        return state

    def __setstate__(self, state):
        import pickle
        import zlib

        chains = state.get("_chains")
        if isinstance(chains, tuple) and chains[0] == "zlib":
            state["_chains"] = pickle.loads(zlib.decompress(chains[1]))
        samples = state.get("state_samples_")
        if samples is not None and samples and isinstance(samples[0], tuple):
            state["state_samples_"] = [
                np.frombuffer(zlib.decompress(blob), dtype=np.dtype(dtype)).reshape(shape).copy()
                for dtype, shape, blob in samples
            ]
            for chain, labels in zip(state.get("_chains") or [], state["state_samples_"]):
                chain.samples = labels
        super().__setstate__(state)

    def set_params(self, **params):
        """Set parameters; ``emission__<name>`` also works with a string ``emission``.

        A string emission is first replaced by its family with default
        hyperparameters (``"gaussian"``: :class:`~sk_ihmm.emissions.Gaussian`,
        or :class:`~sk_ihmm.emissions.DiagonalGaussian` with
        ``covariance_type="diag"``), so that ``GridSearchCV`` can tune
        ``emission__b0`` without building the family by hand.
        """
        nested = [key for key in params if key.startswith("emission__")]
        emission = params.get("emission", self.emission)
        if nested and isinstance(emission, str):
            covariance_type = params.get("covariance_type", self.covariance_type)
            diag = emission == "gaussian" and covariance_type == "diag"
            family = make_emission(emission, None, "diag" if diag else "full")
            if "emission" in params:
                params = {**params, "emission": family}
            else:
                super().set_params(emission=family)
        return super().set_params(**params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags

    # ------------------------------------------------------------ diagnostics
    def diagnostics(self, keys=None):
        """Convergence summary of the label-invariant traces of the kept sweeps.

        Parameters
        ----------
        keys : sequence of str, default=None
            Trace keys to summarise (any key of ``trace_``). By default
            ``n_states``, ``log_lik``, ``log_joint``, the resampled concentrations
            (``alpha``, ``gamma``, and ``kappa`` when ``kappa_prior`` or ``rho_prior`` is set)
            and every acceptance statistic (keys ending in ``accept_rate`` or
            ``accept``).

        Returns
        -------
        table : dict of dict
            ``{quantity: {"mean", "sd", "ess_bulk", "r_hat", "act"}}`` over
            the kept sweeps (after ``n_burnin``, every ``thin``-th) of all
            chains: bulk ESS and rank-normalised split R-hat (Vehtari et al.,
            2021) and Makino et al.'s autocorrelation time (Eq. 35-36,
            ``0.5`` for independent draws; mean over chains). Undefined
            entries are ``nan``. ``print(table)`` shows it as a text table;
            ``pandas.DataFrame(table).T`` makes a data frame. After an
            interrupt that left the chains at different sweeps, the table
            covers the sweeps every chain completed.
        """
        check_is_fitted(self, "state_samples_")
        return _diagnostics.summarize_traces(
            self.trace_, self.n_burnin_, self.thin_, keys=keys, resampled=self._problem_.resample,
        )

    def to_arviz(self):
        """The traces of the kept sweeps as ArviZ data (requires ``arviz``).

        Returns
        -------
        idata : arviz.InferenceData
            ``posterior`` holds ``n_states``, ``log_lik``, ``log_joint``,
            ``alpha``, ``gamma`` and ``kappa`` with dimensions ``(chain, draw)``;
            ``sample_stats`` holds ``lp`` and the other traces (acceptance
            rates, CPU seconds, ...). With ArviZ >= 1.0 the equivalent
            ``DataTree`` is returned.
        """
        check_is_fitted(self, "state_samples_")
        attrs = {"sampler": str(self.sampler), "n_burnin": self.n_burnin_, "thin": self.thin_}
        return _diagnostics.trace_to_arviz(self.trace_, self.n_burnin_, self.thin_, attrs=attrs)

    def posterior_similarity(self, dtype=np.float32, steps=None):
        """Posterior co-assignment probabilities of the training time steps.

        Entry ``(s, t)`` is the fraction of kept samples (all chains) in which
        steps ``s`` and ``t`` of the training data share a state; it is
        immune to label switching. Memory is ``n_steps**2`` floats; above
        4 GiB a ValueError asks for ``steps``.

        Parameters
        ----------
        dtype : {numpy.float32, numpy.float64}, default=numpy.float32
        steps : array-like of int or None, default=None
            Training time steps to include (``None``: all).

        Returns
        -------
        psm : ndarray of shape (n_steps, n_steps)
        """
        check_is_fitted(self, "state_samples_")
        return _diagnostics.posterior_similarity(self.state_samples_, dtype=dtype, steps=steps)

    def point_estimate(self, return_index=False):
        """Label-switching-robust point estimate of the training state sequence.

        The kept sample (over all chains) closest to the posterior similarity
        matrix in squared error (Dahl's least-squares clustering,
        :func:`sk_ihmm.metrics.point_estimate_states`).

        Parameters
        ----------
        return_index : bool, default=False
            Also return ``(chain, sample)`` of the selected sample (its
            snapshot is ``snapshots_[chain][sample]``).

        Returns
        -------
        states : ndarray of shape (n_timesteps,)
            Labels ``0, 1, ...`` in order of first appearance.
        index : (int, int)
            Only if ``return_index``.
        """
        check_is_fitted(self, "state_samples_")
        states, where = _diagnostics.point_estimate(self.state_samples_)
        return (states, where) if return_index else states


def _progress_display(progress, n_chains):
    """A :class:`~sk_ihmm._progress.ProgressDisplay` in a temporary folder, or nothing."""
    import contextlib
    import shutil
    import tempfile

    from ._progress import ProgressDisplay, progress_wanted

    if not progress_wanted(progress):
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def display():
        folder = tempfile.mkdtemp(prefix="sk_ihmm_progress_")
        try:
            with ProgressDisplay(folder, n_chains) as shown:
                yield shown
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return display()


def _fingerprint(model, problem):
    """What must not change for ``warm_start`` to continue the chains."""
    import hashlib

    def digest(*parts):
        h = hashlib.sha1()
        for part in parts:
            h.update(np.ascontiguousarray(part).tobytes())
        return h.hexdigest()

    # named parts, so that a refused warm start can say which one changed
    return {
        "data": digest(problem.Y, problem.ends),
        "emission family": problem.fam,
        "prior": digest(problem.hyp, problem.priors, problem.resample, np.array(problem.conc0)),
        "sampler": model.sampler,
        "sampler options": repr(sorted((k, repr(v)) for k, v in problem.options.items())),
        "n_chains": model.n_chains,
    }


def _stack_trace(chains):
    """Per-sweep traces of the chains as ``{key: (n_chains, n_sweeps)}`` arrays
    (an interrupted chain's missing sweeps are ``nan``)."""
    n = max(chain.n_sweeps for chain in chains)
    keys = dict.fromkeys(k for chain in chains for k in chain.trace)
    out = {}
    for key in keys:
        rows = np.full((len(chains), n), np.nan)
        for c, chain in enumerate(chains):
            values = chain.trace.get(key)
            if values is not None:
                rows[c, :len(values)] = values
        out[key] = rows
    return out


class _ChainRunner:
    """Runs one round of chain tasks, serially or with joblib, and survives Ctrl-C.

    With joblib the chains run in threads (the compiled sweeps release the
    GIL), or in the workers of a backend the user chose. A Ctrl-C creates
    the round's stop file, and every chain stops after its current sweep.
    On an interrupt it sets ``interrupted`` and returns what it can: the
    chains as they stand (an interrupted chain keeps its whole sweeps;
    chains not yet started are left out, chains not yet advanced are
    returned as they were), or, when a worker process died of the
    interrupt, the chains of the previous round (``fallback``; none in the
    first round, and the interrupt propagates).
    """

    def __init__(self, n_jobs, verbose, display=None):
        self.n_jobs, self.verbose, self.display = n_jobs, verbose, display
        self.interrupted = False
        self.rounds = 0
        # wall time the chains run at once spent compiling, per round: in
        # threads the sum over the threads, in worker processes the
        # longest chain's (run serially, the parent's clock sees it)
        self.worker_compile_seconds = 0.0

    def _progress(self, c):
        return None if self.display is None else self.display.path(c)

    def __call__(self, tasks, fallback):
        """``tasks``: ``(function, args)`` pairs, each returning a chain."""
        self.rounds += 1
        if self.display is not None:
            self.display.new_round(self.rounds)
        at_once = chains_at_once(self.n_jobs, len(tasks))
        if at_once == 1:
            return self._serial(tasks)
        before = [getattr(args[0], "compile_seconds", 0.0) if func is advance_chain else 0.0
                  for func, args in tasks]
        # a Ctrl-C in a terminal reaches the workers too: each stops after its
        # current sweep and returns its chain; here it is only recorded
        try:
            # the chains' clocks count their own thread's compilations; run
            # in threads, whichever thread gets to a kernel first compiles
            # it, so the round's compile time is the sum over the threads
            with deferred_interrupts(), stop_file() as stop_path, \
                    _compile_clock.compile_clock(other_threads=True) as threads_clock:
                try:
                    # threads unless the user's joblib backend says otherwise: the
                    # kernels release the GIL. max_nbytes=None: no read-only
                    # memmaps of the chains' state arrays in worker processes
                    # (joblib's default above 1 MB), which the kernels write
                    n_jobs = at_once if self.n_jobs is None else self.n_jobs
                    results = Parallel(n_jobs=n_jobs, prefer="threads", verbose=self.verbose,
                                       max_nbytes=None)(
                        delayed(_chain_task)(func, args, stop_path, self._progress(c))
                        for c, (func, args) in enumerate(tasks))
                except Exception:
                    # a worker hit by the interrupt before it ignored SIGINT dies
                    # (TerminatedWorkerError): that is the interrupt, not an error
                    if not os.path.exists(stop_path):
                        raise
                    raise KeyboardInterrupt from None
                requested = take_interrupt()
            for result in results:
                if isinstance(result, _TaskError):
                    result.reraise()
            chains = [chain for chain in results if chain is not None]
            if not chains:
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            take_interrupt()
            self.interrupted = True
            if fallback is None:
                raise
            return fallback
        self.interrupted = (requested or len(chains) < len(tasks)
                            or any(chain.interrupted for chain in chains))
        self.worker_compile_seconds += max(
            [threads_clock.seconds] + [chain.compile_seconds - b for chain, b in zip(results, before)
                                       if chain is not None])
        return chains

    def _serial(self, tasks):
        chains = []
        for c, (func, args) in enumerate(tasks):
            if self.interrupted:
                if func is advance_chain:
                    chains.append(args[0])
                continue
            try:
                chain = func(*args, progress_path=self._progress(c))
            except KeyboardInterrupt:      # outside the sweeps: starting a chain
                self.interrupted = True
                if func is advance_chain:
                    chains.append(args[0])
                continue
            self.interrupted = chain.interrupted
            chains.append(chain)
        if not chains:
            raise KeyboardInterrupt
        return chains


class _TaskError:
    """An exception raised in a chain task, carried back to the parent."""

    def __init__(self, exc):
        import traceback

        self.exc = exc
        self.trace = "".join(traceback.format_exception(exc))

    def reraise(self):
        if hasattr(self.exc, "add_note"):      # Python >= 3.11
            self.exc.add_note(f"raised in a chain task:\n{self.trace}")
        raise self.exc


def _chain_task(func, args, stop_path, progress_path):
    """Run one chain task of a round whose chains run at once.

    It always returns, so the round ends only when every chain has stopped
    (no chain runs on in a thread after ``fit``): the chain; ``None`` for a
    chain that a Ctrl-C stopped before it started (the chains that have
    started keep their samples, as when run one after the other); or a
    :class:`_TaskError`, after creating the stop file so that the other
    chains stop after their current sweep.
    """
    try:
        return func(*args, stop_path=stop_path, progress_path=progress_path)
    except KeyboardInterrupt:
        return args[0] if func is advance_chain else None
    except Exception as exc:
        request_stop(stop_path)
        return _TaskError(exc)


def _has_missing(Y):
    """True when a row of the validated observations is missing (NaN)."""
    return bool(np.isnan(Y[:, 0]).any()) if Y.size else False


class _RandomInit:
    """Uniform initial labels over ``K0`` states (picklable for joblib)."""

    def __init__(self, K0, T):
        self.K0, self.T = K0, T

    def __call__(self, rng):
        return rng.integers(1, self.K0 + 1, size=self.T).astype(np.int64)


class _ParticleInit:
    def __init__(self, problem, n_particles):
        self.problem, self.n_particles = problem, n_particles

    def __call__(self, rng):
        return initial_labels(self.problem, self.n_particles, rng)

