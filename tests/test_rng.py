"""Generator handles (sk_ihmm._rng): the draws of the Generator they stand for."""

import numpy as np
from numba import njit

from sk_ihmm import _rng
from sk_ihmm._messages import ffbs
from sk_ihmm._rng import as_generator, generator_handle, handles_work


@njit(cache=True)
def _draws(rng, n, out):
    g = as_generator(rng)
    for i in range(n):
        out[i, 0] = g.random()
        out[i, 1] = g.standard_normal()
        out[i, 2] = g.gamma(0.7 + i % 5, 1.0)
        out[i, 3] = g.integers(0, 1000)


def test_handles_work_here():
    assert handles_work()
    h = generator_handle(np.random.default_rng(0))
    assert h.dtype == np.uint64 and h.shape == (5,)


def test_handle_draws_what_the_generator_draws():
    a, b = np.random.default_rng(2024), np.random.default_rng(2024)
    out_a, out_b = np.empty((300, 4)), np.empty((300, 4))
    _draws(a, 300, out_a)
    _draws(generator_handle(b), 300, out_b)
    np.testing.assert_array_equal(out_a, out_b)
    # the handle advanced the Generator's own state
    assert a.random() == b.random()
    assert a.bit_generator.state == b.bit_generator.state


def test_handle_is_idempotent_and_kernels_take_either():
    rng = np.random.default_rng(3)
    h = generator_handle(rng)
    assert generator_handle(h) is h
    li, lt = np.log(np.full(3, 1 / 3)), np.log(np.full((3, 3), 1 / 3))
    le = np.random.default_rng(0).normal(size=(50, 3))
    out1, out2 = np.empty(50, np.int64), np.empty(50, np.int64)
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    z1 = ffbs(li, lt, le, np.zeros(3), g1, out1)
    z2 = ffbs(li, lt, le, np.zeros(3), generator_handle(g2), out2)   # g2 held: see _rng
    assert z1 == z2
    np.testing.assert_array_equal(out1, out2)


def test_fallback_passes_the_generator(monkeypatch):
    monkeypatch.setattr(_rng, "_HANDLES", [False])
    rng = np.random.default_rng(0)
    assert generator_handle(rng) is rng
