"""Split-merge moves on Sequence 1: acceptance per move type and time to the 8-state cycle.

Replicates a sweep of ``split_merge`` (``rcd_beam`` base sweep,
``--trials`` one-state trials of Makino et al., then ``--trials`` chain
trials of widths uniform in ``2 .. --width`` when ``--width > 1``,
concentrations resampled) with separate counters for the two kinds of
trial, from the particle-filter start of ``bench_sequence1.py`` (same
initial labels and seeds per run). A run stops at the first sweep whose MI
with the truth is >= 2.07 nats (the 8-state cycle has ln 8 = 2.079) or when
its CPU budget is spent; the acceptance rates count the trials until then.

Usage::

    python benchmarks/bench_split_merge_moves.py [--runs 20] [--budget 10]
        [--trials 3] [--width 3]
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_sequence1 import initial_state_labels, sequence1_problem  # noqa: E402
from sk_ihmm.metrics import mutual_information  # noqa: E402
from sk_ihmm.samplers import _rcd_blocked, get_sampler  # noqa: E402
from sk_ihmm.samplers._collapsed import finish_sweep  # noqa: E402
from sk_ihmm.samplers._split_merge import chain_moves, split_merge_moves  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--budget", type=float, default=10.0, help="CPU seconds per run at most")
    ap.add_argument("--trials", type=int, default=3, help="one-state (and chain) trials per sweep")
    ap.add_argument("--width", type=int, default=3, help="largest chain width (1: no chain trials)")
    ap.add_argument("--T", type=int, default=500)
    args = ap.parse_args(argv)
    print(f"# python benchmarks/bench_split_merge_moves.py --runs {args.runs} --budget "
          f"{args.budget} --trials {args.trials} --width {args.width} --T {args.T}")
    prob, truth, _ = sequence1_problem(args.T)
    base_prob = prob._replace(resample=np.zeros(3, np.bool_))
    smp = get_sampler("split_merge")

    def sweep(state, rng, one, chain):
        _rcd_blocked.step_beam(state, base_prob, rng)
        one += split_merge_moves(state, prob, args.trials, rng)
        if args.width > 1:
            chain += chain_moves(state, prob, 2 + rng.integers(args.width - 1, size=args.trials),
                                 rng)
        finish_sweep(state, prob, rng)

    warm = smp.init(prob, initial_state_labels(args.T, 0), np.random.default_rng(0))
    sweep(warm, np.random.default_rng(0), np.zeros(5, np.int64), np.zeros(6, np.int64))
    one, chain, hits = np.zeros(5, np.int64), np.zeros(6, np.int64), []
    for run in range(args.runs):
        rng = np.random.default_rng(np.random.SeedSequence([0, run, 1]))
        state = smp.init(prob, initial_state_labels(args.T, run), rng)
        seconds, hit = 0.0, None
        while seconds < args.budget and hit is None:
            t = time.process_time()
            sweep(state, rng, one, chain)
            seconds += time.process_time() - t
            if mutual_information(truth, state.x) >= 2.07:
                hit = seconds
        hits.append(hit)
        print(f"run {run:2d}: MI {mutual_information(truth, state.x):.3f}, "
              f"{np.unique(state.x).shape[0]} states, "
              f"{'not reached' if hit is None else f'reached at {hit:.3f} CPU s'}", flush=True)

    def rates(c):
        return (f"split {c[1]}/{c[0]} = {c[1] / max(c[0], 1):.4f}, "
                f"merge {c[3]}/{c[2]} = {c[3] / max(c[2], 1):.4f}")
    reached = [h for h in hits if h is not None]
    print(f"one-state trials: {rates(one)}")
    if args.width > 1:
        print(f"chain trials:     {rates(chain)}; neither split nor merge {chain[5]}")
    print(f"MI >= 2.07 reached in {len(reached)}/{args.runs} runs"
          + (f", median {np.median(reached):.3f} CPU s, max {max(reached):.3f}" if reached else ""))


if __name__ == "__main__":
    main()
