"""Reference counting in the hot kernels (see ``sk_ihmm._nrt``).

Numba's reference-count operations are atomic and cost more than the
arithmetic of a customer move; these tests compile small loops around the
shared kernels and check, in the optimised LLVM IR, that no ``NRT_incref``
is left. They fail when a kernel is edited into a shape the pruning pass
does not handle (a branch or loop without ``hold``) or when numba stops
honouring ``_nrt=False``.
"""

import re

import numpy as np
import pytest
from numba import njit

from sk_ihmm import _hcrp
from sk_ihmm._hcrp import free_label, is_free, n_free_labels, pred_prob
from sk_ihmm._rng import draw_index
from sk_ihmm.samplers import _pgas
from sk_ihmm.samplers._seqmoves import _seat, _unseat


def _n_incref(dispatcher):
    ir = "\n".join(dispatcher.inspect_llvm().values())
    assert "define" in ir, "no LLVM IR to inspect"
    return len(re.findall(r"call void @NRT_incref", ir))


def _fresh(dispatcher):
    """The same kernel, same compiler options, but not from the on-disk cache
    (numba cannot show the IR of cached code)."""
    options = {k: v for k, v in dispatcher.targetoptions.items()
               if k not in ("cache", "nopython")}
    return njit(**options)(dispatcher.py_func)


@njit
def _loop_labels(per_label, n):
    acc = 0
    for i in range(n):
        acc += (free_label(per_label, 1 + i % 3) + is_free(per_label, i % 4)
                + n_free_labels(per_label))
    return acc


@njit
def _loop_pred(pairs, per_label, totals, n):
    acc = 0.0
    for i in range(n):
        j, k = i % 3, 1 + i % 2
        acc += pred_prob(pairs[_hcrp.N, j, k], per_label[_hcrp.NJ, j], per_label[_hcrp.MK, k],
                         totals[_hcrp.M_TOTAL], 1.0, 1.0, 0.5, j, k)
    return acc


@njit
def _loop_pgas_draws(w, cum, pi, n, rng):
    acc = 0
    for i in range(n):
        acc += draw_index(w, 3, 3.0 * rng.random()) + _pgas._search_row(cum, i % 2, 0.5 * (i % 6))
        acc += _pgas._scan_row(pi, i % 3, 1, 2, rng.random(), -1)
    return acc


def test_label_and_predictive_kernels_take_no_reference():
    s = _hcrp.new_seating(8, 16, 8, 1.0, 1.0, 0.5)
    _loop_labels(s.per_label, 1)
    _loop_pred(s.pairs, s.per_label, s.totals, 1)
    assert _n_incref(_loop_labels) == 0
    assert _n_incref(_loop_pred) == 0


def test_draw_helpers_take_no_reference():
    rng = np.random.default_rng(0)
    _loop_pgas_draws(np.ones(3), np.arange(1.0, 7.0).reshape(2, 3), np.full((3, 3), 0.3), 1, rng)
    assert _n_incref(_loop_pgas_draws) == 0


@pytest.mark.parametrize("kernel", [_seat, _unseat], ids=["seat", "unseat"])
def test_block_customer_moves_are_compiled_without_reference_counting(kernel):
    assert kernel.targetoptions.get("_nrt") is False
    kernel = _fresh(kernel)
    # the seating of a block, then the kernel on it: x = 1 1 2 2 1 after restaurant 0
    s = _hcrp.new_seating(8, 32, 64, 1.0, 1.0, 0.5)
    rng = np.random.default_rng(0)
    xb = np.array([1, 1, 2, 2, 1], dtype=np.int64)
    pairs, per_label, tables, undo_log, totals, conc = s
    if kernel.py_func is _unseat.py_func:
        _seat(pairs, per_label, tables, undo_log, totals, conc, xb, 0, -1, rng)
        _hcrp.clear_log(totals)
    log_r = kernel(pairs, per_label, tables, undo_log, totals, conc, xb, 0, -1, rng)
    assert np.isfinite(log_r) and log_r < 0
    assert _n_incref(kernel) == 0


def test_particle_gibbs_time_loop_is_compiled_without_reference_counting():
    # the CSMC time loop reads a dozen arrays per step through inlined
    # helpers; compiled without the runtime, none of them is counted
    assert _pgas._csmc_range.targetoptions.get("_nrt") is False
