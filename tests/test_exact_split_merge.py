"""split_merge samples the exact HCRP-HMM posterior over partitions.

Split-merge moves alone (``base_sampler="none"``) are irreducible on the
partitions: from any partition, a merge of the block of ``t1`` into the block
of ``t2`` (any ``t1``, ``t2`` in different blocks) has positive probability,
so the one-block partition is reached by merges; from the one-block
partition, any partition ``{P_1, ..., P_K}`` is built by ``K - 1`` splits
(split ``P_1`` off with ``t1`` in ``P_1`` and ``t2`` outside it, then
``P_2`` off the rest, ...), since a split allocates every fragment to either
side with positive probability. The seating is re-drawn for every customer
touched by a move, and every customer is touched by some ``(t1, t2)``.
Rejections make the chain aperiodic. The chains start from two states, so
the partitions with more states are reached only through splits that create
a state, and the one-block partition only through merges that remove one
(checked by ``test_moves_create_and_remove_states``).

The exact-posterior cases cover split-merge alone and combined with a base
sampler, categorical and Gaussian emissions, one sequence and several,
fixed and resampled concentrations and the sticky ``kappa``.
"""

import copy
import itertools

import numpy as np
import pytest

from sampler_harness import check_exact, make_problem, tiny_data
from sk_ihmm import _hcrp
from sk_ihmm._chain import run_chain
from sk_ihmm.emissions import Categorical, Gaussian, update
from sk_ihmm.samplers import SAMPLERS, get_sampler, register
from sk_ihmm.samplers._collapsed import finish_sweep
from sk_ihmm._messages import path_log_weight
from sk_ihmm._messages import two_state_forward, two_state_path_weight, two_state_sample
from sk_ihmm.samplers._split_merge import chain_moves, split_merge_moves

ALONE = {"base_sampler": "none", "split_merge_trials": 3}
MAKINO = {"base_sampler": "none", "split_merge_trials": 3, "split_merge_width": 1}

CASES = [
    # split-merge moves alone
    dict(kind="categorical", lengths=(5,), options=ALONE),
    dict(kind="gaussian", lengths=(5,), options=ALONE),
    dict(kind="categorical", lengths=(2, 3), alpha=0.5, options=ALONE),
    dict(kind="gaussian", lengths=(2, 3), alpha=0.5, gamma=2.0, options=ALONE),
    dict(kind="categorical", lengths=(6,), alpha=0.5, gamma=0.7, options=ALONE),
    dict(kind="categorical", lengths=(5,), kappa=2.0, options=ALONE),
    dict(kind="gaussian", lengths=(1, 4), kappa=1.5, options=ALONE),
    dict(kind="categorical", lengths=(5,), resample=(True, True, False), options=ALONE),
    dict(kind="gaussian", lengths=(2, 3), resample=(True, True, False), options=ALONE),
    dict(kind="categorical", lengths=(4,), kappa=1.0, resample=(True, True, True), options=ALONE),
    # Makino's moves alone (no chain moves)
    dict(kind="categorical", lengths=(5,), options=MAKINO),
    dict(kind="gaussian", lengths=(2, 3), kappa=1.5, options=MAKINO),
    # wider chain moves: width 3 needs 6 steps
    dict(kind="categorical", lengths=(7,), alpha=0.5,
         options={"base_sampler": "none", "split_merge_trials": 4, "split_merge_width": 3}),
    dict(kind="gaussian", lengths=(6,), kappa=1.0,
         options={"base_sampler": "none", "split_merge_trials": 4, "split_merge_width": 3}),
    dict(kind="categorical", lengths=(3, 4), resample=(True, True, False),
         options={"base_sampler": "none", "split_merge_trials": 4, "split_merge_width": 3}),
    # combined with a base sampler
    dict(kind="categorical", lengths=(5,), kappa=2.0,
         options={"base_sampler": "rcd_gibbs", "split_merge_trials": 2}),
    dict(kind="gaussian", lengths=(2, 3), resample=(True, True, False),
         options={"base_sampler": "rcd_gibbs", "split_merge_trials": 1}),
    dict(kind="categorical", lengths=(1, 4), kappa=1.0, resample=(True, True, True),
         options={"base_sampler": "rcd_beam", "block_size": 2, "split_merge_trials": 3}),
    # the default base
    dict(kind="gaussian", lengths=(2, 3), kappa=1.0, resample=(True, True, False),
         options={"base_sampler": "rcd_blocked", "block_size": 2, "split_merge_trials": 2}),
]


def _case_id(case):
    opts = case["options"]
    rest = "-".join(f"{k}={v}" for k, v in case.items() if k != "options")
    return f"{opts['base_sampler']}-w{opts.get('split_merge_width', 3)}-{rest}"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_split_merge_exact(case):
    check_exact("split_merge", n_sweeps=15000, **case)


def _chain_heavy_step(state, problem, rng):
    """One Makino trial (irreducibility) then 40 chain trials of widths 2
    .. ``split_merge_width``: chain moves dominate, so an error in their
    ratio shows in the partition frequencies."""
    width = min(problem.options["split_merge_width"], state.x.shape[0] // 2)
    split_merge_moves(state, problem, 1, rng)
    chain_moves(state, problem, 2 + rng.integers(width - 1, size=40), rng)
    finish_sweep(state, problem, rng)
    return {"accept_rate": np.nan}


CHAIN_CASES = [
    dict(kind="alternating", lengths=(6,), options={"split_merge_width": 2}),
    dict(kind="categorical", lengths=(6,), options={"split_merge_width": 2}),
    dict(kind="categorical", lengths=(6,), options={"split_merge_width": 3}),
    dict(kind="gaussian", lengths=(2, 4), kappa=1.0, options={"split_merge_width": 3}),
    dict(kind="categorical", lengths=(6,), alpha=0.5, resample=(True, True, False),
         options={"split_merge_width": 3}),
]


@pytest.mark.parametrize("case", CHAIN_CASES,
                         ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()
                                                if k != "options"))
def test_chain_moves_exact(case):
    """The chain moves (with a few Makino trials) sample the exact posterior."""
    register("chain_heavy", SAMPLERS["split_merge"].init, _chain_heavy_step,
             ["split_merge_width"])
    try:
        check_exact("chain_heavy", n_sweeps=60000, **case)
    finally:
        del SAMPLERS["chain_heavy"]


def test_moves_create_and_remove_states():
    """From two states, split-merge alone reaches every number of states 1..T."""
    family, Y, dim = tiny_data("categorical", [5])
    prob = make_problem(family, Y, dim, [5], 1.0, 1.0, 0.0, (False, False, False), ALONE)
    x0 = np.array([1, 2, 1, 2, 1], np.int64)
    out = run_chain("split_merge", prob, x0, 0, 3000, 1, np.random.SeedSequence(1))
    tr = out["trace"]
    assert set(np.unique(tr["n_states"])) == {1, 2, 3, 4, 5}
    assert np.nanmean(tr["split_accept"]) > 0 and np.nanmean(tr["merge_accept"]) > 0
    assert np.all(np.isnan(tr["accept_rate"]))


def _canonical(state):
    """Labels, counts and the multiset of tables of every (restaurant, dish)
    pair -- the seating up to the table-slot numbering."""
    s = state.seating
    C = s.n.shape[0]
    tables = {}
    for j in range(C):
        for k in range(C):
            t, sizes = s.head[j, k], []
            while t >= 0:
                sizes.append((int(s.tsize[t]), int(s.tover[t])))
                t = s.tnext[t]
            if sizes:
                tables[(j, k)] = sorted(sizes)
    return (state.x.tolist(), s.n.tolist(), s.m.tolist(), s.o.tolist(), s.occ.tolist(),
            int(s.totals[_hcrp.M_TOTAL]), int(s.totals[_hcrp.N_DISHES]), tables)


def _moments(prob, state):
    """Emission statistics without the Gaussian predictive cache (columns 3..)."""
    return state.stats[:, :3] if prob.emission.name == "gaussian" else state.stats


def _seated_state(kind, seed, T=30, K=4, kappa=1.0, period=None):
    """A random labelling (``period``: labels ``t % period + 1``, a fifth of
    them redrawn, so that chain anchors often match) of random data."""
    rng = np.random.default_rng(seed)
    lengths = [3, T - 13, 10]
    family, _, dim = tiny_data(kind, [1])
    if kind == "categorical":
        Y = rng.integers(0, 3, (T, 1)).astype(float)
    else:
        Y = rng.normal(size=(T, 1))
    prob = make_problem(family, Y, dim, lengths, 1.0, 1.0, kappa, (False, False, False), ALONE)
    x0 = rng.integers(1, K + 1, T)
    if period:
        x0 = np.where(rng.random(T) < 0.2, x0, np.arange(T) % period + 1)
    state = get_sampler("split_merge").init(prob, x0, rng)
    return prob, state


@pytest.mark.parametrize("kind", ["categorical", "gaussian"])
def test_rejection_restores_exact_state(kind):
    """A rejected trial leaves labels, counts, statistics and tables unchanged;
    every trial leaves a consistent seating."""
    prob, state = _seated_state(kind, 0)
    n_rejected = 0
    for seed in range(300):
        before, moments = _canonical(state), _moments(prob, state).copy()
        counts = split_merge_moves(state, prob, 1, np.random.default_rng(seed))
        _hcrp.check_invariants(state.seating, state.x, prob.seq_first)
        stats = np.zeros_like(state.stats)
        for t in range(state.x.shape[0]):
            update(prob.fam, stats, state.x[t], prob.Y, t, 1.0)
        np.testing.assert_allclose(_moments(prob, state), stats[:, :moments.shape[1]], atol=1e-9)
        if counts[1] + counts[3] == 0:
            n_rejected += 1
            assert _canonical(state) == before
            np.testing.assert_allclose(_moments(prob, state), moments, atol=1e-12)
    assert 0 < n_rejected < 300


def test_early_rejection_matches_full_evaluation():
    """Categorical emissions: stopping a merge early gives the decision (and
    the state) of the complete evaluation, trial by trial -- on labels that
    fit the data (merges stopped early), on labels that split each symbol's
    steps at random between two labels (merges of duplicates, accepted or
    not by small margins) and on random labels (merges often accepted)."""
    rng = np.random.default_rng(1)
    T = 60
    family, _, dim = tiny_data("categorical", [1])
    Y = (np.arange(T) % 3)[:, None].astype(float)
    Y[rng.random(T) < 0.1] = 0.0
    prob = make_problem(family, Y, dim, [20, 40], 1.0, 1.0, 0.5, (False, False, False), ALONE)
    fitted = get_sampler("split_merge").init(prob, (np.arange(T) % 3 + 1).astype(np.int64), rng)
    doubled = get_sampler("split_merge").init(
        prob, (np.arange(T) % 3 + 1 + 3 * rng.integers(2, size=T)).astype(np.int64), rng)
    total = np.zeros(5, np.int64)
    for prob_, state in [(prob, fitted), (prob, doubled), _seated_state("categorical", 1, K=8)]:
        for seed in range(200):
            full, early = copy.deepcopy(state), copy.deepcopy(state)
            c_full = split_merge_moves(full, prob_, 1, np.random.default_rng(seed),
                                       early_stop=False)
            c_early = split_merge_moves(early, prob_, 1, np.random.default_rng(seed),
                                        early_stop=True)
            assert np.array_equal(c_full[:4], c_early[:4])
            assert _canonical(full) == _canonical(early)
            np.testing.assert_allclose(full.stats, early.stats, atol=1e-12)
            total += c_early
    # merges are proposed mostly between states whose predictives fit the
    # anchor, so fewer of them stop early than with uniform anchors
    assert total[4] >= 10 and total[3] > 20 and total[1] > 0


def test_early_rejection_invalid_for_densities():
    """Gaussian predictive densities exceed 1, so the partial ratio of a merge
    can rise again: forcing the early stop changes decisions (which is why it
    is only enabled for categorical emissions)."""
    rng = np.random.default_rng(2)
    T = 30
    family = Gaussian(mu0=0.0, lambda0=1.0, a0=3.0, b0=0.001)
    Y = (np.where(np.arange(T) % 3 == 0, 0.0, 0.05) + 0.002 * rng.standard_normal(T))[:, None]
    prob = make_problem(family, Y, 1, [T], 1.0, 1.0, 0.0, (False, False, False), ALONE)
    x0 = (np.arange(T) % 3 == 0).astype(np.int64) + 1 + 2 * (np.arange(T) % 2)
    differ = 0
    for seed in range(200):
        full = get_sampler("split_merge").init(prob, x0, np.random.default_rng(0))
        early = get_sampler("split_merge").init(prob, x0, np.random.default_rng(0))
        split_merge_moves(full, prob, 1, np.random.default_rng(seed), early_stop=False)
        split_merge_moves(early, prob, 1, np.random.default_rng(seed), early_stop=True)
        differ += _canonical(full) != _canonical(early)
    assert differ > 0


@pytest.mark.parametrize("L", [1, 2, 4])
def test_two_state_kernels_match_enumeration(L):
    """The restricted FFBS with one transition matrix (``dt = 0``): log
    normaliser, path weights and path frequencies by enumeration."""
    rng = np.random.default_rng(L)
    log_init = np.log(rng.random(2))
    log_trans = np.log(rng.random((2, 2)))
    log_emit = 3.0 * rng.standard_normal((L, 2))
    log_final = np.log(rng.random(2))
    log_tr = np.ascontiguousarray(log_trans[None])
    la = np.empty((L, 2))
    log_z = two_state_forward(log_init, log_tr, 0, log_emit, log_final, L, la)
    paths = [np.array(p, np.int64) for p in itertools.product([0, 1], repeat=L)]
    lw = np.array([path_log_weight(log_init, log_trans, log_emit, log_final, p) for p in paths])
    assert np.array_equal(lw, [two_state_path_weight(log_init, log_tr, 0, log_emit, log_final,
                                                      L, p) for p in paths])
    assert np.isclose(log_z, np.logaddexp.reduce(lw))
    n = 20000
    freq = np.zeros(len(paths))
    out = np.empty(L, np.int64)
    for _ in range(n):
        two_state_sample(log_tr, 0, log_final, la, L, rng, out)
        freq[int("".join(map(str, out)), 2)] += 1
    assert np.abs(freq / n - np.exp(lw - log_z)).max() < 0.015


@pytest.mark.parametrize("L", [1, 3, 5])
def test_chain_kernels_match_enumeration(L):
    """The restricted FFBS of the chain moves (a transition matrix per step,
    ``dt = 1``; pinned steps): log normaliser and path frequencies by enumeration."""
    rng = np.random.default_rng(10 + L)
    log_init = np.log(rng.random(2))
    log_tr = np.log(rng.random((L, 2, 2)))
    log_emit = 3.0 * rng.standard_normal((L, 2))
    log_final = np.log(rng.random(2))
    if L > 1:
        log_emit[1, 0] = -np.inf  # step 1 pinned to candidate 1
    if L > 3:
        log_emit[3, 1] = -np.inf  # step 3 pinned to candidate 0
    la = np.empty((L, 2))
    log_z = two_state_forward(log_init, log_tr, 1, log_emit, log_final, L, la)
    paths = [np.array(p, np.int64) for p in itertools.product([0, 1], repeat=L)]
    lw = np.array([two_state_path_weight(log_init, log_tr, 1, log_emit, log_final, L, p)
                   for p in paths])
    assert np.isclose(log_z, np.logaddexp.reduce(lw))
    n = 20000
    freq = np.zeros(len(paths))
    out = np.empty(L, np.int64)
    for _ in range(n):
        two_state_sample(log_tr, 1, log_final, la, L, rng, out)
        freq[int("".join(map(str, out)), 2)] += 1
    assert np.abs(freq / n - np.exp(lw - log_z)).max() < 0.015


@pytest.mark.parametrize("kind", ["categorical", "gaussian"])
def test_chain_rejection_restores_exact_state(kind):
    """As test_rejection_restores_exact_state, for the chain moves of widths 2 and 3."""
    prob, state = _seated_state(kind, 3, K=6, period=3)
    n_rejected = n_moves = 0
    for seed in range(300):
        before, moments = _canonical(state), _moments(prob, state).copy()
        counts = chain_moves(state, prob, [2 + seed % 2], np.random.default_rng(seed))
        _hcrp.check_invariants(state.seating, state.x, prob.seq_first)
        stats = np.zeros_like(state.stats)
        for t in range(state.x.shape[0]):
            update(prob.fam, stats, state.x[t], prob.Y, t, 1.0)
        np.testing.assert_allclose(_moments(prob, state), stats[:, :moments.shape[1]], atol=1e-9)
        n_moves += counts[0] + counts[2]
        if counts[1] + counts[3] == 0:
            n_rejected += 1
            assert _canonical(state) == before
            np.testing.assert_allclose(_moments(prob, state), moments, atol=1e-12)
    assert n_moves > 30 and 0 < n_rejected < 300


def test_sequence1_chain_split():
    """On Sequence 1 (Makino et al. 2011) the labelling by symbol is a local
    optimum for one-state splits (each costs about 13 nats, the 8-state cycle
    gains 50); a width-3 chain split of B, C, D with rcd_gibbs sweeps
    reaches the cycle within a few hundred sweeps."""
    from sk_ihmm.datasets import make_sequence1
    from sk_ihmm.metrics import mutual_information
    X, truth = make_sequence1(200)
    opts = {"base_sampler": "rcd_gibbs", "split_merge_trials": 10, "split_merge_width": 3}
    prob = make_problem(Categorical(concentration=0.5), X.astype(float), 5, [200], 1.0, 1.0,
                        0.0, (False, False, False), opts)
    sampler = get_sampler("split_merge")
    rng = np.random.default_rng(0)
    state = sampler.init(prob, X[:, 0] + 1, rng)
    for _ in range(500):
        sampler.step(state, prob, rng)
        if mutual_information(truth, state.x) > 2.07:
            break
    assert mutual_information(truth, state.x) > 2.07


def test_options_validated():
    family, Y, dim = tiny_data("categorical", [3])
    rng = np.random.default_rng(0)
    for bad in ({"base_sampler": "pgas"}, {"split_merge_trials": -1},
                {"split_merge_width": 0}):
        prob = make_problem(family, Y, dim, [3], 1.0, 1.0, 0.0, (False, False, False), bad)
        state = get_sampler("split_merge").init(prob, np.ones(3, np.int64), rng)
        with pytest.raises(ValueError):
            get_sampler("split_merge").step(state, prob, rng)
