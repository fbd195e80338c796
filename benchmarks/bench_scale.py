"""Scaling: cost per sweep against T, and chain parallelism (n_jobs).

Two tables, printed and written to ``benchmarks/results/scale.txt``
(``scale_quick.txt`` with ``--quick``), the command line at the top.

1. **Cost per sweep against T.** 4-state Gaussian data (``make_gaussian_hmm``,
   the PGAS paper's means, T = 10^3 ... 10^6), one sweep of the sampler-level
   API (``get_sampler(name).step`` on a :class:`sk_ihmm._chain.Problem`, as in
   ``bench_samplers.py``, so no estimator overhead), started at the true
   labels so K stays ~4. Reported: CPU ms per sweep, ms per sweep per 1,000
   steps (flat if the cost is linear in T), the same for a numba FFBS pass at
   K=4 (``bench_ffbs_reference``), and the peak memory: each (sampler, T)
   runs in a fresh subprocess which, after imports and JIT warm-up on a tiny
   problem, resets the kernel's peak-RSS mark (``/proc/self/clear_refs``) and
   notes its RSS; the peak (``VmHWM``) after building the data, the chain
   state and running the timed sweeps, minus that RSS, is the "peak RSS
   delta" -- every allocation, numpy or numba (JIT compilation would
   otherwise hide it in ``ru_maxrss``, which is the fallback).
   Samplers: ``rcd_gibbs`` and ``rcd_beam`` when registered (``--samplers``).

2. **Chains in parallel.** ``InfiniteHMM(n_chains=4)`` fitted with
   ``n_jobs=1`` and ``n_jobs=2`` (joblib/loky processes) on the 4-state data,
   T=4,000, with enough sweeps that the ``n_jobs=1`` fit takes >= 10 s;
   wall-clock times and their ratio (the goal is >= 1.8x on 2 cores),
   alternating n_jobs=1 and n_jobs=2: the first n_jobs=2 fit starts fresh
   worker processes (spawning them and loading the numba cache in each), the
   next ``--parallel-repeats`` reuse them. As a control, the throughput gain of
   two pure-Python loops run at once over one alone is measured before and
   after: on a shared or virtualised machine it can be well below 2, and it
   caps the n_jobs speed-up. ``os.cpu_count()`` and the load average are
   printed too.

3. **End to end** (``--tables e2e``): ``InfiniteHMM(random_state=0,
   max_time=60)`` at T = 200,000 and 10^6 (fresh process each): fit,
   ``predict`` of the training data, ``point_estimate()``, ``score`` of 10^4
   held-out steps, the pickle size and the peak RSS (target: under 4 GB).

Usage::

    python benchmarks/bench_scale.py [--quick] [--samplers rcd_gibbs rcd_beam]
        [--max-T 1000000] [--parallel-seconds 12]
"""

import argparse
import gc
import json
import os
import resource
import shlex
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

RESULTS = os.path.join(HERE, "results")


def _maxrss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _proc_status_mb(key):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def _reset_peak():
    """Reset the kernel's peak-RSS mark (VmHWM) to the current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


# --------------------------------------------------------------------------
# Child process: one (sampler, T) measurement
# --------------------------------------------------------------------------
def child(sampler, T, min_seconds, min_sweeps):
    from bench_samplers import gaussian_problem
    from sk_ihmm.datasets import make_gaussian_hmm
    from sk_ihmm.samplers import get_sampler

    smp = get_sampler(sampler)
    # JIT warm-up on a tiny problem, so compilation is outside both measures
    Xw, zw = make_gaussian_hmm(300, 4, random_state=1)
    rng = np.random.default_rng(1)
    pw = gaussian_problem(Xw)
    sw = smp.init(pw, (zw + 1).astype(np.int64), rng)
    smp.step(sw, pw, rng)
    del Xw, zw, pw, sw
    gc.collect()
    # JIT compilation can push the peak RSS above anything the sweeps need, so
    # the peak mark is reset to the current RSS after the warm-up (VmHWM); if
    # that is not possible fall back to the growth of ru_maxrss.
    reset = _reset_peak() and _proc_status_mb("VmHWM") is not None
    base = _proc_status_mb("VmRSS") if reset else _maxrss_mb()

    X, z = make_gaussian_hmm(T, 4, random_state=0)
    prob = gaussian_problem(X)
    rng = np.random.default_rng(0)
    state = smp.init(prob, (z + 1).astype(np.int64), rng)
    smp.step(state, prob, rng)  # first sweep at this T untimed (allocations, caches)
    times = []
    while len(times) < min_sweeps or sum(times) < min_seconds:
        t0 = time.process_time()
        smp.step(state, prob, rng)
        times.append(time.process_time() - t0)
    peak = _proc_status_mb("VmHWM") if reset else _maxrss_mb()
    K = int(np.unique(state.x).shape[0])
    print(json.dumps({"ms": 1e3 * float(np.median(times)), "sweeps": len(times), "K": K,
                      "rss_mb": peak - base, "method": "VmHWM" if reset else "ru_maxrss"}))


def measure(sampler, T, min_seconds, min_sweeps):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", sampler, str(T),
           str(min_seconds), str(min_sweeps)]
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"child {sampler} T={T} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------
def table_T(args, out):
    from bench_ffbs_reference import ffbs_ms_per_pass

    Ts = [T for T in (10**3, 10**4, 10**5, 10**6) if T <= args.max_T]
    out(f"Cost per sweep against T: 4-state Gaussian data (make_gaussian_hmm), started at the "
        f"true labels; median CPU ms of >= {args.min_sweeps} sweeps and >= {args.min_seconds:g} s "
        f"per cell, sampler-level API (no estimator overhead);")
    out("peak RSS delta = peak resident memory of a fresh process while building the data, the "
        "chain state and running the sweeps, minus its RSS after imports + JIT warm-up (peak mark "
        "reset with /proc/self/clear_refs, read as VmHWM; '*' = fallback ru_maxrss growth); all "
        "allocations, numpy and numba")
    out()
    head = (f"{'sampler':12} {'T':>9} {'sweeps':>6} {'K':>3} {'ms/sweep':>10} "
            f"{'ms/sweep/1k':>11} {'FFBS ms/1k':>10} {'ratio':>6} {'peak RSS MB':>11} {'B/step':>7}")
    out(head)
    out("-" * len(head))
    ffbs = {}
    for sampler in args.samplers:
        for T in Ts:
            r = measure(sampler, T, args.min_seconds, args.min_sweeps)
            if T not in ffbs:
                ffbs[T] = ffbs_ms_per_pass(T, 4, n_repeat=5 if T < 10**6 else 3)
            per_k = r["ms"] / (T / 1000)
            f_k = ffbs[T] / (T / 1000)
            out(f"{sampler:12} {T:9,d} {r['sweeps']:6d} {r['K']:3d} {r['ms']:10.2f} {per_k:11.3f} "
                f"{f_k:10.4f} {per_k / f_k:6.1f} {r['rss_mb']:10.1f}"
                f"{'*' if r['method'] != 'VmHWM' else ' '} {r['rss_mb'] * 2**20 / T:7.0f}")
    out()
    out("ms/sweep/1k = ms per sweep per 1,000 time steps (constant when the cost is linear in T); "
        "FFBS = numba FFBS pass at K=4 incl. the emission matrix (wall ms, median); "
        "ratio = sampler / FFBS; B/step = peak RSS delta / T.")


_SPIN = "x = 0\nfor i in range({n}): x += i\n"


def spin_ceiling(n=20_000_000):
    """Hardware control: wall time of a pure-Python loop alone and two at once.

    Returns ``(t_alone, t_pair, 2 * t_alone / t_pair)``: the last is the
    throughput gain two processes can get on this machine right now, the
    ceiling for any ``n_jobs=2`` speed-up.
    """
    cmd = [sys.executable, "-c", _SPIN.format(n=n)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    t_alone = time.perf_counter() - t0
    t0 = time.perf_counter()
    procs = [subprocess.Popen(cmd) for _ in range(2)]
    for p in procs:
        p.wait()
    t_pair = time.perf_counter() - t0
    return t_alone, t_pair, 2 * t_alone / t_pair


def table_parallel(args, out):
    from sk_ihmm import InfiniteHMM
    from sk_ihmm.datasets import make_gaussian_hmm

    X, _ = make_gaussian_hmm(4000, 4, random_state=0)
    base = dict(sampler="rcd_gibbs", emission="gaussian", n_chains=4, random_state=0, max_time=0)
    # pilot: CPU per sweep of one chain (second half of 200 sweeps)
    pilot = InfiniteHMM(**{**base, "n_chains": 1, "n_burnin": 199, "n_samples": 1}).fit(X)
    secs = pilot.trace_["seconds"][0]
    per_sweep = (secs[-1] - secs[99]) / 100
    n_sweeps = int(np.ceil(args.parallel_seconds / (4 * per_sweep)))
    n_samples = 100
    kw = {**base, "n_burnin": max(0, n_sweeps - n_samples), "n_samples": n_samples}

    def timed(n_jobs):
        t0 = time.perf_counter()
        m = InfiniteHMM(**kw, n_jobs=n_jobs).fit(X)
        return time.perf_counter() - t0, m

    load0 = os.getloadavg()
    spin = spin_ceiling(5_000_000 if args.quick else 20_000_000)
    w1, m1 = timed(1)
    w2_cold, m2 = timed(2)
    same = all(np.array_equal(a, b) for a, b in zip(m1.state_samples_, m2.state_samples_))
    pairs = [(w1, w2_cold)]
    for _ in range(args.parallel_repeats):
        pairs.append((timed(1)[0], timed(2)[0]))
    spin2 = spin_ceiling(5_000_000 if args.quick else 20_000_000)
    load1 = os.getloadavg()
    out(f"Chains in parallel: InfiniteHMM(sampler='rcd_gibbs', n_chains=4), T=4,000 (4-state "
        f"Gaussian), {kw['n_burnin']} burn-in + {n_samples} kept sweeps per chain; wall-clock "
        f"seconds of fit(), n_jobs=1 and n_jobs=2 alternated")
    out()
    head = f"{'round':>22} {'n_jobs=1 s':>10} {'n_jobs=2 s':>10} {'speed-up':>9}"
    out(head)
    out("-" * len(head))
    for i, (a, b) in enumerate(pairs):
        label = "1 (fresh workers)" if i == 0 else f"{i + 1} (reused workers)"
        out(f"{label:>22} {a:10.2f} {b:10.2f} {a / b:9.2f}")
    reused = [a / b for a, b in pairs[1:]]
    if reused:
        out(f"{'median, reused':>22} {'':>10} {'':>10} {np.median(reused):9.2f}")
    out()
    out(f"hardware control (pure-Python loop, one process alone vs two at once): throughput gain "
        f"{spin[2]:.2f} before, {spin2[2]:.2f} after -- the ceiling for any n_jobs=2 speed-up on "
        f"this machine at the time.")
    out(f"os.cpu_count()={os.cpu_count()}; load average before {load0[0]:.2f}, after "
        f"{load1[0]:.2f}; kept samples identical for n_jobs=1 and 2: {same}; goal: speed-up >= "
        f"1.8 on 2 cores.")


def e2e_child(T, n_test, max_time):
    """One end-to-end run in this (fresh) process; prints a JSON line."""
    import pickle
    import warnings

    from sk_ihmm import InfiniteHMM
    from sk_ihmm.datasets import make_gaussian_hmm

    X, _ = make_gaussian_hmm(T + n_test, 4, random_state=0)
    X_train, X_test = X[:T], X[T:]
    rec = {"T": T, "n_test": n_test}
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = InfiniteHMM(random_state=0, max_time=max_time).fit(X_train)
    rec["fit_s"] = time.perf_counter() - t
    rec["converged"] = bool(model.convergence_["converged"])
    rec["sweeps"] = int(model.n_sweeps_)
    rec["n_states"] = int(model.n_states_)
    rec["warnings"] = sorted({type(w.message).__name__ for w in caught})
    t = time.perf_counter()
    model.predict(X_train)
    rec["predict_s"] = time.perf_counter() - t
    t = time.perf_counter()
    model.point_estimate()
    rec["point_estimate_s"] = time.perf_counter() - t
    t = time.perf_counter()
    rec["score_per_step"] = model.score(X_test) / n_test
    rec["score_s"] = time.perf_counter() - t
    rec["pickle_mb"] = len(pickle.dumps(model)) / 2**20
    rec["peak_rss_mb"] = _proc_status_mb("VmHWM") or _maxrss_mb()
    print("E2E " + json.dumps(rec), flush=True)


def table_e2e(args, out):
    """Defaults (except the time budget) end to end, each T in a fresh process."""
    out(f"End to end: InfiniteHMM(random_state=0, max_time={args.e2e_max_time}) on 4-state Gaussian "
        f"data, everything else at its default; predict on the training data, point_estimate(), "
        f"score of {args.e2e_test} held-out steps, pickle size, peak RSS of the process (VmHWM)")
    out()
    head = (f"{'T':>9} {'fit s':>7} {'sweeps':>7} {'K':>3} {'conv':>5} {'predict s':>9} "
            f"{'point est s':>11} {'score s':>8} {'pickle MB':>9} {'peak RSS MB':>11}")
    out(head)
    for T in args.e2e_T:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--e2e-child", str(T),
                               str(args.e2e_test), str(args.e2e_max_time)],
                              capture_output=True, text=True, cwd=ROOT)
        line = [l for l in proc.stdout.splitlines() if l.startswith("E2E ")]
        if not line:
            out(f"{T:>9} failed: {proc.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(line[0][4:])
        out(f"{T:>9} {r['fit_s']:>7.1f} {r['sweeps']:>7} {r['n_states']:>3} "
            f"{str(r['converged']):>5} {r['predict_s']:>9.1f} {r['point_estimate_s']:>11.1f} "
            f"{r['score_s']:>8.1f} {r['pickle_mb']:>9.1f} {r['peak_rss_mb']:>11.0f}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        child(argv[1], int(argv[2]), float(argv[3]), int(argv[4]))
        return
    if argv and argv[0] == "--e2e-child":
        e2e_child(int(argv[1]), int(argv[2]), float(argv[3]))
        return
    from sk_ihmm.samplers import SAMPLERS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="T <= 10^5 and a ~3 s parallel fit")
    ap.add_argument("--samplers", nargs="+", default=None,
                    help="default: rcd_gibbs and rcd_beam (those registered)")
    ap.add_argument("--max-T", type=int, default=None,
                    help="largest T (default 10^6; 10^5 with --quick)")
    ap.add_argument("--min-seconds", type=float, default=None,
                    help="CPU seconds of timed sweeps per cell (default 2; 0.3 with --quick)")
    ap.add_argument("--min-sweeps", type=int, default=3)
    ap.add_argument("--parallel-seconds", type=float, default=None,
                    help="target CPU seconds of the n_jobs=1 fit (default 12; 3 with --quick)")
    ap.add_argument("--parallel-repeats", type=int, default=None,
                    help="rounds with reused workers (default 3; 1 with --quick)")
    ap.add_argument("--tables", nargs="+", default=["T", "parallel", "e2e"],
                    choices=["T", "parallel", "e2e"])
    ap.add_argument("--e2e-T", type=int, nargs="+", default=None,
                    help="T of the end-to-end runs (default 200,000 and 10^6; 20,000 with --quick)")
    ap.add_argument("--e2e-test", type=int, default=10_000, help="held-out steps scored")
    ap.add_argument("--e2e-max-time", type=float, default=60.0, help="fit's max_time")
    args = ap.parse_args(argv)
    command = "python benchmarks/bench_scale.py " + " ".join(shlex.quote(a) for a in argv)
    if args.samplers is None:
        args.samplers = [s for s in ("rcd_gibbs", "rcd_beam") if s in SAMPLERS]
    args.samplers = [s for s in args.samplers if s in SAMPLERS]
    if args.max_T is None:
        args.max_T = 10**5 if args.quick else 10**6
    if args.min_seconds is None:
        args.min_seconds = 0.3 if args.quick else 2.0
    if args.parallel_repeats is None:
        args.parallel_repeats = 1 if args.quick else 3
    if args.parallel_seconds is None:
        args.parallel_seconds = 3.0 if args.quick else 12.0
    if args.e2e_T is None:
        args.e2e_T = [20_000] if args.quick else [200_000, 10**6]
    lines = []

    def out(line=""):
        print(line, flush=True)
        lines.append(line)

    print(f"# {command.strip()}")
    if "T" in args.tables:
        table_T(args, out)
        out()
    if "parallel" in args.tables:
        table_parallel(args, out)
        out()
    if "e2e" in args.tables:
        table_e2e(args, out)
    os.makedirs(RESULTS, exist_ok=True)
    name = "scale_e2e" if args.tables == ["e2e"] else "scale"
    path = os.path.join(RESULTS, f"{name}_quick.txt" if args.quick else f"{name}.txt")
    with open(path, "w") as fh:
        fh.write(f"# {command.strip()}\n" + "\n".join(lines) + "\n")
    print(f"[written to {os.path.relpath(path, ROOT)}]")


if __name__ == "__main__":
    main()
