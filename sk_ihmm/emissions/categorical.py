"""Categorical emissions with a symmetric Dirichlet prior.

Statistics of a state: ``[count_0, ..., count_{V-1}, total]``; ``hyp =
[concentration, V]``. The predictive is the Dirichlet-multinomial one,
``(n_kv + a) / (n_k + V a)``; explicit parameters (``pgas``) are the log
probabilities of the symbols, drawn from the Dirichlet posterior. The
reference for the collapsed form is any text on the Dirichlet-multinomial
(e.g. Murphy 2012, section 3.4).
"""

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from ._base import EmissionFamily, Kernels, check_integer_codes, family_tag

__all__ = ["Categorical"]

CategoricalTag = family_tag("CategoricalTag", __name__)

@njit(cache=True, nogil=True, inline="always")
def _log_pred(stats, k, hyp, Y, t):
    v = int(Y[t, 0])
    n_sym = stats.shape[1] - 1
    return math.log((stats[k, v] + hyp[0]) / (stats[k, n_sym] + n_sym * hyp[0]))


@njit(cache=True, nogil=True)
def _log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out):
    n_sym = stats.shape[1] - 1
    for c in range(n_labels):
        k = labels[c]
        log_den = math.log(stats[k, n_sym] + n_sym * hyp[0])
        for l in range(length):
            out[l, c] = math.log(stats[k, int(Y[start + l, 0])] + hyp[0]) - log_den


@njit(cache=True, nogil=True)
def _log_proposal_table(stats, labels, n_labels, hyp, Y, start, length, out, work):
    # the values of _log_pred_block, label-major, from a table of each
    # label's log predictive per symbol (work[:n_sym]): one log per symbol
    # rather than one per step (called when the symbols are no more than the steps)
    n_sym = stats.shape[1] - 1
    a = hyp[0]
    for c in range(n_labels):
        k = labels[c]
        log_den = math.log(stats[k, n_sym] + n_sym * a)
        for v in range(n_sym):
            work[v] = math.log(stats[k, v] + a) - log_den
        for l in range(length):
            out[c, l] = work[int(Y[start + l, 0])]


@njit(cache=True, nogil=True, inline="always")
def _update(stats, k, Y, t, sign):
    stats[k, int(Y[t, 0])] += sign
    stats[k, stats.shape[1] - 1] += sign


@njit(cache=True, nogil=True)
def _move_block(stats, hyp, Y, b, xb, sign, work):
    # exact sequential predictives (adding in time order, removing in reverse,
    # each evaluated without its own observation), multiplied in linear space:
    # one division per step, where the closed-form marginal costs O(n_symbols)
    n_sym = stats.shape[1] - 1
    a = hyp[0]
    L = xb.shape[0]
    prod = 1.0
    log_r = 0.0
    for i in range(L):
        l = i if sign > 0 else L - 1 - i
        k = xb[l]
        v = int(Y[b + l, 0])
        if sign < 0:
            stats[k, v] -= 1.0
            stats[k, n_sym] -= 1.0
        prod *= (stats[k, v] + a) / (stats[k, n_sym] + n_sym * a)
        if sign > 0:
            stats[k, v] += 1.0
            stats[k, n_sym] += 1.0
        if prod < 1e-250:
            log_r += math.log(prod)
            prod = 1.0
    return log_r + math.log(prod)


@njit(cache=True, nogil=True)
def _sample_param(stats, k, hyp, rng, out, j):
    # out[j] = log probabilities of the symbols, drawn from the Dirichlet posterior
    n_sym = stats.shape[1] - 1
    tot = 0.0
    for v in range(n_sym):
        g = rng.gamma(stats[k, v] + hyp[0], 1.0)
        out[j, v] = g
        tot += g
    for v in range(n_sym):
        out[j, v] = math.log(max(out[j, v] / tot, 1e-300))


@njit(cache=True, nogil=True, inline="always")
def _param_loglik(param, k, Y, t):
    return param[k, int(Y[t, 0])]


# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _log_marginal(stats, k, hyp):
    # log p(observations of k): Dirichlet-multinomial, exactly 0 for no data
    b = hyp[0]
    V = stats.shape[1] - 1
    out = math.lgamma(V * b) - math.lgamma(V * b + stats[k, V])
    lb = math.lgamma(b)
    for v in range(V):
        if stats[k, v] > 0.0:
            out += math.lgamma(stats[k, v] + b) - lb
    return out



@njit(cache=True, nogil=True, inline="always")
def _count(stats, k):
    return stats[k, stats.shape[1] - 1]


@njit(cache=True, nogil=True, inline="always")
def _log_proposal_block(stats, labels, n_labels, hyp, Y, start, length, out, prior_pred, work):
    # exact values; a table per label when the symbols are no more than the steps
    n_sym = stats.shape[1] - 1
    if n_sym <= length and n_sym <= work.shape[0]:
        _log_proposal_table(stats, labels, n_labels, hyp, Y, start, length, out, work)
    else:
        _log_pred_block(stats, labels, n_labels, hyp, Y, start, length, out.T)


#: Largest alphabet of :class:`Categorical` (every state stores a count per symbol).
MAX_SYMBOLS = 2**20


class Categorical(EmissionFamily):
    """Categorical emissions with a symmetric Dirichlet prior.

    Parameters
    ----------
    concentration : float, default=0.5
        Dirichlet pseudo-count added to every symbol.
    n_symbols : int or None, default=None
        Size of the alphabet. ``None`` takes ``max(X) + 1`` of the training
        data; set it when held-out data may contain symbols unseen in training.

    Examples
    --------
    >>> from sk_ihmm import InfiniteHMM
    >>> from sk_ihmm.datasets import make_categorical_hmm
    >>> from sk_ihmm.emissions import Categorical
    >>> X, states = make_categorical_hmm(600, n_states=3, n_symbols=6, random_state=0)
    >>> model = InfiniteHMM(emission=Categorical(concentration=0.5, n_symbols=6),
    ...                     max_time=0, n_chains=2, random_state=0).fit(X)
    >>> model.emissionprob_.shape[1]
    6
    >>> model.emission_prior_
    {'concentration': 0.5, 'n_symbols': 6}
    """

    name = "categorical"
    tag = CategoricalTag()
    kernels = Kernels(
        log_pred=_log_pred, update=_update, log_marginal=_log_marginal, count=_count,
        sample_param=_sample_param, param_loglik=_param_loglik,
        log_pred_block=_log_pred_block, log_proposal_block=_log_proposal_block,
        move_block=_move_block,
    )
    discrete = True
    fitted_attributes = ("emissionprob_",)

    def __init__(self, concentration=0.5, n_symbols=None):
        self.concentration = concentration
        self.n_symbols = n_symbols

    def validate_params(self):
        if not (np.isfinite(self.concentration) and self.concentration > 0):
            raise ValueError(
                f"Categorical concentration must be a positive float, got {self.concentration!r}."
            )
        if self.n_symbols is not None and (
            int(self.n_symbols) != self.n_symbols or self.n_symbols < 1
        ):
            raise ValueError(f"n_symbols must be a positive integer or None, got {self.n_symbols!r}.")
        if self.n_symbols is not None and self.n_symbols > MAX_SYMBOLS:
            raise ValueError(f"n_symbols must be at most {MAX_SYMBOLS}, got {self.n_symbols!r}.")

    def check_X(self, X, dim=None):
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != 1:
            raise ValueError(
                "Categorical emissions expect X of shape (n_samples, 1) holding integer "
                f"symbols; got shape {X.shape}."
            )
        X = check_integer_codes(X, "Categorical", "symbols")
        observed = X[~np.isnan(X)]
        if dim is not None and observed.size and observed.max() >= dim:
            raise ValueError(
                f"Symbol {int(observed.max())} is outside the alphabet of {dim} symbols seen "
                f"in fit; set emission={type(self).__name__}(n_symbols=...) to reserve room "
                "for it."
            )
        return X

    def dimension(self, X):
        observed = X[~np.isnan(X)]
        largest = int(observed.max()) if observed.size else -1
        if largest >= MAX_SYMBOLS:
            raise ValueError(
                f"Categorical symbol {largest} asks for an alphabet of {largest + 1} "
                f"symbols (at most {MAX_SYMBOLS} are supported: every state stores a count per "
                "symbol). Code the symbols as 0..V-1, for example with "
                "sklearn.preprocessing.OrdinalEncoder."
            )
        if self.n_symbols is not None:
            if largest >= self.n_symbols:
                raise ValueError(
                    f"Symbol {largest} is outside the alphabet of n_symbols={self.n_symbols}."
                )
            return int(self.n_symbols)
        return max(largest + 1, 1)

    def resolve_prior(self, X=None, dim=None):
        if dim is None:
            if X is None:
                raise ValueError("resolve_prior needs X or dim.")
            dim = self.dimension(self.check_X(X))
        return {"concentration": float(self.concentration), "n_symbols": int(dim)}

    def hyperparameters(self, dim, X=None, prior=None):
        return np.array([float(self.concentration), float(dim)])

    def n_stats(self, dim):
        return dim + 1

    def n_params(self, dim):
        return dim

    def summary(self, stats, hyp):
        counts = stats[:, :-1]
        probs = (counts + hyp[0]) / (counts.sum(axis=1, keepdims=True) + counts.shape[1] * hyp[0])
        return {"emissionprob_": probs}

    def draw(self, summary, states, rng):
        cdf = np.cumsum(summary["emissionprob_"][states], axis=1)
        u = rng.random(states.shape[0])[:, None] * cdf[:, -1:]
        return (u >= cdf).sum(axis=1).astype(np.int64)[:, None]

    def log_marginal_stats(self, stats, hyp):
        counts = stats[:, :-1]
        b, V = hyp[0], counts.shape[1]
        return (gammaln(V * b) - gammaln(V * b + stats[:, -1])
                + np.sum(gammaln(counts + b) - gammaln(b), axis=1))
