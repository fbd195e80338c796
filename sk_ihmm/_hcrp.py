"""Seating state of the hierarchical Chinese restaurant process (HCRP-HMM).

Conventions (see ``doc/model.rst``)
-----------------------------------
* Restaurant ``0`` is the *start* restaurant; restaurant ``k >= 1`` belongs to
  hidden state ``k``. Dishes are hidden states, labelled ``1 .. capacity-1``.
  Label ``0`` is never a dish. A sequence ``x_1..x_T`` is the customers
  ``0 -> x_1, x_1 -> x_2, ..., x_{T-1} -> x_T`` (a customer of restaurant ``j``
  eating dish ``k`` is one transition ``j -> k``).
* The start restaurant has concentration ``alpha``; a state restaurant has
  ``alpha + kappa``. A new table in state restaurant ``j`` serves dish ``j``
  as an *override* with probability ``kappa / (alpha + kappa)`` (sticky
  HDP-HMM) and otherwise sends one customer to the root, a CRP with
  concentration ``gamma`` whose tables are the dishes.

Tables are stored explicitly (the r-factors of the RCD sampler do not need the
table of each customer, but removing a customer must know whether its table
empties). Each (restaurant, dish) pair has a singly linked list of tables in a
pool of table slots. Every change goes through :func:`add_customer` /
:func:`remove_customer`, which append to an undo log; :func:`undo` restores
the *exact* previous seating (re-adding the old customers would not — Makino
et al. 2011, Section 3).

All arrays live in the :class:`Seating` named tuple, which sampler kernels take
as one argument and unpack once (see the note above the kernels). Capacities
grow by doubling in Python (:func:`grow`); kernels report, never overflow.
"""

from collections import namedtuple

import math

import numpy as np
from numba import njit

from .emissions import update

__all__ = ["Seating", "new_seating", "grow"]

Seating = namedtuple(
    "Seating",
    [
        "n",      # (C, C) int64: customers of restaurant j eating dish k
        "m",      # (C, C) int64: root (non-override) tables of restaurant j serving k
        "o",      # (C,)   int64: override tables of state restaurant j (dish j)
        "nj",     # (C,)   int64: customers of restaurant j
        "mk",     # (C,)   int64: root customers (= tables below) of dish k
        "occ",    # (C,)   int64: time steps currently assigned to state k
        "head",   # (C, C) int64: first table of (j, k) in the pool, -1 if none
        "tsize",  # (P,)   int64: customers at a table slot
        "tnext",  # (P,)   int64: next table of the same (j, k), or next free slot
        "tover",  # (P,)   int64: 1 for an override table
        "log",    # (U, 4) int64: undo log rows (op, j, k, table)
        "conc",   # (3,)   float64: alpha, gamma, kappa
        "scal",   # (6,)   int64: see _M_TOT ... _N_LOG below
    ],
)

# indices into Seating.scal
_M_TOT = 0      # total root customers
_K = 1          # dishes with at least one root customer
_FREE = 2       # head of the free list of table slots
_N_FREE = 3     # number of free table slots
_N_LOG = 4      # rows used in the undo log
_N_TABLES = 5   # tables in use

# undo-log operations
_ADD_OLD = 0    # customer joined existing table
_ADD_NEW = 1    # customer opened a table
_REM_OLD = 2    # customer left a table that stays
_REM_LAST = 3   # customer left and the table closed (k column stores override flag)


def new_seating(n_labels, n_tables, n_log, alpha, gamma, kappa):
    """Allocate an empty seating with room for ``n_labels`` labels (incl. 0)."""
    C, P = int(n_labels), int(n_tables)
    tnext = np.arange(1, P + 1, dtype=np.int64)
    tnext[-1] = -1
    scal = np.zeros(6, dtype=np.int64)
    scal[_FREE] = 0
    scal[_N_FREE] = P
    return Seating(
        n=np.zeros((C, C), np.int64),
        m=np.zeros((C, C), np.int64),
        o=np.zeros(C, np.int64),
        nj=np.zeros(C, np.int64),
        mk=np.zeros(C, np.int64),
        occ=np.zeros(C, np.int64),
        head=np.full((C, C), -1, np.int64),
        tsize=np.zeros(P, np.int64),
        tnext=tnext,
        tover=np.zeros(P, np.int64),
        log=np.zeros((max(int(n_log), 8), 4), np.int64),
        conc=np.array([alpha, gamma, kappa], dtype=np.float64),
        scal=scal,
    )


def grow(s, n_labels=None, n_tables=None, n_log=None):
    """Return a copy of ``s`` with at least the given capacities (doubling)."""
    C = s.n.shape[0]
    P = s.tsize.shape[0]
    U = s.log.shape[0]
    newC = C if n_labels is None or n_labels <= C else max(2 * C, int(n_labels))
    newP = P if n_tables is None or n_tables <= P else max(2 * P, int(n_tables))
    newU = U if n_log is None or n_log <= U else max(2 * U, int(n_log))

    def square(a, fill):
        out = np.full((newC, newC), fill, np.int64)
        out[:C, :C] = a
        return out

    def vec(a, size, fill=0):
        out = np.full(size, fill, a.dtype)
        out[: a.shape[0]] = a
        return out

    scal = s.scal.copy()
    tnext = vec(s.tnext, newP)
    if newP > P:
        # chain the new slots in front of the existing free list
        tnext[P:newP] = np.arange(P + 1, newP + 1)
        tnext[newP - 1] = scal[_FREE]
        scal[_FREE] = P
        scal[_N_FREE] += newP - P
    log = np.zeros((newU, 4), np.int64)
    log[:U] = s.log
    return Seating(
        n=square(s.n, 0), m=square(s.m, 0), o=vec(s.o, newC), nj=vec(s.nj, newC),
        mk=vec(s.mk, newC), occ=vec(s.occ, newC), head=square(s.head, -1),
        tsize=vec(s.tsize, newP), tnext=tnext, tover=vec(s.tover, newP),
        log=log, conc=s.conc.copy(), scal=scal,
    )


def ensure_capacity(s, need_labels, need_tables, need_log):
    """Grow ``s`` so that ``need_labels`` free labels, ``need_tables`` free
    table slots and ``need_log`` undo-log rows are available."""
    C = s.n.shape[0]
    free_labels = C - 1 - int(np.count_nonzero(_in_use_mask(s)[1:]))
    add_labels = max(0, need_labels - free_labels)
    add_tables = max(0, need_tables - int(s.scal[_N_FREE]))
    if add_labels or add_tables or need_log > s.log.shape[0]:
        s = grow(
            s,
            n_labels=C + add_labels if add_labels else None,
            n_tables=s.tsize.shape[0] + add_tables if add_tables else None,
            n_log=need_log,
        )
    return s


def _in_use_mask(s):
    return (s.occ > 0) | (s.mk > 0) | (s.nj > 0)


# --------------------------------------------------------------------------
# numba kernels
#
# Every kernel takes the seating *unpacked*: the thirteen arrays of
# :class:`Seating` in field order, written ``n, m, o, nj, mk, occ, head,
# tsize, tnext, tover, log, conc, scal`` (a sampler kernel unpacks its
# ``Seating`` argument once, ``n, m, ..., scal = s``). Numba takes a
# reference count (an atomic increment and decrement) every time it reads a
# field of a named tuple; inside a loop that also calls other compiled
# functions it cannot elide them, and they cost about 20 ns per read -- more
# than the table arithmetic. Plain array arguments of inlined functions cost
# nothing. From Python, ``add_customer(*s, j, k, rng)`` does the same.
# --------------------------------------------------------------------------
@njit(cache=True, inline="always")
def get_prob(n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal, j, k):
    """Predictive probability that a new customer of restaurant ``j`` eats ``k``.

    Makino et al. Eq. (31)-(32) with the sticky term: a dish with no root
    customer is treated as a new dish of the root.
    """
    return pred_prob(n[j, k], nj[j], mk[k], scal[_M_TOT], conc[0], conc[1], conc[2], j, k)


@njit(cache=True, inline="always")
def pred_prob(n_jk, n_j, m_k, m_tot, alpha, gamma, kappa, j, k):
    """:func:`get_prob` from the counts it reads, ``n[j, k]``, ``nj[j]``,
    ``mk[k]`` and ``M``: scalar arguments, so that loops over many ``(j, k)``
    pay no reference counting (an inlined function binding array arguments
    takes one count per array)."""
    if m_k > 0:
        p0 = m_k / (m_tot + gamma)
    else:
        p0 = gamma / (m_tot + gamma)
    kj = kappa if j > 0 else 0.0
    num = n_jk + alpha * p0
    if j == k:
        num += kj
    return num / (n_j + alpha + kj)


@njit(cache=True, inline="always")
def _log_op(log, scal, op, j, k, t):
    i = scal[_N_LOG]
    log[i, 0] = op
    log[i, 1] = j
    log[i, 2] = k
    log[i, 3] = t
    scal[_N_LOG] = i + 1


@njit(cache=True, inline="always")
def _open_table(m, o, mk, head, tsize, tnext, tover, scal, j, k, override):
    t = scal[_FREE]
    scal[_FREE] = tnext[t]
    scal[_N_FREE] -= 1
    scal[_N_TABLES] += 1
    tsize[t] = 1
    tover[t] = override
    tnext[t] = head[j, k]
    head[j, k] = t
    if override:
        o[j] += 1
    else:
        m[j, k] += 1
        if mk[k] == 0:
            scal[_K] += 1
        mk[k] += 1
        scal[_M_TOT] += 1
    return t


@njit(cache=True, inline="always")
def _close_table(m, o, mk, head, tsize, tnext, tover, scal, j, k, t):
    prev = -1
    cur = head[j, k]
    while cur != t:
        prev = cur
        cur = tnext[cur]
    if prev < 0:
        head[j, k] = tnext[t]
    else:
        tnext[prev] = tnext[t]
    tnext[t] = scal[_FREE]
    scal[_FREE] = t
    scal[_N_FREE] += 1
    scal[_N_TABLES] -= 1
    tsize[t] = 0
    if tover[t]:
        o[j] -= 1
    else:
        m[j, k] -= 1
        mk[k] -= 1
        scal[_M_TOT] -= 1
        if mk[k] == 0:
            scal[_K] -= 1


@njit(cache=True, inline="always")
def _pick_table(head, tsize, tnext, j, k, u):
    """The table of (j, k) where the cumulative table size first exceeds ``u``
    (``0 <= u < n[j, k]``): a table drawn proportionally to its size."""
    t = head[j, k]
    acc = tsize[t]
    while acc <= u:
        t = tnext[t]
        acc += tsize[t]
    return t


@njit(cache=True, inline="always")
def add_customer(n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal,
                 j, k, rng):
    """Seat a customer of restaurant ``j`` eating ``k`` (Makino Alg. 3).

    Existing table with probability proportional to its size, a new override
    table with ``kappa`` (only ``j == k``), a new root table with
    ``alpha * p0(k)``, ``p0`` the root predictive of dish ``k``.
    """
    alpha, gamma = conc[0], conc[1]
    w_over = conc[2] if (j == k and j > 0) else 0.0
    m_tot = scal[_M_TOT]
    w_root = alpha * (mk[k] if mk[k] > 0 else gamma) / (m_tot + gamma)
    w_old = float(n[j, k])
    u = rng.random() * (w_old + w_over + w_root)
    n[j, k] += 1
    nj[j] += 1
    if u < w_old:
        t = _pick_table(head, tsize, tnext, j, k, u)
        tsize[t] += 1
        _log_op(log, scal, _ADD_OLD, j, k, t)
    else:
        t = _open_table(m, o, mk, head, tsize, tnext, tover, scal, j, k,
                        1 if u < w_old + w_over else 0)
        _log_op(log, scal, _ADD_NEW, j, k, t)


@njit(cache=True, inline="always")
def remove_customer(n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal,
                    j, k, rng):
    """Remove a customer of restaurant ``j`` eating ``k`` (Makino Alg. 4):
    its table is drawn with probability proportional to the table size."""
    t = _pick_table(head, tsize, tnext, j, k, rng.random() * n[j, k])
    n[j, k] -= 1
    nj[j] -= 1
    if tsize[t] == 1:
        over = tover[t]
        _close_table(m, o, mk, head, tsize, tnext, tover, scal, j, k, t)
        _log_op(log, scal, _REM_LAST, j, k, over)
    else:
        tsize[t] -= 1
        _log_op(log, scal, _REM_OLD, j, k, t)


@njit(cache=True, inline="always")
def clear_log(n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal):
    scal[_N_LOG] = 0


@njit(cache=True)
def undo(n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal):
    """Undo every logged operation, newest first, and clear the log."""
    for i in range(scal[_N_LOG] - 1, -1, -1):
        op = log[i, 0]
        j = log[i, 1]
        k = log[i, 2]
        t = log[i, 3]
        if op == _ADD_OLD:
            tsize[t] -= 1
        elif op == _ADD_NEW:
            _close_table(m, o, mk, head, tsize, tnext, tover, scal, j, k, t)
        elif op == _REM_OLD:
            tsize[t] += 1
        else:
            _open_table(m, o, mk, head, tsize, tnext, tover, scal, j, k, t)  # t: override flag
        d = 1 if op >= _REM_OLD else -1
        n[j, k] += d
        nj[j] += d
    scal[_N_LOG] = 0


@njit(cache=True, inline="always")
def is_free(n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal, k):
    return occ[k] == 0 and mk[k] == 0 and nj[k] == 0


@njit(cache=True, inline="always")
def free_label(n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal, start):
    """Smallest free label >= ``start`` (>= 1), or -1 when none is left."""
    for k in range(max(start, 1), occ.shape[0]):
        if occ[k] == 0 and mk[k] == 0 and nj[k] == 0:
            return k
    return -1


@njit(cache=True, inline="always")
def n_free_labels(n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal):
    c = 0
    for k in range(1, occ.shape[0]):
        if occ[k] == 0 and mk[k] == 0 and nj[k] == 0:
            c += 1
    return c


@njit(cache=True)
def seat_sequences(s, stats, x, Y, seq_first, fam, rng):
    """Seat the customers and emissions of a complete labelled sequence."""
    n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal = s
    for t in range(x.shape[0]):
        j = 0 if seq_first[t] else x[t - 1]
        add_customer(n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal,
                     j, x[t], rng)
        scal[_N_LOG] = 0
        update(fam, stats, x[t], Y, t, 1.0)
        occ[x[t]] += 1


@njit(cache=True)
def log_seating_prob(s):
    """log p(s): product of the CRP seating probabilities (Makino Eq. 18-20,
    with override tables weighted by kappa)."""
    n, m, o, nj, mk, occ, head, tsize, tnext, tover, log, conc, scal = s
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    C = n.shape[0]
    lp = 0.0
    la = math.log(alpha)
    lk = math.log(kappa) if kappa > 0 else 0.0
    for j in range(C):
        if nj[j] == 0:
            continue
        c = alpha + (kappa if j > 0 else 0.0)
        lp += math.lgamma(c) - math.lgamma(c + nj[j])
        for k in range(C):
            t = head[j, k]
            while t >= 0:
                lp += math.lgamma(tsize[t]) + (lk if tover[t] else la)
                t = tnext[t]
    mt = scal[_M_TOT]
    lp += math.lgamma(gamma) - math.lgamma(gamma + mt) + scal[_K] * math.log(gamma)
    for k in range(C):
        if mk[k] > 0:
            lp += math.lgamma(mk[k])
    return lp


def check_invariants(s, x=None, seq_first=None):
    """Raise AssertionError if the seating is inconsistent (used by tests).

    Checks table lists against the count arrays, no empty table in a list,
    the free list, the root counts and, given the labelled sequence, that the
    customers are exactly its transitions.
    """
    C = s.n.shape[0]
    P = s.tsize.shape[0]
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
    assert s.scal[_M_TOT] == s.mk.sum(), "total root customers wrong"
    assert s.scal[_K] == np.count_nonzero(s.mk), "number of dishes wrong"
    assert s.scal[_N_TABLES] == seen.sum(), "table count wrong"
    free = 0
    t = s.scal[_FREE]
    while t >= 0:
        assert not seen[t], "free slot also in use"
        seen[t] = True
        free += 1
        t = s.tnext[t]
    assert free == s.scal[_N_FREE] and seen.all(), "free list broken"
    assert s.n[:, 0].sum() == 0, "label 0 used as a dish"
    if x is not None:
        prev = np.where(seq_first, 0, np.roll(x, 1))
        expect = np.zeros((C, C), np.int64)
        np.add.at(expect, (prev, x), 1)
        assert np.array_equal(expect, s.n), "customers are not the transitions of x"
        assert np.array_equal(np.bincount(x, minlength=C), s.occ), "occupancy wrong"
