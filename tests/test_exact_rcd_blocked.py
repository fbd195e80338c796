"""rcd_blocked and rcd_beam sample the exact HCRP-HMM posterior over partitions.

Every case runs one long chain through the chain driver and compares the
partition frequencies with the exact posterior (``sampler_harness``). Block
sizes 1, 2, 3 (several blocks per sequence, covering its first and last steps,
at random offsets) and block sizes at least the sequence length (every
sequence one block) are each combined with single and multiple sequences,
fixed and resampled concentrations and the sticky ``kappa``.
"""

import numpy as np
import pytest

from sampler_harness import check_exact, make_problem, tiny_data
from sk_ihmm import _hcrp
from sk_ihmm.emissions import Categorical, update
from sk_ihmm.samplers import get_sampler
from sk_ihmm.samplers._collapsed import seat_sequences
from sk_ihmm.samplers._rcd_blocked import _make_blocks, _max_blocks, _plan_sweep

SAMPLERS = ["rcd_blocked", "rcd_beam"]

CASES = [
    dict(kind="categorical", lengths=(5,), block_size=1),
    dict(kind="gaussian", lengths=(5,), block_size=2),
    dict(kind="categorical", lengths=(2, 3), alpha=0.5, block_size=3),
    dict(kind="gaussian", lengths=(2, 3), alpha=0.5, gamma=2.0, block_size=2),
    dict(kind="categorical", lengths=(6,), alpha=0.5, gamma=0.7, block_size=8),
    dict(kind="gaussian", lengths=(5,), block_size=5),
    dict(kind="categorical", lengths=(5,), kappa=2.0, block_size=2),
    dict(kind="gaussian", lengths=(2, 3), kappa=1.5, block_size=3),
    dict(kind="categorical", lengths=(5,), resample=(True, True, False), block_size=3),
    dict(kind="gaussian", lengths=(2, 3), resample=(True, True, False), block_size=5),
    dict(kind="categorical", lengths=(4,), kappa=1.0, resample=(True, True, True), block_size=2),
    dict(kind="gaussian", lengths=(1, 4), kappa=1.0, resample=(True, True, True), block_size=1),
    # quadratic proposal weights (emissions.log_proposal_block) for every state
    dict(kind="gaussian_sharp", lengths=(5,), block_size=5),
    dict(kind="gaussian_sharp", lengths=(2, 3), resample=(True, True, False), block_size=2),
]


def test_sharp_prior_uses_the_quadratic_proposal_weights():
    """The gaussian_sharp cases above exercise the quadratic weights: they
    differ from the Student-t predictives for every state, the empty one too."""
    from sampler_harness import tiny_data
    from sk_ihmm.emissions import (PROPOSAL_QUADRATIC_HALF_NU1, log_pred_block,
                                   log_prior_predictive, log_proposal_block)
    family, Y, _ = tiny_data("gaussian_sharp", [5])
    hyp = family.hyperparameters(1)
    stats = np.zeros((3, family.n_stats(1)))
    for t in (0, 1):
        update(family.tag, stats, 1, Y, t, 1.0)
    labels = np.array([1, 2], np.int64)          # label 2: empty statistics
    exact = np.empty((5, 2))
    prop = np.empty((2, 5))               # label-major
    log_pred_block(family.tag, stats, labels, 2, hyp, Y, 0, 5, exact)
    log_proposal_block(family.tag, stats, labels, 2, hyp, Y, 0, 5, prop,
                       log_prior_predictive(family.tag, family.n_stats(1), hyp, Y), np.empty(5))
    prop = prop.T
    assert 0.5 * (2.0 * family.a0 + 1.0) > PROPOSAL_QUADRATIC_HALF_NU1   # empty state
    assert np.all(prop < exact)            # z > log1p(z) for z > 0
    np.testing.assert_allclose(prop, exact, rtol=0.05)


@pytest.mark.parametrize("length, n_work", [(10, 4), (10, 3), (3, 8)],
                         ids=["table", "small_work", "short_block"])
def test_categorical_proposal_weights_are_the_log_predictives(length, n_work):
    """The categorical proposal weights are the exact log predictives,
    whether read from the per-symbol table (at most as many symbols as steps
    and room in ``work``) or computed per step (the other cases)."""
    from sk_ihmm.emissions import Categorical, log_pred_block, log_proposal_block
    family = Categorical(concentration=0.3)
    rng = np.random.default_rng(4)
    Y = rng.integers(0, 4, (12, 1)).astype(float)
    hyp = family.hyperparameters(4)
    stats = np.zeros((5, family.n_stats(4)))
    for t in range(12):
        update(family.tag, stats, 1 + t % 3, Y, t, 1.0)       # labels 1..3 hold data, 4 not
    labels = np.array([3, 4, 1, 2], np.int64)
    exact, prop = np.empty((length, 4)), np.empty((4, length))
    log_pred_block(family.tag, stats, labels, 4, hyp, Y, 1, length, exact)
    log_proposal_block(family.tag, stats, labels, 4, hyp, Y, 1, length, prop, np.empty(0),
                       np.empty(n_work))
    np.testing.assert_array_equal(prop.T, exact)


def test_mvn_block_weights_are_the_per_step_log_predictives():
    """MultivariateGaussian's block kernels (the Student-t's Cholesky factor
    and normaliser once per label, not per step) give the per-step
    predictive bit for bit, step-major and label-major, for states with and
    without observations."""
    from sk_ihmm.emissions import MultivariateGaussian, log_pred, log_pred_block, log_proposal_block
    family = MultivariateGaussian()
    rng = np.random.default_rng(5)
    Y = rng.normal(size=(12, 3)) @ np.array([[1.0, 0.4, 0.0], [0.0, 0.8, 0.3], [0.0, 0.0, 0.5]])
    hyp = family.hyperparameters(3, Y)
    stats = np.zeros((5, family.n_stats(3)))
    for t in range(12):
        update(family.tag, stats, 1 + t % 3, Y, t, 1.0)       # labels 1..3 hold data, 4 not
    labels = np.array([3, 4, 1, 2], np.int64)
    per_step = np.array([[log_pred(family.tag, stats, k, hyp, Y, 1 + l) for k in labels]
                         for l in range(8)])
    block, prop = np.empty((8, 4)), np.empty((4, 8))
    log_pred_block(family.tag, stats, labels, 4, hyp, Y, 1, 8, block)
    log_proposal_block(family.tag, stats, labels, 4, hyp, Y, 1, 8, prop, np.empty(0), np.empty(8))
    np.testing.assert_array_equal(block, per_step)
    np.testing.assert_array_equal(prop.T, per_step)


@pytest.mark.parametrize("kind", ["gaussian", "categorical", "mvn"])
def test_proposal_weights_of_an_empty_state_are_the_prior_predictive(kind):
    """With the default priors the candidate 'new' state (empty statistics)
    is weighted by the prior predictive, read from the problem's
    ``prior_pred`` for the Gaussian families: the same values as computing
    it."""
    from sampler_harness import tiny_data
    from sk_ihmm.emissions import (MultivariateGaussian, log_pred_block, log_prior_predictive,
                                   log_proposal_block)
    if kind == "mvn":
        family, Y, dim = MultivariateGaussian(), np.random.default_rng(0).normal(size=(5, 2)), 2
    else:
        family, Y, dim = tiny_data(kind, [5])
    hyp = family.hyperparameters(dim, Y)
    stats = np.zeros((3, family.n_stats(dim)))
    labels = np.array([2, 1], np.int64)
    update(family.tag, stats, 1, Y, 0, 1.0)
    exact, prop = np.empty((4, 2)), np.empty((2, 4))   # prop label-major
    prior = log_prior_predictive(family.tag, family.n_stats(dim), hyp, Y)
    log_pred_block(family.tag, stats, labels, 2, hyp, Y, 1, 4, exact)
    log_proposal_block(family.tag, stats, labels, 2, hyp, Y, 1, 4, prop, prior, np.empty(8))
    prop = prop.T
    np.testing.assert_allclose(prop[:, 0], exact[:, 0], rtol=1e-13)
    np.testing.assert_allclose(prior[1:], exact[:, 0], rtol=1e-13)
    np.testing.assert_allclose(prop[:, 1], exact[:, 1], rtol=1e-13)   # one observation: exact


def _case_id(case):
    return "-".join(f"{k}={v}" for k, v in case.items())


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_rcd_blocked_exact(sampler, case):
    case = dict(case)
    block_size = case.pop("block_size")
    check_exact(sampler, n_sweeps=15000, options={"block_size": block_size}, **case)


def test_make_blocks_partition_sequences():
    """Blocks tile every sequence, never cross a boundary and move with the offset."""
    starts = np.array([0, 3, 13, 14], np.int64)
    ends = np.array([3, 13, 14, 30], np.int64)
    for size in (1, 2, 3, 5, 40):
        for offset in range(size):
            offsets = np.full(starts.shape[0], offset, np.int64)
            n_max = _max_blocks(starts, ends, size)
            bstart, bend = np.full(n_max + 1, -7), np.full(n_max + 1, -7)
            n = _make_blocks(starts, ends, size, offsets, bstart, bend)
            assert n <= n_max and bstart[n_max] == -7
            bstart, bend = bstart[:n], bend[:n]
            assert np.all(bend - bstart >= 1) and np.all(bend - bstart <= size)
            covered = np.zeros(30, int)
            for b, e in zip(bstart, bend):
                covered[b:e] += 1
            assert np.all(covered == 1)
            for a, z in zip(starts, ends):
                inside = (bstart >= a) & (bstart < z)
                assert np.all(bend[inside] <= z)
                cuts = {a}
                if z - a > size:
                    cuts |= {c for c in range(a + offset, z, size) if c > a}
                assert set(bstart[inside].tolist()) == cuts


def test_plan_sweep_draws_uniform_offsets_and_orders():
    """Offsets uniform on 0..size-1 per sequence; the order a uniform
    permutation of the blocks (all 4! orders of a 4-block plan equally often)."""
    starts, ends = np.array([0, 7], np.int64), np.array([7, 9], np.int64)
    size, n_max = 3, _max_blocks(np.array([0, 7]), np.array([7, 9]), 3)
    bufs = [np.empty(2, np.int64)] + [np.empty(n_max, np.int64) for _ in range(3)]
    rng = np.random.default_rng(0)
    offs, orders = [], {}
    n_draws = 6000
    for _ in range(n_draws):
        n = _plan_sweep(starts, ends, size, rng, *bufs)
        offsets, bstart, bend, order = bufs
        assert sorted(order[:n]) == list(range(n))
        assert n == 4   # three blocks of the first sequence whatever its offset, one of the second
        offs.append(offsets[0])
        orders[tuple(order[:n])] = orders.get(tuple(order[:n]), 0) + 1
    counts = np.bincount(offs, minlength=size)
    assert counts.size == size
    expected = n_draws / size
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))
    expected = n_draws / 24
    assert len(orders) == 24
    assert all(abs(c - expected) < 5 * np.sqrt(expected) for c in orders.values())


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("block_size", [1, 3, None, 50])
def test_seating_stays_consistent(sampler, block_size):
    """After every sweep the seating and statistics match the labels exactly."""
    rng = np.random.default_rng(3)
    lengths = [1, 12, 5, 20]
    T = sum(lengths)
    family, _, dim = tiny_data("categorical", [1])
    Y = rng.integers(0, 3, (T, 1)).astype(float)
    prob = make_problem(family, Y, dim, lengths, 1.0, 1.0, 1.5, (True, True, True),
                        {"block_size": block_size})
    smp = get_sampler(sampler)
    state = smp.init(prob, np.ones(T, np.int64), rng)
    for _ in range(40):
        info = smp.step(state, prob, rng)
        assert 0.0 <= info["accept_rate"] <= 1.0
        assert ("states_visited" in info) == (sampler == "rcd_beam")
        _hcrp.check_invariants(state.seating, state.x, prob.seq_first)
        stats = np.zeros_like(state.stats)
        for t in range(T):
            update(prob.fam, stats, state.x[t], Y, t, 1.0)
        np.testing.assert_allclose(stats, state.stats, atol=1e-9)
        assert np.isfinite(state.log_joint)


@pytest.mark.parametrize("x, kappa, conc_factor", [
    ([1, 1, 2, 1, 1, 1, 2], 0.0, 1.0),
    ([1, 1, 2, 2, 2, 1, 1], 1.3, 1.0),
    # a seating drawn with the wrong alpha must fail the same comparison
    pytest.param([1, 1, 2, 1, 1, 1, 2], 0.0, 3.0, marks=pytest.mark.xfail(strict=True)),
])
def test_reseat_seq_samples_the_table_counts_given_the_labels(x, kappa, conc_factor):
    """Repeated ``reseat_seq`` over a fixed labelled sequence: the frequencies
    of the table counts (root tables per restaurant and dish, override
    tables) match their exact conditional given the labels,
    ``exp(log_count_prob)`` normalised over every configuration of counts."""
    from exact_posterior import tv_threshold, tv_distance
    from test_exact_pgas import _table_configurations

    from sk_ihmm.samplers._seqmoves import reseat_seq

    alpha, gamma = 0.8, 1.7
    x = np.array(x, np.int64)
    C = 4
    n = np.zeros((C, C), np.int64)
    prev = 0
    for k in x:
        n[prev, k] += 1
        prev = k
    S, row = _hcrp.log_stirling_table(len(x), len(x))
    exact = {}
    for m, o in _table_configurations(n[:3, :3]):
        key = tuple(m.ravel()) + tuple(o)
        exact[key] = np.exp(_hcrp.log_count_prob(n[:3, :3], m, o, alpha, gamma, kappa, S, row))
    s = _hcrp.new_seating(C, 32, 64, alpha * conc_factor, gamma, kappa)
    first = np.r_[True, np.zeros(len(x) - 1, bool)]
    rng = np.random.default_rng(3)
    # categorical statistics of one symbol, unused here
    seat_sequences(s, np.zeros((C, 2)), x, np.zeros((len(x), 1)), first,
                         Categorical.tag, rng)
    pairs, per_label, tables, undo_log, totals, conc = s
    n_draws, thin = 40000, 4
    counts = {}
    for it in range(n_draws * thin):
        reseat_seq(pairs, per_label, tables, undo_log, totals, conc, x, 0, -1, rng)
        if it % thin == 0:
            key = tuple(s.m[:3, :3].ravel()) + tuple(s.o[:3])
            counts[key] = counts.get(key, 0) + 1
    _hcrp.check_invariants(s, x, first)
    assert set(counts) <= set(exact)
    z = sum(exact.values())
    tv = tv_distance({k: v / (n_draws) for k, v in counts.items()},
                     {k: v / z for k, v in exact.items()})
    # draws thinned by 4 full passes: taken as 4x fewer independent ones
    assert tv < tv_threshold(exact, n_draws / 4)
