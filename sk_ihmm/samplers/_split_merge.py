"""Sequentially-allocated split-merge moves through the RCD sampler (``split_merge``).

Makino et al. (2011), Section 4.4 and Algorithms 9-10, after the
sequentially-allocated merge-split sampler of Dahl (2003). A sweep of
``split_merge`` is one sweep of a base sampler (option ``base_sampler``:
``"rcd_gibbs"``, ``"rcd_blocked"``, ``"rcd_beam"`` or ``"none"``), then
``split_merge_trials`` split-merge trials, then the hyperparameter updates
(defaults in :data:`sk_ihmm.samplers.OPTIONS`).

A trial draws an ordered pair of distinct steps ``t1 != t2`` and the
threshold ``u``. If they share a label it proposes a split: ``t1`` gets a
fresh label and the *fragments* (the maximal runs of steps labelled ``a`` or
``b`` other than ``t1``, ``t2``) are allocated one by one, in random order, by
FFBS of a two-state HMM on the current seating's predictives. Otherwise it
proposes the merge of ``b = x[t1]`` into ``a = x[t2]``. The customers and
emissions of the fragments and ``t1`` are added back in exactly the reverse
of the order of their removal, so the acceptance ratio is ``(r* / r_old)
(q_old / q*)`` (Makino Eq. 28-32); a rejection replays the undo log.

Invariants: a split and the merge with the same pair are each other's
reverse; merges are rejected early only for discrete emissions (a
continuous predictive density can exceed 1); a trial needs one free label,
checked before any of its random draws.

Derivation and exactness argument: doc/internals.rst, section "Split-merge
moves (samplers/_split_merge.py)".
"""

import math

import numpy as np
from numba import njit

from .._hcrp import (_M_TOT, _N_TABLES, MK, NJ, OCC, N, add_customer, clear_log,
                     free_label, pred_prob, remove_customer, undo)
from .._messages import path_log_weight
from .._nrt import nrt_free, uniform_int
from .._rng import as_generator, generator_handle
from ..emissions import log_pred, log_pred_block, update
from . import _rcd_blocked, _rcd_gibbs, option
from ._collapsed import finish_sweep, init_collapsed
from ._seqmoves import add_seq, move_emissions, remove_seq

__all__ = ["init", "step", "split_merge_moves"]

# base samplers: they all work on the CollapsedState built by init_collapsed
_BASE_STEPS = {
    "rcd_gibbs": _rcd_gibbs.step,
    "rcd_blocked": _rcd_blocked.step_blocked,
    "rcd_beam": _rcd_blocked.step_beam,
}

# indices into the counts array of the kernel
_N_SPLIT, _ACC_SPLIT, _N_MERGE, _ACC_MERGE, _EARLY = range(5)


@njit(cache=True)
def _find_fragments(x, seq_first, t1, t2, a, b, fb, fe):
    """Maximal runs of one sequence with labels in ``{a, b}``, without ``t1``, ``t2``.

    Fills ``fb[:U]`` (first step) and ``fe[:U]`` (one past the last step) in
    time order and returns ``U``.
    """
    T = x.shape[0]
    U = 0
    t = 0
    while t < T:
        if t != t1 and t != t2 and (x[t] == a or x[t] == b):
            fb[U] = t
            t += 1
            while (t < T and not seq_first[t] and t != t1 and t != t2
                   and (x[t] == a or x[t] == b)):
                t += 1
            fe[U] = t
            U += 1
        else:
            t += 1
    return U


@njit(cache=True)
def _restricted_hmm(s, stats, Y, b, L, prev, nxt, k0, k1, fam, hyp,
                    log_init, log_trans, log_emit, log_final, pair):
    """Two-state HMM over the labels ``(k0, k1)`` for the fragment ``b .. b + L - 1``.

    Weights are the HCRP predictives of the current seating: ``log_init[c] =
    log p(k_c | restaurant prev)``, ``log_trans[c, d] = log p(k_d | k_c)``,
    ``log_final[c] = log p(nxt | k_c)`` (0 when ``nxt < 0``: nothing follows)
    and ``log_emit[l, c]`` the posterior predictive of ``Y[b + l]`` under
    ``k_c``. ``pair`` is a work array of two labels.
    """
    mat, vec, tab, log, scal, conc = s
    m_tot = scal[_M_TOT]
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    for c in range(2):
        k = k0 if c == 0 else k1
        log_init[c] = math.log(pred_prob(mat[N, prev, k], vec[NJ, prev], vec[MK, k], m_tot,
                                         alpha, gamma, kappa, prev, k))
        log_trans[c, 0] = math.log(pred_prob(mat[N, k, k0], vec[NJ, k], vec[MK, k0], m_tot,
                                             alpha, gamma, kappa, k, k0))
        log_trans[c, 1] = math.log(pred_prob(mat[N, k, k1], vec[NJ, k], vec[MK, k1], m_tot,
                                             alpha, gamma, kappa, k, k1))
        if nxt > 0:
            log_final[c] = math.log(pred_prob(mat[N, k, nxt], vec[NJ, k], vec[MK, nxt], m_tot,
                                              alpha, gamma, kappa, k, nxt))
        else:
            log_final[c] = 0.0
    pair[0] = k0
    pair[1] = k1
    log_pred_block(fam, stats, pair, np.int64(2), hyp, Y, b, L, log_emit)


@njit(cache=True, inline="always")
def _log_add(u, v):
    """``log(exp(u) + exp(v))`` for finite ``u``, ``v``."""
    if u < v:
        u, v = v, u
    return u + math.log1p(math.exp(v - u))


@njit(cache=True)
def _two_state_forward(log_init, log_trans, log_emit, log_final, la):
    """Forward pass of the two-state restricted HMM, in log space.

    Fills ``la[t, k]``, the log total weight of the paths of steps ``0 .. t``
    ending in ``k`` (emission of ``t`` included), and returns the log total
    weight of all ``2^L`` paths, final factor included. All weights are
    predictive probabilities (finite logs), so log space needs no scaling.
    """
    L = log_emit.shape[0]
    la[0, 0] = log_init[0] + log_emit[0, 0]
    la[0, 1] = log_init[1] + log_emit[0, 1]
    for t in range(1, L):
        for k in range(2):
            la[t, k] = _log_add(la[t - 1, 0] + log_trans[0, k],
                                la[t - 1, 1] + log_trans[1, k]) + log_emit[t, k]
    return _log_add(la[L - 1, 0] + log_final[0], la[L - 1, 1] + log_final[1])


@njit(cache=True)
def _two_state_backward(log_trans, log_final, la, rng, path):
    """Draw a path from the restricted HMM given its forward messages ``la``."""
    L = la.shape[0]
    v0 = la[L - 1, 0] + log_final[0]
    v1 = la[L - 1, 1] + log_final[1]
    k = 1 if rng.random() * (1.0 + math.exp(v0 - v1)) < 1.0 else 0
    path[L - 1] = k
    for t in range(L - 2, -1, -1):
        v0 = la[t, 0] + log_trans[0, k]
        v1 = la[t, 1] + log_trans[1, k]
        k = 1 if rng.random() * (1.0 + math.exp(v0 - v1)) < 1.0 else 0
        path[t] = k


@nrt_free
def _sm_trials(s, stats, x, Y, seq_first, seq_last, n_trials, start, fam, hyp,
               early_stop, rng, fb, fe, order, xsave, emit_buf, fwd_buf, path_buf, counts,
               small, ibuf):
    """Split-merge trials ``start .. n_trials - 1``; stop early when no label is free.

    Returns the number of trials done (``n_trials`` unless the caller must
    grow the seating and resume). ``counts`` accumulates splits tried and
    accepted, merges tried and accepted, merges rejected early. Compiled with
    numba's reference counting off (:func:`sk_ihmm._nrt.nrt_free`): every
    work array comes from the caller (``small``: 8 floats, ``ibuf``: ``T + 2``
    integers).
    """
    rng = as_generator(rng)
    T = x.shape[0]
    mat, vec, tab, log, scal, conc = s
    alpha, gamma, kappa = conc[0], conc[1], conc[2]
    log_init = small[0:2]
    log_trans = small[2:6].reshape((2, 2))
    log_final = small[6:8]
    pair = ibuf[0:2]
    iwork = ibuf[2:]
    for trial in range(start, n_trials):
        if free_label(vec, 1) < 0:
            return trial
        # ---- 1. pair, threshold, fragments in random order ----
        t1 = uniform_int(T, rng)
        t2 = uniform_int(T - 1, rng)
        if t2 >= t1:
            t2 += 1
        u = rng.random()
        log_u = math.log(u) if u > 0.0 else -np.inf
        a = x[t2]
        b = x[t1]
        split = a == b
        U = _find_fragments(x, seq_first, t1, t2, a, b, fb, fe)
        for i in range(U):
            order[i] = i
        for i in range(U - 1, 0, -1):
            j = uniform_int(i + 1, rng)
            tmp = order[i]
            order[i] = order[j]
            order[j] = tmp
        # t1's own customers: the transitions from t1 - 1 (restaurant 0 at a
        # sequence start) and to t1 + 1, unless that neighbour is a fragment
        # step (then the fragment's remove_seq / add_seq handles it)
        has_in = seq_first[t1] or not (t1 - 1 != t2 and (x[t1 - 1] == a or x[t1 - 1] == b))
        j_in = 0 if seq_first[t1] else x[t1 - 1]
        has_out = not seq_last[t1] and (t1 + 1 == t2 or (x[t1 + 1] != a and x[t1 + 1] != b))
        k_out = x[t1 + 1] if has_out else -1

        # ---- 2. remove F_U .. F_1 (q_old of a merge on the way), then t1 ----
        clear_log(scal)
        log_r_old = 0.0
        log_q_old = 0.0
        for i in range(U - 1, -1, -1):
            f = order[i]
            fb_, fe_ = fb[f], fe[f]
            L = fe_ - fb_
            prev = 0 if seq_first[fb_] else x[fb_ - 1]
            nxt = -1 if seq_last[fe_ - 1] else x[fe_]
            for l in range(L):
                xsave[fb_ + l] = x[fb_ + l]
            log_r_old += remove_seq(mat, vec, tab, log, scal, conc,
                                    stats, x[fb_:fe_], Y, fb_, prev, nxt, fam, hyp, rng, iwork)
            if not split:
                le = emit_buf[:L]
                pth = path_buf[:L]
                _restricted_hmm(s, stats, Y, fb_, L, prev, nxt, b, a, fam, hyp,
                                log_init, log_trans, le, log_final, pair)
                for l in range(L):
                    pth[l] = 0 if x[fb_ + l] == b else 1
                log_z = _two_state_forward(log_init, log_trans, le, log_final, fwd_buf[:L])
                log_q_old += path_log_weight(log_init, log_trans, le, log_final, pth) - log_z
        xsave[t1] = b
        update(fam, stats, b, Y, t1, -1.0)
        vec[OCC, b] -= 1
        log_r_old += log_pred(fam, stats, b, hyp, Y, t1)
        if has_in:
            remove_customer(mat, vec, tab, log, scal, conc, j_in, b, rng)
            log_r_old += math.log(pred_prob(mat[N, j_in, b], vec[NJ, j_in], vec[MK, b],
                                            scal[_M_TOT], alpha, gamma, kappa, j_in, b))
        if has_out:
            remove_customer(mat, vec, tab, log, scal, conc, b, k_out, rng)
            log_r_old += math.log(pred_prob(mat[N, b, k_out], vec[NJ, b], vec[MK, k_out],
                                            scal[_M_TOT], alpha, gamma, kappa, b, k_out))

        # ---- 3. t1 with its new label, then F_1 .. F_U ----
        if split:
            c = free_label(vec, 1)
        else:
            c = a
        x[t1] = c
        log_r_new = log_pred(fam, stats, c, hyp, Y, t1)
        update(fam, stats, c, Y, t1, 1.0)
        vec[OCC, c] += 1
        if has_out:
            log_r_new += math.log(pred_prob(mat[N, c, k_out], vec[NJ, c], vec[MK, k_out],
                                            scal[_M_TOT], alpha, gamma, kappa, c, k_out))
            add_customer(mat, vec, tab, log, scal, conc, c, k_out, rng)
        if has_in:
            log_r_new += math.log(pred_prob(mat[N, j_in, c], vec[NJ, j_in], vec[MK, c],
                                            scal[_M_TOT], alpha, gamma, kappa, j_in, c))
            add_customer(mat, vec, tab, log, scal, conc, j_in, c, rng)
        log_q_new = 0.0
        n_added = U
        for i in range(U):
            f = order[i]
            fb_, fe_ = fb[f], fe[f]
            L = fe_ - fb_
            prev = 0 if seq_first[fb_] else x[fb_ - 1]
            nxt = -1 if seq_last[fe_ - 1] else x[fe_]
            if split:
                le = emit_buf[:L]
                pth = path_buf[:L]
                _restricted_hmm(s, stats, Y, fb_, L, prev, nxt, c, a, fam, hyp,
                                log_init, log_trans, le, log_final, pair)
                log_z = _two_state_forward(log_init, log_trans, le, log_final, fwd_buf[:L])
                _two_state_backward(log_trans, log_final, fwd_buf[:L], rng, pth)
                log_q_new += path_log_weight(log_init, log_trans, le, log_final, pth) - log_z
                for l in range(L):
                    x[fb_ + l] = c if pth[l] == 0 else a
            else:
                # the factors still to come are probabilities (<= 1) for
                # discrete emissions: the final ratio cannot exceed this one
                if early_stop and log_r_new - log_r_old + log_q_old <= log_u:
                    n_added = i
                    counts[_EARLY] += 1
                    break
                for l in range(L):
                    x[fb_ + l] = a
            log_r_new += add_seq(mat, vec, tab, log, scal, conc,
                                 stats, x[fb_:fe_], Y, fb_, prev, nxt, fam, hyp, rng, iwork)

        # ---- 4. accept, or restore the exact old state ----
        log_ratio = log_r_new - log_r_old + log_q_old - log_q_new
        accept = n_added == U and log_u < log_ratio
        if split:
            counts[_N_SPLIT] += 1
        else:
            counts[_N_MERGE] += 1
        if accept:
            clear_log(scal)
            if split:
                counts[_ACC_SPLIT] += 1
            else:
                counts[_ACC_MERGE] += 1
        else:
            undo(mat, vec, tab, log, scal, conc)
            update(fam, stats, c, Y, t1, -1.0)
            vec[OCC, c] -= 1
            update(fam, stats, b, Y, t1, 1.0)
            vec[OCC, b] += 1
            x[t1] = b
            for i in range(U):
                f = order[i]
                fb_, fe_ = fb[f], fe[f]
                if i < n_added:
                    move_emissions(vec, stats, Y, fb_, x[fb_:fe_], xsave[fb_:fe_], fam,
                                   iwork)
                    for t in range(fb_, fe_):
                        x[t] = xsave[t]
                else:
                    for t in range(fb_, fe_):
                        update(fam, stats, x[t], Y, t, 1.0)
                        vec[OCC, x[t]] += 1
    return n_trials


def split_merge_moves(state, problem, n_trials, rng, early_stop=None):
    """Run ``n_trials`` split-merge trials on a collapsed state.

    Parameters
    ----------
    state : sk_ihmm.samplers._collapsed.CollapsedState
        Chain state, modified in place (arrays may be replaced when grown).
    problem : sk_ihmm._chain.Problem
        Data, sequence boundaries and emission kernels.
    n_trials : int
        Number of trials.
    rng : numpy.random.Generator
        Source of every random draw.
    early_stop : bool or None, default=None
        Stop a merge as soon as its partial acceptance ratio falls below the
        threshold. ``None`` enables it exactly when it is valid: for
        discrete emissions, whose predictive probabilities are ``<= 1``.

    Returns
    -------
    counts : ndarray of shape (5,), int64
        Splits tried, splits accepted, merges tried, merges accepted, merges
        rejected early.
    """
    counts = np.zeros(5, np.int64)
    T = state.x.shape[0]
    if n_trials <= 0 or T < 2:
        return counts
    if early_stop is None:
        early_stop = problem.emission.discrete
    fb = np.empty(T, np.int64)
    fe = np.empty(T, np.int64)
    order = np.empty(T, np.int64)
    xsave = np.empty(T, np.int64)
    emit_buf = np.empty((T, 2))
    fwd_buf = np.empty((T, 2))
    path_buf = np.empty(T, np.int64)
    small = np.empty(8)
    iwork = np.empty(T + 2, np.int64)
    done = 0
    while done < n_trials:
        # <= T customers, hence <= T tables, at any time: the free slots must
        # cover T minus those in use; <= 2 T logged operations
        in_use = int(state.seating.scal[_N_TABLES])
        state.ensure_capacity(labels=2, tables=T - in_use + 8, log=2 * T + 8)
        done = _sm_trials(
            state.seating, state.stats, state.x, problem.Y, problem.seq_first,
            problem.seq_last, int(n_trials), done, problem.fam, state.hyp,
            bool(early_stop), generator_handle(rng), fb, fe, order, xsave, emit_buf, fwd_buf,
            path_buf, counts,
            small, iwork,
        )
    return counts


def init(problem, x0, rng):
    """Initial state: seat the labelled sequence ``x0``."""
    return init_collapsed(problem, x0, rng)


def _options(problem):
    base, trials = str(option(problem, "base_sampler")), int(option(problem, "split_merge_trials"))
    if base != "none" and base not in _BASE_STEPS:
        raise ValueError(
            f"base_sampler must be one of {sorted(_BASE_STEPS) + ['none']}, got {base!r}."
        )
    if trials < 0:
        raise ValueError(f"split_merge_trials must be >= 0, got {trials}.")
    return base, trials


def step(state, problem, rng):
    """One sweep: a base-sampler sweep, the split-merge trials, hyperparameters.

    Returns
    -------
    info : dict
        ``accept_rate`` of the base sampler (``nan`` for ``"none"``) and its
        other statistics, ``split_accept`` and ``merge_accept`` (accepted
        fraction of the splits / merges tried in this sweep, ``nan`` when none
        was tried).
    """
    base, trials = _options(problem)
    info = {"accept_rate": np.nan}
    if base != "none":
        # the base sweep leaves the concentrations alone; they are resampled
        # once, after the split-merge trials
        info.update(_BASE_STEPS[base](state, problem._replace(resample=np.zeros(3, np.bool_)), rng))
    counts = split_merge_moves(state, problem, trials, rng)
    finish_sweep(state, problem, rng)
    n_split, n_merge = counts[_N_SPLIT], counts[_N_MERGE]
    info["split_accept"] = counts[_ACC_SPLIT] / n_split if n_split else np.nan
    info["merge_accept"] = counts[_ACC_MERGE] / n_merge if n_merge else np.nan
    return info
