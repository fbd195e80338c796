"""Run the benchmark suite and print every table.

Each benchmark runs as a subprocess (so JIT compilation, memory and CPU time
of one do not leak into another) in this order:

1. ``bench_ffbs_reference.py`` -- ms per numba FFBS pass, T=4000, K=4/10/30;
2. ``bench_samplers.py --budget B`` -- cost (ms/sweep and ratio to FFBS) and
   convergence of each registered sampler on the PGAS paper's synthetic data;
3. ``bench_real.py`` -- real data: Alice characters/words, well-log,
   ion channel (tables skipped when ``../shared/data`` is absent);
4. ``bench_scale.py`` -- cost per sweep against T (10^3..10^6), memory, and
   n_jobs=2 vs n_jobs=1 chain throughput;
5. ``bench_sequence1.py`` if that file exists (with ``--quick``: its own
   ``--quick`` if it has one, else ``--runs 2 --budget 1`` and a separate
   ``--out``);
6. ``bench_sequence2.py --jobs 2`` -- MI and autocorrelation time on the
   RCD paper's Sequence 2 (our reconstruction of its Figure 3), every
   sampler, 4 runs x 50 CPU s (``--quick``: its own, 2 runs x 2 s);
7. ``bench_pgas_paper.py --iters 1000 --budget 90 --jobs 2`` -- the PGAS
   paper's synthetic experiments, pgas beside rcd_beam and rcd_gibbs
   (``--quick``: its own); then ``bench_pgas_paper.py --figure5 --iters 1000
   --budget 60 --jobs 2`` (``pgas_figure5``), the paper's Figure 5: pgas
   with the prior / posterior proposal and N=10 / 50;
8. ``bench_reach.py --seeds 5 --cap 10 --jobs 2`` -- CPU seconds to the true
   number of states, every sampler (``--quick``: 2 seeds, 2 s cap);
9. ``bench_mixing.py --seeds 3 --jobs 2`` -- how fast each sampler moves the
   number of states at equilibrium (chains from the true labels; ``--quick``:
   1 seed, 300 sweeps);
10. ``bench_defaults.py --jobs 1`` -- what a user who sets nothing gets: every
   sampler at the estimator's defaults on five generated data sets in
   physical units (K found, NMI beside hmmlearn told the true K, wall time,
   ConvergenceWarning; ``--quick``: its own ``--quick``, ``rcd_gibbs`` only);
11. ``bench_mocap6.py`` -- motion-capture segmentation: the sticky
    HDP-AR-HMM against Gaussian emissions and hmmlearn (skipped when the data
    are absent; ``--quick``: its own);
12. ``bench_rhat_noise.py`` -- how often ``fit``'s convergence checks fail on
    simulated chains that mix perfectly, against their effective sample size
    (``--quick``: 40 repetitions, no file written);
13. ``bench_burnin.py`` -- the budget mode's rounds on simulated traces with
    a lingering start or a slow mode: how soon the checks pass, and how
    often a pass is biased, when they look at the last half or the last
    three quarters of the sweeps (``--quick``: 20 repetitions, no file
    written);
14. ``bench_duplicate_states.py`` -- the extra states of one-step visits
    that slow the number of states: why a split-merge move does not remove
    them (their merge's Metropolis-Hastings ratio under a Jain-Neal
    restricted Gibbs split; ``--quick``: 600 samples, no file written).

All output is printed as it comes and saved to ``benchmarks/results/run.txt``
(``run_quick.txt`` with ``--quick``); ``bench_real``, ``bench_scale``,
``bench_sequence2``, ``bench_pgas_paper``, ``bench_defaults``,
``bench_mocap6``, ``bench_rhat_noise``, ``bench_burnin`` and
``bench_duplicate_states`` also write their
own tables under ``benchmarks/results/`` (the tables of ``bench_reach`` and
``bench_mixing`` are copied by hand to ``reach*.txt`` and ``mixing.txt``).

Usage::

    python benchmarks/run.py [--quick]
        [--only ffbs samplers real scale sequence1 sequence2 pgas_paper pgas_figure5 reach
                mixing defaults mocap6 rhat_noise burnin
                duplicates]
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
NAMES = ("ffbs", "samplers", "real", "scale", "sequence1", "sequence2", "pgas_paper",
         "pgas_figure5", "reach", "mixing", "defaults", "mocap6", "rhat_noise", "burnin",
         "duplicates")


def _sequence1_args(path, quick):
    """Arguments of bench_sequence1.py (written separately): --quick if it has one,
    else a small --runs/--budget and a separate --out so the full results survive."""
    if not quick:
        return []
    with open(path) as fh:
        src = fh.read()
    if "--quick" in src:
        return ["--quick"]
    extra = []
    if '"--runs"' in src:
        extra += ["--runs", "2"]
    if '"--budget"' in src:
        extra += ["--budget", "1"]
    if '"--out"' in src:
        extra += ["--out", os.path.join("benchmarks", "results", "sequence1_mi_quick.csv")]
    return extra


def commands(quick, samplers_budget):
    cmds = [
        ("ffbs", ["bench_ffbs_reference.py"]),
        ("samplers", ["bench_samplers.py", "--budget", str(samplers_budget)]),
        ("real", ["bench_real.py"] + (["--quick"] if quick else [])),
        ("scale", ["bench_scale.py"] + (["--quick"] if quick else [])),
    ]
    seq1 = os.path.join(HERE, "bench_sequence1.py")
    if os.path.exists(seq1):
        cmds.append(("sequence1", ["bench_sequence1.py", "--jobs", "2"]
                      + _sequence1_args(seq1, quick)))
    cmds.append(("sequence2", ["bench_sequence2.py", "--jobs", "2"]
                 + (["--quick"] if quick else [])))
    cmds.append(("pgas_paper", ["bench_pgas_paper.py", "--jobs", "2"]
                 + (["--quick"] if quick else ["--iters", "1000", "--budget", "90"])))
    cmds.append(("pgas_figure5", ["bench_pgas_paper.py", "--figure5", "--jobs", "2"]
                 + (["--quick"] if quick else ["--iters", "1000", "--budget", "60"])))
    cmds.append(("reach", ["bench_reach.py", "--jobs", "2"]
                 + (["--seeds", "2", "--cap", "2"] if quick else ["--seeds", "5", "--cap", "10"])))
    cmds.append(("mixing", ["bench_mixing.py", "--jobs", "2"]
                 + (["--seeds", "1", "--burn", "20", "--sweeps", "300"] if quick
                    else ["--seeds", "3"])))
    # one fit at a time: a fit's chains run in threads on every core, as a
    # user's do, and max_time is wall time
    cmds.append(("defaults", ["bench_defaults.py", "--jobs", "1"]
                 + (["--quick", "--samplers", "rcd_gibbs"] if quick else [])))
    cmds.append(("mocap6", ["bench_mocap6.py"] + (["--quick"] if quick else [])))
    cmds.append(("rhat_noise", ["bench_rhat_noise.py"]
                 + (["--reps", "40", "--out", "-"] if quick else [])))
    cmds.append(("burnin", ["bench_burnin.py"]
                 + (["--reps", "20", "--out", "-"] if quick else [])))
    cmds.append(("duplicates", ["bench_duplicate_states.py"]
                 + (["--quick", "--out", "-"] if quick else [])))
    return cmds


def run_one(args, log):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("MPLBACKEND", "Agg")
    cmd = [sys.executable, os.path.join(HERE, args[0])] + args[1:]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    for line in proc.stdout:
        print(line, end="", flush=True)
        log.append(line.rstrip("\n"))
    return proc.wait()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="tiny budgets: a smoke run of every benchmark")
    ap.add_argument("--samplers-budget", type=float, default=None,
                    help="--budget of bench_samplers.py (CPU s per run; default 20, 1 with --quick)")
    ap.add_argument("--only", nargs="+", choices=NAMES, default=list(NAMES))
    args = ap.parse_args(argv)
    budget = args.samplers_budget
    if budget is None:
        budget = 1.0 if args.quick else 20.0
    log = [f"# python benchmarks/run.py{' --quick' if args.quick else ''}"
           f"{'' if args.samplers_budget is None else f' --samplers-budget {budget:g}'}"
           f"{'' if set(args.only) == set(NAMES) else ' --only ' + ' '.join(args.only)}"]
    print(log[0], flush=True)
    failed = []
    t_all = time.perf_counter()
    for name, cmd in commands(args.quick, budget):
        if name not in args.only:
            continue
        header = f"\n######## {' '.join(['python', 'benchmarks/' + cmd[0]] + cmd[1:])}"
        print(header, flush=True)
        log.append(header)
        t0 = time.perf_counter()
        rc = run_one(cmd, log)
        footer = f"[{cmd[0]}: exit {rc}, {time.perf_counter() - t0:.0f} s wall]"
        print(footer, flush=True)
        log.append(footer)
        if rc != 0:
            failed.append(cmd[0])
    summary = (f"\nsuite finished in {time.perf_counter() - t_all:.0f} s wall; "
               + (f"FAILED: {' '.join(failed)}" if failed else "all benchmarks exited 0"))
    print(summary, flush=True)
    log.append(summary)
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, "run_quick.txt" if args.quick else "run.txt")
    with open(path, "w") as fh:
        fh.write("\n".join(log) + "\n")
    print(f"[written to {os.path.relpath(path, ROOT)}]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
