"""The chain driver: problem description, initial labelling, one MCMC chain.

Everything here is sampler-agnostic: a sampler is an ``(init, step)`` pair
(:mod:`sk_ihmm.samplers`), and the driver records the per-sweep trace and a
compact posterior *snapshot* of every kept sample (what scoring and the point
summary need).
"""

from collections import namedtuple
import math
import time

import numpy as np

from ._compile_clock import compile_clock
from ._hcrp import log_stirling_for
from ._interrupt import check_interrupt, deferred_interrupts, ignore_interrupts_in_worker
from ._joint import count_log_joint
from ._labels import compact_labels
from ._progress import ChainProgress
from .emissions import log_marginal_sum, log_prior_predictive, missing_aware
from .samplers import get_sampler

Problem = namedtuple(
    "Problem",
    [
        "Y",            # (T, D) float64 observations (all sequences concatenated)
        "seq_first",    # (T,) bool: first step of a sequence
        "seq_last",     # (T,) bool: last step of a sequence
        "starts",       # (n_sequences,) int64: first step of each sequence
        "ends",         # (n_sequences,) int64: one past its last step
        "emission",     # EmissionFamily instance
        "fam",          # its tag, the first argument of the kernels of sk_ihmm.emissions
        "hyp",          # float64 hyperparameters of the emission kernels
        "dim",          # family dimension (symbols or features)
        "n_stats",      # length of a row of sufficient statistics
        "prior_pred",   # (T,) log prior predictive of each observation (an empty state)
        "conc0",        # (alpha, gamma, kappa) starting values
        "priors",       # (4, 2) float64: Gamma (a, b) of alpha, gamma, kappa; Beta of rho (_hyper)
        "resample",     # (3,) bool: which concentrations to resample
        "options",      # dict of sampler options
    ],
)

_UNIT_PRIORS = ((1.0, 1.0), (1.0, 1.0), (1.0, 1.0))


def sequence_flags(n_rows, lengths):
    """``(first, last)``: boolean ``(n_rows,)`` flags of each sequence's first
    and last step, for sequences of ``lengths`` (summing to ``n_rows``)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(lengths)
    first = np.zeros(n_rows, bool)
    last = np.zeros(n_rows, bool)
    first[ends - lengths] = True
    last[ends - 1] = True
    return first, last


def make_problem(family, Y, dim, lengths=None, conc0=(1.0, 1.0, 0.0), priors=_UNIT_PRIORS,
                 resample=(True, True, False), options=None, emission_prior=None, missing=False):
    """Build a :class:`Problem` from validated observations.

    Parameters
    ----------
    family : EmissionFamily
    Y : ndarray of shape (n_timesteps, n_features)
        Observations of all sequences, concatenated.
    dim : int
        Family dimension (alphabet size or number of features).
    lengths : sequence of int or None
        Sequence lengths (``None``: one sequence).
    conc0, priors, resample, options
        Starting ``(alpha, gamma, kappa)``, their Gamma (shape, rate) priors,
        which of them to resample, and the sampler options. A fourth row of
        ``priors``, ``(a_rho, b_rho)`` with ``a_rho > 0``, selects Fox et
        al.'s sticky prior (:mod:`sk_ihmm._hyper`): the first row is then
        the Gamma prior of ``alpha + kappa``, the fourth the Beta prior of
        ``rho = kappa / (alpha + kappa)``, and ``alpha`` and ``kappa`` are
        resampled together (``resample[2]`` is set to ``resample[0]``).
    emission_prior : dict or None
        The family's :meth:`~sk_ihmm.emissions.EmissionFamily.resolve_prior`
        on ``Y``, if already computed (``None``: resolved here).
    missing : bool
        Rows of ``Y`` whose first column is NaN are missing observations
        (the kernels get :func:`~sk_ihmm.emissions.missing_aware` of the
        family's tag).
    """
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    T = Y.shape[0]
    first, last = sequence_flags(T, [T] if lengths is None else lengths)
    # data-scaled defaults resolved on all training sequences
    hyp = family.hyperparameters(dim, Y, emission_prior)
    fam = missing_aware(family.tag) if missing else family.tag
    n_stats = family.n_stats(dim)
    priors = np.array(priors, dtype=np.float64).reshape(-1, 2)
    if priors.shape[0] not in (3, 4):
        raise ValueError("priors must have 3 or 4 (a, b) rows")
    priors = np.vstack([priors, np.zeros((4 - priors.shape[0], 2))])
    resample = [bool(r) for r in resample]
    if priors[3, 0] > 0:
        if not (priors[3, 1] > 0 and priors[0, 0] > 0 and priors[0, 1] > 0):
            raise ValueError("Fox et al.'s prior needs a_s, b_s, a_rho, b_rho > 0")
        resample[2] = resample[0]
    return Problem(
        Y=Y, seq_first=first, seq_last=last, starts=np.flatnonzero(first).astype(np.int64),
        ends=np.flatnonzero(last).astype(np.int64) + 1, emission=family, fam=fam,
        hyp=hyp, dim=dim, n_stats=n_stats, prior_pred=log_prior_predictive(fam, n_stats, hyp, Y),
        conc0=tuple(float(c) for c in conc0),
        # arrays, as the samplers' kernels take them (no conversion per sweep)
        priors=priors, resample=np.array(resample), options=dict(options or {}),
    )


#: A kept posterior sample in compact form. Index 0 of ``n``, ``m``, ``o`` is
#: the start restaurant; state ``i`` of the kept label sequence (0-based) is
#: index ``i + 1``. ``stats`` has a row per index (row 0 unused). ``hyp``: the
#: chain's emission hyperparameters at that sweep when the family samples
#: them, else None (the problem's); read it with :func:`snapshot_hyp`.
Snapshot = namedtuple("Snapshot", ["n", "m", "o", "stats", "conc", "log_joint", "hyp"],
                      defaults=(None,))


def snapshot_hyp(snap, problem):
    """The emission hyperparameters a snapshot was drawn with."""
    return problem.hyp if snap.hyp is None else snap.hyp


def make_snapshot(state, problem):
    """Relabel a chain state compactly (first-appearance order of ``x``).

    Returns ``(labels, snapshot)`` where ``labels`` is ``x`` relabelled to
    ``0..K-1``.
    """
    labels = np.array(state.x, dtype=np.int64)
    idx = compact_labels(labels)    # idx[k]: the chain's label of state k (idx[0] = 0)
    labels -= 1
    snap = Snapshot(
        n=state.n[np.ix_(idx, idx)].copy(),
        m=state.m[np.ix_(idx, idx)].copy(),
        o=state.o[idx].copy(),
        stats=state.stats[idx].copy(),
        conc=np.array(state.conc, dtype=float),
        log_joint=float(state.log_joint),
        hyp=state.hyp.copy() if problem.emission.samples_hyperparameters else None,
    )
    return labels, snap


def count_log_joints(snapshots, problem):
    """``log p(x, m, o, y | alpha, gamma, kappa)`` of kept samples.

    The joint at the level of table counts
    (:func:`sk_ihmm._joint.count_log_joint`): for ``pgas`` it is the
    ``log_joint`` of the snapshot, for the collapsed samplers it sums out the
    seatings with the snapshot's table counts, which their ``log_joint``
    (one particular seating) does not. One Stirling table, with rows for the
    snapshots' transition counts only, serves them all.
    """
    table = log_stirling_for((snap.n, snap.m, snap.o) for snap in snapshots)
    return np.array([count_log_joint(snap.n, snap.m, snap.o, snap.stats, snap.conc,
                                     problem.fam, snapshot_hyp(snap, problem), table)
                     for snap in snapshots])


class Chain:
    """One chain advanced in rounds: sampler state, generator and records.

    A chain is picklable, so joblib workers can run a round and send it back;
    the next round continues from the same state and generator, so a chain
    run in several rounds draws exactly what one long run would.

    Attributes
    ----------
    state : sampler state (see :mod:`sk_ihmm.samplers`)
    rng : numpy.random.Generator
    trace : dict of ndarray of shape (n_sweeps,)
        Per-sweep records of every sweep run so far.
    samples : ndarray of shape (n_kept, n_timesteps), smallest unsigned dtype
        Labels of the kept sweeps (0-based, first-appearance order).
    snapshots : list of Snapshot
        Their compact posterior snapshots.
    n_sweeps : int
        Sweeps run so far.
    interrupted : bool
        A KeyboardInterrupt (or the stop file) ended the chain's last round
        early, after a whole sweep; the estimator does not continue such
        chains with ``warm_start``.
    """

    def __init__(self, sampler_name, state, rng):
        self.sampler_name = sampler_name
        self.state = state
        self.rng = rng
        self.trace = {}
        self.samples = None
        self.snapshots = []
        self.n_sweeps = 0
        self.cpu_seconds = 0.0
        self.compile_seconds = 0.0     # wall time compiling kernels while running this chain
        self.interrupted = False


def start_chain(sampler_name, problem, x0, seed, stop_path=None):
    """A new :class:`Chain` from a :class:`numpy.random.SeedSequence`.

    Every random draw of the chain (its initial labels included) comes from
    the one Generator made from ``seed``, so results do not depend on which
    worker runs it. ``stop_path``: see :func:`advance_chain`.
    """
    if stop_path is not None:
        ignore_interrupts_in_worker(stop_path)
    rng = np.random.default_rng(seed)
    sampler = get_sampler(sampler_name)
    with deferred_interrupts(), compile_clock() as clock:
        x_init = x0(rng) if callable(x0) else x0
        check_interrupt(stop_path)
        chain = Chain(sampler_name, sampler.init(problem, x_init, rng), rng)
    chain.compile_seconds = clock.seconds
    return chain


def label_dtype(n_labels):
    """The smallest unsigned integer dtype that holds labels ``0..n_labels-1``."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if n_labels - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def advance_chain(chain, problem, n_sweeps, n_skip, thin, verbose=0, chain_id=0, append=False,
                  stop_path=None, progress_path=None):
    """Run ``n_sweeps`` more sweeps of ``chain`` and keep some of them.

    Sweep ``s`` of this call (0-based) is kept when ``s >= n_skip`` and
    ``(s - n_skip + 1) % thin == 0``. The kept labels and snapshots replace
    those of the previous call, or are appended to them with ``append``; the
    traces are always appended. A KeyboardInterrupt ends the call after the
    last whole sweep and sets ``chain.interrupted``; so does the appearance
    of the file ``stop_path`` (how the parent process stops chains run by
    joblib workers, which then ignore SIGINT). ``progress_path``: a file the
    chain reports its progress to (:mod:`sk_ihmm._progress`). Returns ``chain``.
    """
    if stop_path is not None:
        ignore_interrupts_in_worker(stop_path)
    sampler = get_sampler(chain.sampler_name)
    state, rng = chain.state, chain.rng
    if getattr(state, "hyp", None) is None:     # a state pickled before states kept hyp
        state.hyp = problem.hyp.copy()
    T = problem.Y.shape[0]
    samples = []        # kept labels, each in the smallest dtype that holds it
    snaps = []
    rec = {"n_states": [], "log_joint": [], "log_lik": [], "alpha": [], "gamma": [],
           "kappa": [], "seconds": []}
    t0 = time.thread_time()
    base = chain.cpu_seconds
    clock = compile_clock()
    try:
        with deferred_interrupts(), clock:
            _run_sweeps(sampler, state, problem, rng, n_sweeps, n_skip, thin, rec, samples, snaps,
                        base, t0, verbose, chain_id, chain.n_sweeps, stop_path,
                        None if progress_path is None else ChainProgress(progress_path, n_sweeps))
    except KeyboardInterrupt:
        chain.interrupted = True
    # pickled by an older version: no compile time recorded
    chain.compile_seconds = getattr(chain, "compile_seconds", 0.0) + clock.seconds
    done = len(rec["seconds"])
    # records of whole sweeps only
    for key, values in rec.items():
        old = chain.trace.get(key, np.full(chain.n_sweeps, math.nan))
        chain.trace[key] = np.concatenate([old, np.asarray(values[:done], dtype=float)])
    for key in chain.trace:
        if key not in rec:
            chain.trace[key] = np.concatenate([chain.trace[key], np.full(done, math.nan)])
    chain.n_sweeps += done
    chain.cpu_seconds = base + time.thread_time() - t0
    samples = samples[:len(snaps)]
    # an interrupted round adds its kept samples to those of the round before
    # (both after burn-in) instead of replacing them with fewer
    if (append or chain.interrupted) and chain.samples is not None:
        samples = list(chain.samples) + samples
        snaps = chain.snapshots + snaps
    dtype = max((a.dtype for a in samples), key=lambda d: d.itemsize, default=np.dtype(np.uint8))
    chain.samples = (np.stack(samples).astype(dtype, copy=False) if samples
                     else np.empty((0, T), np.uint8))
    chain.snapshots = snaps
    return chain


def _run_sweeps(sampler, state, problem, rng, n_sweeps, n_skip, thin, rec, samples, snaps,
                base, t0, verbose, chain_id, n_before, stop_path, progress=None):
    """The sweep loop of :func:`advance_chain`; ``rec["seconds"]`` grows last
    in a sweep, so its length is the number of whole sweeps."""
    for sweep in range(n_sweeps):
        check_interrupt(stop_path)
        info = sampler.step(state, problem, rng)
        rec["n_states"].append(int(np.count_nonzero(np.bincount(state.x))))
        rec["log_joint"].append(float(state.log_joint))
        # rounded: the running statistics drift in the last bits as steps are
        # removed and added, and the rank-based diagnostics would read that
        # drift of one partition's value as slow mixing
        rec["log_lik"].append(round(log_marginal_sum(problem.fam, state.stats, state.hyp), 6))
        rec["alpha"].append(float(state.conc[0]))
        rec["gamma"].append(float(state.conc[1]))
        rec["kappa"].append(float(state.conc[2]))
        for key, val in info.items():
            rec.setdefault(key, [math.nan] * sweep).append(float(val))
        if sweep >= n_skip and (sweep - n_skip + 1) % thin == 0:
            labels, snap = make_snapshot(state, problem)
            samples.append(labels.astype(label_dtype(int(labels.max()) + 1)))
            snaps.append(snap)
        rec["seconds"].append(base + time.thread_time() - t0)
        if progress is not None:
            progress.update(sweep + 1, rec["n_states"][-1])
        if verbose > 1 and (sweep + 1) % max(1, n_sweeps // 10) == 0:
            print(f"[chain {chain_id}] sweep {n_before + sweep + 1}: "
                  f"K={rec['n_states'][-1]} log_joint={rec['log_joint'][-1]:.1f}")
    check_interrupt(stop_path)


def first_round(sampler_name, problem, x0, seed, n_sweeps, n_skip, thin, verbose=0, chain_id=0,
                stop_path=None, progress_path=None):
    """Start a chain (:func:`start_chain`) and run its first round
    (:func:`advance_chain`): one joblib task of the estimator."""
    chain = start_chain(sampler_name, problem, x0, seed, stop_path)
    return advance_chain(chain, problem, n_sweeps, n_skip, thin, verbose, chain_id,
                         stop_path=stop_path, progress_path=progress_path)


def run_chain(sampler_name, problem, x0, n_burnin, n_samples, thin, seed, verbose=0, chain_id=0):
    """Run one chain; return a dict of kept samples, snapshots and traces.

    ``seed`` is a :class:`numpy.random.SeedSequence`; every random draw of
    the chain comes from the one Generator made from it, so the result does
    not depend on which worker runs the chain.
    """
    chain = first_round(sampler_name, problem, x0, seed, n_burnin + n_samples * thin, n_burnin,
                        thin, verbose, chain_id)
    return {
        "samples": chain.samples,
        "snapshots": chain.snapshots,
        "trace": dict(chain.trace),
    }
