"""Seating state of the hierarchical Chinese restaurant process (HCRP-HMM).

Conventions (``doc/model.rst``): restaurant ``0`` is the *start* restaurant,
restaurant ``k >= 1`` belongs to hidden state ``k``; dishes are hidden
states, labelled ``1 .. capacity-1``; a customer of restaurant ``j`` eating
dish ``k`` is one transition ``j -> k``. A new table of restaurant ``j``
serves dish ``j`` as a sticky *override* with probability ``kappa / (alpha +
kappa)``, otherwise it sends one customer to the root, a CRP with
concentration ``gamma`` whose tables are the dishes.

Tables are stored explicitly, a linked list of table slots per (restaurant,
dish) pair. Every change goes through :func:`add_customer` /
:func:`remove_customer`, which append to an undo log; :func:`undo` restores
the *exact* previous seating (Makino et al. 2011, Section 3). Capacities grow
by doubling in Python (:func:`grow`); kernels report, never overflow.

The seating is the six arrays of :class:`Seating`, named for what they hold
(``pairs, per_label, tables, undo_log, totals, conc = s`` in a kernel):
``pairs[N | M | HEAD, j, k]`` customers, root tables and first table slot of
the pair ``(j, k)``; ``per_label[O | NJ | MK | OCC, k]`` override tables and
customers of restaurant ``k``, root customers of dish ``k``, steps in state
``k``; ``tables[t, SIZE | NEXT | OVER]`` per table slot; ``undo_log`` rows
``(op, j, k, table)``; ``totals[M_TOTAL .. N_TABLES]``; ``conc`` ``alpha,
gamma, kappa``. Why this layout: doc/internals.rst, section "The seating
(_hcrp.py)".
"""

from collections import namedtuple

import math

import numpy as np
from numba import njit

from ._nrt import hold

__all__ = ["Seating", "new_seating", "grow", "N", "M", "HEAD", "O", "NJ", "MK", "OCC",
           "SIZE", "NEXT", "OVER", "M_TOTAL", "N_DISHES", "FREE_HEAD", "N_FREE_SLOTS",
           "N_LOGGED", "N_TABLES"]

# first index of Seating.pairs / Seating.per_label, second of Seating.tables
N, M, HEAD = 0, 1, 2
O, NJ, MK, OCC = 0, 1, 2, 3
SIZE, NEXT, OVER = 0, 1, 2

# indices into Seating.totals
M_TOTAL = 0         # root customers (non-override tables) over all restaurants
N_DISHES = 1        # dishes with at least one root customer
FREE_HEAD = 2       # head of the free list of table slots
N_FREE_SLOTS = 3    # free table slots
N_LOGGED = 4        # rows used in the undo log
N_TABLES = 5        # tables in use

# undo-log operations
_ADD_OLD = 0    # customer joined existing table
_ADD_NEW = 1    # customer opened a table
_REM_OLD = 2    # customer left a table that stays
_REM_LAST = 3   # customer left and the table closed (k column stores override flag)


class Seating(namedtuple("Seating", ["pairs", "per_label", "tables", "undo_log", "totals",
                                     "conc"])):
    """The HCRP seating: six arrays (see the module docstring) and, for
    Python code, views of its count tables under their usual names."""

    __slots__ = ()

    n = property(lambda self: self.pairs[N], doc="(C, C) customers of j eating k")
    m = property(lambda self: self.pairs[M], doc="(C, C) root tables of j serving k")
    head = property(lambda self: self.pairs[HEAD], doc="(C, C) first table of (j, k)")
    o = property(lambda self: self.per_label[O], doc="(C,) override tables of j")
    nj = property(lambda self: self.per_label[NJ], doc="(C,) customers of restaurant j")
    mk = property(lambda self: self.per_label[MK], doc="(C,) root customers of dish k")
    occ = property(lambda self: self.per_label[OCC], doc="(C,) time steps in state k")
    tsize = property(lambda self: self.tables[:, SIZE], doc="(P,) customers at a table")
    tnext = property(lambda self: self.tables[:, NEXT], doc="(P,) next table or free slot")
    tover = property(lambda self: self.tables[:, OVER], doc="(P,) 1 for an override table")
    n_tables = property(lambda self: int(self.totals[N_TABLES]), doc="tables in use")


def new_seating(n_labels, n_tables, n_log, alpha, gamma, kappa):
    """Allocate an empty seating with room for ``n_labels`` labels (incl. 0)."""
    C, P = int(n_labels), int(n_tables)
    pairs = np.zeros((3, C, C), np.int64)
    pairs[HEAD] = -1
    tables = np.zeros((P, 3), np.int64)
    nxt = tables[:, NEXT]           # free list 0 -> 1 -> ... -> P-1, built in place
    nxt[:] = 1
    np.cumsum(nxt, out=nxt)
    nxt[-1] = -1
    totals = np.zeros(6, dtype=np.int64)
    totals[FREE_HEAD] = 0
    totals[N_FREE_SLOTS] = P
    return Seating(
        pairs=pairs,
        per_label=np.zeros((4, C), np.int64),
        tables=tables,
        undo_log=np.zeros((max(int(n_log), 8), 4), np.int64),
        totals=totals,
        conc=np.array([alpha, gamma, kappa], dtype=np.float64),
    )


def grow(s, n_labels=None, n_tables=None, n_log=None):
    """Return a copy of ``s`` with at least the given capacities (doubling)."""
    C = s.pairs.shape[1]
    P = s.tables.shape[0]
    U = s.undo_log.shape[0]
    newC = C if n_labels is None or n_labels <= C else max(2 * C, int(n_labels))
    newP = P if n_tables is None or n_tables <= P else max(2 * P, int(n_tables))
    newU = U if n_log is None or n_log <= U else max(2 * U, int(n_log))
    pairs = np.zeros((3, newC, newC), np.int64)
    pairs[HEAD] = -1
    pairs[:, :C, :C] = s.pairs
    per_label = np.zeros((4, newC), np.int64)
    per_label[:, :C] = s.per_label
    totals = s.totals.copy()
    tables = np.zeros((newP, 3), np.int64)
    tables[:P] = s.tables
    if newP > P:
        # chain the new slots in front of the existing free list
        tables[P:newP, NEXT] = np.arange(P + 1, newP + 1)
        tables[newP - 1, NEXT] = totals[FREE_HEAD]
        totals[FREE_HEAD] = P
        totals[N_FREE_SLOTS] += newP - P
    undo_log = np.zeros((newU, 4), np.int64)
    undo_log[:U] = s.undo_log
    return Seating(pairs=pairs, per_label=per_label, tables=tables, undo_log=undo_log,
                   totals=totals, conc=s.conc.copy())


def ensure_capacity(s, need_labels, need_tables, need_log):
    """Grow ``s`` so that ``need_labels`` free labels, ``need_tables`` free
    table slots and ``need_log`` undo-log rows are available."""
    C = s.pairs.shape[1]
    free_labels = int(n_free_labels(s.per_label))
    add_labels = max(0, need_labels - free_labels)
    add_tables = max(0, need_tables - int(s.totals[N_FREE_SLOTS]))
    if add_labels or add_tables or need_log > s.undo_log.shape[0]:
        s = grow(
            s,
            n_labels=C + add_labels if add_labels else None,
            n_tables=s.tables.shape[0] + add_tables if add_tables else None,
            n_log=need_log,
        )
    return s


# --------------------------------------------------------------------------
# numba kernels: they take the seating unpacked (module docstring)
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def root_prob(m_k, m_tot, gamma):
    """Root predictive of dish ``k`` (Makino Eq. 32): ``m_k / (M + gamma)``, or
    ``gamma / (M + gamma)`` for a dish no root table serves (a new dish)."""
    return (m_k if m_k > 0 else gamma) / (m_tot + gamma)


@njit(cache=True, nogil=True, inline="always")
def pred_prob(n_jk, n_j, m_k, m_tot, alpha, gamma, kappa, j, k):
    """Predictive probability that a new customer of restaurant ``j`` eats ``k``.

    Makino et al. Eq. (31)-(32) with the sticky term, from the counts it
    reads: ``n_jk = pairs[N, j, k]``, ``n_j = per_label[NJ, j]``, ``m_k = per_label[MK, k]``
    and ``m_tot = totals[M_TOTAL]``. A dish with no root customer is treated as
    a new dish of the root. Scalar arguments: loops over many ``(j, k)`` pay
    no reference counting.
    """
    num, den = pred_parts(n_jk, n_j, m_k, m_tot, alpha, gamma, kappa, j, k)
    return num / den


@njit(cache=True, nogil=True, inline="always")
def pred_parts(n_jk, n_j, m_k, m_tot, alpha, gamma, kappa, j, k):
    """:func:`pred_prob` as a fraction: returns ``(num, den)`` with
    ``pred_prob = num / den``, both multiplied by ``m_tot + gamma`` (the
    root term ``alpha p0(k)`` then needs no division of its own). For
    products of many predictives (the RCD factors of a block), which
    multiply the numerators and the denominators apart: a division per
    customer, waited for in a chain of dependent steps, cost more than the
    customer's other arithmetic."""
    kj = kappa if j > 0 else 0.0
    mg = m_tot + gamma
    num = n_jk * mg + alpha * (m_k if m_k > 0 else gamma)
    if j == k:
        num += kj * mg
    return num, (n_j + alpha + kj) * mg


def pred_weights(n, m_k, alpha, gamma, kappa):
    """:func:`pred_prob` for every restaurant and existing dish, in NumPy.

    ``n`` is ``(K + 1, K + 1)`` customer counts (row 0: the start
    restaurant, column 0 unused) and ``m_k`` the root customers per dish,
    all positive for ``k >= 1``. Returns each ``pred_prob(j -> k)`` times its
    row's denominator: rows sum to less than the denominator by the new
    dish's share, so normalising a row conditions on an existing dish.
    """
    p0 = m_k / (m_k.sum() + gamma)
    weights = n + alpha * p0[None, :]
    weights[1:, 1:] += kappa * np.eye(n.shape[0] - 1)
    return weights


@njit(cache=True, nogil=True, inline="always")
def get_prob(pairs, per_label, tables, undo_log, totals, conc, j, k):
    """:func:`pred_prob` of ``j -> k`` in the seating."""
    return pred_prob(pairs[N, j, k], per_label[NJ, j], per_label[MK, k], totals[M_TOTAL],
                     conc[0], conc[1], conc[2], j, k)


@njit(cache=True, nogil=True, inline="always")
def _log_op(undo_log, totals, op, j, k, t):
    i = totals[N_LOGGED]
    undo_log[i, 0] = op
    undo_log[i, 1] = j
    undo_log[i, 2] = k
    undo_log[i, 3] = t
    totals[N_LOGGED] = i + 1


@njit(cache=True, nogil=True, inline="always")
def _open_table(pairs, per_label, tables, totals, j, k, override):
    t = totals[FREE_HEAD]
    totals[FREE_HEAD] = tables[t, NEXT]
    totals[N_FREE_SLOTS] -= 1
    totals[N_TABLES] += 1
    tables[t, SIZE] = 1
    tables[t, OVER] = override
    # append at the tail: the tables of a pair stay in the order they opened,
    # which is about the order of their sizes (see _pick_table)
    tables[t, NEXT] = -1
    last = pairs[HEAD, j, k]
    if last < 0:
        pairs[HEAD, j, k] = t
    else:
        while tables[last, NEXT] >= 0:
            last = tables[last, NEXT]
        tables[last, NEXT] = t
    if override:
        per_label[O, j] += 1
    else:
        pairs[M, j, k] += 1
        if per_label[MK, k] == 0:
            totals[N_DISHES] += 1
        per_label[MK, k] += 1
        totals[M_TOTAL] += 1
    return t


@njit(cache=True, nogil=True, inline="always")
def _close_table(pairs, per_label, tables, totals, j, k, t):
    prev = -1
    cur = pairs[HEAD, j, k]
    while cur != t:
        prev = cur
        cur = tables[cur, NEXT]
    if prev < 0:
        pairs[HEAD, j, k] = tables[t, NEXT]
    else:
        tables[prev, NEXT] = tables[t, NEXT]
    tables[t, NEXT] = totals[FREE_HEAD]
    totals[FREE_HEAD] = t
    totals[N_FREE_SLOTS] += 1
    totals[N_TABLES] -= 1
    tables[t, SIZE] = 0
    if tables[t, OVER]:
        per_label[O, j] -= 1
    else:
        pairs[M, j, k] -= 1
        per_label[MK, k] -= 1
        totals[M_TOTAL] -= 1
        if per_label[MK, k] == 0:
            totals[N_DISHES] -= 1


@njit(cache=True, nogil=True, inline="always")
def _pick_table(pairs, tables, j, k, u):
    """The table of (j, k) where the cumulative table size first exceeds ``u``
    (``0 <= u < n[j, k]``): a table drawn proportionally to its size. The
    sizes are integers, so comparing them with ``floor(u)`` picks the same
    table as comparing with ``u``, without converting a running sum to a
    float at every table of the walk.

    Any order of the list gives that distribution; the walk is short when
    the large tables come first. :func:`_open_table` appends a new table at
    the tail, so a list keeps the order in which its tables opened, and in a
    CRP the earliest tables are the largest: the walk visits close to the
    fewest tables any order would."""
    ui = int(u)
    t = pairs[HEAD, j, k]
    acc = tables[t, SIZE]
    while acc <= ui:
        t = tables[t, NEXT]
        acc += tables[t, SIZE]
    return t


@njit(cache=True, nogil=True, inline="always")
def add_customer(pairs, per_label, tables, undo_log, totals, conc, j, k, rng):
    """Seat a customer of restaurant ``j`` eating ``k`` (Makino Alg. 3).

    Existing table with probability proportional to its size, a new override
    table with ``kappa`` (only ``j == k``), a new root table with
    ``alpha * p0(k)``, ``p0`` the root predictive of dish ``k``.
    """
    alpha, gamma = conc[0], conc[1]
    w_over = conc[2] if (j == k and j > 0) else 0.0
    w_root = alpha * root_prob(per_label[MK, k], totals[M_TOTAL], gamma)
    w_old = float(pairs[N, j, k])
    u = rng.random() * (w_old + w_over + w_root)
    pairs[N, j, k] += 1
    per_label[NJ, j] += 1
    if u < w_old:
        t = _pick_table(pairs, tables, j, k, u)
        tables[t, SIZE] += 1
        _log_op(undo_log, totals, _ADD_OLD, j, k, t)
    else:
        t = _open_table(pairs, per_label, tables, totals, j, k, 1 if u < w_old + w_over else 0)
        _log_op(undo_log, totals, _ADD_NEW, j, k, t)


@njit(cache=True, nogil=True, inline="always")
def remove_customer(pairs, per_label, tables, undo_log, totals, conc, j, k, rng):
    """Remove a customer of restaurant ``j`` eating ``k`` (Makino Alg. 4):
    its table is drawn with probability proportional to the table size."""
    t = _pick_table(pairs, tables, j, k, rng.random() * pairs[N, j, k])
    pairs[N, j, k] -= 1
    per_label[NJ, j] -= 1
    if tables[t, SIZE] == 1:
        over = tables[t, OVER]
        _close_table(pairs, per_label, tables, totals, j, k, t)
        _log_op(undo_log, totals, _REM_LAST, j, k, over)
    else:
        tables[t, SIZE] -= 1
        _log_op(undo_log, totals, _REM_OLD, j, k, t)


@njit(cache=True, nogil=True, inline="always")
def clear_log(totals):
    """Forget the logged operations (the move they make is accepted)."""
    totals[N_LOGGED] = 0


@njit(cache=True, nogil=True)
def undo(pairs, per_label, tables, undo_log, totals, conc):
    """Undo every logged operation, newest first, and clear the log."""
    for i in range(totals[N_LOGGED] - 1, -1, -1):
        op = undo_log[i, 0]
        j = undo_log[i, 1]
        k = undo_log[i, 2]
        t = undo_log[i, 3]
        if op == _ADD_OLD:
            tables[t, SIZE] -= 1
        elif op == _ADD_NEW:
            _close_table(pairs, per_label, tables, totals, j, k, t)
        elif op == _REM_OLD:
            tables[t, SIZE] += 1
        else:
            _open_table(pairs, per_label, tables, totals, j, k, t)  # t holds the override flag
        d = 1 if op >= _REM_OLD else -1
        pairs[N, j, k] += d
        per_label[NJ, j] += d
    totals[N_LOGGED] = 0


@njit(cache=True, nogil=True, inline="always")
def is_free(per_label, k):
    """Label ``k`` has no time step, no customer and no root table."""
    # '&', not 'and': no branch (see sk_ihmm._nrt)
    return (per_label[OCC, k] == 0) & (per_label[MK, k] == 0) & (per_label[NJ, k] == 0)


@njit(cache=True, nogil=True, inline="always")
def free_label(per_label, start):
    """Smallest free label >= ``start`` (>= 1), or -1 when none is left."""
    found = -1
    for k in range(max(start, 1), per_label.shape[1]):
        if is_free(per_label, k):
            found = k
            break
    hold(per_label)
    return found


@njit(cache=True, nogil=True, inline="always")
def n_free_labels(per_label):
    c = 0
    for k in range(1, per_label.shape[1]):
        if is_free(per_label, k):
            c += 1
    hold(per_label)
    return c


@njit(cache=True, nogil=True)
def log_seating_prob(s):
    """log p(s): product of the CRP seating probabilities (Makino Eq. 18-20,
    with override tables weighted by kappa)."""
    pairs, per_label, tables, undo_log, totals, conc = s
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    C = pairs.shape[1]
    lp = 0.0
    la = math.log(alpha)
    lk = math.log(kappa) if kappa > 0 else 0.0
    for j in range(C):
        if per_label[NJ, j] == 0:
            continue
        c = alpha + (kappa if j > 0 else 0.0)
        lp += math.lgamma(c) - math.lgamma(c + per_label[NJ, j])
        for k in range(C):
            t = pairs[HEAD, j, k]
            while t >= 0:
                lp += math.lgamma(tables[t, SIZE]) + (lk if tables[t, OVER] else la)
                t = tables[t, NEXT]
    lp += (math.lgamma(gamma) - math.lgamma(gamma + totals[M_TOTAL])
           + totals[N_DISHES] * math.log(gamma))
    for k in range(C):
        if per_label[MK, k] > 0:
            lp += math.lgamma(per_label[MK, k])
    return lp


# ------------------------------------ the joint at the level of table counts
# A Stirling table is a pair ``(S, row)``: ``S[row[n], t] = log |s(n, t)|``
# (unsigned Stirling numbers of the first kind) for the ``n`` it covers
# (``row[n] >= 0``) and ``t < S.shape[1]``. ``pgas`` keeps a full table
# (``row[n] = n``) that grows by doubling, as its counts are read every sweep;
# the estimator scores its kept samples once, with rows for their counts only,
# so the memory is (distinct counts) x (tables) rather than T x (tables).

@njit(cache=True, nogil=True)
def log_stirling_rows(ns, t_max):
    """``S[i, t] = log |s(ns[i], t)|`` for ``t <= t_max``, ``ns`` non-decreasing,
    by the recursion ``|s(n + 1, t)| = n |s(n, t)| + |s(n, t - 1)|`` on one
    running row (memory ``len(ns) x (t_max + 1)``, time ``max(ns) x t_max``)."""
    S = np.full((ns.shape[0], t_max + 1), -np.inf)
    row = np.full(t_max + 1, -np.inf)
    row[0] = 0.0
    n = 0
    for i in range(ns.shape[0]):
        while n < ns[i]:
            ln = math.log(n) if n > 0 else -np.inf
            for t in range(min(n + 1, t_max), 0, -1):   # descending: row[t - 1] is still s(n, .)
                u = row[t] + ln
                v = row[t - 1]
                hi = max(u, v)
                row[t] = -np.inf if hi == -np.inf else hi + math.log(math.exp(u - hi)
                                                                     + math.exp(v - hi))
            row[0] = -np.inf
            n += 1
        for t in range(t_max + 1):   # a loop: a slice assignment compiles numba's broadcasting
            S[i, t] = row[t]
    return S


def log_stirling_table(n_max, t_max):
    """Full Stirling table ``(S, row)`` for ``n <= n_max``, ``t <= t_max``."""
    ns = np.arange(n_max + 1, dtype=np.int64)
    return log_stirling_rows(ns, t_max), ns


@njit(cache=True, nogil=True)
def log_count_prob(n, m, o, alpha, gamma, kappa, S, row):
    """``log p(x, m, o | alpha, gamma, kappa)``: the seating prior at the level
    of table counts, every seating with these counts summed out.

    ``n[j, k]`` are the transition counts (row 0 the start restaurant, dishes
    ``1..``), ``m[j, k]`` the root tables of restaurant ``j`` serving dish
    ``k`` and ``o[j]`` the override tables of state restaurant ``j``; the
    customers of a pair are seated at its tables in ``|s(n, t)|`` ways
    (``(S, row)`` a Stirling table covering the counts), and the override and
    root tables of a self-transition in ``C(t, o)`` ways. Equivalently:
    ``beta`` and ``pi`` of the stick-breaking representation integrated out.
    """
    K1 = n.shape[0]
    la = math.log(alpha)
    lp = 0.0
    for j in range(K1):
        nj = 0
        for k in range(1, K1):
            nj += n[j, k]
        if nj == 0:
            continue
        c = alpha + (kappa if j > 0 else 0.0)
        lp += math.lgamma(c) - math.lgamma(c + nj)
        for k in range(1, K1):
            if n[j, k] == 0:
                continue
            tables = m[j, k]
            if j == k and o[j] > 0:
                tables += o[j]
                lp += (o[j] * math.log(kappa) + math.lgamma(tables + 1.0)
                       - math.lgamma(o[j] + 1.0) - math.lgamma(m[j, k] + 1.0))
            lp += S[row[n[j, k]], tables] + m[j, k] * la
    M = 0
    n_dishes = 0
    for k in range(1, K1):
        mk = 0
        for j in range(K1):
            mk += m[j, k]
        if mk > 0:
            M += mk
            n_dishes += 1
            lp += math.lgamma(mk)
    lp += math.lgamma(gamma) - math.lgamma(gamma + M) + n_dishes * math.log(gamma)
    return lp


@njit(cache=True, nogil=True)
def _count_maxima(n, m, o):
    """Largest transition count and largest table count (override tables
    included) of any restaurant and dish."""
    n_max = 0
    t_max = 0
    for j in range(n.shape[0]):
        for k in range(n.shape[1]):
            n_max = max(n_max, n[j, k])
            t_max = max(t_max, m[j, k] + (o[j] if j == k else 0))
    return n_max, t_max


def log_stirling_cover(table, n, m, o):
    """``table`` (a full Stirling table, or ``None``) if it covers every
    ``(n_jk, tables_jk)`` of these counts, else a larger full table (each side
    at least doubled)."""
    n_max, t_max = _count_maxima(n, m, o)
    S = np.zeros((0, 0)) if table is None else table[0]
    if n_max < S.shape[0] and t_max < S.shape[1]:
        return table
    rows = S.shape[0] - 1 if n_max < S.shape[0] else max(n_max, 2 * (S.shape[0] - 1))
    cols = S.shape[1] - 1 if t_max < S.shape[1] else max(t_max, 2 * (S.shape[1] - 1))
    return log_stirling_table(rows, cols)


def log_stirling_for(counts):
    """A Stirling table with rows for exactly the transition counts of
    ``counts``, an iterable of ``(n, m, o)``."""
    ns, t_max = [np.zeros(1, np.int64)], 0
    for n, m, o in counts:
        ns.append(np.asarray(n, np.int64).ravel())
        t_max = max(t_max, _count_maxima(n, m, o)[1])
    ns = np.unique(np.concatenate(ns))
    row = np.full(int(ns[-1]) + 1, -1, np.int64)
    row[ns] = np.arange(ns.shape[0])
    return log_stirling_rows(ns, t_max), row


def check_invariants(s, x=None, seq_first=None):
    """Raise AssertionError if the seating is inconsistent (used by tests).

    Checks table lists against the count arrays, no empty table in a list,
    the free list, the root counts and, given the labelled sequence, that the
    customers are exactly its transitions.
    """
    C = s.pairs.shape[1]
    P = s.tables.shape[0]
    seen = np.zeros(P, bool)
    n = np.zeros((C, C), np.int64)
    m = np.zeros((C, C), np.int64)
    o = np.zeros(C, np.int64)
    for j in range(C):
        for k in range(C):
            t = s.head[j, k]
            while t >= 0:
                assert not seen[t], "table slot linked twice"
                seen[t] = True
                assert s.tsize[t] > 0, f"empty table in list ({j}, {k})"
                n[j, k] += s.tsize[t]
                if s.tover[t]:
                    assert j == k and j > 0, "override table outside its own state"
                    o[j] += 1
                else:
                    m[j, k] += 1
                t = s.tnext[t]
    assert np.array_equal(n, s.n), "customer counts disagree with tables"
    assert np.array_equal(m, s.m), "root table counts disagree with tables"
    assert np.array_equal(o, s.o), "override counts disagree with tables"
    assert np.array_equal(s.nj, s.n.sum(axis=1)), "restaurant totals wrong"
    assert np.array_equal(s.mk, s.m.sum(axis=0)), "root customers wrong"
    assert s.totals[M_TOTAL] == s.mk.sum(), "total root customers wrong"
    assert s.totals[N_DISHES] == np.count_nonzero(s.mk), "number of dishes wrong"
    assert s.totals[N_TABLES] == seen.sum(), "table count wrong"
    free = 0
    t = s.totals[FREE_HEAD]
    while t >= 0:
        assert not seen[t], "free slot also in use"
        seen[t] = True
        free += 1
        t = s.tnext[t]
    assert free == s.totals[N_FREE_SLOTS] and seen.all(), "free list broken"
    assert s.n[:, 0].sum() == 0, "label 0 used as a dish"
    if x is not None:
        prev = np.where(seq_first, 0, np.roll(x, 1))
        expect = np.zeros((C, C), np.int64)
        np.add.at(expect, (prev, x), 1)
        assert np.array_equal(expect, s.n), "customers are not the transitions of x"
        assert np.array_equal(np.bincount(x, minlength=C), s.occ), "occupancy wrong"
