"""Reference timing: one full FFBS pass of a K-state Gaussian HMM.

``ffbs_ms_per_pass(T, K)`` is the yardstick other benchmarks are expressed
against ("a sweep of sampler X costs N FFBS passes").  One pass = what a
blocked Gibbs sweep has to do per state-sequence draw:

1. build the ``(T, K)`` Gaussian log-emission matrix from the current
   per-state means / standard deviations (numba kernel);
2. forward-filter / backward-sample one path with
   :func:`sk_ihmm._messages.ffbs`, handing it the Generator as a
   :func:`sk_ihmm._rng.generator_handle`, as the samplers' sweeps do (passing
   the Generator object costs about 6 microseconds per call, 15% of a pass
   at T = 500, K = 5).

JIT compilation is excluded (one warm-up pass before timing).  Run as a
script to print the reference for ``T = 4000`` and ``K in (4, 10, 30)``.
"""

import math
import os
import sys
import time

import numpy as np
from numba import njit

try:
    from sk_ihmm._messages import ffbs
except ImportError:  # running from a source checkout without installing
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from sk_ihmm._messages import ffbs
from sk_ihmm._rng import generator_handle

__all__ = ["ffbs_ms_per_pass", "random_gaussian_hmm"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@njit(cache=True)
def _gaussian_log_emission(y, means, sds, out):
    T = y.shape[0]
    K = means.shape[0]
    inv = np.empty(K)
    cst = np.empty(K)
    for k in range(K):
        inv[k] = 1.0 / sds[k]
        cst[k] = -math.log(sds[k]) - _HALF_LOG_2PI
    for t in range(T):
        yt = y[t]
        for k in range(K):
            z = (yt - means[k]) * inv[k]
            out[t, k] = cst[k] - 0.5 * z * z
    return out


def random_gaussian_hmm(T, K, seed=0):
    """A random sticky K-state 1-d Gaussian HMM and a length-T sample from it."""
    rng = np.random.default_rng(seed)
    trans = rng.dirichlet(np.ones(K), size=K)
    trans = 0.5 * trans + 0.5 * np.eye(K)
    init = rng.dirichlet(np.ones(K))
    means = np.sort(rng.normal(scale=3.0 * K, size=K))
    sds = rng.uniform(0.5, 2.0, size=K)
    z = np.empty(T, dtype=np.int64)
    z[0] = rng.choice(K, p=init)
    cum = np.cumsum(trans, axis=1)
    u = rng.random(T)
    for t in range(1, T):
        z[t] = min(np.searchsorted(cum[z[t - 1]], u[t]), K - 1)
    y = means[z] + sds[z] * rng.normal(size=T)
    return y, np.log(init), np.log(trans), means, sds


def ffbs_ms_per_pass(T, K, n_repeat=5, seed=0):
    """Median wall time (ms) of one FFBS pass, emission matrix included.

    Parameters
    ----------
    T : int
        Sequence length.
    K : int
        Number of states.
    n_repeat : int
        Number of timed passes (median reported).
    seed : int
        Seed of the random HMM and of the sampling Generator.
    """
    y, log_init, log_trans, means, sds = random_gaussian_hmm(T, K, seed)
    log_emit = np.empty((T, K))
    log_final = np.zeros(K)
    out = np.empty(T, dtype=np.int64)
    rng = np.random.default_rng(seed + 1)

    def one_pass():
        _gaussian_log_emission(y, means, sds, log_emit)
        return ffbs(log_init, log_trans, log_emit, log_final, generator_handle(rng), out)

    one_pass()  # compile / load from cache
    times = np.empty(n_repeat)
    for r in range(n_repeat):
        t0 = time.perf_counter()
        one_pass()
        times[r] = time.perf_counter() - t0
    return 1e3 * float(np.median(times))


def settled_cost(smp, state, prob, rng, chunks=10, sweeps=20):
    """Cost of a sweep where the chain has arrived, beside an FFBS pass.

    After the budgeted run, ``chunks`` chunks of ``sweeps`` further sweeps
    (the chain goes on, outside the budget and the recorded figures), timed
    on the wall clock, with ``K`` recorded after every sweep. Returns

    * ``cost_ms``: the least ms per sweep over the chunks;
    * ``cost_K``: the median ``K`` over the sweeps, and ``ffbs_ms``: one
      numba FFBS pass at that ``K`` and the same ``T``
      (:func:`ffbs_ms_per_pass`, least of 5 medians of 20);
    * ``ratio_matched``: the median over the chunks of (ms per sweep of the
      chunk) / (mean over its sweeps of an FFBS pass at the sweep's ``K``),
      the ratio at the same ``K`` sweep by sweep, with the reference passes
      timed right after the chunk (median of 5 per ``K``), so that both
      sides of each ratio see the machine at the same moment. It differs
      from ``cost_ms / ffbs_ms`` where ``K`` fluctuates (a posterior that
      often holds a small extra state pays for it in the sweep, and the
      reference pass at the median ``K`` does not) and where the machine's
      speed drifts during the measurement (on a shared machine it does, by
      up to about 8% between runs of the same chain).

    Everything is measured in this process.
    """
    T = state.x.shape[0]
    passes = {}

    def ffbs(k):
        if k not in passes:
            passes[k] = min(ffbs_ms_per_pass(T, k, n_repeat=20) for _ in range(5))
        return passes[k]

    best, ks, matched = np.inf, [], []
    for _ in range(chunks):
        chunk_ks, seconds = [], 0.0
        for _ in range(sweeps):
            t = time.perf_counter()
            smp.step(state, prob, rng)
            seconds += time.perf_counter() - t
            chunk_ks.append(np.unique(state.x).shape[0])     # outside the timing
        ms = seconds / sweeps * 1e3
        best = min(best, ms)
        ks.extend(chunk_ks)
        paired = {k: ffbs_ms_per_pass(T, k) for k in set(chunk_ks)}   # timed now
        matched.append(ms / np.mean([paired[k] for k in chunk_ks]))
    k = int(np.median(ks))
    return {"cost_ms": best, "cost_K": k, "ffbs_ms": ffbs(k),
            "ratio_matched": float(np.median(matched))}


def main():
    T = 4000
    for K in (4, 10, 30):
        ms = ffbs_ms_per_pass(T, K, n_repeat=20)
        print(f"FFBS reference  T={T:6d}  K={K:3d}  {ms:8.3f} ms/pass")


if __name__ == "__main__":
    main()
