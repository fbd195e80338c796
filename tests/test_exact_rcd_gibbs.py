"""rcd_gibbs samples the exact HCRP-HMM posterior over partitions (T <= 7)."""

import pytest

from sampler_harness import check_exact

CASES = [
    dict(kind="categorical", lengths=(5,)),
    dict(kind="gaussian", lengths=(5,)),
    dict(kind="categorical", lengths=(2, 3), alpha=0.5),
    dict(kind="gaussian", lengths=(2, 3), alpha=0.5, gamma=2.0),
    dict(kind="categorical", lengths=(6,), alpha=0.5, gamma=0.7),
    dict(kind="categorical", lengths=(5,), kappa=2.0),
    dict(kind="gaussian", lengths=(2, 3), kappa=1.5),
    dict(kind="categorical", lengths=(5,), resample=(True, True, False)),
    dict(kind="gaussian", lengths=(2, 3), resample=(True, True, False)),
    dict(kind="categorical", lengths=(4,), kappa=1.0, resample=(True, True, True)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_rcd_gibbs_exact(case):
    check_exact("rcd_gibbs", n_sweeps=20000, **case)


def test_harness_has_power():
    """A sampler targeting a slightly different model must fail the check:
    chains run with gamma=1.6 compared against the exact posterior for gamma=1."""
    import sampler_harness as h

    family, Y, dim = h.tiny_data("categorical", [5])
    real = h.make_problem

    def wrong_problem(*args, **kwargs):
        prob = real(*args, **kwargs)
        return prob._replace(conc0=(prob.conc0[0], 1.6, prob.conc0[2]))

    h.make_problem = wrong_problem
    try:
        with pytest.raises(AssertionError):
            check_exact("rcd_gibbs", kind="categorical", lengths=(5,), n_sweeps=20000)
    finally:
        h.make_problem = real
