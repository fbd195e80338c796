"""Particle filter on the HCRP-HMM predictive (initialisation and scoring).

Each particle carries its own copy of the seating *counts* (customers per
restaurant and dish, root customers per dish) and of the emission statistics,
starting from a posterior snapshot (or from nothing, for initialisation). A
particle only ever *adds* customers, and adding needs no table identities:
the customer opens a new root table with probability
``alpha * p0(k) / (n_jk + alpha * p0(k) + kappa [j == k])``, so counts suffice.

The proposal is the predictive itself (fully adapted): at step ``t`` a
particle in state ``j`` gives every state ``k`` (existing ones and one new)
the weight ``p(k | j, s) f_k(y_t)``; their sum is that particle's predictive
likelihood of ``y_t`` and its incremental weight. The per-observation
likelihood of Makino et al. Eq. (39) is ``l(y_t) = sum_p W_p sum_k w_pk`` with
normalised weights ``W``. Systematic resampling when the effective sample
size drops below half the particles.
"""

import math

import numpy as np
from numba import njit

from ._hcrp import pred_prob, root_prob
from ._interrupt import check_interrupt
from ._rng import draw_index
from .emissions import log_pred, update

__all__ = ["particle_filter", "snapshot_log_likelihoods", "initial_labels"]


#: Work per chunk of the filter, in particle-state pairs (``n_particles *
#: capacity`` per step): a chunk is a fraction of a second, so Ctrl-C is
#: answered between chunks (:mod:`sk_ihmm._interrupt`).
CHUNK_WORK = 4_000_000


@njit(cache=True, nogil=True)
def _resample_into(particles, spare, ancestors, hi):
    """Copy particle ``ancestors[p]`` into slot ``p`` of ``spare``, for every
    ``p``: the counts and statistics of its labels ``< hi`` and its totals."""
    counts, row_sums, root_counts, stats, m_tot, used, cur = particles
    to_counts, to_row_sums, to_root_counts, to_stats, to_m_tot, to_used, to_cur = spare
    # explicit loops: a slice assignment compiles a broadcasting routine per shape
    for p in range(ancestors.shape[0]):
        c = ancestors[p]
        for j in range(hi):
            for k in range(hi):
                to_counts[p, j, k] = counts[c, j, k]
            to_row_sums[p, j] = row_sums[c, j]
            to_root_counts[p, j] = root_counts[c, j]
            for i in range(stats.shape[2]):
                to_stats[p, j, i] = stats[c, j, i]
        to_m_tot[p] = m_tot[c]
        to_used[p] = used[c]
        to_cur[p] = cur[c]


@njit(cache=True, nogil=True, inline="always")
def _max(a):
    """``a.max()`` of a non-empty 1-d array, NaN first found included: numba's
    ``max`` iterates with ``np.nditer``, slow to compile, once per dtype."""
    mx = a[0]
    if mx != mx:
        return mx
    for i in range(1, a.shape[0]):
        v = a[i]
        if v != v:
            return v
        if v > mx:
            mx = v
    return mx


@njit(cache=True, nogil=True, inline="always")
def _normalise(logw):
    """Normalise the log weights in place; returns their effective sample size."""
    P = logw.shape[0]
    mx = _max(logw)
    tot = 0.0
    for p in range(P):
        tot += math.exp(logw[p] - mx)
    ess_den = 0.0
    for p in range(P):
        wn = math.exp(logw[p] - mx) / tot
        logw[p] = math.log(wn) if wn > 0 else -np.inf
        ess_den += wn * wn
    return 1.0 / ess_den


@njit(cache=True, nogil=True, inline="always")
def _systematic(logw, rng, a):
    """Systematic resampling of the normalised ``logw``: ancestors into ``a``."""
    P = logw.shape[0]
    u0 = rng.random() / P
    c = 0
    cum = math.exp(logw[0])
    for p in range(P):
        u = u0 + p / P
        while u > cum and c < P - 1:
            c += 1
            cum += math.exp(logw[c])
        a[p] = c


@njit(cache=True, nogil=True, inline="always")
def _transition_log_weights(counts, row_sums, root_counts, m_tot, used, st, p, j, conc, fam,
                            hyp, Y, t, lw):
    """Log weights of particle ``p``'s next label, label ``k`` in ``lw[k -
    1]`` for ``k = 1 .. nk`` (the HCRP predictive from ``j`` times the
    emission predictive of ``Y[t]``); label ``nk`` is a new one unless the
    capacity is full. Returns ``nk``."""
    C = counts.shape[1]
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    n_j, mt = row_sums[p, j], m_tot[p]
    nk = used[p] + 1 if used[p] < C - 1 else used[p]
    for k in range(1, nk + 1):
        lw[k - 1] = (math.log(pred_prob(counts[p, j, k], n_j, root_counts[p, k], mt, alpha,
                                        gamma, kappa, j, k))
                     + log_pred(fam, st, k, hyp, Y, t))
    return nk


@njit(cache=True, nogil=True, inline="always")
def _seat(counts, row_sums, root_counts, m_tot, p, j, k, conc, rng):
    """Seat particle ``p``'s customer ``j -> k``; its table (a root table or
    not) is drawn from the counts only."""
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    kappa_j = kappa if j > 0 else 0.0
    w_root = alpha * root_prob(root_counts[p, k], m_tot[p], gamma)
    w_rest = counts[p, j, k] + (kappa_j if j == k else 0.0)
    if rng.random() * (w_root + w_rest) < w_root:
        root_counts[p, k] += 1
        m_tot[p] += 1
    counts[p, j, k] += 1
    row_sums[p, j] += 1


@njit(cache=True, nogil=True)
def _pf_steps(t_begin, t_end, particles, spare, hi_used, logw, conc, Y, seq_first, fam, hyp,
              rng, keep_paths, paths, anc, out):
    """Filter steps ``t_begin .. t_end - 1``, writing ``out[t]``: the loop
    state of :func:`particle_filter` between two checks for Ctrl-C, hence
    its parameters.

    ``particles`` = ``(counts, row_sums, root_counts, stats, m_tot, used,
    cur)``: per particle the transition counts, their row sums, the root
    customers per dish, the emission statistics, the root total, the highest
    label used and the current label; ``spare`` has the same shapes (the
    resampling target).
    Resampling swaps the two, so the kernel returns ``(hi_used, swapped)``:
    when ``swapped`` the caller's ``spare`` now holds the particles.
    """
    swapped = False
    P, C = particles[0].shape[0], particles[0].shape[1]
    a = np.empty(P, np.int64)
    lw = np.empty(C)
    lse = np.empty(P)
    for t in range(t_begin, t_end):
        # ---- normalise weights, resample if the ESS is low ----
        if _normalise(logw) < 0.5 * P:
            _systematic(logw, rng, a)
            # copy every label any particle has ever used: a slot beyond the
            # current maximum may still hold counts of a particle that died
            hi_used = max(hi_used, _max(particles[5]))
            _resample_into(particles, spare, a, hi_used + 1)
            particles, spare = spare, particles
            swapped = not swapped
            for p in range(P):
                logw[p] = -math.log(P)
        else:
            for p in range(P):
                a[p] = p
        counts, row_sums, root_counts, stats, m_tot, used, cur = particles
        # ---- propagate: draw each particle's label, seat it ----
        for p in range(P):
            j = 0 if seq_first[t] else cur[p]
            st = stats[p]   # one view per particle: views are reference-counted
            nk = _transition_log_weights(counts, row_sums, root_counts, m_tot, used, st,
                                         p, j, conc, fam, hyp, Y, t, lw)
            # exp(lw - max) in place; no slice views (each counts a reference,
            # per particle and step)
            m_lw = lw[0]
            for i in range(1, nk):
                m_lw = max(m_lw, lw[i])
            s = 0.0
            for i in range(nk):
                lw[i] = math.exp(lw[i] - m_lw)
                s += lw[i]
            lse[p] = m_lw + math.log(s)
            knew = 1 + draw_index(lw, nk, rng.random() * s)
            _seat(counts, row_sums, root_counts, m_tot, p, j, knew, conc, rng)
            update(fam, st, knew, Y, t, 1.0)
            if knew > used[p]:
                used[p] = knew
            cur[p] = knew
            if keep_paths:
                paths[t, p] = knew
                anc[t, p] = a[p]
        # ---- per-observation predictive likelihood, then weights ----
        m2 = -np.inf
        for p in range(P):
            v = logw[p] + lse[p]
            if v > m2:
                m2 = v
        s2 = 0.0
        for p in range(P):
            s2 += math.exp(logw[p] + lse[p] - m2)
        out[t] = m2 + math.log(s2)
        for p in range(P):
            logw[p] += lse[p]
    return hi_used, swapped


def particle_filter(problem_like, Y, seq_first, base, n_particles, rng, n_extra=None,
                    keep_paths=False):
    """Run the filter from ``base`` (a Snapshot or ``None``), in chunks of
    steps with a check for Ctrl-C between them.

    Returns ``(log_lik_per_step, final_log_weights, paths, ancestors)``.
    """
    fam, hyp, n_stats, conc = problem_like
    T = Y.shape[0]
    P = int(n_particles)
    if base is None:
        K0 = 0
        n0 = np.zeros((1, 1), np.int64)
        mk0 = np.zeros(1, np.int64)
        nj0 = np.zeros(1, np.int64)
        stats0 = np.zeros((1, n_stats))
    else:
        K0 = base.n.shape[0] - 1
        n0, stats0, conc = base.n, base.stats, base.conc
        nj0 = n0.sum(axis=1)
        mk0 = base.m.sum(axis=0)
    if n_extra is None:
        n_extra = min(T, 32)
    C = K0 + 1 + int(n_extra)
    particles = [np.zeros((P, C, C), np.int64), np.zeros((P, C), np.int64),
                 np.zeros((P, C), np.int64), np.zeros((P, C, stats0.shape[1])),
                 np.full(P, mk0.sum(), np.int64), np.full(P, K0, np.int64),
                 np.zeros(P, np.int64)]
    particles[0][:, :K0 + 1, :K0 + 1] = n0
    particles[1][:, :K0 + 1] = nj0
    particles[2][:, :K0 + 1] = mk0
    particles[3][:, :K0 + 1] = stats0
    spare = tuple(np.zeros_like(arr) for arr in particles)
    particles = tuple(particles)
    # int32: labels and particle indices; at 10^6 steps and 100 particles the
    # two arrays are 0.8 GB instead of 1.6
    paths = np.zeros((T if keep_paths else 1, P), np.int32)
    anc = np.zeros_like(paths)
    logw = np.zeros(P)
    out = np.empty(T)
    conc = np.asarray(conc, dtype=float)
    hi_used = K0
    chunk = max(1, CHUNK_WORK // (P * C))
    for t in range(0, T, chunk):
        check_interrupt()
        hi_used, swapped = _pf_steps(t, min(T, t + chunk), particles, spare, hi_used, logw, conc,
                                     Y, seq_first, fam, hyp, rng, keep_paths, paths, anc, out)
        if swapped:
            particles, spare = spare, particles
    return out, logw, paths, anc


def initial_labels(problem, n_particles, rng):
    """Initial labelling by a particle filter from the empty seating (Makino
    et al. 2011, Section 5.1): the path of one particle drawn by its final
    weight, labels >= 1."""
    kern = (problem.fam, problem.hyp, problem.n_stats, problem.conc0)
    _, logw, paths, anc = particle_filter(
        kern, problem.Y, problem.seq_first, None, n_particles, rng,
        n_extra=min(problem.Y.shape[0], 64), keep_paths=True,
    )
    w = np.exp(logw - logw.max())
    p = int(rng.choice(n_particles, p=w / w.sum()))
    T = problem.Y.shape[0]
    x = np.empty(T, np.int64)
    for t in range(T - 1, -1, -1):
        x[t] = paths[t, p]
        p = anc[t, p]
    return x


def snapshot_log_likelihoods(problem, snapshots, Y, seq_first, n_particles, rng, fam=None,
                             n_jobs=1):
    """``(n_snapshots, n_timesteps)`` per-observation log predictive likelihoods
    (``fam``: the kernels' tag for ``Y``, by default the problem's).

    ``rng``: one Generator, used by the snapshots' filters in turn, or a list
    with one per snapshot, whose filters then run ``n_jobs`` at a time in
    threads (the kernel releases the GIL); the result does not depend on
    ``n_jobs``."""
    out = np.empty((len(snapshots), Y.shape[0]))
    fam = problem.fam if fam is None else fam
    shared = isinstance(rng, np.random.Generator)     # one stream: the filters in turn
    rngs = [rng] * len(snapshots) if shared else rng

    def run(i):
        snap = snapshots[i]
        hyp = problem.hyp if snap.hyp is None else snap.hyp
        kern = (fam, hyp, problem.n_stats, None)
        out[i] = particle_filter(kern, Y, seq_first, snap, n_particles, rngs[i])[0]

    if shared or n_jobs == 1 or len(snapshots) < 2:
        for i in range(len(snapshots)):
            run(i)
    else:
        from joblib import Parallel, delayed

        Parallel(n_jobs=n_jobs, prefer="threads")(delayed(run)(i) for i in range(len(snapshots)))
    return out
