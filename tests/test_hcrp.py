"""The HCRP seating core: invariants, exact undo, growth, seating probability."""

import numpy as np
import pytest

from sk_ihmm import _hcrp
from sk_ihmm.samplers import get_sampler
from sk_ihmm.samplers._collapsed import seat_sequences
from sampler_harness import make_problem
from sk_ihmm.datasets import make_gaussian_hmm
from sk_ihmm.emissions import Gaussian


def _snapshot(s):
    return [a.copy() for a in (s.n, s.m, s.o, s.nj, s.mk, s.totals[:2], s.totals[5:])] + [
        sorted(_tables(s))]


def _tables(s):
    out = []
    C = s.n.shape[0]
    for j in range(C):
        for k in range(C):
            t = s.head[j, k]
            while t >= 0:
                out.append((j, k, int(s.tsize[t]), int(s.tover[t])))
                t = s.tnext[t]
    return out


@pytest.mark.parametrize("kappa", [0.0, 2.0])
def test_undo_restores_exact_seating(kappa):
    rng = np.random.default_rng(0)
    s = _hcrp.new_seating(8, 64, 64, 1.0, 1.5, kappa)
    x = np.array([1, 1, 2, 1, 3, 3, 2, 1, 1, 2], np.int64)
    first = np.zeros(10, bool)
    first[0] = True
    stats = np.zeros((8, Gaussian().n_stats(1)))
    seat_sequences(s, stats, x, np.zeros((10, 1)), first, Gaussian.tag, rng)
    _hcrp.check_invariants(s, x, first)
    for trial in range(200):
        before = _snapshot(s)
        for _ in range(6):
            j, k = int(rng.integers(0, 4)), int(rng.integers(1, 4))
            if rng.random() < 0.5 and s.n[j, k] > 0:
                _hcrp.remove_customer(*s, j, k, rng)
            else:
                _hcrp.add_customer(*s, j, k, rng)
        _hcrp.undo(*s)
        after = _snapshot(s)
        for a, b in zip(before, after):
            assert np.array_equal(np.asarray(a), np.asarray(b))
    _hcrp.check_invariants(s, x, first)


def test_growth_keeps_state():
    rng = np.random.default_rng(1)
    s = _hcrp.new_seating(4, 8, 8, 1.0, 1.0, 0.0)
    for _ in range(5):
        _hcrp.add_customer(*s, 0, 1, rng)
        _hcrp.clear_log(s.totals)
    g = _hcrp.grow(s, n_labels=9, n_tables=20, n_log=30)
    assert g.n.shape == (9, 9) or g.n.shape[0] >= 9
    assert g.tsize.shape[0] >= 20 and g.undo_log.shape[0] >= 30
    assert _tables(g) == _tables(s)
    for _ in range(30):
        _hcrp.add_customer(*g, 2, 3, rng)
        _hcrp.clear_log(g.totals)
    _hcrp.check_invariants(g)


def test_check_invariants_detects_corruption():
    rng = np.random.default_rng(0)
    s = _hcrp.new_seating(6, 16, 16, 1.0, 1.0, 0.0)
    _hcrp.add_customer(*s, 0, 1, rng)
    _hcrp.add_customer(*s, 1, 1, rng)
    _hcrp.check_invariants(s)
    s.n[1, 1] += 1
    with pytest.raises(AssertionError):
        _hcrp.check_invariants(s)


def test_log_seating_prob_matches_sequential_probabilities():
    """log p(s) (Eq. 18-20) equals the sum over customers, added one by one,
    of log p(k, table | s) (Eq. 23, with override tables for kappa > 0)."""
    rng = np.random.default_rng(3)
    alpha, gamma = 0.8, 1.7
    for kappa in (0.0, 1.3):
        s = _hcrp.new_seating(8, 64, 64, alpha, gamma, kappa)
        total = 0.0
        for _ in range(40):
            j, k = int(rng.integers(0, 4)), int(rng.integers(1, 5))
            c = alpha + (kappa if j > 0 else 0.0)
            denom = s.nj[j] + c
            m_tot, mk = s.totals[0], s.mk[k]
            # the predictive of the customer is the sum over where it may sit
            p0 = (mk if mk > 0 else gamma) / (m_tot + gamma)
            sticky = kappa if j == k else 0.0
            expect = (s.n[j, k] + alpha * p0 + sticky) / denom
            assert np.isclose(_hcrp.get_prob(*s, j, k), expect, rtol=1e-12)
            _hcrp.add_customer(*s, j, k, rng)
            op, t = s.undo_log[0, 0], s.undo_log[0, 3]
            _hcrp.clear_log(s.totals)
            if op == 0:  # joined a table that now has tsize[t] customers
                total += np.log((s.tsize[t] - 1) / denom)
            elif s.tover[t]:
                total += np.log(kappa / denom)
            elif mk > 0:
                total += np.log(alpha * mk / (m_tot + gamma) / denom)
            else:
                total += np.log(alpha * gamma / (m_tot + gamma) / denom)
        assert np.isclose(_hcrp.log_seating_prob(s), total, rtol=1e-12)


@pytest.mark.parametrize("sampler", ["rcd_gibbs"])
def test_sweeps_keep_invariants(sampler):
    X, z = make_gaussian_hmm(300, n_states=3, random_state=0)
    prob = make_problem(Gaussian(), X, 1, [120, 180], 1.0, 1.0, 0.5, (True, True, True))
    smp = get_sampler(sampler)
    rng = np.random.default_rng(0)
    state = smp.init(prob, (np.arange(300) % 7 + 1).astype(np.int64), rng)
    for _ in range(15):
        smp.step(state, prob, rng)
        _hcrp.check_invariants(state.seating, state.x, prob.seq_first)


def test_stirling_tables():
    """Known unsigned Stirling numbers of the first kind; rows for selected
    counts (the estimator's table) equal those of the full table (pgas's)."""
    S, row = _hcrp.log_stirling_table(8, 8)
    known = {(0, 0): 1, (1, 1): 1, (4, 2): 11, (5, 3): 35, (6, 1): 120, (7, 4): 735, (8, 8): 1}
    for (n, t), value in known.items():
        assert np.exp(S[row[n], t]) == pytest.approx(value, rel=1e-12)
    assert S[row[5], 0] == -np.inf and S[row[3], 4] == -np.inf
    ns = np.array([0, 2, 5, 8], np.int64)
    S_rows = _hcrp.log_stirling_rows(ns, 8)
    np.testing.assert_array_equal(S_rows, S[ns])
    # log_stirling_for: rows for exactly the counts given, the right maximum table count
    n = np.array([[0, 5, 0], [0, 3, 2], [0, 1, 8]])
    m = np.array([[0, 1, 0], [0, 2, 1], [0, 1, 3]])
    o = np.array([0, 0, 2])
    S_for, row_for = _hcrp.log_stirling_for([(n, m, o)])
    assert S_for.shape == (6, 6)           # n in {0, 1, 2, 3, 5, 8}; tables up to 3 + 2
    for v in (0, 1, 2, 3, 5, 8):
        np.testing.assert_array_equal(S_for[row_for[v]], S[row[v], :6])
    assert row_for[4] == -1


def test_pred_parts_is_pred_prob():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        j, k = int(rng.integers(0, 4)), int(rng.integers(1, 4))
        n_j = int(rng.integers(0, 50))
        n_jk = int(rng.integers(0, n_j + 1))
        m_k = int(rng.integers(0, 6))
        m_tot = m_k + int(rng.integers(0, 6))
        alpha, gamma, kappa = rng.gamma(1.0, 2.0, size=3)
        args = (n_jk, n_j, m_k, m_tot, alpha, gamma, kappa, j, k)
        # Makino Eq. (31)-(32) with the sticky term, written out
        p0 = (m_k if m_k > 0 else gamma) / (m_tot + gamma)
        kj = kappa if j > 0 else 0.0
        expected = (n_jk + alpha * p0 + (kj if j == k else 0.0)) / (n_j + alpha + kj)
        num, den = _hcrp.pred_parts(*args)
        assert num / den == pytest.approx(expected, rel=1e-14)
        assert _hcrp.pred_prob(*args) == pytest.approx(expected, rel=1e-14)
        assert 0.0 < num <= den


@pytest.mark.parametrize("kappa", [0.0, 1.5])
@pytest.mark.parametrize("kernel", ["seat", "unseat"])
def test_block_factors_are_the_product_of_the_predictives(kernel, kappa):
    """``_seat`` / ``_unseat`` return the log product of each customer's
    predictive (right before its addition / right after its removal), over
    a block long enough that the running numerator and denominator products
    are folded into the log many times."""
    from sk_ihmm.samplers._seqmoves import _seat, _unseat

    gen = np.random.default_rng(4)
    L = 700
    xb = np.empty(L, np.int64)
    xb[0] = 1
    for t in range(1, L):
        xb[t] = xb[t - 1] if gen.random() < 0.8 else int(gen.integers(1, 5))
    prev, nxt = 0, 2
    s = _hcrp.new_seating(8, 2048, 4096, 1.3, 0.7, kappa)
    if kernel == "unseat":
        _seat(*s, xb, prev, nxt, np.random.default_rng(0))
        _hcrp.clear_log(s.totals)
    ref = _hcrp.Seating(*[a.copy() for a in s])
    log_r = (_seat if kernel == "seat" else _unseat)(*s, xb, prev, nxt, np.random.default_rng(9))

    # the same moves one customer at a time (same draws), each predictive logged
    rng = np.random.default_rng(9)
    pairs, per_label, tables, undo_log, totals, conc = ref
    moves = [(prev if l == 0 else xb[l - 1], xb[l]) for l in range(L)] + [(xb[-1], nxt)]
    if kernel == "unseat":
        moves = moves[::-1]
    acc = 0.0
    for j, k in moves:
        if kernel == "seat":
            acc += np.log(_hcrp.get_prob(*ref, j, k))
            _hcrp.add_customer(*ref, j, k, rng)
        else:
            _hcrp.remove_customer(*ref, j, k, rng)
            acc += np.log(_hcrp.get_prob(*ref, j, k))
    assert acc < -300              # the products left the range of a double
    assert log_r == pytest.approx(acc, rel=1e-12)
    # the same seating (the kernels also count the time steps, per_label[OCC])
    np.testing.assert_array_equal(s.pairs, ref.pairs)
    np.testing.assert_array_equal(s.tables, ref.tables)
    np.testing.assert_array_equal(s.per_label[:_hcrp.OCC], ref.per_label[:_hcrp.OCC])


def test_pred_weights_is_pred_prob_times_the_row_denominator():
    """The NumPy predictive of the point summaries (``pred_weights``) is the
    kernels' ``pred_prob``, row by row, up to the row's denominator."""
    rng = np.random.default_rng(0)
    K = 4
    n = rng.integers(0, 6, (K + 1, K + 1))
    n[:, 0] = 0
    m_k = rng.integers(1, 4, K + 1)
    m_k[0] = 0
    alpha, gamma, kappa = 1.3, 0.7, 2.0
    w = _hcrp.pred_weights(n.astype(float), m_k.astype(float), alpha, gamma, kappa)
    for j in range(K + 1):
        n_j = int(n[j].sum())
        den = n_j + alpha + (kappa if j > 0 else 0.0)
        for k in range(1, K + 1):
            p = _hcrp.pred_prob(int(n[j, k]), n_j, int(m_k[k]), int(m_k.sum()), alpha, gamma,
                                kappa, j, k)
            assert w[j, k] == pytest.approx(p * den, rel=1e-12)
