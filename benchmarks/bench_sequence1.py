"""Mutual information on the RCD paper's Sequence 1, per sampler, on a CPU budget.

Sequence 1 of Makino et al. (2011, Section 5.2; :func:`sk_ihmm.datasets.
make_sequence1`) repeats the symbols ``A B C D B C D E``: an 8-state HMM (one
state per position of the cycle) predicts it perfectly, but samplers tend to
stay in the 5-state local optimum that gives every symbol one state. The
paper's Figure 5 shows the distribution, over runs, of the mutual information
(Eq. 37, :func:`sk_ihmm.metrics.mutual_information`) between the sampled
hidden states and the true positions; split-merge moves added to the beam
sampler move more runs beyond the 5-state optimum.

Protocol. Every run starts from the labelling of a particle filter with 100
particles (Makino et al. Section 5.1; ``--init pf``, the default) or from 30
uniformly random labels (``--init random``), the same initial labelling for a
given run index whatever the sampler, then sweeps until its CPU budget
(``time.process_time``, after a compilation warm-up outside the budget) is
spent; the MI of the final state sequence with the truth is recorded.
Categorical emissions with a symmetric Dirichlet(0.5) prior; ``alpha`` and
``gamma`` start at 1 and are resampled after every sweep under Gamma(1, 1)
priors; ``kappa = 0``; blocks of the automatic size for ``rcd_blocked`` /
``rcd_beam``.

Samplers: ``rcd_gibbs``, ``rcd_blocked``, ``rcd_beam``, ``rcd_beam`` with 3
and 25 split-merge trials per sweep (``split_merge``) and ``pgas``. The table
gives the mean, quartiles and fraction of runs whose MI exceeds that of the
5-state optimum (the MI of the symbols themselves with the truth, 1.5596
nats; the 8-state truth has ln 8 = 2.0794 nats), the mean final number of
states, sweeps per run, CPU ms per sweep over the run (the header gives a
numba FFBS pass at K=8, T=500 for scale), the split/merge acceptance rates,
and the cost where the chain has arrived (:func:`bench_ffbs_reference.settled_cost`, medians over
runs): the least wall ms per sweep over 10 chunks of 20 further sweeps, the
chain's number of states ``K_s`` then, an FFBS pass at ``K_s`` and the same
``T`` in the same process, and the ratio of the two (per run, then the
median); ``ratio_m`` compares each sweep with an FFBS pass at its own K. A last row
fits hmmlearn's ``CategoricalHMM`` (best of 3 EM restarts) for K = 3..12 on
the even tenths of the sequence, picks K by the log-likelihood of the odd
tenths and gives the MI of its Viterbi path (skipped without hmmlearn). Raw values go to
``benchmarks/results/sequence1_mi.csv`` (``sequence1_mi_random.csv`` with
``--init random``).

Usage::

    python benchmarks/bench_sequence1.py [--runs 20] [--budget 10] [--jobs 1]
        [--T 500] [--init pf] [--samplers rcd_gibbs rcd_blocked rcd_beam sm3 sm25 pgas]

Default budget: 20 runs x 10 CPU seconds for each of the 6 samplers
(1200 CPU seconds of sampling in all; ``--jobs`` runs that many processes in
parallel, each run still gets its own CPU budget).
"""

import argparse
import csv
import os
import sys
import time
from multiprocessing import get_context

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_ffbs_reference import settled_cost  # noqa: E402
from sk_ihmm._chain import make_problem  # noqa: E402
from sk_ihmm._particle import initial_labels  # noqa: E402
from sk_ihmm.datasets import make_sequence1  # noqa: E402
from sk_ihmm.emissions import Categorical  # noqa: E402
from sk_ihmm.metrics import mutual_information  # noqa: E402
from sk_ihmm.samplers import get_sampler  # noqa: E402

#: name -> (registered sampler, options)
CONFIGS = {
    "rcd_gibbs": ("rcd_gibbs", {}),
    "rcd_blocked": ("rcd_blocked", {}),
    "rcd_beam": ("rcd_beam", {}),
    "sm3": ("split_merge", {"base_sampler": "rcd_beam", "split_merge_trials": 3}),
    "sm25": ("split_merge", {"base_sampler": "rcd_beam", "split_merge_trials": 25}),
    "pgas": ("pgas", {}),
}
LABELS = {
    "rcd_gibbs": "rcd_gibbs",
    "rcd_blocked": "rcd_blocked",
    "rcd_beam": "rcd_beam",
    "sm3": "rcd_beam+SM 3/sweep",
    "sm25": "rcd_beam+SM 25/sweep",
    "pgas": "pgas (N=10)",
}


def sequence1_problem(n_timesteps=500, options=None):
    """The Sequence 1 data and its :class:`~sk_ihmm._chain.Problem`.

    Returns ``(problem, truth, mi_5)``: the problem, the true cycle
    positions and the MI of the 5-state optimum (symbols vs truth).
    """
    X, truth = make_sequence1(n_timesteps)
    fam = Categorical(concentration=0.5)
    n_symbols = 5
    prob = make_problem(fam, X, n_symbols, options=options)
    return prob, truth, mutual_information(truth, X.ravel())


#: number of labels of the random initialisation
K_RANDOM_INIT = 30


def initial_state_labels(n_timesteps, run, seed=0, init="pf", problem=None):
    """Initial labelling shared by all samplers for ``run``: a particle filter
    with 100 particles (``"pf"``) or ``K_RANDOM_INIT`` uniform labels.

    ``problem``: the data's :class:`~sk_ihmm._chain.Problem` (default: that
    of Sequence 1 of length ``n_timesteps``)."""
    prob = sequence1_problem(n_timesteps)[0] if problem is None else problem
    rng = np.random.default_rng(np.random.SeedSequence([seed, run, 0]))
    if init == "random":
        return rng.integers(1, K_RANDOM_INIT + 1, n_timesteps).astype(np.int64)
    return initial_labels(prob, 100, rng)


def timed_chain(config, prob, x0, budget, seed=0, run=0, every=None, record=None):
    """Sweep one chain of ``config`` from ``x0`` for ``budget`` CPU seconds.

    The numba kernels are compiled (or loaded) first, outside the budget, on
    a throwaway state. Only the sweeps count against the budget: with
    ``every`` and ``record`` given, ``record(state)`` is called once for each
    multiple of ``every`` CPU seconds of sweeping passed (several times after
    a sweep that spans several marks; Makino et al. sample the model state on
    this CPU-time basis, excluding the time used in evaluation), and its own
    time is not counted. Returns ``(sampler, state, rng, infos, seconds)``:
    the per-sweep info dicts and the CPU seconds of sweeping.
    """
    name, _ = CONFIGS[config]
    smp = get_sampler(name)
    warm = smp.init(prob, x0, np.random.default_rng(0))
    smp.step(warm, prob, np.random.default_rng(0))
    rng = np.random.default_rng(np.random.SeedSequence([seed, run, 1]))
    state = smp.init(prob, x0, rng)
    infos, seconds = [], 0.0
    mark = every
    while seconds < budget:
        t = time.process_time()
        infos.append(smp.step(state, prob, rng))
        seconds += time.process_time() - t
        while record is not None and mark <= seconds:
            record(state)
            mark += every
    return smp, state, rng, infos, seconds


def mean_info(infos, key):
    """Mean of the finite values of ``key`` over per-sweep info dicts (nan if none)."""
    vals = [i[key] for i in infos if key in i and np.isfinite(i[key])]
    return float(np.mean(vals)) if vals else float("nan")


def one_run(config, run, budget, n_timesteps=500, seed=0, init="pf"):
    """Run one chain of ``config`` for ``budget`` CPU seconds; return its record."""
    _, options = CONFIGS[config]
    prob, truth, _ = sequence1_problem(n_timesteps, options)
    x0 = initial_state_labels(n_timesteps, run, seed, init)
    smp, state, rng, infos, seconds = timed_chain(config, prob, x0, budget, seed, run)
    cost = settled_cost(smp, state, prob, rng)
    return {
        "sampler": config, "init": init, "run": run, "mi": mutual_information(truth, state.x),
        "n_states": int(np.unique(state.x).shape[0]), "sweeps": len(infos),
        "seconds": seconds, "split_accept": mean_info(infos, "split_accept"),
        "merge_accept": mean_info(infos, "merge_accept"), **cost,
    }


def _star(args):
    return one_run(*args)


def run_all(configs, runs, budget, n_timesteps=500, seed=0, jobs=1, init="pf"):
    """Records of ``runs`` runs of every config (parallel over ``jobs`` processes)."""
    tasks = [(c, r, budget, n_timesteps, seed, init) for c in configs for r in range(runs)]
    if jobs <= 1:
        return [_star(t) for t in tasks]
    with get_context("spawn").Pool(jobs) as pool:
        return pool.map(_star, tasks, chunksize=1)


def summarize(records, configs, mi_5):
    """One text table: MI mean and quartiles, fraction above the 5-state MI..."""
    head = (f"{'sampler':22} {'runs':>4} {'MI mean':>8} {'q25':>6} {'median':>6} {'q75':>6} "
            f"{'>5-state':>8} {'K':>5} {'sweeps':>7} {'ms/sweep':>8} {'split acc':>9} "
            f"{'merge acc':>9} {'settled ms':>10} {'K_s':>4} {'FFBS ms':>7} {'ratio':>5} "
            f"{'ratio_m':>7}")
    lines = [head]
    for c in configs:
        rec = [r for r in records if r["sampler"] == c]
        mi = np.array([r["mi"] for r in rec])
        q25, q50, q75 = np.percentile(mi, [25, 50, 75])
        above = np.mean(mi > mi_5 + 1e-6)
        sa = np.nanmean([r["split_accept"] for r in rec]) if c.startswith("sm") else np.nan
        ma = np.nanmean([r["merge_accept"] for r in rec]) if c.startswith("sm") else np.nan
        fmt = (lambda v: f"{v:9.4f}" if np.isfinite(v) else f"{'-':>9}")
        lines.append(
            f"{LABELS[c]:22} {len(rec):4d} {mi.mean():8.4f} {q25:6.3f} {q50:6.3f} {q75:6.3f} "
            f"{above:8.2f} {np.mean([r['n_states'] for r in rec]):5.2f} "
            f"{np.mean([r['sweeps'] for r in rec]):7.0f} "
            f"{1e3 * np.sum([r['seconds'] for r in rec]) / np.sum([r['sweeps'] for r in rec]):8.2f} "
            f"{fmt(sa)} {fmt(ma)} {np.median([r['cost_ms'] for r in rec]):10.3f} "
            f"{np.median([r['cost_K'] for r in rec]):4.0f} "
            f"{np.median([r['ffbs_ms'] for r in rec]):7.3f} "
            f"{np.median([r['cost_ms'] / r['ffbs_ms'] for r in rec]):5.2f} "
            f"{np.median([r['ratio_matched'] for r in rec]):7.2f}"
        )
    return "\n".join(lines)


def hmmlearn_reference(X, truth, n_symbols, grid):
    """hmmlearn CategoricalHMM (best of 3 EM restarts) for each K of ``grid`` on
    the even tenths of ``X``, K picked by the log-likelihood of the odd tenths,
    refitted on all of ``X``; returns ``(MI of its Viterbi path with truth, K,
    CPU s)``, or None without hmmlearn."""
    sys.path.insert(0, HERE)
    from bench_real import _hmmlearn, block_split, hmm_fit, hmm_select
    hmm = _hmmlearn()
    if hmm is None:
        return None
    X = X.astype(np.int64)
    t0 = time.process_time()
    (fit_idx, fit_len), (val_idx, val_len) = block_split(X.shape[0])
    K, _ = hmm_select(hmm, "categorical", grid, X[fit_idx], X[val_idx], fit_len,
                      val_len, n_features=n_symbols)
    model = hmm_fit(hmm, "categorical", K, X, n_features=n_symbols)
    return mutual_information(truth, model.predict(X)), K, time.process_time() - t0


def hmmlearn_row(n_timesteps, mi_5):
    """hmmlearn CategoricalHMM, K by held-out likelihood: one table row."""
    X, truth = make_sequence1(n_timesteps)
    ref = hmmlearn_reference(X, truth, 5, range(3, 13))
    if ref is None:
        return f"{'hmmlearn CategoricalHMM':22} skipped (hmmlearn not installed)"
    mi, K, cpu = ref
    return (f"{'hmmlearn CategoricalHMM':22} {'EM':>4} {mi:8.4f} {'':6} {'':6} {'':6} "
            f"{float(mi > mi_5 + 1e-6):8.2f} {K:5d}   (K by held-out LL; "
            f"{cpu:.1f} s CPU)")


def save_csv(records, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    keys = ["sampler", "init", "run", "mi", "n_states", "sweeps", "seconds", "split_accept",
            "merge_accept", "cost_ms", "cost_K", "ffbs_ms", "ratio_matched"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in records:
            w.writerow({k: r[k] for k in keys})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="runs per sampler")
    ap.add_argument("--budget", type=float, default=10.0, help="CPU seconds per run")
    ap.add_argument("--T", type=int, default=500, help="sequence length")
    ap.add_argument("--jobs", type=int, default=1, help="parallel processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", choices=["pf", "random"], default="pf",
                    help="particle filter (100 particles) or 30 random labels")
    ap.add_argument("--samplers", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--out", default=None, help="CSV of the raw values")
    args = ap.parse_args(argv)
    if args.out is None:
        suffix = "" if args.init == "pf" else "_random"
        args.out = os.path.join(HERE, "results", f"sequence1_mi{suffix}.csv")
    cmd = (f"# python benchmarks/bench_sequence1.py --runs {args.runs} --budget {args.budget} "
           f"--T {args.T} --jobs {args.jobs} --seed {args.seed} --init {args.init} "
           f"--samplers {' '.join(args.samplers)}")
    print(cmd)
    _, _, mi_5 = sequence1_problem(args.T)
    sys.path.insert(0, HERE)
    from bench_ffbs_reference import ffbs_ms_per_pass
    print(f"# budget: {args.runs} runs x {args.budget:g} CPU s per sampler; "
          f"MI of the 5-state optimum {mi_5:.4f}, of the truth {np.log(8):.4f} nats; "
          f"one FFBS pass at K=8, T={args.T}: {ffbs_ms_per_pass(args.T, 8):.3f} ms", flush=True)
    t0 = time.time()
    records = run_all(args.samplers, args.runs, args.budget, args.T, args.seed, args.jobs,
                      args.init)
    print(summarize(records, args.samplers, mi_5))
    print(hmmlearn_row(args.T, mi_5))
    print(f"# wall time {time.time() - t0:.0f} s; raw values: {args.out}")
    save_csv(records, args.out)


if __name__ == "__main__":
    main()
