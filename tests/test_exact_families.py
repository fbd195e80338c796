"""Poisson, diagonal and full-covariance Gaussian emissions and missing observations: every
sampler targets the exact posterior.

Each case runs one long chain through the chain driver and compares the
partition frequencies with the exact posterior enumerated by
``sampler_harness`` (total variation against a threshold from the
Monte-Carlo noise). The marginal likelihood of a state's observations is
written out here, independently of the package's kernels:

* Poisson with a Gamma(a0, b0_d) rate per column:
  ``sum_d [lgamma(a0 + S_d) - lgamma(a0) + a0 log b0_d - (a0 + S_d) log(b0_d + n)]
  - sum log y!``;
* Normal-Inverse-Gamma and Dirichlet-multinomial for the missing-data cases,
  whose missing rows add nothing (``sampler_harness`` drops them);
* the diagonal Gaussian as the product over columns of one-column
  Normal-Inverse-Gamma marginals (one prior mean and scale per column).
* the Normal-Inverse-Wishart marginal of the full-covariance Gaussian
  (D = 2, a prior scale that couples the columns; see :func:`niw_marginal`).
* the matrix-normal inverse-Wishart marginal of the autoregressive family
  (order 1, D = 1 and 2; see :func:`mniw_marginal`), whose conditioning
  rows (the first step of each sequence) add nothing either.

Missing rows (``sampler_harness.MISSING_ROWS``) sit inside a sequence, at a
sequence start, at the first step and at the last.
"""

import math

import numpy as np
import pytest
from scipy.special import gammaln, multigammaln

from exact_posterior import _stirling1
from sampler_harness import check_exact

SAMPLERS = {
    "rcd_gibbs": None,
    "rcd_blocked": {"block_size": 2},
    "rcd_beam": {"block_size": 3},
    "split_merge": {"base_sampler": "none", "split_merge_trials": 3},
    "pgas": {"n_particles": 3, "proposal": "posterior"},
}


def poisson_marginal(a0, b0):
    b0 = np.broadcast_to(np.asarray(b0, float), (np.size(b0),))

    def lml(Y):
        n = Y.shape[0]
        out = -float(np.sum(gammaln(Y + 1.0)))
        for d in range(Y.shape[1]):
            s, b = float(Y[:, d].sum()), float(b0[d] if b0.size > 1 else b0[0])
            out += math.lgamma(a0 + s) - math.lgamma(a0) + a0 * math.log(b) - (a0 + s) * math.log(b + n)
        return out
    return lml


def nig_marginal(mu0, lambda0, a0, b0):
    def lml(Y):
        y = Y[:, 0]
        n = y.size
        mean = y.mean()
        lam_n = lambda0 + n
        a_n = a0 + n / 2
        b_n = b0 + 0.5 * np.sum((y - mean) ** 2) + lambda0 * n * (mean - mu0) ** 2 / (2 * lam_n)
        return (math.lgamma(a_n) - math.lgamma(a0) + a0 * math.log(b0) - a_n * math.log(b_n)
                + 0.5 * math.log(lambda0 / lam_n) - 0.5 * n * math.log(2 * math.pi))
    return lml


def nig_diag_marginal(mu0, lambda0, a0, b0):
    columns = [nig_marginal(m, lambda0, a0, b) for m, b in zip(mu0, b0)]

    def lml(Y):
        return sum(col(Y[:, [d]]) for d, col in enumerate(columns))
    return lml


def dirichlet_marginal(concentration, n_symbols):
    def lml(Y):
        counts = np.bincount(Y[:, 0].astype(int), minlength=n_symbols)
        a = concentration
        return (math.lgamma(n_symbols * a) - math.lgamma(n_symbols * a + counts.sum())
                + float(np.sum(gammaln(counts + a) - math.lgamma(a))))
    return lml


def mniw_marginal(center, M0, K0, nu0, psi0):
    """Marginal likelihood of the autoregressive family's prepared rows
    ``[y_t, y_{t-1}, ..., y_{t-p}]`` in one state, by the textbook formulas:
    with ``x_t = [y_{t-1} - mu; ...; y_{t-p} - mu; 1]`` and ``Y``, ``X`` the
    stacked ``y_t - mu`` and ``x_t``,

        K_n = K0 + X^T X,   M_n = (M0 K0 + Y^T X) K_n^{-1},
        Psi_n = Psi0 + Y^T Y + M0 K0 M0^T - M_n K_n M_n^T,   nu_n = nu0 + n,
        log p = -n D / 2 log(pi) + log Gamma_D(nu_n / 2) - log Gamma_D(nu0 / 2)
                + nu0 / 2 log|Psi0| - nu_n / 2 log|Psi_n| + D / 2 (log|K0| - log|K_n|)."""
    def lml(rows):
        D = np.atleast_1d(psi0).shape[0] if np.ndim(psi0) else 1
        mu = np.broadcast_to(np.asarray(center, float), (D,))
        p = rows.shape[1] // D - 1
        m = D * p + 1
        k0 = np.eye(m) * K0 if np.ndim(K0) == 0 else np.asarray(K0, float)
        m0 = np.full((D, m), float(M0)) if np.ndim(M0) == 0 else np.asarray(M0, float)
        ps0 = np.eye(D) * psi0 if np.ndim(psi0) == 0 else np.asarray(psi0, float)
        Y = rows[:, :D] - mu
        X = np.hstack([rows[:, D:] - np.tile(mu, p), np.ones((rows.shape[0], 1))])
        n = Y.shape[0]
        K_n = k0 + X.T @ X
        M_n = (m0 @ k0 + Y.T @ X) @ np.linalg.inv(K_n)
        psi_n = ps0 + Y.T @ Y + m0 @ k0 @ m0.T - M_n @ K_n @ M_n.T
        nu_n = nu0 + n
        return float(-0.5 * n * D * np.log(np.pi) + multigammaln(nu_n / 2, D)
                     - multigammaln(nu0 / 2, D) + 0.5 * nu0 * np.linalg.slogdet(ps0)[1]
                     - 0.5 * nu_n * np.linalg.slogdet(psi_n)[1]
                     + 0.5 * D * (np.linalg.slogdet(k0)[1] - np.linalg.slogdet(K_n)[1]))
    return lml


def niw_marginal(mu0, kappa0, nu0, psi0):
    """Marginal likelihood under the Normal-Inverse-Wishart prior (Murphy
    2007, section 9): with the sample mean ``m`` and scatter ``S`` of the
    ``n`` rows,

        kappa_n = kappa0 + n,   nu_n = nu0 + n,
        Psi_n = Psi0 + S + kappa0 n / kappa_n (m - mu0)(m - mu0)^T,
        log p = -n D / 2 log(pi) + log Gamma_D(nu_n / 2) - log Gamma_D(nu0 / 2)
                + nu0 / 2 log|Psi0| - nu_n / 2 log|Psi_n| + D / 2 log(kappa0 / kappa_n)."""
    mu0, psi0 = np.asarray(mu0, float), np.asarray(psi0, float)

    def lml(Y):
        n, D = Y.shape
        m = Y.mean(axis=0)
        S = (Y - m).T @ (Y - m)
        kappa_n, nu_n = kappa0 + n, nu0 + n
        psi_n = psi0 + S + kappa0 * n / kappa_n * np.outer(m - mu0, m - mu0)
        return float(-0.5 * n * D * np.log(np.pi) + multigammaln(nu_n / 2, D)
                     - multigammaln(nu0 / 2, D) + 0.5 * nu0 * np.linalg.slogdet(psi0)[1]
                     - 0.5 * nu_n * np.linalg.slogdet(psi_n)[1]
                     + 0.5 * D * np.log(kappa0 / kappa_n))
    return lml


MARGINALS = {
    "poisson": poisson_marginal(1.5, 0.5),
    "poisson2": poisson_marginal(1.5, [0.5, 1.0]),
    "gaussian_missing": nig_marginal(0.0, 0.5, 2.0, 0.5),
    "categorical_missing": dirichlet_marginal(0.5, 3),
    "gaussian_diag": nig_diag_marginal([0.0, 0.2], 0.5, 2.0, [0.5, 0.1]),
    # the priors of sampler_harness.tiny_data("ar"), ("ar2")
    "ar": mniw_marginal(0.5, 0.0, 0.5, 2.0, 0.3),
    "ar2": mniw_marginal(0.5, 0.0, 0.5, 3.0, np.array([[0.3, 0.05], [0.05, 0.2]])),
    # the prior of sampler_harness.tiny_data("mvn")
    "mvn": niw_marginal([0.0, 0.2], 0.5, 4.0, [[0.5, 0.1], [0.1, 0.3]]),
}

CASES = [
    dict(kind="poisson", lengths=(5,)),
    dict(kind="poisson", lengths=(2, 3), kappa=1.5, resample=(True, True, False)),
    dict(kind="poisson2", lengths=(5,), alpha=0.5),
    dict(kind="gaussian_missing", lengths=(5,)),
    dict(kind="gaussian_missing", lengths=(2, 3), kappa=1.0, resample=(True, True, False)),
    dict(kind="categorical_missing", lengths=(6,), alpha=0.5),
]


def _id(case):
    return "-".join(f"{k}={v}" for k, v in case.items())


@pytest.mark.slow
@pytest.mark.parametrize("sampler", list(SAMPLERS))
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_exact(sampler, case):
    check_exact(sampler, n_sweeps=15000, options=SAMPLERS[sampler],
                marginal=MARGINALS[case["kind"]], **case)


#: The diagonal Gaussian family: one case per sampler (each compiles the
#: sampler's kernels for the family), and two sequences with a sticky prior
#: and resampled concentrations for one of them.
DIAG_CASES = [(sampler, dict(kind="gaussian_diag", lengths=(5,))) for sampler in SAMPLERS] + [
    ("rcd_blocked", dict(kind="gaussian_diag", lengths=(2, 3), kappa=1.0,
                         resample=(True, True, False))),
]


@pytest.mark.slow
@pytest.mark.parametrize("sampler, case", DIAG_CASES,
                         ids=[f"{s}-{_id(c)}" for s, c in DIAG_CASES])
def test_exact_diagonal_gaussian(sampler, case):
    check_exact(sampler, n_sweeps=15000, options=SAMPLERS[sampler],
                marginal=MARGINALS[case["kind"]], **case)


#: The full-covariance Gaussian: one case per sampler, and two sequences
#: with a sticky prior and resampled concentrations for one of them.
MVN_CASES = [(sampler, dict(kind="mvn", lengths=(5,))) for sampler in SAMPLERS] + [
    ("rcd_blocked", dict(kind="mvn", lengths=(2, 3), kappa=1.0, resample=(True, True, False))),
]


@pytest.mark.slow
@pytest.mark.parametrize("sampler, case", MVN_CASES, ids=[f"{s}-{_id(c)}" for s, c in MVN_CASES])
def test_exact_multivariate_gaussian(sampler, case):
    check_exact(sampler, n_sweeps=15000, options=SAMPLERS[sampler],
                marginal=MARGINALS[case["kind"]], **case)


#: Autoregressive cases: every sampler on one sequence with D = 1, two
#: samplers with D = 2, and two sequences (a conditioning row at each start)
#: with a sticky kappa and resampled concentrations for the other two.
AR_CASES = (
    [(sampler, dict(kind="ar", lengths=(5,))) for sampler in SAMPLERS]
    + [(sampler, dict(kind="ar2", lengths=(5,))) for sampler in ("rcd_blocked", "pgas")]
    + [(sampler, dict(kind="ar", lengths=(2, 3), kappa=1.0, resample=(True, True, False)))
       for sampler in ("rcd_beam", "split_merge")]
)


@pytest.mark.slow
@pytest.mark.parametrize("sampler, case", AR_CASES, ids=[f"{s}-{_id(c)}" for s, c in AR_CASES])
def test_exact_autoregressive(sampler, case):
    check_exact(sampler, n_sweeps=15000, options=SAMPLERS[sampler],
                marginal=MARGINALS[case["kind"]], **case)


def test_marginals_agree_with_the_families():
    """The marginals written here and the families' closed forms are the same
    function (so a test failure points at a sampler, not at this file)."""
    from sampler_harness import tiny_data

    for kind in ("poisson", "poisson2", "gaussian", "categorical", "gaussian_diag", "mvn"):
        family, Y, dim = tiny_data(kind, [7])
        ours = MARGINALS.get(kind) or MARGINALS[kind + "_missing"]
        for idx in ([0], [1, 2], [0, 3, 4, 6], list(range(7))):
            assert np.isclose(ours(Y[idx]), family.log_marginal(Y[idx], dim), rtol=1e-10)
    for kind in ("ar", "ar2"):
        family, Y, dim = tiny_data(kind, [7])
        assert np.isnan(Y[0]).all() and not np.isnan(Y[1:]).any()     # the conditioning row
        for idx in ([1], [2, 3], [1, 4, 6], list(range(1, 7))):
            assert np.isclose(MARGINALS[kind](Y[idx]), family.log_marginal(Y[idx], dim), rtol=1e-10)


def test_harness_fails_when_missing_rows_are_scored(monkeypatch):
    """Power check: a chain that scores the missing rows as observed zeros (a
    wrong model) fails the comparison with the exact posterior of the
    missing-data model."""
    import sampler_harness as h

    real = h.make_problem

    def zero_filled(family, Y, *args, **kwargs):
        return real(family, np.nan_to_num(Y, nan=0.0), *args, **kwargs)

    monkeypatch.setattr(h, "make_problem", zero_filled)
    with pytest.raises(AssertionError, match="TV"):
        check_exact("rcd_gibbs", kind="gaussian_missing", lengths=(5,), n_sweeps=15000,
                    marginal=MARGINALS["gaussian_missing"])


def test_harness_fails_when_conditioning_rows_are_scored(monkeypatch):
    """Power check: a chain that scores the first step of the sequence (its
    missing lag filled with the centre, a wrong model) fails the comparison
    with the exact posterior, in which that step is a conditioning value."""
    import sampler_harness as h

    real = h.make_problem

    def lag_filled(family, Y, *args, **kwargs):
        Y = Y.copy()
        Y[0] = [0.2, 0.5]          # y_0 and a made-up y_{-1} at the centre
        return real(family, Y, *args, **kwargs)

    monkeypatch.setattr(h, "make_problem", lag_filled)
    with pytest.raises(AssertionError, match="TV"):
        check_exact("rcd_gibbs", kind="ar", lengths=(5,), n_sweeps=15000, marginal=MARGINALS["ar"])


# ----------------------------------------------------------- HCRP emissions
def _log_grid_integral(log_f, shape, rate, n=801):
    """log E[exp(log_f(c))] for c ~ Gamma(shape, rate), by the trapezoid rule
    on a log grid spanning the prior's 1e-12 .. 1 - 1e-12 quantiles."""
    from scipy.stats import gamma as gamma_dist

    lo, hi = gamma_dist.ppf([1e-12, 1 - 1e-12], shape, scale=1.0 / rate)
    u = np.linspace(np.log(lo), np.log(hi), n)
    c = np.exp(u)
    log_density = gamma_dist.logpdf(c, shape, scale=1.0 / rate) + u     # d c = c d u
    vals = np.array([log_f(ci) for ci in c]) + log_density
    top = vals.max()
    w = np.full(n, u[1] - u[0])
    w[[0, -1]] *= 0.5
    return top + np.log(np.sum(w * np.exp(vals - top)))


def hcrp_partition_loglik(Y, n_symbols, alpha_e, gamma_e, alpha_prior=None, gamma_prior=None):
    """log p(Y | partition) under the HCRP emission prior, beta and the
    states' symbol distributions integrated out: a sum over the table counts
    m_kv in 1..n_kv of

        prod_k Gamma(a) / Gamma(a + n_k) a^(m_k.) prod_kv |s(n_kv, m_kv)|
        x Gamma(g) / Gamma(g + m..) prod_v Gamma(m_.v + g / V) / Gamma(g / V),

    with the concentrations a, g fixed or integrated against Gamma priors."""
    import itertools

    y = Y[:, 0]
    V = n_symbols
    stir = _stirling1(len(y) + 1)

    def loglik(z):
        K = max(z) + 1
        counts = np.zeros((K, V), int)
        for t, k in enumerate(z):
            if not np.isnan(y[t]):
                counts[k, int(y[t])] += 1
        cells = [(k, v) for k in range(K) for v in range(V) if counts[k, v] > 0]
        n_k = counts.sum(axis=1)
        terms = []          # (log coefficient, m.., m_.v)
        for ms in itertools.product(*[range(1, counts[k, v] + 1) for k, v in cells]):
            m_v = np.zeros(V)
            coef = 0.0
            for (k, v), m in zip(cells, ms):
                m_v[v] += m
                coef += np.log(stir[counts[k, v], m])
            terms.append((coef, m_v.sum(), m_v))

        def log_f(a, m_tot):
            return sum(math.lgamma(a) - math.lgamma(a + n) for n in n_k if n > 0) + m_tot * np.log(a)

        def log_g(g, m_v):
            return (math.lgamma(g) - math.lgamma(g + m_v.sum())
                    + sum(math.lgamma(m + g / V) - math.lgamma(g / V) for m in m_v))

        out = []
        for coef, m_tot, m_v in terms:
            fa = (_log_grid_integral(lambda a: log_f(a, m_tot), *alpha_prior) if alpha_prior
                  else log_f(alpha_e, m_tot))
            fg = (_log_grid_integral(lambda g: log_g(g, m_v), *gamma_prior) if gamma_prior
                  else log_g(gamma_e, m_v))
            out.append(coef + fa + fg)
        out = np.array(out)
        return float(out.max() + np.log(np.exp(out - out.max()).sum())) if out.size else 0.0

    cache = {}

    def cached(z):
        if z not in cache:
            cache[z] = loglik(z)
        return cache[z]
    return cached


HCRP_CASES = [
    dict(kind="hcrp", lengths=(6,)),
    dict(kind="hcrp", lengths=(2, 3), kappa=1.5),
    dict(kind="hcrp_resampled", lengths=(5,), resample=(True, True, False)),
]


def _hcrp_loglik(kind, lengths):
    from sampler_harness import tiny_data

    family, Y, dim = tiny_data(kind, list(lengths))
    if family.resample:
        return hcrp_partition_loglik(Y, dim, None, None, family.concentration_prior,
                                     family.base_concentration_prior)
    return hcrp_partition_loglik(Y, dim, family.concentration, family.base_concentration)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", list(SAMPLERS))
@pytest.mark.parametrize("case", HCRP_CASES, ids=_id)
def test_exact_hcrp_categorical(sampler, case):
    check_exact(sampler, n_sweeps=15000, options=SAMPLERS[sampler],
                partition_loglik=_hcrp_loglik(case["kind"], case["lengths"]), **case)


def test_hcrp_partition_loglik_of_one_state_is_the_dirichlet_marginal_mixture():
    """Check of the reference itself: with one state and V = 2 symbols the
    likelihood is the Dirichlet-multinomial integrated over beta ~ Beta(g/2, g/2),
    computed here by quadrature."""
    from scipy import integrate

    Y = np.array([[0.0], [0.0], [1.0], [0.0]])
    a, g = 1.5, 2.0
    want = hcrp_partition_loglik(Y, 2, a, g)((0, 0, 0, 0))

    def integrand(u):
        w = np.array([a * u, a * (1 - u)])
        n = np.array([3, 1])
        dm = math.lgamma(a) - math.lgamma(a + 4) + sum(math.lgamma(n[i] + w[i]) - math.lgamma(w[i])
                                                      for i in range(2))
        prior = (math.lgamma(g) - 2 * math.lgamma(g / 2) + (g / 2 - 1) * (np.log(u) + np.log(1 - u)))
        return np.exp(dm + prior)
    got = np.log(integrate.quad(integrand, 0, 1, epsabs=1e-13, epsrel=1e-11)[0])
    assert np.isclose(want, got, rtol=1e-9)


@pytest.mark.parametrize("which", ["concentration", "base_concentration"])
def test_hcrp_hyperparameter_updates_target_their_posterior(which):
    """The per-sweep update of HCRPCategorical, run on fixed counts, samples
    p(alpha_e, gamma_e | counts): each concentration's draws against its exact
    marginal posterior (the table sum of hcrp_partition_loglik, the other
    concentration and beta integrated out), by a Kolmogorov-Smirnov distance
    with the effective sample size of the chain."""
    from scipy.stats import gamma as gamma_dist

    from sampler_harness import _iat
    from sk_ihmm.emissions import HCRPCategorical, resample_hyperparameters

    family = HCRPCategorical(concentration=2.0, base_concentration=1.0,
                             concentration_prior=(3.0, 1.0), base_concentration_prior=(2.0, 2.0),
                             n_symbols=3)
    counts = np.array([[0, 0, 0], [3, 1, 0], [0, 2, 1], [4, 0, 0]], float)
    stats = np.concatenate([counts, counts.sum(axis=1, keepdims=True)], axis=1)
    hyp = family.hyperparameters(3)
    rng = np.random.default_rng(0)
    n = 30000
    draws = np.empty(n)
    col = 1 if which == "concentration" else 2
    for i in range(n):
        resample_hyperparameters(family.tag, stats, hyp, rng)
        draws[i] = hyp[col]
    draws = draws[500:]
    n_eff = draws.size / _iat(draws)

    # exact marginal posterior on a grid, from the table-count sum
    import itertools
    stir = _stirling1(8)
    cells = [(k, v) for k in range(4) for v in range(3) if counts[k, v] > 0]
    n_k = counts.sum(axis=1)
    a_prior, g_prior = (3.0, 1.0), (2.0, 2.0)
    grid = np.linspace(1e-3, 15.0, 3000)
    dens = np.zeros_like(grid)
    for ms in itertools.product(*[range(1, int(counts[k, v]) + 1) for k, v in cells]):
        m_v = np.zeros(3)
        coef = 0.0
        for (k, v), m in zip(cells, ms):
            m_v[v] += m
            coef += np.log(stir[int(counts[k, v]), m])

        def log_f(a):
            return sum(math.lgamma(a) - math.lgamma(a + nk) for nk in n_k if nk > 0) + m_v.sum() * np.log(a)

        def log_g(g):
            return (math.lgamma(g) - math.lgamma(g + m_v.sum())
                    + sum(math.lgamma(m + g / 3) - math.lgamma(g / 3) for m in m_v))
        if which == "concentration":
            other = _log_grid_integral(log_g, *g_prior)
            vals = np.array([log_f(a) for a in grid]) + gamma_dist.logpdf(grid, a_prior[0], scale=1 / a_prior[1])
        else:
            other = _log_grid_integral(log_f, *a_prior)
            vals = np.array([log_g(g) for g in grid]) + gamma_dist.logpdf(grid, g_prior[0], scale=1 / g_prior[1])
        dens += np.exp(coef + other + vals)
    cdf = np.cumsum(dens)
    cdf /= cdf[-1]
    emp = np.searchsorted(np.sort(draws), grid, side="right") / draws.size
    ks = np.max(np.abs(emp - cdf))
    assert ks < 1.95 / np.sqrt(n_eff), (ks, n_eff)     # KS 0.999 quantile
