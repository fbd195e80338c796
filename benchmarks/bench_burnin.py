"""Which sweeps ``fit``'s checks should look at: the last half or the last three quarters.

``fit`` runs its chains in rounds (200, 400, 800, ... sweeps each) until
the convergence checks pass; after each round the checks and the kept
samples cover a window of the last sweeps, the first ones being burn-in.
This benchmark simulates those rounds on artificial traces whose
stationary mean is known, checks each window as ``fit`` does
(``_diagnostics.convergence_report``: rank-normalised split R-hat <= 1.01,
bulk and tail ESS >= 100 per chain) and compares two windows: the last half
of the sweeps and the last three quarters (``fit``'s). For each scenario
and window it reports the fraction of runs that pass within the budget,
the median sweeps per chain at the pass, and, among the passes, the
fraction whose window mean lies within two Monte-Carlo standard errors
(stationary sd / sqrt(bulk ESS)) of the stationary mean: about 0.95 when
the start has been forgotten, less when a start that lingers biases a pass.

Scenarios, 4 chains, the odd-numbered ones (1, 3) started off the bulk as
``init="mixed"`` starts half the chains in one state:

* ``stationary``: AR(1), integrated autocorrelation time 70 sweeps, every
  chain started in its stationary distribution (the cost of discarding).
* ``offset``: the same AR(1), chains 1 and 3 started 10 sd away, a start
  forgotten geometrically.
* ``slow start``: AR(1) with autocorrelation time 20, chains 1 and 3
  started 5 sd away from where an offset decays with a time constant of
  1,000 sweeps: a start forgotten 50 times more slowly than the draws
  decorrelate, the case the quarter's argument (doc/convergence.rst) does
  not cover, where half a chain of burn-in can be enough and a quarter not.
* ``mode``: AR(1) with autocorrelation time 20 plus 3 sd times a slow
  two-state mode (mean dwell 400 sweeps in mode 1 and 1,600 in mode 0, so
  mode 1 holds a fifth of the mass), chains 1 and 3 started in mode 1; the
  mode dominates the autocorrelation (about 390 sweeps in all), so the
  ESS check sees it.
* ``slow mode``: the same with dwells of 2,000 and 8,000 sweeps.

With 200 repetitions a coverage has a standard error of about 1.5 points
near 0.95 and 2.5 near 0.85.

Usage::

    python benchmarks/bench_burnin.py [--reps 200] [--max-sweeps 102400] [--seed 0]
        [--out benchmarks/results/burnin.txt | --out -]
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_rhat_noise import ar1_chains  # noqa: E402
from sk_ihmm._diagnostics import convergence_report  # noqa: E402

N_CHAINS = 4
FIRST_ROUND = 200
FIRST_BURNIN = 100
WINDOWS = {"last half": 2, "last 3/4": 4}      # window start: n_sweeps // divisor


def ar1(n_draws, tau, rng, start=None):
    """``N_CHAINS`` AR(1) chains with N(0, 1) marginals and integrated
    autocorrelation time ``tau`` (bench_rhat_noise's, by their worth in
    independent draws)."""
    return ar1_chains(N_CHAINS, n_draws, N_CHAINS * n_draws / tau, rng, start)


def two_state_mode(n_chains, n_draws, dwell1, dwell0, start, rng):
    """0/1 Markov chains with mean dwell ``dwell1`` in state 1 and ``dwell0`` in 0."""
    out = np.empty((n_chains, n_draws))
    for c in range(n_chains):
        t, state = 0, int(start[c])
        while t < n_draws:
            length = int(rng.geometric(1.0 / (dwell1 if state else dwell0)))
            out[c, t:t + length] = state
            t += length
            state = 1 - state
    return out


def scenario(name, n_draws, rng):
    """``(trace, stationary mean, stationary sd)`` of one run."""
    odd = np.arange(N_CHAINS) % 2 == 1
    if name == "stationary":
        return ar1(n_draws, 70.0, rng), 0.0, 1.0
    if name == "offset":
        start = np.where(odd, 10.0, rng.standard_normal(N_CHAINS))
        return ar1(n_draws, 70.0, rng, start=start), 0.0, 1.0
    if name == "slow start":
        offset = np.where(odd, 5.0, 0.0)[:, None] * np.exp(-np.arange(n_draws) / 1000.0)
        return ar1(n_draws, 20.0, rng) + offset, 0.0, 1.0
    dwell1, dwell0 = (400, 1600) if name == "mode" else (2000, 8000)
    p1, jump = dwell1 / (dwell1 + dwell0), 3.0
    # even chains start in the stationary distribution of the mode, odd ones in mode 1
    start = np.where(odd, 1, rng.random(N_CHAINS) < p1)
    x = ar1(n_draws, 20.0, rng) + jump * two_state_mode(N_CHAINS, n_draws, dwell1,
                                                                   dwell0, start, rng)
    return x, jump * p1, np.sqrt(1.0 + jump ** 2 * p1 * (1.0 - p1))


def first_pass(x, divisor, max_sweeps):
    """Sweeps per chain at the first round whose window passes, and the report."""
    n = FIRST_ROUND
    while n <= max_sweeps:
        start = FIRST_BURNIN if n == FIRST_ROUND else max(FIRST_BURNIN, n // divisor)
        report = convergence_report({"x": x[:, :n]}, start, keys=("x",))
        if report["converged"]:
            return n, start, report
        n *= 2
    return None, None, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--max-sweeps", type=int, default=102400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "burnin.txt"),
                    help="file for the table; - for none")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    lines = [
        f"# python benchmarks/bench_burnin.py --reps {args.reps} --max-sweeps {args.max_sweeps} "
        f"--seed {args.seed}",
        f"# {N_CHAINS} chains, rounds of 200, 400, ... sweeps up to {args.max_sweeps}; checks of "
        "fit (R-hat <= 1.01, bulk and tail ESS >= 400); 'covered': window mean within 2 MCSE "
        "of the stationary mean, among the passes",
        "scenario   | window    | P(pass) | median sweeps at pass | P(covered | pass)",
    ]
    print("\n".join(lines), flush=True)
    for name in ("stationary", "offset", "slow start", "mode", "slow mode"):
        results = {w: [] for w in WINDOWS}
        for _ in range(args.reps):
            x, mean, sd = scenario(name, args.max_sweeps, rng)
            for w, divisor in WINDOWS.items():
                n, start, report = first_pass(x, divisor, args.max_sweeps)
                if n is None:
                    results[w].append((np.nan, False))
                    continue
                mcse = sd / np.sqrt(report["x"]["ess_bulk"])
                results[w].append((n, abs(x[:, start:n].mean() - mean) <= 2.0 * mcse))
        for w in WINDOWS:
            res = np.array(results[w], dtype=float)
            passed = np.isfinite(res[:, 0])
            median = np.median(res[passed, 0]) if passed.any() else np.nan
            covered = res[passed, 1].mean() if passed.any() else np.nan
            row = f"{name:10s} | {w:9s} | {passed.mean():7.2f} | {median:21.0f} | {covered:.2f}"
            lines.append(row)
            print(row, flush=True)
    if args.out != "-":
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
