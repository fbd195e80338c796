"""Run any registered sampler on a tiny problem and compare with the exact posterior.

``check_exact(...)`` runs one long chain through the chain driver (the same
code path as ``InfiniteHMM.fit``), collects the kept partitions, computes the
exact posterior over partitions by enumeration (``exact_posterior``) and
asserts that the total variation distance is below a threshold set from the
Monte-Carlo noise: the 0.999 quantile of the TV distance of ``n_eff`` iid
draws from the exact posterior, where ``n_eff = n_kept / tau`` and ``tau`` is
a conservative integrated autocorrelation time (the largest over the
indicators of the most probable partitions and the number of states).
"""

import numpy as np

from exact_posterior import empirical, exact_posterior, tv_distance, tv_threshold
from sk_ihmm import _chain
from sk_ihmm._chain import run_chain
from sk_ihmm.emissions import (AutoRegressive, Categorical, DiagonalGaussian, Gaussian,
                               HCRPCategorical, MultivariateGaussian, Poisson)


def tiny_data(kind, lengths, seed=0):
    """Small observation sets with some structure (deterministic)."""
    T = int(sum(lengths))
    if kind.endswith("_missing"):
        # missing rows inside a sequence, at a sequence start (lengths (2, 3))
        # and at the end of the data
        family, Y, dim = tiny_data(kind[:-len("_missing")], lengths, seed)
        Y = Y.copy()
        Y[[i for i in MISSING_ROWS if i < T]] = np.nan
        return family, Y, dim
    if kind in ("hcrp", "hcrp_resampled"):
        # a frequent symbol and a small base concentration: the shared
        # frequencies matter (the exact posterior differs from Categorical's
        # with concentration / V by a total variation of about 0.1)
        base = np.array([0, 0, 1, 0, 0, 1, 0])
        family = HCRPCategorical(concentration=3.0, base_concentration=0.2,
                                 concentration_prior=(6.0, 2.0), base_concentration_prior=(2.0, 10.0),
                                 resample=kind == "hcrp_resampled", n_symbols=3)
        return family, base[:T, None].astype(float), 3
    if kind in ("ar", "ar2"):
        # order 1: a climb then a decay towards zero (D=1), and a second
        # column that turns the other way (D=2); the first step of every
        # sequence is a conditioning value (a NaN row after prepare)
        series = np.array([[0.2, 0.0], [1.1, -0.3], [2.1, -0.5], [2.9, -0.6], [1.4, 0.9],
                           [0.8, 0.5], [0.3, 0.4]])
        D = 1 if kind == "ar" else 2
        family = AutoRegressive(order=1, center=0.5, M0=0.0, K0=0.5, nu0=D + 1.0,
                                psi0=0.3 if D == 1 else [[0.3, 0.05], [0.05, 0.2]])
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        return family, family.prepare(series[:T, :D], starts, lengths), D
    if kind == "poisson":
        counts = np.array([0, 1, 4, 5, 0, 6, 2])
        return Poisson(a0=1.5, b0=0.5), counts[:T, None].astype(float), 1
    if kind == "poisson2":
        counts = np.array([[0, 3], [1, 3], [4, 0], [5, 1], [0, 2], [6, 0], [2, 2]])
        return Poisson(a0=1.5, b0=[0.5, 1.0]), counts[:T].astype(float), 2
    if kind == "alternating":
        # two symbols in turn: many pairs of steps share their labels'
        # context, so the chain split-merge moves of width >= 2 apply often
        base = np.array([0, 1, 0, 1, 0, 1, 0])
        return Categorical(concentration=0.5), base[:T, None].astype(float), 3
    if kind == "categorical":
        base = np.array([0, 0, 1, 1, 2, 0, 1])
        return Categorical(concentration=0.5), base[:T, None].astype(float), 3
    base = np.array([-1.0, -0.8, 1.1, 0.9, -1.2, 1.3, 0.1])
    if kind == "gaussian_diag":
        # a second column that splits the steps differently from the first,
        # with its own prior mean and scale
        second = np.array([0.6, -0.5, 0.5, 0.7, -0.4, 0.4, -0.6])
        family = DiagonalGaussian(mu0=[0.0, 0.2], lambda0=0.5, a0=2.0, b0=[0.5, 0.1])
        return family, np.column_stack([base, second])[:T], 2
    if kind == "mvn":
        # the full-covariance family on the same two columns, with a prior
        # scale whose off-diagonal term couples them
        second = np.array([0.6, -0.5, 0.5, 0.7, -0.4, 0.4, -0.6])
        family = MultivariateGaussian(mu0=[0.0, 0.2], kappa0=0.5, nu0=4.0,
                                      psi0=[[0.5, 0.1], [0.1, 0.3]])
        return family, np.column_stack([base, second])[:T], 2
    if kind == "gaussian_sharp":
        # a0 so large that every Student-t predictive has (nu + 1) / 2 above
        # emissions.PROPOSAL_QUADRATIC_HALF_NU1 even for an empty state: the
        # blocked samplers then propose with quadratic emission weights
        return Gaussian(mu0=0.0, lambda0=0.5, a0=60.0, b0=20.0), base[:T, None], 1
    return Gaussian(mu0=0.0, lambda0=0.5, a0=2.0, b0=0.5), base[:T, None], 1


#: Rows of ``tiny_data(kind + "_missing", ...)`` that are missing (NaN).
MISSING_ROWS = (0, 2, 4)


def make_problem(family, Y, dim, lengths, alpha, gamma, kappa, resample, options=None,
                 priors=((2.0, 2.0), (2.0, 2.0), (2.0, 2.0))):
    return _chain.make_problem(family, Y, dim, lengths, conc0=(alpha, gamma, kappa),
                               priors=priors, resample=resample, options=options,
                               missing=bool(np.isnan(Y[:, 0]).any()))


def _iat(x):
    """tau = 1 + 2 sum rho_t with Sokal's window (c = 5)."""
    x = np.asarray(x, float)
    x = x - x.mean()
    v = x.var()
    if v == 0:
        return 1.0
    n = x.shape[0]
    f = np.fft.rfft(x, 2 * n)
    acf = np.fft.irfft(f * np.conj(f))[:n] / (v * n)
    tau = 1.0
    for t in range(1, n):
        tau += 2 * acf[t]
        if t >= 5 * tau:
            break
    return max(tau, 1.0)


def check_exact(sampler, kind="categorical", lengths=(5,), alpha=1.0, gamma=1.0, kappa=0.0,
                resample=(False, False, False), n_sweeps=20000, n_burnin=500, seed=0,
                options=None, init_states=2, return_details=False, marginal=None,
                partition_loglik=None, priors=None):
    """Assert that ``sampler`` samples the exact partition posterior.

    ``marginal(Y_block)``: the log marginal likelihood of the observations
    of one state (default: the family's own ``log_marginal``); missing rows
    are dropped before it is called. ``partition_loglik(z)``: instead, the log
    likelihood of a whole canonical partition (for emission priors that
    couple the states)."""
    lengths = list(lengths)
    family, Y, dim = tiny_data(kind, lengths)
    prob = make_problem(family, Y, dim, lengths, alpha, gamma, kappa, resample, options,
                        **({} if priors is None else {"priors": priors}))
    lml = marginal or (lambda Yb: family.log_marginal(Yb, dim))
    observed = ~np.isnan(Y[:, 0])

    def block_lml(idx):
        idx = [i for i in idx if observed[i]]
        return lml(Y[idx]) if idx else 0.0

    priors = prob.priors
    # a fourth row (a_rho, b_rho) with a_rho > 0: Fox et al.'s prior on
    # (alpha + kappa, rho), alpha and kappa resampled together
    fox = priors.shape[0] > 3 and priors[3, 0] > 0 and resample[0]
    exact = exact_posterior(
        lengths, None if partition_loglik else block_lml, alpha, gamma, kappa,
        alpha_prior=priors[0] if resample[0] and not fox else None,
        gamma_prior=priors[1] if resample[1] else None,
        kappa_prior=priors[2] if resample[2] and not fox else None,
        alpha_kappa_prior=priors[0] if fox else None,
        rho_prior=priors[3] if fox else None,
    )
    if partition_loglik is not None:
        log_post = {z: np.log(p) + partition_loglik(z) for z, p in exact.items()}
        top = max(log_post.values())
        total = sum(np.exp(v - top) for v in log_post.values())
        exact = {z: float(np.exp(v - top) / total) for z, v in log_post.items()}
    T = Y.shape[0]
    x0 = (np.arange(T) % init_states + 1).astype(np.int64)
    out = run_chain(sampler, prob, x0, n_burnin, n_sweeps, 1, np.random.SeedSequence(seed))
    samples = out["samples"]
    emp = empirical(samples)
    tv = tv_distance(exact, emp)
    # conservative effective sample size
    keys = [tuple(samples[i]) for i in range(samples.shape[0])]
    top = sorted(exact, key=exact.get, reverse=True)[:4]
    taus = [_iat(out["trace"]["n_states"][n_burnin:])]
    for z in top:
        taus.append(_iat([k == z for k in keys]))
    tau = max(taus)
    n_eff = samples.shape[0] / tau
    thr = tv_threshold(exact, n_eff, quantile=0.999, n_sim=1000, seed=seed)
    details = {"tv": tv, "threshold": thr, "tau": tau, "n_eff": n_eff,
               "accept": float(np.mean(out["trace"]["accept_rate"]))}
    assert tv < thr, f"{sampler}: TV {tv:.4f} >= threshold {thr:.4f} ({details})"
    return details if return_details else None
