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


def test_draw_index_is_the_inverse_cdf_over_positive_weights():
    w = np.array([0.0, 2.0, 0.0, 1.0, 3.0, 0.0])
    # r on either side of each partial sum of the positive weights (2, 3, 6)
    for r, want in [(0.0, 1), (1.999, 1), (2.0, 3), (2.999, 3), (3.0, 4), (5.999, 4)]:
        assert _rng.draw_index(w, w.size, r) == want, r
    # round-off can leave r at the total: the last positive weight, never a zero one
    assert _rng.draw_index(w, w.size, 6.0) == 4
    # only the first n weights count
    assert _rng.draw_index(w, 3, 2.5) == 1
    assert _rng.draw_index(np.zeros(3), 3, 0.0) == -1


def test_draw_index_frequencies():
    w = np.array([0.1, 0.0, 0.6, 0.3])
    rng = np.random.default_rng(5)
    n = 20000
    draws = np.array([_rng.draw_index(w, 4, rng.random() * w.sum()) for _ in range(n)])
    freq = np.bincount(draws, minlength=4) / n
    assert freq[1] == 0.0
    # four standard errors of a binomial proportion
    np.testing.assert_array_less(np.abs(freq - w), 4 * np.sqrt(w * (1 - w) / n) + 1e-12)
