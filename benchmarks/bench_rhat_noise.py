"""How often ``fit``'s convergence checks fail on chains that mix perfectly.

Split R-hat and the effective sample size are estimates, with their own
Monte-Carlo noise. This benchmark draws ``--chains`` independent stationary
AR(1) chains of ``--draws`` draws each (standard normal marginals, the
autocorrelation set so that the chains together are worth a given number of
independent draws), checks them as ``fit`` does
(``_diagnostics.convergence_report``: rank-normalised split R-hat <= 1.01,
bulk and tail ESS >= 100 per chain) and reports how often the checks fail
although the chains target the right distribution and have no burn-in to
lose. It shows how many effective draws a fit needs before a pass is the
likely outcome; doc/convergence.rst quotes the table.

Usage::

    python benchmarks/bench_rhat_noise.py [--reps 400] [--draws 4000] [--chains 4]
        [--seed 0] [--out benchmarks/results/rhat_noise.txt | --out -]

(``--out -``: print the table only.)
"""

import argparse
import os
import sys

import numpy as np
from scipy.signal import lfilter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from sk_ihmm._diagnostics import ESS_PER_CHAIN_MIN, RHAT_MAX, convergence_report  # noqa: E402

ESS_LEVELS = (200, 400, 600, 800, 1000, 1500, 2000)


def ar1_chains(n_chains, n_draws, ess_total, rng, start=None):
    """Stationary AR(1) chains, N(0, 1) marginals, worth about ``ess_total``
    draws together; ``start`` (one value per chain) replaces the first draws,
    which are otherwise in the stationary distribution."""
    n_eff = ess_total / n_chains
    phi = (n_draws - n_eff) / (n_draws + n_eff)  # n_eff = n (1 - phi) / (1 + phi)
    noise = rng.standard_normal((n_chains, n_draws)) * np.sqrt(1.0 - phi ** 2)
    noise[:, 0] = rng.standard_normal(n_chains) if start is None else start
    return lfilter([1.0], [1.0, -phi], noise, axis=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "rhat_noise.txt"),
                    help="file for the table; - for none")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    ess_min = ESS_PER_CHAIN_MIN * args.chains
    lines = [
        f"# python benchmarks/bench_rhat_noise.py --reps {args.reps} --draws {args.draws} "
        f"--chains {args.chains} --seed {args.seed}",
        f"# {args.chains} stationary AR(1) chains x {args.draws} draws, {args.reps} repetitions "
        f"per row; thresholds of fit: R-hat <= {RHAT_MAX}, bulk and tail ESS >= {ess_min}",
        f"ESS of the chains | median bulk ESS | P(R-hat > {RHAT_MAX}) | P(check fails) "
        "| 95% quantile of R-hat",
    ]
    print("\n".join(lines), flush=True)
    for ess_total in ESS_LEVELS:
        rhat, ess, fails = np.empty(args.reps), np.empty(args.reps), np.empty(args.reps, bool)
        for i in range(args.reps):
            x = ar1_chains(args.chains, args.draws, ess_total, rng)
            report = convergence_report({"x": x}, 0, keys=("x",))
            rhat[i], ess[i] = report["x"]["r_hat"], report["x"]["ess_bulk"]
            fails[i] = not report["converged"]
        row = (f"{ess_total:17d} | {np.median(ess):15.0f} | {np.mean(rhat > RHAT_MAX):15.2f} | "
               f"{np.mean(fails):14.2f} | {np.quantile(rhat, 0.95):.4f}")
        lines.append(row)
        print(row, flush=True)
    if args.out != "-":
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
