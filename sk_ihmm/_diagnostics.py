"""Convergence diagnostics and posterior summaries of a fitted :class:`InfiniteHMM`.

The estimator's public methods :meth:`~sk_ihmm.InfiniteHMM.diagnostics`,
:meth:`~sk_ihmm.InfiniteHMM.to_arviz`,
:meth:`~sk_ihmm.InfiniteHMM.posterior_similarity` and
:meth:`~sk_ihmm.InfiniteHMM.point_estimate` are thin wrappers of the
functions here. Only label-invariant quantities are summarised: the hidden
states themselves are subject to label switching, so their traces are not
meaningful MCMC diagnostics.

"Kept sweeps" are the sweeps whose state is stored in ``state_samples_``:
after the ``n_burnin`` burn-in sweeps, every ``thin``-th sweep.
"""

import math

import numpy as np

from . import metrics

__all__ = [
    "DiagnosticsTable",
    "convergence_report",
    "convergence_message",
    "kept_sweeps",
    "summarize_traces",
    "trace_to_arviz",
    "posterior_similarity",
    "point_estimate",
]

#: Columns of every row of :func:`summarize_traces`.
COLUMNS = ("mean", "sd", "ess_bulk", "r_hat", "act")

_ARVIZ_HINT = 'pip install "sk_ihmm[arviz]"'


class DiagnosticsTable(dict):
    """A ``dict`` of rows ``{quantity: {column: value}}`` that prints as a table.

    It is an ordinary dictionary (no pandas needed); with pandas,
    ``pandas.DataFrame(table).T`` gives a data frame with one row per
    quantity.
    """

    def to_string(self, digits=3):
        """Render the table as fixed-width text.

        Parameters
        ----------
        digits : int, default=3
            Significant digits of the values.

        Returns
        -------
        text : str
        """
        columns = list(dict.fromkeys(c for row in self.values() for c in row))
        width = max([len("quantity")] + [len(k) for k in self])
        cells = {c: [f"{row.get(c, math.nan):.{digits}g}" for row in self.values()] for c in columns}
        widths = {c: max([len(c)] + [len(s) for s in cells[c]]) for c in columns}
        lines = ["  ".join(["quantity".ljust(width)] + [c.rjust(widths[c]) for c in columns])]
        for i, name in enumerate(self):
            lines.append("  ".join([name.ljust(width)] + [cells[c][i].rjust(widths[c]) for c in columns]))
        return "\n".join(lines)

    def __str__(self):
        return self.to_string()


def kept_sweeps(n_sweeps, n_burnin, thin=1):
    """Indices of the kept sweeps of a chain of ``n_sweeps`` sweeps.

    The same rule as the chain driver: sweep ``s`` (0-based) is kept when
    ``s >= n_burnin`` and ``(s - n_burnin + 1) % thin == 0``.

    Parameters
    ----------
    n_sweeps : int
        Total sweeps of the chain (burn-in included).
    n_burnin : int
        Sweeps discarded at the start.
    thin : int, default=1
        Keep every ``thin``-th sweep after burn-in.

    Returns
    -------
    index : ndarray of int
    """
    return np.arange(int(n_burnin) + int(thin) - 1, int(n_sweeps), int(thin))


def _is_accept_key(key):
    return key.endswith("accept_rate") or key.endswith("accept")


def _safe(func, *args, **kwargs):
    """``func(*args)`` as a float, ``nan`` when it is undefined for these draws."""
    try:
        value = float(func(*args, **kwargs))
    except ValueError:
        return math.nan
    return value


def _summary_row(draws):
    """mean, sd, bulk ESS, split R-hat and mean per-chain Makino ACT of ``draws``."""
    draws = np.asarray(draws, dtype=np.float64)
    finite = np.all(np.isfinite(draws))
    row = {
        "mean": float(np.mean(draws)) if draws.size else math.nan,
        "sd": float(np.std(draws, ddof=1)) if draws.size > 1 else math.nan,
        "ess_bulk": math.nan,
        "r_hat": math.nan,
        "act": math.nan,
    }
    if not finite or draws.shape[1] < 4:
        return row
    row["ess_bulk"] = _safe(metrics.effective_sample_size, draws, method="bulk")
    row["r_hat"] = _safe(metrics.split_rhat, draws)
    acts = [_safe(metrics.integrated_autocorrelation_time, chain) for chain in draws]
    acts = [a for a in acts if not math.isnan(a)]
    row["act"] = float(np.mean(acts)) if acts else math.nan
    return row


def completed_sweeps(trace):
    """The traces cut to the sweeps every chain completed.

    An interrupted fit leaves chains of different lengths, their traces
    padded with ``nan`` (``InfiniteHMM.trace_``); R-hat and ESS need chains
    of one length, and a padded sweep would make every figure ``nan``. The
    chains are cut to the shortest one's completed sweeps (counted on
    ``n_states``, which every sweep records); a chain with none is left
    out. Traces of equal chains come back unchanged.
    """
    if "n_states" not in trace:         # not a fit's trace: nothing to go by
        return trace
    n_states = np.asarray(trace["n_states"], dtype=np.float64)
    done = np.where(np.isnan(n_states).any(axis=1), np.argmax(np.isnan(n_states), axis=1),
                    n_states.shape[1])
    chains = done > 0
    if chains.all() and (done == n_states.shape[1]).all():
        return trace
    n = int(done[chains].min()) if chains.any() else 0
    return {key: np.asarray(values)[chains, :n] for key, values in trace.items()}


def summarize_traces(trace, n_burnin, thin=1, keys=None, resampled=(True, True, False)):
    """Summary table of the label-invariant traces of the kept sweeps.

    Parameters
    ----------
    trace : dict of ndarray of shape (n_chains, n_sweeps)
        Per-sweep traces (``InfiniteHMM.trace_``).
    n_burnin : int
        Burn-in sweeps to drop.
    thin : int, default=1
        Thinning of the kept sweeps.
    keys : sequence of str, default=None
        Quantities to summarise. By default ``n_states``, ``log_lik`` (when
        traced), ``log_joint``, the
        concentrations that were resampled (see ``resampled``) and every
        acceptance statistic (trace keys ending in ``accept_rate`` or
        ``accept``).
    resampled : (bool, bool, bool), default=(True, True, False)
        Whether ``alpha``, ``gamma`` and ``kappa`` were resampled; fixed
        concentrations are constant and left out by default.

    Returns
    -------
    table : DiagnosticsTable
        ``{quantity: {"mean", "sd", "ess_bulk", "r_hat", "act"}}``. ``sd`` is
        over all kept draws of all chains, ``ess_bulk`` the rank-normalised
        bulk ESS and ``r_hat`` the rank-normalised split R-hat of Vehtari et
        al. (2021) over all chains, ``act`` Makino et al.'s integrated
        autocorrelation time (Eq. 35-36, ``0.5`` for independent draws)
        averaged over chains. Undefined values (constant traces, fewer than
        4 kept draws per chain) are ``nan``. For acceptance statistics the
        ``mean`` is the mean acceptance rate of that move. After an interrupt
        the chains are cut to the sweeps every one of them completed
        (:func:`completed_sweeps`).
    """
    if keys is None:
        keys = ["n_states"] + [k for k in ("log_lik",) if k in trace] + ["log_joint"]
        keys += [name for name, flag in zip(("alpha", "gamma", "kappa"), resampled) if flag]
        keys += sorted(k for k in trace if _is_accept_key(k))
    missing = [k for k in keys if k not in trace]
    if missing:
        raise ValueError(f"Unknown trace keys {missing}; available: {sorted(trace)}.")
    table = DiagnosticsTable()
    trace = completed_sweeps(trace)
    for key in keys:
        values = np.asarray(trace[key], dtype=np.float64)
        idx = kept_sweeps(values.shape[1], n_burnin, thin)
        table[key] = _summary_row(values[:, idx])
    return table


# ------------------------------------------------------------ convergence
#: Vehtari et al. (2021): use the draws when the rank-normalised split R-hat
#: is below 1.01 and the bulk and tail ESS are above 100 per chain (400 for
#: their recommended four chains).
RHAT_MAX = 1.01
ESS_PER_CHAIN_MIN = 100

#: A failed check is *near* the thresholds when every R-hat is at most
#: ``NEAR_RHAT_MAX`` and every ESS at least ``NEAR_ESS_FRACTION`` of its
#: target: within the diagnostics' own noise for chains that mix well (four
#: such chains worth 400 draws give an R-hat above 1.02 one time in 20, and
#: pass reliably only when worth about 800; ``benchmarks/bench_rhat_noise.py``),
#: so the warning says that the chains may only be short of draws.
NEAR_RHAT_MAX = 1.02
NEAR_ESS_FRACTION = 0.5

#: Label-invariant quantities whose convergence ``fit`` checks: the number of
#: states and the log marginal likelihood of the data given the state
#: partition, ``log p(y | x)`` (emission parameters integrated out). The
#: samplers' ``log_joint`` also holds the seating of the collapsed samplers'
#: tables, auxiliary variables that mix more slowly than the partition, so
#: it is reported by diagnostics() but not required to converge.
CONVERGENCE_KEYS = ("n_states", "log_lik")


def convergence_report(trace, start, keys=CONVERGENCE_KEYS):
    """Split R-hat and bulk/tail ESS of the sweeps from ``start`` on.

    Parameters
    ----------
    trace : dict of ndarray of shape (n_chains, n_sweeps)
    start : int
        First sweep after burn-in; every later sweep of every chain is used.
    keys : sequence of str

    Returns
    -------
    report : dict
        ``{key: {"r_hat", "ess_bulk", "ess_tail"}}`` for every key, plus
        ``"converged"`` (bool), ``"thresholds"`` and ``"n_sweeps"`` (per
        chain, burn-in included). A quantity that is constant over all the
        draws (one number of states in every chain, say) has ``nan``
        diagnostics and counts as converged; fewer than 4 draws per chain
        count as not converged.
    """
    n_chains, n_sweeps = np.asarray(trace[keys[0]]).shape
    ess_min = ESS_PER_CHAIN_MIN * n_chains
    report = {}
    converged = True
    for key in keys:
        draws = np.asarray(trace[key], dtype=np.float64)[:, start:]
        row = {"r_hat": math.nan, "ess_bulk": math.nan, "ess_tail": math.nan}
        if draws.shape[1] < 4 or not np.all(np.isfinite(draws)):
            converged = False
        elif np.ptp(draws) > 0:
            row["r_hat"] = _safe(metrics.split_rhat, draws)
            row["ess_bulk"] = _safe(metrics.effective_sample_size, draws, method="bulk")
            row["ess_tail"] = _safe(metrics.effective_sample_size, draws, method="tail")
            converged &= not (row["r_hat"] > RHAT_MAX)
            converged &= not (row["ess_bulk"] < ess_min or row["ess_tail"] < ess_min)
        report[key] = row
    report["converged"] = bool(converged)
    report["thresholds"] = {"r_hat_max": RHAT_MAX, "ess_min": ess_min}
    report["n_sweeps"] = int(n_sweeps)
    return report


def near_thresholds(report, trace, keys=CONVERGENCE_KEYS):
    """Whether a report misses the thresholds by no more than their own noise.

    Parameters
    ----------
    report : dict
        A :func:`convergence_report`.
    trace : dict of ndarray of shape (n_chains, n_sweeps)
        The traces it was computed from.
    keys : sequence of str

    Returns
    -------
    near : bool
        True when every R-hat is at most ``NEAR_RHAT_MAX`` and every ESS at
        least ``NEAR_ESS_FRACTION`` of its target. A quantity with ``nan``
        diagnostics counts as near only when its draws were constant: not
        when they were too few (every row ``nan``) or not finite.
    """
    ess_near = NEAR_ESS_FRACTION * report["thresholds"]["ess_min"]
    rows = [report[key] for key in keys]
    if all(math.isnan(row["r_hat"]) for row in rows):
        return False
    for key, row in zip(keys, rows):
        if math.isnan(row["r_hat"]) and not np.all(np.isfinite(trace[key])):
            return False
        if row["r_hat"] > NEAR_RHAT_MAX or row["ess_bulk"] < ess_near or row["ess_tail"] < ess_near:
            return False
    return True


def _up(r_hat):
    # R-hat rounded up and ESS down, so that a figure missing its target never
    # reads as meeting it (1.0104 is not '1.010 <= 1.01', 399.6 not '400 >= 400')
    return "nan" if math.isnan(r_hat) else f"{math.ceil(r_hat * 1000 - 1e-9) / 1000:.3f}"


def _down(ess):
    return "nan" if math.isnan(ess) else f"{math.floor(ess + 1e-9):.0f}"


def projected_sweeps(report, n_window, keys=CONVERGENCE_KEYS):
    """Sweeps per chain, in all, at which the lowest ESS of ``report`` would
    reach its target if it grew in proportion to the sweeps checked.

    Parameters
    ----------
    report : dict
        A :func:`convergence_report`.
    n_window : int
        Sweeps per chain the report's diagnostics cover (its window, the
        last ``n_window`` of ``report["n_sweeps"]``).
    keys : sequence of str

    Returns
    -------
    sweeps : int or None
        A window of ``n_window * ess_min / lowest_ess`` sweeps, after the
        burn-in the fit has now or a quarter of the chain, whichever is
        longer (the budget mode's window, :mod:`sk_ihmm._budget`): always
        more than the sweeps run. ``None`` when every ESS meets its target
        (only R-hat fails) or none is usable.
    """
    low = _lowest_ess(report, keys)
    target = report["thresholds"]["ess_min"]
    if low is None or low[2] >= target or n_window <= 0:
        return None
    window = int(math.ceil(n_window * target / low[2]))
    burnin = int(report["n_sweeps"]) - int(n_window)
    return max(int(math.ceil(window / 0.75)), burnin + window)


def _lowest_ess(report, keys):
    """``(key, kind, ess)`` of the lowest finite positive ESS, or None."""
    rows = [(key, kind, report[key][kind]) for key in keys for kind in ("ess_bulk", "ess_tail")
            if np.isfinite(report[key][kind]) and report[key][kind] > 0]
    return min(rows, key=lambda row: row[2]) if rows else None


def _rough(n):
    """``n`` to two significant figures, with thousands separators."""
    n = float(n)
    if n < 100:
        return f"{float(f'{n:.2g}'):g}"
    digits = int(math.floor(math.log10(n))) - 1
    return f"{round(n / 10 ** digits) * 10 ** digits:,.0f}"


def _projection(report, n_window, sweep_seconds, max_sweeps, keys):
    """The warning's sentence on the sweeps the ESS target needs ('' if none)."""
    sweeps = projected_sweeps(report, n_window, keys)
    if sweeps is None:
        return ""
    key, kind, low = _lowest_ess(report, keys)
    more = sweeps - int(report["n_sweeps"])
    shown = f"{low:.1f}" if low < 10 else _down(low)
    text = (f" If the ESS grows in proportion to the sweeps (the lowest here, the "
            f"{kind.split('_')[1]} ESS of {key}, {shown}, comes from the last {n_window:,} "
            f"sweeps of each chain), an ESS of {report['thresholds']['ess_min']} needs about "
            f"{_rough(sweeps)} sweeps per chain, {_rough(more)} more")
    if sweep_seconds is not None and np.isfinite(sweep_seconds) and sweep_seconds > 0:
        seconds = more * sweep_seconds
        text += (", under a second" if seconds < 1 else
                 f", about {_rough(seconds)} s") + " at this fit's pace"
    text += "."
    if max_sweeps is not None and sweeps > max_sweeps:
        text += f" That is more than max_sweeps={max_sweeps}."
    if any(report[key]["r_hat"] > NEAR_RHAT_MAX for key in keys):
        text += (" With R-hat this far above 1 the chains have not met yet, so take that as a "
                 "lower bound.")
    return text


def _first_round_note(report, max_time):
    """A sentence when the first round alone overran ``max_time``: it always
    runs whole, which a user who set the budget would not expect."""
    seconds = report.get("seconds", math.nan) - report.get("compile_seconds", 0.0)
    # max_time=0 asks for the first round alone: nothing to say then
    if not max_time or report.get("n_rounds", 1) != 1 or not seconds > max_time:
        return ""
    return (f" The first round ({report['n_sweeps']} sweeps, n_burnin + n_samples * thin) always "
            f"runs whole and alone took {seconds:.1f} s, more than max_time={max_time:g}: lower "
            "n_burnin and n_samples for a shorter one.")


def convergence_message(report, trace, keys=CONVERGENCE_KEYS, n_window=None,
                        sweep_seconds=None, max_sweeps=None, max_time=None):
    """The text of the ConvergenceWarning of an unconverged fit.

    ``n_window`` (sweeps per chain that the diagnostics cover) adds how many
    sweeps the ESS target would take at the rate measured
    (:func:`projected_sweeps`), ``sweep_seconds`` (wall seconds a sweep of
    every chain takes) how long, and ``max_sweeps`` whether the budget
    allows them. ``max_time``: when one round took longer than that, the
    warning says that the first round always runs whole.
    """
    th = report["thresholds"]
    parts = []
    for key in keys:
        row = report[key]
        parts.append(f"{key}: R-hat {_up(row['r_hat'])}, bulk ESS {_down(row['ess_bulk'])}, "
                     f"tail ESS {_down(row['ess_tail'])}")
    last_k = ", ".join(str(int(k)) for k in np.asarray(trace["n_states"])[:, -1])
    near = ""
    if near_thresholds(report, trace, keys):
        near = (f" These figures are near the targets, within the diagnostics' own noise "
                f"(R-hat <= {NEAR_RHAT_MAX}, every ESS at least half its target; chains that "
                "mix well need a bulk ESS of about twice the target to pass reliably), so the "
                "chains may only be short of draws: continuing them (warm_start=True, "
                "n_burnin=0) is the first thing to try.")
    n_rounds = report.get('n_rounds', 1)
    # max_time leaves out compiling: a first fit's compile time would otherwise
    # look like the budget overrun
    compiling = report.get("compile_seconds", 0.0)
    compiling = f", of which {compiling:.1f} s compiling" if compiling >= 0.5 else ""
    return (
        f"The chains did not converge after {report['n_sweeps']} sweeps each "
        f"({n_rounds} round{'s' if n_rounds != 1 else ''}, "
        f"{report.get('seconds', math.nan):.1f} s{compiling}): "
        + "; ".join(parts)
        + f" (targets: R-hat <= {th['r_hat_max']}, ESS >= {th['ess_min']}).{near}"
        + ("" if n_window is None
           else _projection(report, n_window, sweep_seconds, max_sweeps, keys))
        + _first_round_note(report, max_time)
        + f" The chains end with {last_k} states. Treat n_states_ and the point summaries "
        "with care: raise max_time or max_sweeps (or continue with warm_start=True), run the "
        "chains on more cores (n_jobs), or try another sampler; model.diagnostics(), "
        "model.n_states_posterior_ and model.convergence_ have the details."
    )


# ----------------------------------------------------------------- arviz
_POSTERIOR_KEYS = ("n_states", "log_lik", "log_joint", "alpha", "gamma", "kappa")


def trace_to_arviz(trace, n_burnin, thin=1, attrs=None):
    """Kept sweeps of the traces as ArviZ data.

    Parameters
    ----------
    trace : dict of ndarray of shape (n_chains, n_sweeps)
    n_burnin : int
    thin : int, default=1
    attrs : dict, default=None
        Attributes stored with the posterior group.

    Returns
    -------
    idata : arviz.InferenceData (``arviz.DataTree`` with ArviZ >= 1.0)
        ``posterior`` holds the label-invariant quantities ``n_states``,
        ``log_joint``, ``alpha``, ``gamma`` and ``kappa`` with dimensions
        ``(chain, draw)``; ``sample_stats`` holds ``lp`` (the log joint,
        ArviZ's name for it) and every other trace (acceptance rates, CPU
        seconds, sampler-specific statistics). After an interrupt the chains
        are cut to the sweeps every one of them completed
        (:func:`completed_sweeps`).
    """
    try:
        import arviz as az
    except ImportError as exc:  # pragma: no cover - exercised without arviz
        raise ImportError(
            f"to_arviz requires the optional dependency arviz; install it with {_ARVIZ_HINT}."
        ) from exc
    posterior, stats = {}, {}
    for key, values in completed_sweeps(trace).items():
        values = np.asarray(values)
        kept = np.ascontiguousarray(values[:, kept_sweeps(values.shape[1], n_burnin, thin)])
        (posterior if key in _POSTERIOR_KEYS else stats)[key] = kept
    if "log_joint" in posterior:
        stats["lp"] = posterior["log_joint"].copy()
    attrs = dict(attrs or {})
    attrs.setdefault("inference_library", "sk_ihmm")
    if int(az.__version__.split(".")[0]) >= 1:
        idata = az.from_dict({"posterior": posterior, "sample_stats": stats})
    else:
        idata = az.from_dict(posterior=posterior, sample_stats=stats)
    idata.posterior.attrs.update(attrs)
    return idata


# ------------------------------------------------- state-sequence summaries
def _all_samples(state_samples):
    return np.concatenate([np.asarray(s) for s in state_samples], axis=0)


#: posterior_similarity refuses matrices larger than this (bytes) and asks for ``steps``.
PSM_MAX_BYTES = 4 * 2**30


def posterior_similarity(state_samples, dtype=np.float32, steps=None):
    """Co-assignment matrix of the training time steps over all kept samples.

    Parameters
    ----------
    state_samples : list of ndarray of shape (n_samples, n_timesteps)
        Kept state sequences, one array per chain.
    dtype : {numpy.float32, numpy.float64}, default=numpy.float32
    steps : array-like of int or None, default=None
        Time steps (rows and columns) to include; ``None``: all. A matrix
        above 4 GiB raises a ValueError that says so: pass ``steps``.

    Returns
    -------
    psm : ndarray of shape (n_steps, n_steps)
        See :func:`sk_ihmm.metrics.posterior_similarity_matrix`.
    """
    samples = _all_samples(state_samples)
    if steps is not None:
        steps = np.asarray(steps)
        if steps.ndim != 1 or steps.dtype.kind not in "iu":
            raise ValueError("steps must be a 1-D array of integer time steps.")
        samples = samples[:, steps]
    n = samples.shape[1]
    size = n * n * np.dtype(dtype).itemsize
    if size > PSM_MAX_BYTES:
        raise ValueError(
            f"The posterior similarity of {n} time steps is a {n} x {n} matrix of "
            f"{size / 2**30:.1f} GiB. Pass steps= (a subset of the time steps), or use "
            "point_estimate(), which works without the matrix for long sequences."
        )
    return metrics.posterior_similarity_matrix(samples, dtype=dtype)


def point_estimate(state_samples, psm=None):
    """Least-squares (Dahl) point estimate over the kept samples of all chains.

    Parameters
    ----------
    state_samples : list of ndarray of shape (n_samples, n_timesteps)
    psm : ndarray of shape (n_timesteps, n_timesteps), default=None
        Precomputed :func:`posterior_similarity`.

    Returns
    -------
    states : ndarray of shape (n_timesteps,)
        The selected sample relabelled ``0, 1, ...`` by first appearance.
    where : (int, int)
        ``(chain, sample)`` of the selected sample.
    """
    states, flat = metrics.point_estimate_states(_all_samples(state_samples), psm=psm,
                                                 return_index=True)
    sizes = np.cumsum([len(s) for s in state_samples])
    chain = int(np.searchsorted(sizes, flat, side="right"))
    sample = int(flat - (sizes[chain - 1] if chain else 0))
    return states, (chain, sample)
