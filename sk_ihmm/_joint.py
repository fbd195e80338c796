"""The log joint of a labelling from its table counts (seating + emissions).

``log p(x, m, o, y | alpha, gamma, kappa)`` depends on a seating only through
its table counts (:func:`sk_ihmm._hcrp.log_count_prob`) and on the emissions
through the per-state statistics (the families' marginal likelihood), so it
ranks labellings of different chains and samplers alike: ``pgas`` reports it
as its ``log_joint`` and the estimator scores kept samples with it. The
seating module knows nothing of emissions; this module joins the two.
"""

from ._hcrp import log_count_prob
from .emissions import log_marginal_sum

__all__ = ["count_log_joint"]


def count_log_joint(n, m, o, stats, conc, fam, hyp, table):
    """``log p(x, m, o, y | alpha, gamma, kappa)``: :func:`sk_ihmm._hcrp.log_count_prob`
    plus the emission marginal likelihood of the per-state statistics.

    Unlike :func:`sk_ihmm._hcrp.log_seating_prob` (one particular seating) it depends on the
    seating only through the table counts, so it ranks labellings of
    different chains; ``pgas`` reports it as its ``log_joint``. ``table`` is a
    Stirling table ``(S, row)`` covering the counts
    (:func:`sk_ihmm._hcrp.log_stirling_cover`, :func:`sk_ihmm._hcrp.log_stirling_for`).
    """
    alpha, gamma, kappa = (float(v) for v in conc)
    S, row = table
    return float(log_count_prob(n, m, o, alpha, gamma, kappa, S, row)
                 + log_marginal_sum(fam, stats, hyp))
