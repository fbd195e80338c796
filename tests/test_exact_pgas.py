"""pgas samples the exact HDP-HMM posterior over partitions (T <= 5).

The exact posterior integrates pi, beta and the emission parameters out;
pgas samples them explicitly, so agreement checks the lazy expansion of the
infinite state space, the proposal weights, ancestor sampling and the
parameter updates together. Few particles (``N = 3``) make ancestor sampling
and the weights matter.
"""

import itertools

import numpy as np
import pytest
from numba import njit

from exact_posterior import log_prior_partition, tv_distance, tv_threshold
from sampler_harness import check_exact, make_problem, tiny_data
from sk_ihmm import _hcrp
from sk_ihmm.emissions import log_pred, param_loglik, sample_param, update
from sk_ihmm.samplers import _pgas

POST = {"n_particles": 3, "proposal": "posterior"}
PRIOR = {"n_particles": 3, "proposal": "prior"}

CASES = [
    dict(kind="categorical", lengths=(5,), options=POST),
    dict(kind="gaussian", lengths=(5,), options=PRIOR),
    dict(kind="gaussian", lengths=(5,), options=POST),
    dict(kind="categorical", lengths=(2, 3), alpha=0.5, options=PRIOR),
    dict(kind="gaussian", lengths=(2, 3), alpha=0.5, gamma=2.0, options=POST),
    dict(kind="categorical", lengths=(5,), kappa=2.0, options=POST),
    dict(kind="gaussian", lengths=(2, 3), kappa=1.5, options=PRIOR),
    dict(kind="categorical", lengths=(5,), resample=(True, True, False), options=PRIOR),
    dict(kind="gaussian", lengths=(2, 3), resample=(True, True, False), options=POST),
    dict(kind="categorical", lengths=(4,), kappa=1.0, resample=(True, True, True), options=POST),
    dict(kind="gaussian", lengths=(2, 2), kappa=1.0, resample=(True, True, True), options=PRIOR),
]


def _case_id(case):
    opts = case["options"]
    rest = "-".join(f"{k}={v}" for k, v in case.items() if k != "options")
    return f"{rest}-{opts['proposal']}"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_pgas_exact(case):
    check_exact("pgas", n_sweeps=20000, **case)


@pytest.mark.parametrize("kind, lengths", [("gaussian", (5,)), ("categorical", (2, 3))])
def test_pgas_exact_with_small_explicit_set(kind, lengths, monkeypatch):
    """With an explicit set of the states of root weight > 0.3 (at most two),
    most particles move outside it, where the proposal uses the prior
    predictive and the weights and ancestor weights carry ``f / g``. (With the
    default set those corrections hardly ever matter at T = 5: dropping
    ``f / g`` from the ancestor weights passes the tests above but fails the
    Gaussian case here.)"""
    monkeypatch.setattr(_pgas, "_EXPLICIT_MASS", 0.3)
    check_exact("pgas", kind=kind, lengths=lengths, n_sweeps=20000, options=POST)


def test_pgas_exact_in_small_chunks(monkeypatch):
    """Kernel calls of two steps: chunk ends inside and between sequences,
    the emission terms of the next step taken from the next chunk's row."""
    monkeypatch.setattr(_pgas, "_CHUNK", 2)
    check_exact("pgas", kind="gaussian", lengths=(2, 3), n_sweeps=20000, options=POST)


def _table_configurations(n):
    """Every (m, o) compatible with the transition counts ``n``."""
    cells = [(j, k) for j in range(n.shape[0]) for k in range(1, n.shape[0]) if n[j, k] > 0]
    choices = []
    for j, k in cells:
        opts = []
        for t in range(1, n[j, k] + 1):
            for over in range(t + 1 if (j == k and j > 0) else 1):
                opts.append((t - over, over))
        choices.append(opts)
    for combo in itertools.product(*choices):
        m = np.zeros_like(n)
        o = np.zeros(n.shape[0], np.int64)
        for (j, k), (root, over) in zip(cells, combo):
            m[j, k] = root
            o[j] += over
        yield m, o


@pytest.mark.parametrize("x, lengths, kappa", [
    ([1, 1, 2, 1, 1], (5,), 0.0),
    ([1, 1, 2, 2, 1], (5,), 1.3),
    ([1, 2, 2, 3, 3, 1], (2, 4), 0.7),
])
def test_log_joint_sums_to_partition_prior(x, lengths, kappa):
    """exp(log_count_prob) (pgas's log_joint without the emission term)
    summed over the table counts is the HCRP prior probability of the
    partition."""
    alpha, gamma = 0.8, 1.7
    family, Y, dim = tiny_data("categorical", list(lengths))
    Y = np.zeros((len(x), 1))
    prob = make_problem(family, Y, dim, list(lengths), alpha, gamma, kappa, (False,) * 3)
    x = np.array(x, np.int64)
    n, _ = _pgas._counts(x, prob.Y, prob.seq_first, int(x.max()), prob.n_stats, prob.fam)
    S, row = _hcrp.log_stirling_table(len(x), len(x))
    total = sum(np.exp(_hcrp.log_count_prob(n, m, o, alpha, gamma, kappa, S, row))
                for m, o in _table_configurations(n))
    expected = np.exp(log_prior_partition(tuple(x - 1), lengths, alpha, gamma, kappa))
    assert total == pytest.approx(expected, rel=1e-10)


def test_state_is_consistent_after_sweeps():
    """Labels stay compact; counts, statistics and parameters match them."""
    family, Y, dim = tiny_data("gaussian", [3, 4])
    prob = make_problem(family, Y, dim, [3, 4], 1.0, 1.0, 0.5, (True, True, True),
                        {"n_particles": 4, "proposal": "posterior"})
    rng = np.random.default_rng(1)
    state = _pgas.init(prob, np.array([5, 5, 9, 2, 2, 9, 5]), rng)
    for _ in range(200):
        info = _pgas.step(state, prob, rng)
        K = state.n_states
        assert 0.0 <= info["accept_rate"] <= 1.0
        assert sorted(set(state.x.tolist())) == list(range(1, K + 1))
        n, stats = _pgas._counts(state.x, prob.Y, prob.seq_first, K, prob.n_stats, prob.fam)
        np.testing.assert_array_equal(state.n, n)
        # sufficient statistics (n, mean, M2); the other columns are caches
        np.testing.assert_allclose(state.stats[:, :3], stats[:, :3])
        assert np.all(state.m.sum(axis=0)[1:] >= 1)
        assert np.all((state.m >= 0) & (state.m <= state.n))
        assert state.beta.shape == (K + 1,) and state.beta.sum() == pytest.approx(1.0)
        assert state.pi.shape == (K + 1, K + 1)
        np.testing.assert_allclose(state.pi.sum(axis=1), 1.0)
        assert state.phi.shape == (K + 1, 4) and np.all(state.phi[1:, 1] > 0)
        np.testing.assert_allclose(state.phi[1:, 3], 0.5 / state.phi[1:, 1])
        assert np.isfinite(state.log_joint)


def test_rejects_bad_options():
    family, Y, dim = tiny_data("categorical", [4])
    rng = np.random.default_rng(0)
    for options in ({"n_particles": 1}, {"proposal": "optimal"}):
        prob = make_problem(family, Y, dim, [4], 1.0, 1.0, 0.0, (False,) * 3, options)
        with pytest.raises(ValueError):
            _pgas.init(prob, np.ones(4, np.int64), rng)


def _one_step_transition(posterior, K0, n_particles, n_runs, seed):
    """Transition matrix of the CSMC kernel on one observation with fixed parameters.

    Two instantiated states plus the remainder; categories are state 1, state
    2 and "a state outside {1, 2}". A reference in the last category is drawn
    from the target given that category: a state realised from the remainder
    of the start row, with its emission parameters from the posterior given y.
    Returns ``(P, target)``.
    """
    family, _, dim = tiny_data("gaussian", [1])
    prob = make_problem(family, np.array([[0.3]]), dim, [1], 1.5, 1.2, 0.7, (False,) * 3)
    fam = prob.fam
    alpha, gamma, kappa = prob.conc0
    beta = np.array([0.3, 0.45, 0.25])
    pi = np.array([[0.35, 0.4, 0.25], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6]])
    # explicit Gaussian parameters in the family's layout: mean, variance,
    # log normaliser, 1 / (2 variance)
    mean_var = np.array([[0.0, 1.0], [-1.0, 0.5], [1.0, 0.3]])
    phi = np.column_stack([mean_var, -0.5 * np.log(2 * np.pi * mean_var[:, 1]),
                           0.5 / mean_var[:, 1]])
    assert phi.shape[1] == family.n_params(dim)
    zero = np.zeros((1, prob.n_stats))
    post = zero.copy()
    update(fam, post, 0, prob.Y, 0, 1.0)
    terms = np.array([pi[0, 1] * np.exp(param_loglik(fam, phi, 1, prob.Y, 0)),
                      pi[0, 2] * np.exp(param_loglik(fam, phi, 2, prob.Y, 0)),
                      pi[0, 0] * np.exp(log_pred(fam, zero, 0, prob.hyp, prob.Y, 0))])
    target = terms / terms.sum()
    rng = np.random.default_rng(seed)
    starts, ends = np.array([0]), np.array([1])
    P = np.zeros((3, 3))
    for r in range(3):
        for _ in range(n_runs):
            C = 8
            pi_w = np.zeros((C, C))
            pi_w[:3, :3] = pi
            beta_w = np.zeros(C)
            beta_w[:3] = beta
            phi_w = np.zeros((C, phi.shape[1]))
            phi_w[:3] = phi
            K = 2
            if r == 2:
                _pgas._new_state(pi_w, beta_w, phi_w, K, 0, alpha, gamma, kappa, zero,
                                 prob.hyp, prob.fam, np.zeros(C), rng)
                K = 3
                sample_param(fam, post, 0, prob.hyp, rng, phi_w, 3)
            x = np.array([r + 1])
            _pgas._csmc((x, prob.Y, starts, ends, prob.prior_pred), (pi_w, beta_w, phi_w), K, K0,
                        n_particles, posterior, (alpha, gamma, kappa, prob.fam, prob.hyp, zero),
                        rng)
            P[r, min(int(x[0]), 3) - 1] += 1
    return P / n_runs, target


@pytest.mark.parametrize("posterior, K0", [(True, 2), (True, 1), (False, 2)])
def test_csmc_step_leaves_target_invariant(posterior, K0):
    """One CSMC step (T = 1, N = 2) maps the exact conditional of the state
    given the parameters to itself, for the posterior proposal with the
    reference inside and outside the explicit set and for the prior one."""
    n_runs = 6000
    P, target = _one_step_transition(posterior, K0, 2, n_runs, seed=3)
    pushed = target @ P
    se = np.sqrt(np.sum(target[:, None] ** 2 * P * (1 - P), axis=0) / n_runs)
    assert np.all(np.abs(pushed - target) < 5 * se + 1e-3), (pushed, target, se)


def test_new_state_split_moments():
    """Lazy expansion: the realised state has the law of the state a row lands
    on when it moves into the remainder.

    With ``c = alpha * beta_u`` and ``b`` the realised share of the root
    remainder, ``E[b] = 1 / (1 + gamma)``; the row that moved in gets the
    size-biased share ``E = (c E[b] + 1) / (c + 1)`` of its remainder (checked
    against a truncated stick-breaking simulation), another row ``E[b]``, and
    the new row keeps ``(c E[b] + kappa) / (alpha + kappa)`` on itself.
    """
    family, _, dim = tiny_data("gaussian", [1])
    hyp = family.hyperparameters(dim)
    alpha, gamma, kappa = 2.0, 1.5, 0.8
    beta_u, rem0, rem1 = 0.6, 0.5, 0.3
    c = alpha * beta_u
    rng = np.random.default_rng(7)
    n = 20000
    draws = np.empty((n, 4))
    for i in range(n):
        beta = np.array([beta_u, 1 - beta_u, 0.0, 0.0])
        pi = np.zeros((4, 4))
        pi[0, :2] = [rem0, 1 - rem0]
        pi[1, :2] = [rem1, 1 - rem1]
        phi = np.zeros((4, family.n_params(dim)))
        _pgas._new_state(pi, beta, phi, 1, 0, alpha, gamma, kappa,
                         np.zeros((1, family.n_stats(dim))), hyp, family.tag, np.zeros(4), rng)
        assert beta.sum() == pytest.approx(1.0)
        np.testing.assert_allclose(pi[:3].sum(axis=1), 1.0)
        assert phi[2, 1] > 0
        draws[i] = [beta[2] / beta_u, pi[0, 2] / rem0, pi[1, 2] / rem1, pi[2, 2]]
    eb = 1 / (1 + gamma)
    expected = [eb, (c * eb + 1) / (c + 1), eb, (c * eb + kappa) / (alpha + kappa)]
    se = draws.std(axis=0) / np.sqrt(n)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - expected), 5 * se)

    # the size-biased share, by brute force: sticks of the remainder, a row's
    # Dirichlet over them, the stick it lands on
    n_sticks, n_sim = 200, 20000
    v = rng.beta(1.0, gamma, size=(n_sim, n_sticks))
    sticks = v * np.cumprod(np.hstack([np.ones((n_sim, 1)), 1 - v[:, :-1]]), axis=1)
    row = rng.gamma(c * sticks)
    row /= row.sum(axis=1, keepdims=True)
    cum = np.cumsum(row, axis=1)
    hit = np.minimum((rng.random((n_sim, 1)) * cum[:, -1:] > cum).sum(axis=1), n_sticks - 1)
    share = row[np.arange(n_sim), hit]
    assert abs(share.mean() - expected[1]) < 5 * share.std() / np.sqrt(n_sim)


@pytest.mark.parametrize("m, p", [(9, 0.5), (9, 0.93), (1, 0.7), (40, 0.99), (3, 1.0)])
def test_binomial_from_top(m, p):
    """The binomial draw of the particles entering the likeliest state is
    Binomial(m, p) (inversion on a grid of uniforms: exact up to the grid)."""
    from scipy.stats import binom

    n = 200_000
    u = (np.arange(n) + 0.5) / n
    draws = np.array([_pgas._binomial_from_top(m, p, ui) for ui in u])
    freq = np.bincount(draws, minlength=m + 1) / n
    np.testing.assert_allclose(freq, binom.pmf(np.arange(m + 1), m, p), atol=2.0 / n)
    # p ** m below the floating-point range: the caller draws one by one
    assert _pgas._binomial_from_top(2000, 0.5, 0.3) == -1


@njit(cache=True)
def _table_counts(nn, c, size, rng):
    out = np.empty(size, np.int64)
    for i in range(size):
        out[i] = _pgas._crp_tables(nn, c, rng)
    return out


@pytest.mark.parametrize("nn, c", [(1, 0.5), (3, 0.1), (9, 0.3), (50, 0.3), (500, 2.5),
                                   (40, 10.0), (1000, 0.05), (300, 60.0)])
def test_crp_tables_antoniak(nn, c):
    """The number of tables of nn CRP customers (direct draws, then thinning
    over dyadic ranges) follows the Antoniak distribution
    P(m) = |s(nn, m)| c^m Gamma(c) / Gamma(c + nn)."""
    from scipy.special import gammaln

    S = _hcrp.log_stirling_rows(np.array([nn]), nn)[0]
    m = np.arange(nn + 1)
    p = np.exp(S + m * np.log(c) + gammaln(c) - gammaln(c + nn))
    n = 100_000
    draws = _table_counts(nn, c, n, np.random.default_rng(nn))
    freq = np.bincount(draws, minlength=nn + 1) / n
    exact = {k: float(p[k]) for k in range(nn + 1) if p[k] > 0.0}
    sampled = {k: float(freq[k]) for k in range(nn + 1) if freq[k] > 0.0}
    assert tv_distance(sampled, exact) < tv_threshold(exact, n) + 1e-12
    assert _table_counts(100, 1e-300, 10, np.random.default_rng(0)).max() == 1
