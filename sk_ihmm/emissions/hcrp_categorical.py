"""Categorical emissions with a hierarchical Dirichlet (HCRP) prior.

Makino et al. (2011) put a hierarchical CRP on the emissions as well. Over a
finite alphabet of ``V`` symbols, with uniform base measure,

    beta ~ Dirichlet(gamma_e / V, ..., gamma_e / V),
    theta_k ~ Dirichlet(alpha_e * beta),   y | state k ~ Categorical(theta_k),

so the states share the overall symbol frequencies ``beta``, which matters
for large vocabularies. The ``theta_k`` are integrated out (predictive
``(n_kv + alpha_e beta_v) / (n_k + alpha_e)``); ``beta`` and, when asked,
``alpha_e, gamma_e`` are sampled once per sweep given the counts, through
the table counts of the emission restaurants (doc/internals.rst, "The HCRP
categorical family"); ``pgas`` draws its explicit ``theta_k`` after that.

``hyp = [V, alpha_e, gamma_e, a_alpha, b_alpha, a_gamma, b_gamma, resample,
w_0, ..., w_{V-1}]`` with ``w_v = alpha_e beta_v`` (the Dirichlet pseudo-counts
of a state); every chain keeps its own copy. Statistics of a state: those of
:mod:`~sk_ihmm.emissions.categorical`, ``[n_k0, ..., n_k(V-1), n_k]``.
"""

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from ._base import Kernels, family_tag
from .categorical import MAX_SYMBOLS, Categorical

__all__ = ["HCRPCategorical"]

HCRPCategoricalTag = family_tag("HCRPCategoricalTag", __name__)

_W = 8   # offset of the pseudo-counts in hyp


@njit(cache=True, nogil=True, inline="always")
def _log_pred(stats, k, hyp, Y, t):
    v = int(Y[t, 0])
    n_sym = stats.shape[1] - 1
    return math.log((stats[k, v] + hyp[_W + v]) / (stats[k, n_sym] + hyp[1]))


@njit(cache=True, nogil=True)
def _log_marginal(stats, k, hyp):
    # Dirichlet-multinomial with pseudo-counts w: exactly 0 for no data
    V = stats.shape[1] - 1
    out = math.lgamma(hyp[1]) - math.lgamma(hyp[1] + stats[k, V])
    for v in range(V):
        if stats[k, v] > 0.0:
            out += math.lgamma(stats[k, v] + hyp[_W + v]) - math.lgamma(hyp[_W + v])
    return out


@njit(cache=True, nogil=True)
def _sample_param(stats, k, hyp, rng, out, j):
    # out[j] = log symbol probabilities, from the Dirichlet posterior
    V = stats.shape[1] - 1
    tot = 0.0
    for v in range(V):
        g = rng.gamma(stats[k, v] + hyp[_W + v], 1.0)
        out[j, v] = g
        tot += g
    for v in range(V):
        out[j, v] = math.log(max(out[j, v] / tot, 1e-300))


@njit(cache=True, nogil=True)
def _n_tables(n, weight, rng):
    """Tables of a Chinese restaurant of concentration ``weight`` after ``n``
    customers (Antoniak): customer ``i`` opens one with probability
    ``weight / (weight + i)``."""
    m = 0
    for i in range(int(n)):
        if rng.random() * (weight + i) < weight:
            m += 1
    return m


@njit(cache=True, nogil=True)
def _resample(stats, hyp, rng):
    V = stats.shape[1] - 1
    alpha_e, gamma_e = hyp[1], hyp[2]
    resample = hyp[7] != 0.0
    tables = np.zeros(V)
    m_total = 0.0
    sum_log_w = 0.0
    sum_s = 0.0
    for k in range(stats.shape[0]):
        n_k = stats[k, V]
        if n_k <= 0.0:
            continue
        for v in range(V):
            if stats[k, v] > 0.0:
                m = _n_tables(stats[k, v], hyp[_W + v], rng)
                tables[v] += m
                m_total += m
        if resample:
            # Teh et al. (2006), appendix A: w_k ~ Beta(alpha_e + 1, n_k),
            # s_k ~ Bernoulli(n_k / (n_k + alpha_e))
            sum_log_w += math.log(max(rng.beta(alpha_e + 1.0, n_k), 1e-300))
            if rng.random() * (n_k + alpha_e) < n_k:
                sum_s += 1.0
    if resample:
        # gamma_e | m, beta integrated out: eta ~ Beta(gamma_e, m..) and the
        # tables of the top restaurant, t_v ~ Antoniak(m_.v, gamma_e / V)
        top = 0.0
        log_eta = 0.0
        if m_total > 0.0:
            log_eta = math.log(max(rng.beta(gamma_e, m_total), 1e-300))
            for v in range(V):
                top += _n_tables(tables[v], gamma_e / V, rng)
        gamma_e = rng.gamma(hyp[5] + top, 1.0) / (hyp[6] - log_eta)
        alpha_e = rng.gamma(hyp[3] + m_total - sum_s, 1.0) / (hyp[4] - sum_log_w)
        gamma_e = max(gamma_e, 1e-10)
        alpha_e = max(alpha_e, 1e-10)
    # beta ~ Dirichlet(m_.v + gamma_e / V)
    total = 0.0
    for v in range(V):
        g = max(rng.gamma(tables[v] + gamma_e / V, 1.0), 1e-300)
        hyp[_W + v] = g
        total += g
    for v in range(V):
        hyp[_W + v] = alpha_e * hyp[_W + v] / total
    hyp[1] = alpha_e
    hyp[2] = gamma_e


class HCRPCategorical(Categorical):
    """Categorical emissions whose states share symbol frequencies (HCRP prior).

    The emission prior of Makino et al. (2011): each state's symbol
    distribution is drawn around shared symbol frequencies ``beta``,
    ``theta_k ~ Dirichlet(concentration * beta)``, and ``beta ~
    Dirichlet(base_concentration / V)`` over the ``V`` symbols. ``beta`` is
    learnt from all states; with ``resample=True`` both concentrations are
    too, under Gamma priors. A symbol that is frequent overall is then
    expected in a new or small state, where :class:`Categorical` expects
    every symbol equally.

    Parameters
    ----------
    concentration : float, default=1.0
        ``alpha_e``: how closely a state's symbol distribution follows the
        shared frequencies (its starting value when resampled).
    base_concentration : float, default=1.0
        ``gamma_e``: the Dirichlet concentration of the shared frequencies,
        spread over the symbols (starting value when resampled).
    concentration_prior, base_concentration_prior : (float, float), default=(1.0, 1.0)
        Gamma (shape, rate) priors of the two concentrations.
    resample : bool, default=True
        Resample both concentrations every sweep; ``beta`` is always sampled.
    n_symbols : int or None, default=None
        Size of the alphabet; ``None`` takes ``max(X) + 1`` of the training data.

    Notes
    -----
    The fitted model keeps, for each kept sample, the hyperparameters it was
    drawn with; ``emission_prior_`` holds the starting values. Every chain
    starts from uniform frequencies ``beta = 1 / V``.

    Examples
    --------
    >>> from sk_ihmm import InfiniteHMM
    >>> from sk_ihmm.datasets import make_categorical_hmm
    >>> from sk_ihmm.emissions import HCRPCategorical
    >>> X, states = make_categorical_hmm(600, n_states=3, n_symbols=6, random_state=0)
    >>> model = InfiniteHMM(emission=HCRPCategorical(), max_time=0, n_chains=2,
    ...                     random_state=0).fit(X)
    >>> model.emissionprob_.shape[1]
    6
    """

    name = "hcrp_categorical"
    tag = HCRPCategoricalTag()
    kernels = Kernels(
        # the statistics are Categorical's, so are their update, count and
        # parameter log-likelihood
        log_pred=_log_pred, update=Categorical.kernels.update, log_marginal=_log_marginal,
        count=Categorical.kernels.count, sample_param=_sample_param,
        param_loglik=Categorical.kernels.param_loglik, resample_hyperparameters=_resample,
    )

    def __init__(self, concentration=1.0, base_concentration=1.0, concentration_prior=(1.0, 1.0),
                 base_concentration_prior=(1.0, 1.0), resample=True, n_symbols=None):
        self.concentration = concentration
        self.base_concentration = base_concentration
        self.concentration_prior = concentration_prior
        self.base_concentration_prior = base_concentration_prior
        self.resample = resample
        self.n_symbols = n_symbols

    def validate_params(self):
        for name in ("concentration", "base_concentration"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float, np.number)) and np.isfinite(v) and v > 0):
                raise ValueError(f"HCRPCategorical {name} must be a positive float, got {v!r}.")
        for name in ("concentration_prior", "base_concentration_prior"):
            v = np.asarray(getattr(self, name), dtype=float)
            if v.shape != (2,) or not np.all(np.isfinite(v)) or np.any(v <= 0):
                raise ValueError(
                    f"HCRPCategorical {name} must be a (shape, rate) pair of positive floats, "
                    f"got {getattr(self, name)!r}."
                )
        if self.n_symbols is not None and (
            int(self.n_symbols) != self.n_symbols or not 1 <= self.n_symbols <= MAX_SYMBOLS
        ):
            raise ValueError(
                f"n_symbols must be an integer in [1, {MAX_SYMBOLS}] or None, got {self.n_symbols!r}."
            )

    def resolve_prior(self, X=None, dim=None):
        self.validate_params()
        if dim is None:
            if X is None:
                raise ValueError("resolve_prior needs X or dim.")
            dim = self.dimension(self.check_X(X))
        return {
            "concentration": float(self.concentration),
            "base_concentration": float(self.base_concentration),
            "concentration_prior": tuple(float(v) for v in self.concentration_prior),
            "base_concentration_prior": tuple(float(v) for v in self.base_concentration_prior),
            "resample": bool(self.resample),
            "n_symbols": int(dim),
        }

    def hyperparameters(self, dim, X=None, prior=None):
        p = self.resolve_prior(X, dim) if prior is None else prior
        a = p["concentration"]
        head = [dim, a, p["base_concentration"], *p["concentration_prior"],
                *p["base_concentration_prior"], float(p["resample"])]
        return np.concatenate([head, np.full(dim, a / dim)]).astype(np.float64)

    def summary(self, stats, hyp):
        counts = stats[:, :-1]
        w = hyp[_W:]
        probs = (counts + w) / (counts.sum(axis=1, keepdims=True) + hyp[1])
        return {"emissionprob_": probs}

    def log_marginal_stats(self, stats, hyp):
        counts, w = stats[:, :-1], hyp[_W:]
        return (gammaln(hyp[1]) - gammaln(hyp[1] + stats[:, -1])
                + np.sum(gammaln(counts + w) - gammaln(w), axis=1))
