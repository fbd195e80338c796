"""Tests of the exact-posterior test helper (``tests/exact_posterior.py``)."""

import time

import numpy as np
import pytest
from scipy import integrate
from scipy.special import gammaln, logsumexp
from scipy.stats import gamma as gamma_dist

from exact_posterior import (
    canonical,
    empirical,
    enumerate_partitions,
    exact_posterior,
    log_prior_partition,
    tv_distance,
    tv_threshold,
)

BELL = [1, 1, 2, 5, 15, 52, 203, 877]


def prior_dist(lengths, alpha, gamma, kappa=0.0):
    return {z: np.exp(log_prior_partition(z, lengths, alpha, gamma, kappa))
            for z in enumerate_partitions(sum(lengths))}


# ---------------------------------------------------------------------------
# independent references: the sequential generative process
# ---------------------------------------------------------------------------
def generative_enumeration(lengths, alpha, gamma, kappa):
    """Exact partition law by enumerating every decision of the sequential
    Chinese-restaurant-franchise process (no closed-form formula used)."""
    T = sum(lengths)
    starts = set(np.cumsum([0] + list(lengths[:-1])).tolist())
    out = {}

    def step(t, prev, tables, root, z, prob):
        # tables: dict restaurant -> list of [size, dish]; root: list of M_k
        if t == T:
            key = tuple(z)
            out[key] = out.get(key, 0.0) + prob
            return
        j = 0 if t in starts else prev + 1
        c = alpha if j == 0 else alpha + kappa
        tabs = tables.get(j, [])
        n_j = sum(s for s, _ in tabs)
        for i, (size, dish) in enumerate(tabs):
            new_tabs = [list(tb) for tb in tabs]
            new_tabs[i][0] += 1
            step(t + 1, dish, {**tables, j: new_tabs}, root, z + [dish],
                 prob * size / (n_j + c))
        p_new = prob * c / (n_j + c)
        if j > 0 and kappa > 0:
            step(t + 1, j - 1, {**tables, j: tabs + [[1, j - 1]]}, root,
                 z + [j - 1], p_new * kappa / (alpha + kappa))
        p_root = p_new if j == 0 else p_new * alpha / (alpha + kappa)
        M = sum(root)
        for k in range(len(root) + 1):
            w = root[k] if k < len(root) else gamma
            new_root = list(root) + [0] * (k == len(root))
            new_root[k] += 1
            step(t + 1, k, {**tables, j: tabs + [[1, k]]}, new_root, z + [k],
                 p_root * w / (M + gamma))

    step(0, None, {}, [], [], 1.0)
    return out


def simulate_hcrp_hmm(lengths, alpha, gamma, kappa, n, rng):
    """``n`` independent draws of the state sequence, vectorised over draws."""
    T = sum(lengths)
    rows = np.arange(n)
    size = np.zeros((n, T + 1, T))           # table sizes per restaurant
    dish = np.zeros((n, T + 1, T), dtype=int)
    n_tab = np.zeros((n, T + 1), dtype=int)
    root = np.zeros((n, T + 1))               # M_k (slot T never used)
    n_dish = np.zeros(n, dtype=int)
    z = np.empty((n, T), dtype=int)

    def draw(weights):
        cum = np.cumsum(weights, axis=1)
        u = rng.random(n) * cum[:, -1]
        return (cum <= u[:, None]).sum(axis=1)

    t = 0
    for L in lengths:
        j = np.zeros(n, dtype=int)
        for _ in range(L):
            c = np.where(j == 0, alpha, alpha + kappa)
            choice = draw(np.concatenate([size[rows, j], c[:, None]], axis=1))
            new = choice == T
            d = dish[rows, j, np.minimum(choice, T - 1)]
            size[rows[~new], j[~new], choice[~new]] += 1
            # new table: override (sticky) or a customer of the root
            override = new & (j > 0) & (rng.random(n) < kappa / (alpha + kappa))
            to_root = new & ~override
            root_w = np.where(np.arange(T + 1)[None, :] < n_dish[:, None],
                              root, 0.0)
            root_w[rows, n_dish] = gamma
            k = draw(root_w)
            d = np.where(override, j - 1, d)
            d = np.where(to_root, k, d)
            root[rows[to_root], k[to_root]] += 1
            n_dish += to_root & (k == n_dish)
            slot = n_tab[rows, j]
            size[rows[new], j[new], slot[new]] = 1
            dish[rows[new], j[new], slot[new]] = d[new]
            n_tab[rows, j] += new
            z[:, t] = d
            j = d + 1
            t += 1
    return z


# ---------------------------------------------------------------------------
# partitions and distances
# ---------------------------------------------------------------------------
def test_canonical_and_enumeration():
    assert canonical([3, 3, 7, 3, 1]) == (0, 0, 1, 0, 2)
    assert canonical(np.array([5, 2, 5])) == (0, 1, 0)
    for T in range(8):
        parts = enumerate_partitions(T)
        assert len(parts) == BELL[T] == len(set(parts))
        assert all(canonical(z) == z for z in parts)


def test_tv_and_empirical():
    p = {(0, 0): 0.25, (0, 1): 0.75}
    q = empirical([[1, 1], [4, 2], [2, 4], ["a", "b"]])
    assert q == p
    assert empirical(np.array([[1, 1], [4, 2], [2, 4], [0, 3]])) == p
    assert tv_distance(p, {(0, 1): 1.0}) == pytest.approx(0.25)
    assert tv_distance(p, q) == 0.0
    # threshold shrinks like 1 / sqrt(n) and is reproducible
    p5 = prior_dist([5], 1.0, 1.0)
    t1, t4 = tv_threshold(p5, 1000), tv_threshold(p5, 4000)
    assert t1 == tv_threshold(p5, 1000)
    assert 1.6 < t1 / t4 < 2.4


# ---------------------------------------------------------------------------
# the prior
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("lengths, alpha, gamma, kappa", [
    ([1], 1.0, 1.0, 0.0),
    ([4], 0.7, 2.5, 0.0),
    ([6], 3.0, 0.4, 5.0),
    ([2, 3], 1.5, 0.8, 0.0),
    ([2, 3], 1.5, 0.8, 3.0),
    ([3, 1, 3], 0.2, 6.0, 0.5),
    ([1, 1, 1, 1], 1.0, 1.0, 2.0),
])
def test_prior_sums_to_one(lengths, alpha, gamma, kappa):
    assert sum(prior_dist(lengths, alpha, gamma, kappa).values()) == \
        pytest.approx(1.0, abs=1e-12)


def test_prior_small_t_analytic():
    a, g, k = 1.3, 0.7, 2.0
    assert log_prior_partition((0,), [1], a, g, k) == pytest.approx(0.0)
    # one sequence of length 2: the second step re-uses state 1 through an
    # override table or through the root (existing dish, prob 1/(1+gamma))
    for kap in (0.0, k):
        p_same = kap / (a + kap) + a / (a + kap) / (1.0 + g)
        assert np.exp(log_prior_partition((0, 0), [2], a, g, kap)) == \
            pytest.approx(p_same, rel=1e-12)
        assert np.exp(log_prior_partition((0, 1), [2], a, g, kap)) == \
            pytest.approx(1.0 - p_same, rel=1e-12)
    # two sequences of length 1: both customers of the START restaurant,
    # which is never sticky
    p_same = 1.0 / (1.0 + a) + a / (1.0 + a) / (1.0 + g)
    for kap in (0.0, k):
        assert np.exp(log_prior_partition((0, 0), [1, 1], a, g, kap)) == \
            pytest.approx(p_same, rel=1e-12)
    # one sequence of length 3, kappa = 0, partition (0, 1, 0):
    # start->1 (new dish), 1->2 (new table, new dish: gamma/(1+gamma)),
    # 2->1 (new table, existing dish 1 with M_1 = 1 of M = 2: 1/(2+gamma))
    p = g / (1 + g) * 1 / (2 + g)
    assert np.exp(log_prior_partition((0, 1, 0), [3], a, g)) == \
        pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("lengths, alpha, gamma, kappa", [
    ([5], 1.0, 1.0, 0.0),
    ([5], 0.6, 2.0, 1.5),
    ([2, 3], 2.0, 0.5, 0.0),
    ([3, 2], 0.8, 1.2, 4.0),
    ([1, 1, 2], 1.0, 1.0, 1.0),
])
def test_prior_matches_generative_enumeration(lengths, alpha, gamma, kappa):
    ref = generative_enumeration(lengths, alpha, gamma, kappa)
    mine = prior_dist(lengths, alpha, gamma, kappa)
    assert set(ref) <= set(mine)
    for z, p in mine.items():
        assert p == pytest.approx(ref.get(z, 0.0), rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("lengths, alpha, gamma, kappa", [
    ([5], 1.0, 1.5, 0.0),
    ([5], 1.0, 1.5, 2.0),
    ([2, 3], 0.7, 1.0, 0.0),
    ([2, 3], 0.7, 1.0, 3.0),
])
def test_prior_monte_carlo(lengths, alpha, gamma, kappa):
    n = 200_000
    rng = np.random.default_rng(12345)
    z = simulate_hcrp_hmm(lengths, alpha, gamma, kappa, n, rng)
    # the process creates dishes in order of first appearance
    assert all(canonical(row) == tuple(row) for row in z[:1000])
    p_exact = prior_dist(lengths, alpha, gamma, kappa)
    thr = tv_threshold(p_exact, n, quantile=0.999)
    assert tv_distance(empirical(z), p_exact) < thr
    # the check has power: a 25% change of alpha (or of kappa) is detected
    other = prior_dist(lengths, 1.25 * alpha, gamma, kappa)
    assert tv_distance(other, p_exact) > 3 * thr
    if kappa > 0:
        other = prior_dist(lengths, alpha, gamma, 1.25 * kappa)
        assert tv_distance(other, p_exact) > 3 * thr


# ---------------------------------------------------------------------------
# posterior and hyper-parameter integration
# ---------------------------------------------------------------------------
OBS = np.array([0, 0, 1, 2, 1, 0])   # categorical observations, V = 3
LENGTHS = [2, 4]
BETA = 0.5


def log_marginal_block(idx):
    """Dirichlet(BETA)-categorical log marginal likelihood of a block."""
    counts = np.bincount(OBS[idx], minlength=3)
    return (gammaln(3 * BETA) - gammaln(3 * BETA + counts.sum())
            + np.sum(gammaln(BETA + counts) - gammaln(BETA)))


def log_weights(alpha, gamma, kappa):
    """Unnormalised log posterior weights of all partitions, fixed params."""
    parts = enumerate_partitions(sum(LENGTHS))
    lw = np.empty(len(parts))
    for i, z in enumerate(parts):
        lw[i] = log_prior_partition(z, LENGTHS, alpha, gamma, kappa)
        for k in range(max(z) + 1):
            lw[i] += log_marginal_block(
                np.array([t for t, v in enumerate(z) if v == k]))
    return parts, lw


def test_posterior_fixed_parameters():
    post = exact_posterior(LENGTHS, log_marginal_block, 1.2, 0.9, 2.0)
    assert len(post) == BELL[6]
    assert sum(post.values()) == pytest.approx(1.0, abs=1e-12)
    parts, lw = log_weights(1.2, 0.9, 2.0)
    ref = np.exp(lw - logsumexp(lw))
    np.testing.assert_allclose([post[z] for z in parts], ref, rtol=1e-12)
    # the likelihood matters: all-in-one-state is not the prior mass
    prior = exact_posterior(LENGTHS, None, 1.2, 0.9, 2.0)
    assert tv_distance(post, prior) > 0.05


def log_u_range(prior, tail=1e-17):
    """Range of u = log(theta) outside which the Gamma prior has < tail."""
    shape, rate = prior
    return (np.log(gamma_dist.ppf(tail, shape, scale=1.0 / rate)),
            np.log(gamma_dist.isf(tail, shape, scale=1.0 / rate)))


def log_density_u(u, prior):
    """Log density of u = log(theta) for theta ~ Gamma(shape, rate)."""
    shape, rate = prior
    return gamma_dist.logpdf(np.exp(u), shape, scale=1.0 / rate) + u


def gauss_legendre(lo, hi, n_panels, order=16):
    """Composite Gauss-Legendre nodes and weights on [lo, hi]."""
    x, w = np.polynomial.legendre.leggauss(order)
    edges = np.linspace(lo, hi, n_panels + 1)
    mid, half = (edges[1:] + edges[:-1]) / 2, (edges[1:] - edges[:-1]) / 2
    return ((mid[:, None] + half[:, None] * x).ravel(),
            (half[:, None] * w).ravel())


FIXED = {"alpha": 1.2, "gamma": 0.9, "kappa": 2.0}


@pytest.mark.parametrize("which, prior", [
    ("alpha", (2.0, 1.5)),
    ("gamma", (1.0, 1.0)),
    ("kappa", (0.7, 0.2)),
])
def test_single_prior_matches_quadrature(which, prior):
    post = exact_posterior(LENGTHS, log_marginal_block, **FIXED,
                           **{which + "_prior": prior})
    assert sum(post.values()) == pytest.approx(1.0, abs=1e-12)
    parts, lw_fixed = log_weights(**FIXED)
    log_lik = lw_fixed - np.array(
        [log_prior_partition(z, LENGTHS, **FIXED) for z in parts])
    lo, hi = log_u_range(prior)

    # manual integral of the fixed-parameter posterior weights over
    # u = log(theta), composite Gauss-Legendre, all partitions at once
    u, w = gauss_legendre(lo, hi, n_panels=80)
    params = {**FIXED, which: np.exp(u)}
    lw = np.array([log_prior_partition(z, LENGTHS, **params) for z in parts])
    lw += log_lik[:, None] + log_density_u(u, prior) + np.log(w)
    log_num = logsumexp(lw, axis=1)
    ref = np.exp(log_num - logsumexp(log_num))
    np.testing.assert_allclose([post[z] for z in parts], ref, rtol=1e-8)

    # adaptive quad for one partition (numerator of the posterior, and its
    # integrated prior without data)
    i = parts.index((0, 0, 1, 2, 1, 0))
    z = parts[i]

    def integrand(u, with_data):
        params = {**FIXED, which: np.exp(u)}
        return np.exp(log_prior_partition(z, LENGTHS, **params)
                      + with_data * log_lik[i] + log_density_u(u, prior))

    opts = dict(epsabs=0.0, epsrel=1e-12, limit=200)
    num = integrate.quad(integrand, lo, hi, args=(1.0,), **opts)[0]
    assert num == pytest.approx(np.exp(log_num[i]), rel=1e-9)
    prior_z = integrate.quad(integrand, lo, hi, args=(0.0,), **opts)[0]
    no_data = exact_posterior(LENGTHS, None, **FIXED,
                              **{which + "_prior": prior})
    assert no_data[z] == pytest.approx(prior_z, rel=1e-8)
    # and integrating does change the answer
    fixed_post = exact_posterior(LENGTHS, log_marginal_block, **FIXED)
    assert abs(fixed_post[z] / post[z] - 1) > 1e-3


def test_joint_alpha_kappa_prior_matches_quad():
    # alpha and kappa are coupled through alpha + kappa: outer adaptive quad
    # over log(alpha), inner Gauss-Legendre over log(kappa); no data
    a_prior, k_prior = (2.0, 1.0), (0.6, 0.5)
    gam = 0.8
    lengths = [1, 3]
    prior = exact_posterior(lengths, None, 1.0, gam, 1.0,
                            alpha_prior=a_prior, kappa_prior=k_prior)
    assert sum(prior.values()) == pytest.approx(1.0, abs=1e-12)
    uk, wk = gauss_legendre(*log_u_range(k_prior), n_panels=80)
    log_wk = np.log(wk) + log_density_u(uk, k_prior)
    for z in [(0, 0, 0, 0), (0, 1, 1, 0), (0, 1, 2, 1)]:
        def inner(ua):
            lp = log_prior_partition(z, lengths, np.exp(ua), gam, np.exp(uk))
            return np.exp(logsumexp(lp + log_wk) + log_density_u(ua, a_prior))

        ref = integrate.quad(inner, *log_u_range(a_prior), epsabs=0.0,
                             epsrel=1e-11, limit=200)[0]
        assert prior[z] == pytest.approx(ref, rel=1e-8)


def test_three_priors_match_tensor_quadrature():
    pa, pg, pk = (2.0, 1.0), (3.0, 2.0), (2.0, 0.5)
    lengths = [2, 3]
    prior = exact_posterior(lengths, None, 1.0, 1.0, 1.0, alpha_prior=pa,
                            gamma_prior=pg, kappa_prior=pk)
    nodes = [gauss_legendre(*log_u_range(p, 1e-15), n_panels=10)
             for p in (pa, pg, pk)]
    (ua, wa), (ug, wg), (uk, wk) = nodes
    log_w = [np.log(w) + log_density_u(u, p)
             for (u, w), p in zip(nodes, (pa, pg, pk))]
    for z in [(0, 1, 0, 1, 1), (0, 0, 1, 2, 0)]:
        total = []
        for g, lwg in zip(np.exp(ug), log_w[1]):
            lp = log_prior_partition(z, lengths, np.exp(ua)[:, None], g,
                                     np.exp(uk)[None, :])
            total.append(lwg + logsumexp(lp + log_w[0][:, None]
                                         + log_w[2][None, :]))
        assert prior[z] == pytest.approx(np.exp(logsumexp(total)), rel=1e-8)


def test_three_priors_converged_and_fast():
    kwargs = dict(alpha_prior=(1.0, 1.0), gamma_prior=(2.0, 2.0),
                  kappa_prior=(1.0, 0.25))
    t0 = time.perf_counter()
    post = exact_posterior(LENGTHS, log_marginal_block, 1.0, 1.0, 1.0,
                           **kwargs)
    elapsed = time.perf_counter() - t0
    assert elapsed < 5.0
    assert sum(post.values()) == pytest.approx(1.0, abs=1e-12)
    fine = exact_posterior(LENGTHS, log_marginal_block, 1.0, 1.0, 1.0,
                           n_grid=600, **kwargs)
    for z, p in post.items():
        assert p == pytest.approx(fine[z], rel=1e-9)
    # a coarse grid is visibly wrong, so the comparison is meaningful
    coarse = exact_posterior(LENGTHS, log_marginal_block, 1.0, 1.0, 1.0,
                             n_grid=12, **kwargs)
    assert max(abs(coarse[z] / post[z] - 1) for z in post) > 1e-6
    # fixed values are ignored when a prior is given
    other = exact_posterior(LENGTHS, log_marginal_block, 7.0, 0.1, 3.0,
                            **kwargs)
    assert tv_distance(other, post) < 1e-14


def test_integrated_prior_sums_to_one_small_shapes():
    prior = exact_posterior([2, 2], None, 1.0, 1.0, 1.0,
                            alpha_prior=(0.3, 1.0), gamma_prior=(0.5, 2.0),
                            kappa_prior=(0.4, 0.1))
    assert sum(prior.values()) == pytest.approx(1.0, abs=1e-10)


def test_invalid_arguments():
    with pytest.raises(ValueError):
        log_prior_partition((0, 1), [2], 0.0, 1.0)
    with pytest.raises(ValueError):
        log_prior_partition((1, 0), [2], 1.0, 1.0)
    with pytest.raises(ValueError):
        log_prior_partition((0, 1), [3], 1.0, 1.0)
    with pytest.raises(ValueError):
        exact_posterior([2], None, 1.0, 1.0, alpha_prior=(0.0, 1.0))
