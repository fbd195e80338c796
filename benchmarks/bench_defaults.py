"""What a user who sets nothing gets: every sampler at its defaults on generated data.

Every other benchmark tunes the model (priors, budgets, initial labels). This
one fits ``InfiniteHMM(sampler=s, random_state=seed)`` with *every other
argument at its default* -- the Gaussian sets leave ``emission`` at its
default (the string ``"gaussian"``), the categorical set passes
``emission="categorical"``, multi-sequence data pass ``lengths=`` to ``fit``
and ``predict`` -- on five data sets made by :mod:`sk_ihmm.datasets`
(:func:`datasets`, ``random_state=0``), raw, in their physical units:

``phys1d``
    1-D, 5 states, means ``linspace(1450, 1550, 5)``, sd 10, T=3000
    (``make_gaussian_hmm``): far from the prior's unit scale.
``multicol``
    3 columns in very different units (``make_multivariate_gaussian_hmm``,
    ``scales=(1, 100, 0.01)``, ``offsets=(0, 1500, -3)``), 4 states with
    correlated (full) covariances, T=2000.
``categorical``
    6 states, 12 symbols, T=3000 (``make_categorical_hmm``).
``multiseq``
    1-D Gaussian, 4 states (the PGAS means times 3 plus 20, sd 1.5), 6
    independent sequences of lengths 150, 300, ..., 900.
``pgas10``
    ``make_gaussian_hmm(4000, n_states=10)``, the PGAS paper's 10-state data.

Per fit: K found (``model.n_states_``, the major states of the representative
sample), ``Kocc`` (the most probable number of occupied states,
``argmax(model.n_states_posterior_)``, small states included) and the true K, NMI of
``model.predict(X, lengths)`` against the true states
(``sk_ihmm.metrics.normalized_mutual_information``), fit wall time (seconds,
``time.perf_counter``; the first fit in a process may include loading numba's
cached compiled kernels, or compiling them on a fresh checkout), whether a
``sklearn.exceptions.ConvergenceWarning`` was raised, and the fitted model's
``convergence_`` dict when it has one (printed compactly under the row). A
fit that raises is reported with its error and fails.

Reference: hmmlearn *told the true K* -- ``GaussianHMM(n_components=K_true,
covariance_type="full", n_iter=200)`` for the Gaussian sets,
``CategoricalHMM(n_components=K_true, n_iter=200)`` for the categorical one
(all else at hmmlearn's defaults), best of 5 EM restarts (random_state 0..4)
by training log-likelihood; its NMI is printed beside every row of the set.
Without hmmlearn that column says ``hmmlearn not installed`` and the NMI
target is not checked.

Target per row (``PASS``/``FAIL``, and a final count): NMI >= hmmlearn NMI -
0.03, ``|K - K_true| <= 1`` and no ConvergenceWarning.

``--seeds N`` fits seeds ``0 .. N-1`` (default 1: seed 0). ``--data-seed S``
generates every set with ``random_state=S`` instead of 0 -- other data from
the same generators, to check that the targets hold beyond the five sets.
``--quick``
divides every length by 5 (T = 600, 400, 600, 630 in 6 sequences, 800) for a
smoke run. ``--jobs`` fans the independent fits (and the hmmlearn
references) out over processes (``bench_reach.map_tasks``); the default, 1,
gives every fit the whole machine, as a user's fit has it (its chains run in
threads on every core, and ``max_time`` is wall time), while ``--jobs 2``
shares the cores between two fits, each of which then gets about half the
sweeps within ``max_time``. The table is
written to ``--out`` (default ``benchmarks/results/defaults.txt``, or
``defaults_quick.txt`` with ``--quick``; ``_dataS`` before ``.txt`` with
``--data-seed S``) with the command line at the top.

Usage::

    python benchmarks/bench_defaults.py [--quick] [--seeds 1] [--data-seed 0] [--jobs 1]
        [--samplers rcd_gibbs rcd_blocked rcd_beam split_merge pgas]
        [--datasets phys1d multicol categorical multiseq pgas10] [--out PATH]
"""

import argparse
import math
import os
import shlex
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from bench_reach import map_tasks  # noqa: E402
from sk_ihmm.datasets import (  # noqa: E402
    make_categorical_hmm,
    make_gaussian_hmm,
    make_multivariate_gaussian_hmm,
)

SAMPLERS = ("rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge", "pgas")
DATASETS = ("phys1d", "multicol", "categorical", "multiseq", "pgas10")
#: sequence lengths of the "multiseq" set (divided by 5 with ``quick``)
MULTISEQ_LENGTHS = (150, 300, 450, 600, 750, 900)
#: targets: NMI at least hmmlearn's minus this, and |K - K_true| at most K_TOL
NMI_SLACK = 0.03
K_TOL = 1
HMMLEARN_RESTARTS = 5
HMMLEARN_ITER = 200


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------
def _make(name, quick, data_seed=0):
    div = 5 if quick else 1
    rs = data_seed
    if name == "phys1d":
        X, z = make_gaussian_hmm(3000 // div, n_states=5, random_state=rs, sd=10.0,
                                 means=np.linspace(1450.0, 1550.0, 5))
        return X, z, None, "gaussian"
    if name == "multicol":
        X, z = make_multivariate_gaussian_hmm(
            2000 // div, n_states=4, n_features=3, random_state=rs,
            scales=(1.0, 100.0, 0.01), offsets=(0.0, 1500.0, -3.0))
        return X, z, None, "gaussian"
    if name == "categorical":
        X, z = make_categorical_hmm(3000 // div, n_states=6, n_symbols=12, random_state=rs)
        return X, z, None, "categorical"
    if name == "multiseq":
        lengths = [n // div for n in MULTISEQ_LENGTHS]
        means = 20.0 + 3.0 * np.array([-2.0, -0.5, 1.0, 4.0])
        X, z = make_gaussian_hmm(n_states=4, means=means, sd=1.5, lengths=lengths,
                                 random_state=rs)
        return X, z, lengths, "gaussian"
    if name == "pgas10":
        X, z = make_gaussian_hmm(4000 // div, n_states=10, random_state=rs)
        return X, z, None, "gaussian"
    raise ValueError(f"Unknown data set {name!r}; expected one of {DATASETS}.")


def datasets(quick=False, names=DATASETS, data_seed=0):
    """The benchmark's data sets: ``{name: (X, states, lengths, emission)}``.

    ``lengths`` is ``None`` for single sequences and a list of ints for
    ``"multiseq"``; ``emission`` is ``"gaussian"`` or ``"categorical"``.
    ``quick=True`` divides every length by 5. Everything is generated with
    ``random_state=data_seed`` (0: the benchmark's own sets), so the data are
    the same on every call.
    """
    return {name: _make(name, quick, data_seed) for name in names}


# --------------------------------------------------------------------------
# Fits (module level, so that map_tasks can run them in spawned processes)
# --------------------------------------------------------------------------
def _compact(value, depth=0):
    """A short one-line rendering of a (nested) diagnostics value."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_compact(v, depth + 1)}" for k, v in value.items()) + "}"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "nan" if math.isnan(value) else f"{float(value):.4g}"
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value)
        if arr.dtype.kind in "biuf" and arr.size <= 8:
            return "[" + " ".join(_compact(v, depth + 1) for v in arr.ravel().tolist()) + "]"
        if arr.dtype.kind in "biuf":
            return f"array{arr.shape}[{np.nanmin(arr):.4g}..{np.nanmax(arr):.4g}]"
        return "[" + ", ".join(_compact(v, depth + 1) for v in list(value)[:8]) + "]"
    return repr(value)


def fit_ihmm(name, sampler, seed, quick, data_seed=0):
    """Fit ``InfiniteHMM`` at its defaults; a dict of results (picklable)."""
    from sklearn.exceptions import ConvergenceWarning

    from sk_ihmm import InfiniteHMM
    from sk_ihmm.metrics import normalized_mutual_information

    X, z, lengths, emission = _make(name, quick, data_seed)
    kwargs = {"sampler": sampler, "random_state": seed}
    if emission != "gaussian":          # Gaussian sets: the default emission
        kwargs["emission"] = emission
    model = InfiniteHMM(**kwargs)
    out = {"emission": repr(model.get_params()["emission"])}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            model.fit(X, lengths=lengths)
        except Exception as exc:  # noqa: BLE001 -- reported, the row fails
            out["seconds"] = time.perf_counter() - t0
            out["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
            return out
        out["seconds"] = time.perf_counter() - t0
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    out["conv_warning"] = bool(conv)
    out["conv_message"] = str(conv[0].message).splitlines()[0][:200] if conv else ""
    out["other_warnings"] = sorted({w.category.__name__ for w in caught
                                    if not issubclass(w.category, ConvergenceWarning)})
    out["K"] = int(model.n_states_)
    out["K_occupied"] = int(np.argmax(model.n_states_posterior_))
    out["nmi"] = float(normalized_mutual_information(z, model.predict(X, lengths)))
    conv_report = getattr(model, "convergence_", None)
    out["convergence"] = None if conv_report is None else _compact(conv_report)
    return out


def _hmmlearn():
    from bench_real import _hmmlearn as hmmlearn_module   # hmmlearn, quiet, or None

    return hmmlearn_module()


def fit_hmmlearn(name, quick, data_seed=0):
    """hmmlearn told the true K, best of 5 restarts by training
    log-likelihood; ``None`` when hmmlearn is not installed."""
    from sk_ihmm.metrics import normalized_mutual_information

    hmm = _hmmlearn()
    if hmm is None:
        return None
    X, z, lengths, emission = _make(name, quick, data_seed)
    k_true = int(np.unique(z).size)
    best = None
    t0 = time.perf_counter()
    for restart in range(HMMLEARN_RESTARTS):
        if emission == "categorical":
            model = hmm.CategoricalHMM(n_components=k_true, n_features=int(X.max()) + 1,
                                       n_iter=HMMLEARN_ITER, random_state=restart)
        else:
            model = hmm.GaussianHMM(n_components=k_true, covariance_type="full",
                                    n_iter=HMMLEARN_ITER, random_state=restart)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model.fit(X, lengths)
                loglik = float(model.score(X, lengths))
            except Exception:  # noqa: BLE001 -- a failed restart is skipped
                continue
        if np.isfinite(loglik) and (best is None or loglik > best[0]):
            best = (loglik, model)
    if best is None:
        return {"error": "every restart failed", "seconds": time.perf_counter() - t0}
    nmi = normalized_mutual_information(z, best[1].predict(X, lengths))
    return {"nmi": float(nmi), "loglik": best[0], "seconds": time.perf_counter() - t0}


def run_task(kind, name, sampler, seed, quick, data_seed=0):
    """Dispatch of one task of :func:`map_tasks`."""
    if kind == "hmmlearn":
        return fit_hmmlearn(name, quick, data_seed)
    return fit_ihmm(name, sampler, seed, quick, data_seed)


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------
def check(res, k_true, ref):
    """``(passed, reasons)`` of the targets for one fit."""
    if "error" in res:
        return False, ["error"]
    reasons = []
    if ref is not None and "nmi" in ref and res["nmi"] < ref["nmi"] - NMI_SLACK:
        reasons.append(f"NMI<{ref['nmi'] - NMI_SLACK:.3f}")
    if abs(res["K"] - k_true) > K_TOL:
        reasons.append(f"|K-Kt|>{K_TOL}")
    if res["conv_warning"]:
        reasons.append("ConvergenceWarning")
    return not reasons, reasons


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samplers", nargs="+", default=list(SAMPLERS))
    ap.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    ap.add_argument("--seeds", type=int, default=1, help="fit seeds 0 .. SEEDS-1 (default: 0 only)")
    ap.add_argument("--jobs", type=int, default=1, help="processes for independent fits")
    ap.add_argument("--quick", action="store_true", help="every length divided by 5")
    ap.add_argument("--data-seed", type=int, default=0,
                    help="random_state of the generated data sets (default 0, the benchmark's "
                         "own; others check that the targets hold beyond them)")
    ap.add_argument("--out", default=None,
                    help="output file (default benchmarks/results/defaults.txt, "
                         "defaults_quick.txt with --quick, _dataS before .txt with "
                         "--data-seed S)")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    if args.data_seed < 0:
        ap.error("--data-seed must be a non-negative integer")
    out_path = os.path.abspath(args.out) if args.out else os.path.join(
        HERE, "results", ("defaults_quick" if args.quick else "defaults")
        + (f"_data{args.data_seed}" if args.data_seed else "") + ".txt")
    command = "python benchmarks/bench_defaults.py " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))

    lines = []

    def out(line=""):
        print(line, flush=True)
        lines.append(line)

    out(f"# {command.strip()}")
    if args.data_seed:
        out(f"# data sets generated with random_state={args.data_seed} (the benchmark's own: 0)")
    out("# InfiniteHMM(sampler=s, random_state=seed), everything else at its default; "
        "hmmlearn told the true K (best of 5 restarts)")
    out(f"# targets: NMI >= hmmlearn NMI - {NMI_SLACK}, |K - K_true| <= {K_TOL}, "
        "no ConvergenceWarning")
    data = datasets(args.quick, args.datasets, args.data_seed)
    for name, (X, z, lengths, emission) in data.items():
        seq = f"{len(lengths)} sequences {lengths}" if lengths else "1 sequence"
        out(f"# {name:<11} X {X.shape} {X.dtype}, {seq}, K_true={np.unique(z).size}, "
            f"emission={emission}; column means {np.round(X.mean(axis=0), 3).tolist()}, "
            f"sds {np.round(X.std(axis=0), 3).tolist()}")

    have_hmmlearn = _hmmlearn() is not None
    tasks = [("ihmm", name, s, seed, args.quick, args.data_seed)
             for name in args.datasets for s in args.samplers for seed in range(args.seeds)]
    if have_hmmlearn:
        # the slow EM references first, so that they overlap the fits
        tasks = [("hmmlearn", name, None, None, args.quick, args.data_seed)
                 for name in args.datasets] + tasks
    t0 = time.time()
    done = map_tasks(run_task, tasks, args.jobs)

    head = (f"{'data':<11} {'sampler':<11} {'seed':>4} {'K':>3} {'Kocc':>4} {'Kt':>3} {'NMI':>6} "
            f"{'hmmNMI':>6} {'wall s':>7} {'CW':>3}  check")
    out()
    out(head)
    out("-" * len(head))
    n_pass = n_rows = 0
    notes = []
    for name in args.datasets:
        z = data[name][1]
        k_true = int(np.unique(z).size)
        ref = (done.get(("hmmlearn", name, None, None, args.quick, args.data_seed))
               if have_hmmlearn else None)
        if not have_hmmlearn:
            ref_txt = "hmmlearn not installed"
        elif ref is None or "error" in ref:
            ref_txt = "error" if ref is None else ref["error"]
        else:
            ref_txt = f"{ref['nmi']:.3f}"
        for s in args.samplers:
            for seed in range(args.seeds):
                res = done[("ihmm", name, s, seed, args.quick, args.data_seed)]
                ok, reasons = check(res, k_true, ref)
                n_rows += 1
                n_pass += ok
                verdict = "PASS" if ok else "FAIL " + ",".join(reasons)
                hmm_col = f"{ref['nmi']:6.3f}" if (ref and "nmi" in ref) else f"{'-':>6}"
                if "error" in res:
                    out(f"{name:<11} {s:<11} {seed:4d} {'-':>3} {'-':>4} {k_true:3d} {'-':>6} {hmm_col} "
                        f"{res['seconds']:7.1f} {'-':>3}  {verdict}")
                    out(f"    error: {res['error']}")
                    continue
                out(f"{name:<11} {s:<11} {seed:4d} {res['K']:3d} {res['K_occupied']:4d} {k_true:3d} "
                    f"{res['nmi']:6.3f} "
                    f"{hmm_col} {res['seconds']:7.1f} {'yes' if res['conv_warning'] else 'no':>3}"
                    f"  {verdict}")
                if res["convergence"] is not None:
                    out(f"    convergence_: {res['convergence']}")
                if res["conv_message"]:
                    notes.append(f"{name}/{s}/seed {seed}: ConvergenceWarning: "
                                 f"{res['conv_message']}")
                if res["other_warnings"]:
                    notes.append(f"{name}/{s}/seed {seed}: other warnings: "
                                 f"{', '.join(res['other_warnings'])}")
        out(f"{name:<11} {'hmmlearn':<11} {'':>4} {'':>3} {'':>4} {k_true:3d} {'':>6} {ref_txt:>6}"
            + (f" {ref['seconds']:7.1f}  (told K_true; best of {HMMLEARN_RESTARTS})"
               if ref and "seconds" in ref else ""))
        out()
    out(f"targets met: {n_pass}/{n_rows} fits PASS")
    for note in notes:
        out(f"# {note}")
    out(f"# wall time {time.time() - t0:.0f} s (--jobs {args.jobs})")

    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    shown = os.path.relpath(out_path, ROOT)
    print(f"[written to {out_path if shown.startswith('..') else shown}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
