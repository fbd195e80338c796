"""Tests of the HMM message-passing kernels in ``sk_ihmm._messages``.

Everything is checked against brute-force enumeration of all ``K**L`` paths
for tiny problems; sampling kernels are checked by total-variation distance
with thresholds simulated from iid multinomial noise.
"""

import itertools
import math

import numpy as np
import pytest
from numba import njit
from scipy.special import logsumexp

from sk_ihmm._messages import (
    LINEAR_WEIGHT_FLOOR,
    beam_sample,
    beam_sample_linear,
    ffbs,
    ffbs_linear,
    forward_backward,
    forward_loglik,
    linear_weights,
    path_log_weight,
    path_log_weight_linear,
    viterbi,
)
from sk_ihmm._vmath import EXP_MAX, EXP_MIN, exp_inplace


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def make_problem(seed, K=3, L=4, forbid=True, scale=1.5):
    """Unnormalised log weights (rows of exp(log_trans) have different sums)."""
    r = np.random.default_rng(seed)
    li = r.normal(scale=scale, size=K)
    lt = r.normal(scale=scale, size=(K, K))
    le = r.normal(size=(L, K))
    lf = r.normal(size=K)
    if forbid:
        lt[0, 1] = -np.inf
        le[1, K - 1] = -np.inf
        li[K - 1] = -np.inf if K > 3 else li[K - 1]
    return li, lt, le, lf


def enumerate_paths(li, lt, le, lf):
    """All paths (lexicographic order = base-K code) and their log weights."""
    K = li.size
    L = le.shape[0]
    P = np.array(list(itertools.product(range(K), repeat=L)), dtype=np.int64)
    w = (
        li[P[:, 0]]
        + lt[P[:, :-1], P[:, 1:]].sum(axis=1)
        + le[np.arange(L), P].sum(axis=1)
        + lf[P[:, -1]]
    )
    return P, w


def code(path, K):
    return int((np.asarray(path) * K ** np.arange(path.size)[::-1]).sum())


def tv(counts, p):
    return 0.5 * np.abs(counts / counts.sum() - p).sum()


def iid_tv_threshold(p, n, q=0.999, n_sim=2000, seed=12345):
    """Quantile of the TV distance of n iid draws from p (simulated)."""
    r = np.random.default_rng(seed)
    sims = r.multinomial(n, p, size=n_sim) / n
    return np.quantile(0.5 * np.abs(sims - p).sum(axis=1), q)


def integrated_autocorr(x, max_lag=2000):
    """Sokal's windowed integrated autocorrelation time."""
    x = np.asarray(x, dtype=float)
    x = x - x.mean()
    n = x.size
    if not np.any(x):
        return 1.0
    f = np.fft.rfft(x, 2 * n)
    ac = np.fft.irfft(f * np.conj(f))[:n]
    ac /= ac[0]
    tau = 1.0
    for k in range(1, min(max_lag, n)):
        tau += 2.0 * ac[k]
        if k >= 5 * tau:
            break
    return tau


# --------------------------------------------------------------------------
# exact quantities against enumeration
# --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("forbid", [False, True])
def test_ffbs_logz_and_path_weight(seed, forbid):
    li, lt, le, lf = make_problem(seed, K=3, L=4, forbid=forbid)
    P, w = enumerate_paths(li, lt, le, lf)
    out = np.empty(4, dtype=np.int64)
    logz = ffbs(li, lt, le, lf, np.random.default_rng(0), out)
    assert logz == pytest.approx(logsumexp(w), rel=1e-12, abs=1e-12)
    pw = np.array([path_log_weight(li, lt, le, lf, path) for path in P])
    np.testing.assert_allclose(pw, w, rtol=1e-12, atol=1e-12)  # -inf == -inf
    if forbid:
        assert np.sum(np.isneginf(w)) > 0
    # the sampled path has positive weight
    assert np.isfinite(path_log_weight(li, lt, le, lf, out))


def test_ffbs_logz_larger_K():
    li, lt, le, lf = make_problem(7, K=5, L=5, forbid=True)
    P, w = enumerate_paths(li, lt, le, lf)
    out = np.empty(5, dtype=np.int64)
    logz = ffbs(li, lt, le, lf, np.random.default_rng(0), out)
    assert logz == pytest.approx(logsumexp(w), rel=1e-12)


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("forbid", [False, True])
def test_forward_backward_and_loglik(seed, forbid):
    K, L = 3, 5
    li, lt, le, _ = make_problem(seed, K=K, L=L, forbid=forbid)
    lf = np.zeros(K)
    P, w = enumerate_paths(li, lt, le, lf)
    ll_exact = logsumexp(w)
    p = np.exp(w - ll_exact)
    gamma_exact = np.zeros((L, K))
    for t in range(L):
        np.add.at(gamma_exact[t], P[:, t], p)
    ll, gamma = forward_backward(li, lt, le)
    assert ll == pytest.approx(ll_exact, rel=1e-12)
    assert forward_loglik(li, lt, le) == pytest.approx(ll_exact, rel=1e-12)
    np.testing.assert_allclose(gamma, gamma_exact, atol=1e-12)
    if forbid:
        assert np.all(gamma[1, K - 1] == 0.0)


@pytest.mark.parametrize("seed", [0, 1, 4])
@pytest.mark.parametrize("forbid", [False, True])
def test_viterbi(seed, forbid):
    K, L = 3, 5
    li, lt, le, _ = make_problem(seed, K=K, L=L, forbid=forbid)
    P, w = enumerate_paths(li, lt, le, np.zeros(K))
    score, path = viterbi(li, lt, le)
    assert path.dtype == np.int64
    assert score == pytest.approx(w.max(), rel=1e-12)
    np.testing.assert_array_equal(path, P[np.argmax(w)])


def test_unreachable_state_with_huge_emission():
    """A forbidden state with a much larger emission must not make the
    reachable ones underflow (emission shift uses reachable states only)."""
    K, L = 3, 4
    r = np.random.default_rng(3)
    li = r.normal(size=K)
    lt = r.normal(size=(K, K))
    li[2] = -np.inf
    lt[:, 2] = -np.inf
    le = -1500.0 + r.normal(size=(L, K))
    le[:, 2] = 0.0  # 1500 nats above the reachable states
    lf = np.zeros(K)
    P, w = enumerate_paths(li, lt, le, lf)
    out = np.empty(L, dtype=np.int64)
    logz = ffbs(li, lt, le, lf, np.random.default_rng(0), out)
    assert logz == pytest.approx(logsumexp(w), rel=1e-12)
    assert not np.any(out == 2)
    assert forward_loglik(li, lt, le) == pytest.approx(logsumexp(w), rel=1e-12)
    ll, gamma = forward_backward(li, lt, le)
    np.testing.assert_allclose(gamma.sum(axis=1), 1.0)
    assert np.all(gamma[:, 2] == 0.0)
    out2 = np.empty(L, dtype=np.int64)
    n = beam_sample(li, lt, le, lf, out, np.random.default_rng(1), out2)
    assert not np.any(out2 == 2) and L <= n <= 2 * L


def test_zero_total_weight():
    K, L = 3, 4
    li, lt, le, lf = make_problem(0, K=K, L=L, forbid=False)
    le = le.copy()
    le[2, :] = -np.inf
    out = np.zeros(L, dtype=np.int64)
    assert ffbs(li, lt, le, lf, np.random.default_rng(0), out) == -np.inf
    assert np.all(out == -1)
    assert forward_loglik(li, lt, le) == -np.inf
    ll, gamma = forward_backward(li, lt, le)
    assert ll == -np.inf and np.all(gamma == 0.0)
    # final factor forbidding everything
    li, lt, le, lf = make_problem(0, K=K, L=L, forbid=False)
    assert ffbs(li, lt, le, np.full(K, -np.inf), np.random.default_rng(0), out) == -np.inf


def test_final_factor_matters():
    li, lt, le, lf = make_problem(5, K=3, L=3, forbid=False)
    lf = np.array([0.0, -np.inf, -np.inf])
    P, w = enumerate_paths(li, lt, le, lf)
    out = np.empty(3, dtype=np.int64)
    g = np.random.default_rng(0)
    logz = ffbs(li, lt, le, lf, g, out)
    assert logz == pytest.approx(logsumexp(w), rel=1e-12)
    for _ in range(200):
        ffbs(li, lt, le, lf, g, out)
        assert out[-1] == 0


# --------------------------------------------------------------------------
# sampling
# --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_ffbs_sample_distribution(seed):
    K, L = 3, 4
    li, lt, le, lf = make_problem(seed, K=K, L=L, forbid=True)
    P, w = enumerate_paths(li, lt, le, lf)
    p = np.exp(w - logsumexp(w))
    n = 40000
    g = np.random.default_rng(100 + seed)
    out = np.empty(L, dtype=np.int64)
    counts = np.zeros(len(p))
    logz = None
    for _ in range(n):
        logz = ffbs(li, lt, le, lf, g, out)
        counts[code(out, K)] += 1
    # probability of the last draw = path weight - log Z
    k = code(out, K)
    assert path_log_weight(li, lt, le, lf, out) - logz == pytest.approx(np.log(p[k]))
    assert np.all(counts[p == 0] == 0)
    assert tv(counts, p) < iid_tv_threshold(p, n)


def test_linear_weights_is_a_shifted_clamped_exp():
    """The vectorised exp of the proposal weights (label-major): each step
    shifted by its maximum over the states, clamped at LINEAR_WEIGHT_FLOOR,
    relative error below 1e-8 (also for huge spreads, ties, steps of one
    value and a single state)."""
    r = np.random.default_rng(0)
    le = np.concatenate([r.normal(scale=50.0, size=(40, 7)), r.uniform(-400, 300, size=(40, 7)),
                         np.full((2, 7), -3.25), r.normal(size=(5, 7)) * 1e-9])
    for lw in (np.ascontiguousarray(le.T), le[:, :1].T.copy(), le[:3].T.copy()):
        K, L = lw.shape
        out, scratch = np.empty_like(lw), np.full((K + 1, L), np.nan)
        linear_weights(lw, out, scratch)
        want = np.exp(np.maximum(lw - lw.max(axis=0), LINEAR_WEIGHT_FLOOR))
        np.testing.assert_allclose(out, want, rtol=1e-8, atol=0)
        assert np.all(out.max(axis=0) == 1.0)


def test_exp_inplace_is_exp_within_an_ulp():
    """The vectorised accurate exp (particle Gibbs emission terms): within
    one ulp of numpy's exp over the whole range, exact at 0, clipped to
    [EXP_MIN, EXP_MAX], in place."""
    r = np.random.default_rng(0)
    x = np.concatenate([r.uniform(EXP_MIN, EXP_MAX, 20000), r.normal(size=500) * 1e-12,
                        r.uniform(-0.35, 0.35, 500), [0.0, EXP_MIN, EXP_MAX, -1e4, 1e4]])
    a, bits = x.copy(), np.full(x.shape, np.nan)
    exp_inplace(a, bits)
    want = np.exp(np.clip(x, EXP_MIN, EXP_MAX))
    assert np.max(np.abs(a - want) / want) <= np.finfo(float).eps
    assert a[-5] == 1.0
    assert a[-2] == want[-4] and a[-1] == want[-3]


@pytest.mark.parametrize("seed", [0, 1])
def test_linear_forms_match_log_forms(seed):
    """ffbs_linear / path_log_weight_linear / beam_sample_linear on linear
    weights: log Z and every path weight as the log forms, less the row
    shifts of the emissions; the sampled distributions exact."""
    K, L = 3, 4
    li, lt, le, lf = make_problem(seed, K=K, L=L, forbid=True)
    P, w = enumerate_paths(li, lt, le, lf)
    shift = le.max(axis=1, keepdims=True)
    init, A, E, fin = np.exp(li), np.exp(lt), np.exp(le - shift), np.exp(lf)
    pw = np.array([path_log_weight_linear(init, A, E, fin, path) for path in P])
    np.testing.assert_allclose(pw + shift.sum(), w, rtol=1e-12, atol=1e-12)
    p = np.exp(w - logsumexp(w))
    g = np.random.default_rng(300 + seed)
    out = np.empty(L, dtype=np.int64)
    work = np.empty((L + 2) * K + K * K)
    with pytest.raises(ValueError, match="too small"):
        ffbs_linear(init, A, E, fin, np.random.default_rng(0), out, work[:-1])
    n = 40000
    counts = np.zeros(len(p))
    for _ in range(n):
        logz = ffbs_linear(init, A, E, fin, g, out, work)
        counts[code(out, K)] += 1
    assert logz + shift.sum() == pytest.approx(logsumexp(w), rel=1e-12)
    assert np.all(counts[p == 0] == 0)
    assert tv(counts, p) < iid_tv_threshold(p, n)
    # beam: a chain of moves, thresholds as in test_beam_sample_invariant_distribution
    fwork, iwork = np.empty(L + 3 * K + L * K + K * K), np.empty(L + 1 + 2 * K + L * K, np.int64)
    x = P[np.flatnonzero(p > 0)[np.argmin(p[p > 0])]].copy()
    codes = np.empty(n, dtype=np.int64)
    for it in range(n):
        beam_sample_linear(init, A, E, fin, x, g, x, fwork, iwork)
        codes[it] = code(x, K)
    counts = np.bincount(codes, minlength=len(p)).astype(float)
    assert np.all(counts[p == 0] == 0)
    assert tv(counts, p) < iid_tv_threshold(p, n) * math.sqrt(10.0)


def _run_beam_chain(li, lt, le, lf, start, n_iter, seed, slice_shape=1.0):
    K = li.size
    g = np.random.default_rng(seed)
    x = start.copy()
    codes = np.empty(n_iter, dtype=np.int64)
    visited = np.empty(n_iter, dtype=np.int64)
    for it in range(n_iter):
        visited[it] = beam_sample(li, lt, le, lf, x, g, x, slice_shape)  # in place
        codes[it] = code(x, K)
    return codes, visited


@pytest.mark.parametrize("seed, sticky, slice_shape",
                         [(0, 0.0, 1.0), (1, 0.0, 1.0), (2, 1.5, 1.0), (0, 0.0, 0.3), (2, 1.5, 0.5)])
def test_beam_sample_invariant_distribution(seed, sticky, slice_shape):
    """Run beam_sample as a Markov chain: its empirical path distribution must
    match the exact one.  The threshold is the iid 99.9% TV quantile times
    sqrt(10) (allowance for an integrated autocorrelation time <= 10, which
    is also asserted).  Slicing on row-normalised weights, keeping the
    transition weights next to the indicators, or not slicing the initial
    factor all give TV > 0.05 here (checked by mutation). ``sticky`` raises
    the log self-transitions, so that many slices make diagonal steps (see
    the module docstring); taking a step as diagonal when only the state of
    the old path (not every active state) has its off-diagonal weights below
    the slice, or keeping a state there without its self-transition above
    the slice, fails it (checked by mutation). ``slice_shape < 1``: Beta
    slices, whose passing transitions keep the weight ``trans^(1 - a)``;
    dropping that weight (or the first step's ``init^(1 - a)``) fails it
    (checked by mutation)."""
    K, L = 3, 4
    li, lt, le, lf = make_problem(seed, K=K, L=L, forbid=True)
    lt = lt + sticky * np.eye(K)
    P, w = enumerate_paths(li, lt, le, lf)
    p = np.exp(w - logsumexp(w))
    n = 60000
    # start from a low-probability (but valid) path
    valid = np.flatnonzero(p > 0)
    start = P[valid[np.argmin(p[valid])]]
    codes, visited = _run_beam_chain(li, lt, le, lf, start, n, 200 + seed, slice_shape)
    counts = np.bincount(codes, minlength=len(p)).astype(float)
    assert np.all(counts[p == 0] == 0)
    tau = max(
        integrated_autocorr(codes == np.argmax(p)),
        integrated_autocorr(codes // K ** (L - 1)),
        integrated_autocorr(codes % K),
    )
    assert tau < 10.0
    thr = iid_tv_threshold(p, n) * math.sqrt(10.0)
    assert tv(counts, p) < thr, (tv(counts, p), thr)
    assert np.all((visited >= L) & (visited <= L * K))
    # the chain actually moves
    assert np.mean(codes[1:] != codes[:-1]) > 0.2


@pytest.mark.parametrize("K", [8, 12])
def test_beam_sample_marginals_larger_problem(K):
    """Larger K exercises the sparse iteration with many active states (K=8:
    the branching step, K=12: the dense one, see _BEAM_DENSE_MIN_K); compare
    the chain's marginals with forward_backward."""
    L = 25
    r = np.random.default_rng(11)
    li = r.normal(scale=1.0, size=K)
    lt = r.normal(scale=2.0, size=(K, K))
    lt[r.random((K, K)) < 0.25] = -np.inf
    np.fill_diagonal(lt, 1.0)
    le = r.normal(scale=1.0, size=(L, K))
    lf = np.zeros(K)
    _, gamma = forward_backward(li, lt, le)
    g = np.random.default_rng(3)
    x = np.empty(L, dtype=np.int64)
    ffbs(li, lt, le, lf, g, x)
    n = 20000
    emp = np.zeros((L, K))
    for it in range(n):
        beam_sample(li, lt, le, lf, x, g, x)
        emp[np.arange(L), x] += 1
    emp /= n
    # binomial SE with autocorrelation allowance 10, 5 sigma
    se = np.sqrt(np.maximum(gamma * (1 - gamma), 1e-4) * 10.0 / n)
    assert np.all(np.abs(emp - gamma) < 5 * se + 1e-3), np.max(np.abs(emp - gamma) / se)


def test_beam_sparsity_reduces_visited_states():
    """With strongly peaked initial/transition weights few transitions pass
    the slice, so far fewer than L*K (t, state) pairs carry forward mass."""
    K, L = 50, 500
    r = np.random.default_rng(0)
    lt = np.full((K, K), -30.0) + r.normal(scale=0.1, size=(K, K))
    lt[np.arange(K), (np.arange(K) + 1) % K] = 0.0
    li = np.full(K, -30.0)
    li[0] = 0.0
    le = r.normal(scale=0.1, size=(L, K))
    lf = np.zeros(K)
    x = np.empty(L, dtype=np.int64)
    g = np.random.default_rng(1)
    ffbs(li, lt, le, lf, g, x)
    n_vis = [beam_sample(li, lt, le, lf, x, g, x) for _ in range(20)]
    assert min(n_vis) >= L and max(n_vis) < 0.2 * L * K
    assert np.isfinite(path_log_weight(li, lt, le, lf, x))


def test_beam_rejects_invalid_start():
    li, lt, le, lf = make_problem(0, K=3, L=4, forbid=True)
    bad = np.array([0, 1, 0, 0], dtype=np.int64)  # uses forbidden 0 -> 1
    with pytest.raises(ValueError):
        beam_sample(li, lt, le, lf, bad, np.random.default_rng(0), np.empty(4, np.int64))


# --------------------------------------------------------------------------
# reproducibility
# --------------------------------------------------------------------------
def test_seeded_reproducibility():
    K, L = 6, 300
    li, lt, le, lf = make_problem(9, K=K, L=L, forbid=True)
    a = np.empty(L, dtype=np.int64)
    b = np.empty(L, dtype=np.int64)
    ffbs(li, lt, le, lf, np.random.default_rng(42), a)
    ffbs(li, lt, le, lf, np.random.default_rng(42), b)
    np.testing.assert_array_equal(a, b)
    c = np.empty(L, dtype=np.int64)
    ffbs(li, lt, le, lf, np.random.default_rng(43), c)
    assert np.any(a != c)
    ba = np.empty(L, dtype=np.int64)
    bb = np.empty(L, dtype=np.int64)
    beam_sample(li, lt, le, lf, a, np.random.default_rng(7), ba)
    beam_sample(li, lt, le, lf, a, np.random.default_rng(7), bb)
    np.testing.assert_array_equal(ba, bb)


# --------------------------------------------------------------------------
# long sequences: no underflow
# --------------------------------------------------------------------------
@njit
def _logspace_forward(li, lt, le):
    """Independent reference: plain log-space forward with log-sum-exp."""
    L, K = le.shape
    a = np.empty(K)
    for j in range(K):
        a[j] = li[j] + le[0, j]
    new = np.empty(K)
    for t in range(1, L):
        for j in range(K):
            m = -np.inf
            for i in range(K):
                v = a[i] + lt[i, j]
                if v > m:
                    m = v
            s = 0.0
            for i in range(K):
                s += math.exp(a[i] + lt[i, j] - m)
            new[j] = m + math.log(s) + le[t, j]
        for j in range(K):
            a[j] = new[j]
    m = -np.inf
    for j in range(K):
        if a[j] > m:
            m = a[j]
    s = 0.0
    for j in range(K):
        s += math.exp(a[j] - m)
    return m + math.log(s)


def _scipy_forward(li, lt, le):
    a = li + le[0]
    for t in range(1, le.shape[0]):
        a = logsumexp(a[:, None] + lt, axis=0) + le[t]
    return logsumexp(a)


def test_long_sequence_no_underflow():
    K, L = 5, 1_000_000
    r = np.random.default_rng(0)
    li = np.log(r.dirichlet(np.ones(K)))
    lt = np.log(r.dirichlet(np.ones(K), size=K))
    lt[0, 3] = -np.inf
    le = -1000.0 + r.normal(scale=5.0, size=(L, K))
    lf = np.zeros(K)
    # prefix against scipy log-space forward
    n = 2000
    ref_prefix = _scipy_forward(li, lt, le[:n])
    out_p = np.empty(n, dtype=np.int64)
    assert ffbs(li, lt, le[:n], lf, np.random.default_rng(0), out_p) == pytest.approx(
        ref_prefix, rel=1e-12
    )
    assert forward_loglik(li, lt, le[:n]) == pytest.approx(ref_prefix, rel=1e-12)
    # full length
    out = np.empty(L, dtype=np.int64)
    logz = ffbs(li, lt, le, lf, np.random.default_rng(0), out)
    assert np.isfinite(logz) and logz < -9e8
    assert logz == pytest.approx(_logspace_forward(li, lt, le), rel=1e-11)
    assert forward_loglik(li, lt, le) == pytest.approx(logz, rel=1e-12)
    assert out.min() >= 0 and out.max() < K
    assert np.isfinite(path_log_weight(li, lt, le, lf, out))
    ll, gamma = forward_backward(li, lt, le)
    assert ll == pytest.approx(logz, rel=1e-12)
    assert np.all(np.isfinite(gamma))
    np.testing.assert_allclose(gamma.sum(axis=1), 1.0, atol=1e-9)
    score, vpath = viterbi(li, lt, le)
    assert np.isfinite(score) and score <= logz
    # two summation orders of 10^6 terms of size ~1e3
    assert score == pytest.approx(path_log_weight(li, lt, le, lf, vpath), rel=1e-11)
    out2 = np.empty(L, dtype=np.int64)
    n_vis = beam_sample(li, lt, le, lf, out, np.random.default_rng(1), out2)
    assert L <= n_vis <= L * K
    assert np.isfinite(path_log_weight(li, lt, le, lf, out2))


def test_well_separated_states_flush_without_losing_accuracy():
    """Well separated Gaussian states (the regime where the log forward pass
    flushes masses below 1e-280 and emission factors below exp(-700)): log Z
    and the posterior marginals still match the log-space references."""
    K, L = 12, 3000
    r = np.random.default_rng(4)
    means = np.sort(r.normal(scale=36.0, size=K))
    sds = r.uniform(0.5, 2.0, size=K)
    A = 0.5 * r.dirichlet(np.ones(K), size=K) + 0.5 * np.eye(K)
    z = np.empty(L, dtype=np.int64)
    z[0] = 0
    for t in range(1, L):
        z[t] = r.choice(K, p=A[z[t - 1]])
    y = means[z] + sds[z] * r.normal(size=L)
    le = -0.5 * ((y[:, None] - means) / sds) ** 2 - np.log(sds) - 0.5 * np.log(2 * np.pi)
    li, lt = np.log(np.full(K, 1.0 / K)), np.log(A)
    d = le - le.max(axis=1, keepdims=True)
    assert np.mean(d < -700) > 0.05          # the flush regime is exercised
    ref = _logspace_forward(li, lt, le)
    assert forward_loglik(li, lt, le) == pytest.approx(ref, rel=1e-12)
    logz, gamma = forward_backward(li, lt, le)
    assert logz == pytest.approx(ref, rel=1e-12)
    # posterior marginals by a log-space forward-backward
    la = np.empty((L, K))
    lb = np.zeros((L, K))
    la[0] = li + le[0]
    for t in range(1, L):
        la[t] = logsumexp(la[t - 1][:, None] + lt, axis=0) + le[t]
    for t in range(L - 2, -1, -1):
        lb[t] = logsumexp(lt + (le[t + 1] + lb[t + 1])[None, :], axis=1)
    g_ref = np.exp(la + lb - ref)
    np.testing.assert_allclose(gamma, g_ref, atol=1e-12)
    out = np.empty(L, dtype=np.int64)
    assert ffbs(li, lt, le, np.zeros(K), np.random.default_rng(0), out) == pytest.approx(
        ref, rel=1e-12)
