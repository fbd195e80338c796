"""Poisson emissions and missing observations: every sampler targets the exact posterior.

Each case runs one long chain through the chain driver and compares the
partition frequencies with the exact posterior enumerated by
``sampler_harness`` (total variation against a threshold from the
Monte-Carlo noise). The marginal likelihood of a state's observations is
written out here, independently of the package's kernels:

* Poisson with a Gamma(a0, b0_d) rate per column:
  ``sum_d [lgamma(a0 + S_d) - lgamma(a0) + a0 log b0_d - (a0 + S_d) log(b0_d + n)]
  - sum log y!``;
* Normal-Inverse-Gamma and Dirichlet-multinomial for the missing-data cases,
  whose missing rows add nothing (``sampler_harness`` drops them).

Missing rows (``sampler_harness.MISSING_ROWS``) sit inside a sequence, at a
sequence start, at the first step and at the last.
"""

import math

import numpy as np
import pytest
from scipy.special import gammaln

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


def dirichlet_marginal(concentration, n_symbols):
    def lml(Y):
        counts = np.bincount(Y[:, 0].astype(int), minlength=n_symbols)
        a = concentration
        return (math.lgamma(n_symbols * a) - math.lgamma(n_symbols * a + counts.sum())
                + float(np.sum(gammaln(counts + a) - math.lgamma(a))))
    return lml


MARGINALS = {
    "poisson": poisson_marginal(1.5, 0.5),
    "poisson2": poisson_marginal(1.5, [0.5, 1.0]),
    "gaussian_missing": nig_marginal(0.0, 0.5, 2.0, 0.5),
    "categorical_missing": dirichlet_marginal(0.5, 3),
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


def test_marginals_agree_with_the_families():
    """The marginals written here and the families' closed forms are the same
    function (so a test failure points at a sampler, not at this file)."""
    from sampler_harness import tiny_data

    for kind in ("poisson", "poisson2", "gaussian", "categorical"):
        family, Y, dim = tiny_data(kind, [7])
        ours = MARGINALS.get(kind) or MARGINALS[kind + "_missing"]
        for idx in ([0], [1, 2], [0, 3, 4, 6], list(range(7))):
            assert np.isclose(ours(Y[idx]), family.log_marginal(Y[idx], dim), rtol=1e-10)


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
