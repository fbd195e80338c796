r"""Exact posterior over state partitions of tiny HDP-HMM problems.

This test helper enumerates every partition of the (concatenated) time steps
into hidden states and computes its exact probability under the hierarchical
Chinese restaurant process (HCRP) prior of the (sticky) HDP-HMM, optionally
multiplied by a conjugate marginal likelihood and with the concentration
parameters integrated out against Gamma priors.  MCMC samplers are validated by
comparing their empirical partition frequencies with this distribution
(total-variation distance, see :func:`tv_distance` and :func:`tv_threshold`).

Model convention
----------------
Chinese restaurant franchise.  Restaurant ``0`` is the START restaurant; the
restaurant of hidden state ``k`` (canonical label ``k - 1``) has index ``k``.
Each sequence of ``lengths`` starts in the START restaurant and the
transitions ``start -> x_1 -> x_2 -> ... -> x_L`` are customers: the
transition ``j -> k`` is a customer of restaurant ``j`` eating dish ``k``.
There are no transitions between sequences, so ``T = sum(lengths)``
customers in total, ``len(lengths)`` of them in the START restaurant.

* Restaurant ``j`` has concentration ``c_0 = alpha`` (START, never sticky) or
  ``c_j = alpha + kappa`` (states).  A new table in a state restaurant ``j``
  is an *override* table serving dish ``j`` with probability
  ``kappa / (alpha + kappa)`` (no root customer); otherwise it is a *root*
  table: it sends one customer to the root restaurant, a CRP with
  concentration ``gamma`` whose dishes are the hidden states.

The joint probability of a complete seating is

.. math::

    \prod_j \frac{\Gamma(c_j)}{\Gamma(c_j + n_j)}
        \prod_{\text{tables } t \text{ of } j} w_t\, \Gamma(|t|)
    \times \frac{\Gamma(\gamma)}{\Gamma(\gamma + M)}\,\gamma^K
        \prod_k \Gamma(M_k),

with ``w_t = alpha`` for root tables and ``kappa`` for override tables,
``n_j`` the number of customers of restaurant ``j``, ``M_k`` the number of root
tables (over all restaurants) serving dish ``k``, ``M = sum_k M_k`` and ``K``
the number of states used.

Summing out the tables
----------------------
Let ``n_jk`` be the number of ``j -> k`` transitions.  Summing over the
seatings of these customers into ``t`` tables gives ``|s(n_jk, t)|``
(unsigned Stirling numbers of the first kind).  For ``k != j`` all tables are
root tables.  For ``k == j`` each of the ``t`` tables is independently an
override or a root table, giving ``C(t, m) kappa^(t - m) alpha^m`` for ``m``
root tables.  Every root table contributes one factor ``alpha`` and every
override table one factor ``kappa``, therefore

.. math::

    P(z \mid \alpha, \gamma, \kappa) = \sum_{M, O} W_z[M, O]\;
        \frac{\alpha^M \kappa^O}{(\alpha)_{n_0}
              \prod_{j \ge 1} (\alpha + \kappa)_{n_j}}\;
        \frac{\gamma^K\,\Gamma(\gamma)}{\Gamma(\gamma + M)},

where ``(x)_n = Gamma(x + n) / Gamma(x)`` is the rising factorial, ``M`` the
total number of root tables, ``O`` the total number of override tables, and
the integer-valued coefficients

.. math::

    W_z[M, O] = \sum_{\text{table counts with totals } (M, O)}
        \prod_{j,k} |s(n_{jk}, m_{jk} + o_{jk})|
                     \binom{m_{jk} + o_{jk}}{m_{jk}}
        \prod_k \Gamma(M_k)

(``o_jk = 0`` unless ``j == k >= 1``) are computed by multiplying, for every
dish, the bivariate generating polynomials of its source restaurants and
weighting the ``x^{M_k}`` coefficient by ``Gamma(M_k)``, then multiplying the
per-dish polynomials.  This removes any explicit enumeration of the root-table
count vectors.

Integrating the concentrations
------------------------------
Because of this factorisation the prior integrated against independent priors
``p(alpha) p(kappa) p(gamma)`` is

.. math::

    \bar P(z) = \sum_{M, O} W_z[M, O]\; I_{\sigma(z)}[M, O]\; H[K, M],

    I_\sigma[M, O] = E\left[\frac{\alpha^M \kappa^O}{(\alpha)_{n_0}
        \prod_j (\alpha + \kappa)_{n_j}}\right], \qquad
    H[K, M] = E\left[\frac{\gamma^K \Gamma(\gamma)}
                           {\Gamma(\gamma + M)}\right],

where the signature ``sigma(z)`` is the sorted tuple of the positive ``n_j``
(at most ``p(T - n_0)`` distinct signatures).  A fixed parameter is a point
mass.  For a ``Gamma(shape, rate)`` prior the expectation is computed with the
trapezoidal rule in ``u = log(theta)`` (all terms are evaluated in log space):
the integrand is analytic in the strip ``|Im u| < pi / 2`` and decays double
exponentially for ``u -> +inf`` and exponentially for ``u -> -inf``, so the
rule converges geometrically, with error roughly ``exp(-8 / h)`` for step
``h``.  The range covers the prior quantiles ``1e-14`` and ``1 - 1e-14``;
all integrands are bounded, so truncation costs at most ~``1e-14``.
"""

from functools import lru_cache
from math import comb, lgamma

import numpy as np
from scipy.special import logsumexp
from scipy.stats import gamma as gamma_dist

__all__ = [
    "canonical",
    "enumerate_partitions",
    "log_prior_partition",
    "exact_posterior",
    "tv_distance",
    "empirical",
    "tv_threshold",
]

_TAIL = 1e-14
_DEFAULT_STEP = 0.25
_MAX_T = 10


# ---------------------------------------------------------------------------
# partitions
# ---------------------------------------------------------------------------
def canonical(x):
    """Relabel a label sequence by order of first appearance.

    Parameters
    ----------
    x : iterable of hashable
        State labels, e.g. ``[3, 3, 7, 3, 1]``.

    Returns
    -------
    tuple of int
        Canonical labels, e.g. ``(0, 0, 1, 0, 2)``.
    """
    mapping = {}
    out = []
    for v in x:
        v = v.item() if isinstance(v, np.generic) else v
        if v not in mapping:
            mapping[v] = len(mapping)
        out.append(mapping[v])
    return tuple(out)


def enumerate_partitions(T):
    """All partitions of ``range(T)`` as restricted growth strings.

    Parameters
    ----------
    T : int
        Number of time steps.

    Returns
    -------
    list of tuple of int
        The ``Bell(T)`` canonical label tuples ``z`` with ``z[0] = 0`` and
        ``z[t] <= max(z[:t]) + 1``, in lexicographic order.
    """
    T = int(T)
    if T < 0:
        raise ValueError("T must be non-negative")
    if T == 0:
        return [()]
    out = []

    def grow(prefix, n_blocks):
        if len(prefix) == T:
            out.append(tuple(prefix))
            return
        for label in range(n_blocks + 1):
            prefix.append(label)
            grow(prefix, max(n_blocks, label + 1))
            prefix.pop()

    grow([0], 1)
    return out


# ---------------------------------------------------------------------------
# combinatorial structure of one partition
# ---------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _stirling1(n_max):
    """Unsigned Stirling numbers of the first kind ``s[n, t]``, ``n <= n_max``."""
    s = np.zeros((n_max + 1, n_max + 1))
    s[0, 0] = 1.0
    for n in range(1, n_max + 1):
        for t in range(1, n + 1):
            s[n, t] = s[n - 1, t - 1] + (n - 1) * s[n - 1, t]
    return s


def _polymul2(a, b):
    """Product of two bivariate polynomials stored as coefficient arrays."""
    out = np.zeros((a.shape[0] + b.shape[0] - 1, a.shape[1] + b.shape[1] - 1))
    for i, j in zip(*np.nonzero(a)):
        out[i:i + b.shape[0], j:j + b.shape[1]] += a[i, j] * b
    return out


def _table_poly(n, diagonal):
    """Generating polynomial of the tables of ``n`` customers of one dish.

    Coefficient ``[m, o]`` is the total weight (product of ``Gamma(|t|)``)
    of the seatings with ``m`` root tables and ``o`` override tables, i.e.
    ``|s(n, m)|`` off the diagonal and ``|s(n, m + o)| C(m + o, m)`` for
    the self-transitions of a (sticky) state restaurant.
    """
    s = _stirling1(n)
    p = np.zeros((n + 1, n + 1))
    for t in range(1, n + 1):
        if diagonal:
            for m in range(t + 1):
                p[m, t - m] = s[n, t] * comb(t, m)
        else:
            p[t, 0] = s[n, t]
    return p


def _transition_counts(z, lengths):
    """Matrix ``n[j, k]`` of transitions; index 0 = START, ``k`` = label ``k-1``."""
    K = max(z) + 1
    n = np.zeros((K + 1, K + 1), dtype=np.int64)
    t = 0
    for L in lengths:
        prev = 0
        for _ in range(L):
            k = z[t] + 1
            n[prev, k] += 1
            prev = k
            t += 1
    return n


@lru_cache(maxsize=None)
def _partition_terms(z, lengths):
    """Sufficient structure of partition ``z`` for the tables-summed prior.

    Returns
    -------
    K : int
        Number of states.
    signature : tuple of int
        Sorted positive customer counts ``n_j`` of the state restaurants.
    M, O : ndarray of int
        Total root / override table counts of the non-zero terms.
    log_coef : ndarray of float
        ``log W_z[M, O]`` for these terms.
    """
    K = max(z) + 1
    n = _transition_counts(z, lengths)
    W = np.ones((1, 1))
    for k in range(1, K + 1):
        q = np.ones((1, 1))
        for j in range(K + 1):
            if n[j, k] > 0:
                q = _polymul2(q, _table_poly(int(n[j, k]), diagonal=(j == k)))
        # every used state is first entered from another restaurant
        assert not q[0].any()
        q = q * np.array([np.exp(lgamma(m)) if m > 0 else 0.0
                          for m in range(q.shape[0])])[:, None]
        W = _polymul2(W, q)
    M, O = np.nonzero(W)
    out_counts = n[1:].sum(axis=1)
    signature = tuple(sorted(int(c) for c in out_counts if c > 0))
    return K, signature, M, O, np.log(W[M, O])


# ---------------------------------------------------------------------------
# quadrature over the concentration parameters
# ---------------------------------------------------------------------------
def _log_grid(value, prior, n_grid, name):
    """Nodes ``log(theta)`` and log-weights of the expectation over ``theta``.

    A fixed value gives one node of weight one.  A ``(shape, rate)`` Gamma
    prior gives trapezoidal nodes in ``u = log(theta)`` on
    ``[log q(1e-14), log q(1 - 1e-14)]`` with weights
    ``h * p(e^u) e^u``.
    """
    if prior is None:
        value = float(value)
        if not value >= 0.0 or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite non-negative number")
        with np.errstate(divide="ignore"):
            return np.array([np.log(value)]), np.zeros(1)
    shape, rate = (float(v) for v in prior)
    if not (shape > 0 and rate > 0):
        raise ValueError(f"{name}_prior must be (shape, rate) with both > 0")
    lo = np.log(gamma_dist.ppf(_TAIL, shape, scale=1.0 / rate))
    hi = np.log(gamma_dist.isf(_TAIL, shape, scale=1.0 / rate))
    if n_grid is None:
        n = int(np.ceil((hi - lo) / _DEFAULT_STEP)) + 1
    else:
        n = int(n_grid)
        if n < 2:
            raise ValueError("n_grid must be at least 2")
    u = np.linspace(lo, hi, n)
    h = u[1] - u[0]
    log_w = (np.log(h) + shape * np.log(rate) - lgamma(shape)
             + shape * u - rate * np.exp(u))
    return u, log_w


def _check_lengths(lengths):
    """Validated ``lengths`` as a tuple of positive ints."""
    lengths = tuple(int(L) for L in lengths)
    if not lengths or min(lengths) < 1:
        raise ValueError("lengths must be a non-empty list of positive ints")
    if sum(lengths) > _MAX_T:
        raise ValueError(f"exact enumeration is limited to T <= {_MAX_T}")
    return lengths


def _check_partition(z, T):
    """Validated canonical partition tuple of length ``T``."""
    z = tuple(int(v) for v in z)
    if len(z) != T or canonical(z) != z:
        raise ValueError("z must be a canonical label tuple of length "
                         "sum(lengths)")
    return z


def _log_rising(log_x, n):
    """``log (x)_n = sum_{i<n} log(x + i)`` for ``x = exp(log_x)`` (array)."""
    x = np.exp(log_x)
    return np.log(x[..., None] + np.arange(n)).sum(axis=-1)


def _logit_beta_grid(prior, n_grid):
    """Nodes ``log rho``, ``log(1 - rho)`` and log-weights of ``E[f(rho)]``
    for ``rho ~ Beta(a, b)``: trapezoidal rule in ``v = logit(rho)`` over the
    prior's ``[1e-14, 1 - 1e-14]`` quantiles, weights
    ``h * rho^a (1 - rho)^b / B(a, b)`` (the Beta density times
    ``d rho / d v = rho (1 - rho)``), written out here from the density and
    independent of the samplers' update."""
    from scipy.stats import beta as beta_dist
    a, b = (float(v) for v in prior)
    if not (a > 0 and b > 0):
        raise ValueError("rho_prior must be (a, b) with both > 0")
    lo, hi = beta_dist.ppf(_TAIL, a, b), beta_dist.isf(_TAIL, a, b)
    vlo, vhi = np.log(lo) - np.log1p(-lo), np.log(hi) - np.log1p(-hi)
    n = (int(np.ceil((vhi - vlo) / _DEFAULT_STEP)) + 1) if n_grid is None else int(n_grid)
    v = np.linspace(vlo, vhi, n)
    h = v[1] - v[0]
    log_rho = -np.logaddexp(0.0, -v)
    log_1m = -np.logaddexp(0.0, v)
    log_w = np.log(h) + a * log_rho + b * log_1m - (lgamma(a) + lgamma(b) - lgamma(a + b))
    return log_rho, log_1m, log_w


class _IntegratedPrior:
    """Evaluates ``log Pbar(z)`` for given (fixed or Gamma-prior) parameters.

    With ``rho_prior`` (Fox et al. 2011's sticky prior), ``alpha + kappa ~
    Gamma(alpha_kappa_prior)`` and ``rho = kappa / (alpha + kappa) ~
    Beta(rho_prior)`` independently; ``alpha = (1 - rho) (alpha + kappa)`` and
    ``kappa = rho (alpha + kappa)`` are integrated on the 2-D product grid
    of the two (``alpha``, ``kappa``, ``alpha_prior`` and ``kappa_prior`` are
    then ignored)."""

    def __init__(self, lengths, alpha, gamma, kappa, alpha_prior, gamma_prior,
                 kappa_prior, n_grid, alpha_kappa_prior=None, rho_prior=None):
        self.lengths = _check_lengths(lengths)
        self.T = sum(self.lengths)
        self.n0 = len(self.lengths)
        self.fox = rho_prior is not None
        if self.fox:
            ls, ws = _log_grid(None, alpha_kappa_prior, n_grid, "alpha_kappa")
            lr, l1m, wr = _logit_beta_grid(rho_prior, n_grid)
            # flattened 2-D nodes (log alpha, log kappa, log weight)
            self.fa = (ls[:, None] + l1m[None, :]).ravel()
            self.fk = (ls[:, None] + lr[None, :]).ravel()
            self.fw = (ws[:, None] + wr[None, :]).ravel()
            alpha, kappa, alpha_prior, kappa_prior = 1.0, 1.0, None, None
        self.la, self.wa = _log_grid(alpha, alpha_prior, n_grid, "alpha")
        self.lg, self.wg = _log_grid(gamma, gamma_prior, n_grid, "gamma")
        self.lk, self.wk = _log_grid(kappa, kappa_prior, n_grid, "kappa")
        if not np.all(np.isfinite(self.la)):
            raise ValueError("alpha must be > 0")
        if not np.all(np.isfinite(self.lg)):
            raise ValueError("gamma must be > 0")
        self.sticky = bool(np.all(np.isfinite(self.lk)))
        self._log_I = {}
        self._log_H = self._gamma_table()

    def _gamma_table(self):
        """``log H[K, M] = log E[gamma^K Gamma(gamma) / Gamma(gamma + M)]``."""
        T = self.T
        r = np.arange(T + 1)
        # log(gamma)_M for M = 0..T, shape (G, T + 1)
        log_rising = np.concatenate(
            [np.zeros((self.lg.size, 1)),
             np.cumsum(np.log(np.exp(self.lg)[:, None] + r[:T]), axis=1)],
            axis=1)
        terms = (self.wg[:, None, None] + r[None, :, None] * self.lg[:, None, None]
                 - log_rising[:, None, :])  # (G, K, M)
        H = logsumexp(terms, axis=0)
        H[np.subtract.outer(r, r) > 0] = -np.inf  # K > M is impossible
        H[0, :] = -np.inf
        return H

    def _alpha_kappa_table(self, signature):
        """``log I[M, O]`` for a signature of state-restaurant counts."""
        if signature in self._log_I:
            return self._log_I[signature]
        T = self.T
        if self.fox:
            # log E[alpha^M kappa^O / ((alpha)_{n0} prod_j (alpha + kappa)_{n_j})]
            # directly over the flattened (alpha + kappa, rho) nodes
            ls = np.logaddexp(self.fa, self.fk)
            L = self.fw - _log_rising(self.fa, self.n0)
            for n_j in signature:
                L = L - _log_rising(ls, n_j)
            r = np.arange(T + 1)
            table = np.array([[logsumexp(L + M * self.fa + O * self.fk) for O in r] for M in r])
            table[0] = -np.inf
            self._log_I[signature] = table
            return table
        la = self.la[:, None]
        lk = self.lk[None, :]
        with np.errstate(divide="ignore"):
            ls = np.logaddexp(la, lk)  # log(alpha + kappa)
        L = self.wa[:, None] + self.wk[None, :] - _log_rising(la, self.n0)
        for n_j in signature:
            L = L - _log_rising(ls, n_j)
        L = np.broadcast_to(L, (la.size, lk.size))
        n_override = T + 1 if self.sticky else 1
        # V[a, O] = log sum_k exp(L[a, k] + O log kappa_k)  (0 log 0 = 0)
        V = np.stack([logsumexp(L if O == 0 else L + O * lk, axis=1)
                      for O in range(n_override)], axis=1)
        m = np.arange(T + 1)
        table = np.full((T + 1, T + 1), -np.inf)
        table[:, :n_override] = logsumexp(
            V[:, None, :] + (m[None, :] * self.la[:, None])[:, :, None], axis=0)
        table[0] = -np.inf
        self._log_I[signature] = table
        return table

    def log_prior(self, z):
        """``log Pbar(z)``, tables summed and parameters integrated out."""
        z = _check_partition(z, self.T)
        K, signature, M, O, log_coef = _partition_terms(z, self.lengths)
        log_I = self._alpha_kappa_table(signature)
        return float(logsumexp(log_coef + log_I[M, O] + self._log_H[K, M]))


@lru_cache(maxsize=64)
def _model(lengths, alpha, gamma, kappa, alpha_prior, gamma_prior, kappa_prior,
           n_grid, alpha_kappa_prior=None, rho_prior=None):
    """Cached :class:`_IntegratedPrior` (its arguments must be hashable)."""
    return _IntegratedPrior(lengths, alpha, gamma, kappa, alpha_prior,
                            gamma_prior, kappa_prior, n_grid, alpha_kappa_prior,
                            rho_prior)


def _as_prior(prior):
    """``(shape, rate)`` as a hashable tuple of floats, or ``None``."""
    if prior is None:
        return None
    shape, rate = prior
    return float(shape), float(rate)


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------
def log_prior_partition(z, lengths, alpha, gamma, kappa=0.0):
    r"""Log prior probability of a partition under the (sticky) HCRP-HMM.

    Evaluates

    .. math::

        \log \sum_{M, O} W_z[M, O]\,
            \frac{\alpha^M \kappa^O}{(\alpha)_{n_0}
                  \prod_{j \ge 1} (\alpha + \kappa)_{n_j}}\,
            \frac{\gamma^K\,\Gamma(\gamma)}{\Gamma(\gamma + M)}

    directly (see the module docstring), vectorised over the parameters.

    Parameters
    ----------
    z : sequence of int
        Canonical labels (first-appearance order) of the concatenated time
        steps, ``len(z) == sum(lengths)``.
    lengths : sequence of int
        Sequence lengths; each sequence starts in the START restaurant.
    alpha, gamma : float or array_like
        Transition and root concentrations (> 0).
    kappa : float or array_like, default 0
        Self-transition (sticky) bias (>= 0); ``0`` gives the plain HDP-HMM.
        The three parameters are broadcast against each other.

    Returns
    -------
    float or ndarray
        ``log P(z | alpha, gamma, kappa)`` with all table assignments summed
        out; a float when all parameters are scalars.
    """
    lengths = _check_lengths(lengths)
    z = _check_partition(z, sum(lengths))
    K, signature, M, O, log_coef = _partition_terms(z, lengths)
    a, g, k = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                    for v in (alpha, gamma, kappa)))
    if not (np.all(a > 0) and np.all(g > 0) and np.all(k >= 0)
            and np.all(np.isfinite(a + g + k))):
        raise ValueError("need alpha > 0, gamma > 0, kappa >= 0 (finite)")
    la, lg = np.log(a)[..., None], np.log(g)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        lk = np.where(O == 0, 0.0, O * np.log(k)[..., None])
    T = sum(lengths)
    # log (gamma)_m for m = 0..T, then picked at m = M
    log_rising_g = np.concatenate(
        [np.zeros(g.shape + (1,)),
         np.cumsum(np.log(g[..., None] + np.arange(T)), axis=-1)], axis=-1)
    terms = (log_coef + M * la + lk + K * lg
             - np.take(log_rising_g, M, axis=-1))
    out = logsumexp(terms, axis=-1) - _log_rising(np.log(a), len(lengths))
    for n_j in signature:
        out = out - _log_rising(np.log(a + k), n_j)
    return float(out) if out.ndim == 0 else out


def exact_posterior(lengths, log_marginal_block, alpha, gamma, kappa=0.0,
                    alpha_prior=None, gamma_prior=None, kappa_prior=None,
                    n_grid=None, alpha_kappa_prior=None, rho_prior=None):
    """Exact posterior distribution over partitions of the time steps.

    Parameters
    ----------
    lengths : sequence of int
        Sequence lengths, ``sum(lengths) <= 10`` (``Bell(7) = 877``
        partitions for ``T = 7``; larger ``T`` is slow).
    log_marginal_block : callable or None
        ``log_marginal_block(indices) -> float``: log marginal likelihood of
        the observations at the given global, 0-based time indices (a sorted
        ``numpy`` int array, concatenated across sequences) under a single
        state with its parameters integrated out.  Called once per distinct
        block.  ``None`` means no data: the result is the (integrated) prior.
    alpha, gamma, kappa : float
        Fixed concentrations; each is ignored when the corresponding prior is
        given.
    alpha_prior, gamma_prior, kappa_prior : tuple (shape, rate) or None
        Gamma prior (rate parametrisation) under which the parameter is
        integrated out numerically.
    n_grid : int or None
        Number of quadrature nodes per integrated parameter.  ``None`` uses a
        log-spaced trapezoidal grid with step ``0.25`` over the prior's
        ``[1e-14, 1 - 1e-14]`` quantile range (typically 100-200 nodes;
        error far below ``1e-10``).
    alpha_kappa_prior, rho_prior : tuple or None
        Fox et al. (2011)'s sticky prior: ``alpha + kappa ~
        Gamma(alpha_kappa_prior)`` (shape, rate) and ``kappa / (alpha +
        kappa) ~ Beta(rho_prior)``, integrated on a 2-D grid (``rho`` on a
        trapezoidal grid in ``logit(rho)``). Given ``rho_prior``, ``alpha``,
        ``kappa``, ``alpha_prior`` and ``kappa_prior`` are ignored.

    Returns
    -------
    dict
        Maps every canonical partition tuple to its posterior probability
        ``prior(z) * prod_blocks exp(log_marginal_block(block))``, normalised.

    Notes
    -----
    With priors, ``prior(z)`` is the marginal ``E[P(z | alpha, gamma,
    kappa)]`` under the independent Gamma priors, which is exact because
    the likelihood does not depend on the concentrations.
    """
    model = _model(tuple(int(L) for L in lengths), float(alpha), float(gamma),
                   float(kappa), _as_prior(alpha_prior), _as_prior(gamma_prior),
                   _as_prior(kappa_prior), n_grid, _as_prior(alpha_kappa_prior),
                   _as_prior(rho_prior))
    partitions = enumerate_partitions(model.T)
    cache = {}

    def block_loglik(block):
        if block not in cache:
            value = float(log_marginal_block(np.array(block, dtype=np.intp)))
            if np.isnan(value):
                raise ValueError(f"log_marginal_block{block} returned NaN")
            cache[block] = value
        return cache[block]

    log_post = np.empty(len(partitions))
    for i, z in enumerate(partitions):
        lp = model.log_prior(z)
        if log_marginal_block is not None:
            for k in range(max(z) + 1):
                lp += block_loglik(tuple(t for t, v in enumerate(z) if v == k))
        log_post[i] = lp
    log_post -= logsumexp(log_post)
    return dict(zip(partitions, np.exp(log_post)))


def tv_distance(p, q):
    """Total-variation distance ``0.5 * sum_z |p(z) - q(z)|``.

    Parameters
    ----------
    p, q : dict
        Probability mappings; missing keys count as zero.

    Returns
    -------
    float
    """
    keys = set(p) | set(q)
    return 0.5 * float(sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in keys))


def empirical(samples):
    """Empirical distribution of canonical partitions.

    Parameters
    ----------
    samples : iterable of sequences, or 2-D array of shape (n, T)
        Sampled label sequences (any labels; relabelled by first appearance).

    Returns
    -------
    dict
        Canonical tuple -> relative frequency.
    """
    counts = {}
    if isinstance(samples, np.ndarray) and samples.ndim == 2:
        rows, mult = np.unique(samples, axis=0, return_counts=True)
        pairs = zip(rows, mult.tolist())
    else:
        pairs = ((s, 1) for s in samples)
    total = 0
    for s, c in pairs:
        key = canonical(s)
        counts[key] = counts.get(key, 0) + c
        total += c
    if total == 0:
        raise ValueError("no samples")
    return {k: v / total for k, v in counts.items()}


def tv_threshold(p_exact, n_eff, quantile=0.999, n_sim=2000, seed=0):
    """Quantile of the TV distance of an ``n_eff``-sample empirical law.

    Simulates ``n_sim`` multinomial samples of size ``floor(n_eff)`` from
    ``p_exact`` and returns the ``quantile`` of their TV distances to
    ``p_exact``.  A sampler whose ``n_eff`` effective draws come from
    ``p_exact`` exceeds this threshold with probability about
    ``1 - quantile``.

    Parameters
    ----------
    p_exact : dict
        Exact distribution (normalised internally).
    n_eff : float
        Effective sample size (``>= 1``).
    quantile : float, default 0.999
    n_sim : int, default 2000
    seed : int, default 0

    Returns
    -------
    float
    """
    n = int(np.floor(n_eff))
    if n < 1:
        raise ValueError("n_eff must be >= 1")
    p = np.array(list(p_exact.values()), dtype=float)
    p = p / p.sum()
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, p, size=n_sim)
    tv = 0.5 * np.abs(counts / n - p).sum(axis=1)
    return float(np.quantile(tv, quantile))
