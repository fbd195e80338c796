"""A vectorisable ``exp`` for numba loops over arrays.

Numba compiles ``math.exp`` to a call of the C library's scalar ``exp``, and
NumPy's ``np.exp`` is vectorised for float64 only on CPUs with AVX-512. The
functions here compute ``exp`` with plain arithmetic that the compiler turns
into SIMD code on any x86-64 CPU (why: doc/internals.rst, "Writing kernels").

``exp(v) = 2^n exp(r)`` with ``n = round(v / ln 2)`` and ``|r| <= ln 2 / 2``:

* :func:`exp_reduce` gets ``n`` by adding ``1.5 * 2^52`` to ``v / ln 2``
  (the sum's last bits then hold ``n``, read back by :func:`exp_scale`) and
  ``r = v - n ln 2`` with ``ln 2`` in two parts (Cody and Waite: the high
  part has 15 significant bits, so ``n * hi`` is exact);
* ``exp(r)`` is a Taylor polynomial in Horner form: degree 13
  (:func:`exp_poly13`, remainder ``(ln 2 / 2)^14 / 14! < 5e-18``, so the
  result is within about one ulp of the exact value, as the C library's) or
  degree 7 (:func:`exp_poly7`, relative error below 6e-9, for weights that
  only need to be consistent);
* :func:`exp_scale` multiplies by ``2^n`` by adding ``n`` to the exponent
  field of each result, a second loop over integer views.

The arguments must lie in ``[-700, 700]`` (:func:`exp_inplace` clamps to
it): the result is then a normal number and the exponent field cannot
overflow.
"""

import numpy as np
from numba import njit

__all__ = ["EXP_MIN", "EXP_MAX", "exp_reduce", "exp_poly7", "exp_poly13", "exp_scale",
           "exp_inplace"]

#: Range of the arguments of the polynomial ``exp`` (:func:`exp_inplace`
#: clamps to it).
EXP_MIN = -700.0
EXP_MAX = 700.0

_ROUND = 6755399441055744.0          # 1.5 * 2**52: adding it rounds to an integer
_ROUND_BITS = 0x4338000000000000     # its bit pattern
_LN2_HI = 0.693145751953125          # 22713 / 32768
_LN2_LO = 1.4286068203094173e-06     # ln 2 - _LN2_HI


@njit(cache=True, nogil=True, inline="always")
def exp_reduce(v):
    """``(b, r)``: ``b = v / ln 2 + 1.5 * 2^52``, whose bit pattern holds
    ``n = round(v / ln 2)`` (:func:`exp_scale` reads it), and ``r = v - n
    ln 2``, ``|r| <= ln 2 / 2``; ``exp(v) = 2^n exp(r)``."""
    b = v * 1.4426950408889634 + _ROUND
    n = b - _ROUND
    return b, (v - n * _LN2_HI) - n * _LN2_LO


@njit(cache=True, nogil=True, inline="always")
def exp_poly7(r):
    """``exp(r)`` for ``|r| <= ln 2 / 2``, relative error below 6e-9."""
    return 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (
        1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))))


@njit(cache=True, nogil=True, inline="always")
def exp_poly13(r):
    """``exp(r)`` for ``|r| <= ln 2 / 2``, within about one ulp."""
    return 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (
        1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0 + r * (1.0 / 40320.0 + r * (
            1.0 / 362880.0 + r * (1.0 / 3628800.0 + r * (1.0 / 39916800.0 + r * (
                1.0 / 479001600.0 + r * (1.0 / 6227020800.0)))))))))))))


@njit(cache=True, nogil=True, inline="always")
def exp_scale(out, bits):
    """``out[i] *= 2^n_i`` for the ``b_i`` of :func:`exp_reduce` stored in
    ``bits`` (1-D float arrays of the same length; ``out`` holds ``exp(r_i)``)."""
    ob = out.view(np.int64)
    nb = bits.view(np.int64)
    for i in range(ob.shape[0]):
        ob[i] += (nb[i] - _ROUND_BITS) << 52


@njit(cache=True, nogil=True, fastmath={"contract"})
def exp_inplace(a, bits):
    """``a[i] = exp(clip(a[i], EXP_MIN, EXP_MAX))`` within about one ulp.

    ``a`` and ``bits`` (scratch) are 1-D contiguous float arrays of the same
    length; ``a`` must not hold NaN. Compiled with fused multiply-adds
    (``fastmath={"contract"}``; ``min``/``max`` rather than conditional
    expressions for the clip, so the loop vectorises), with the same error
    bound.
    """
    for i in range(a.shape[0]):
        v = min(max(a[i], EXP_MIN), EXP_MAX)
        b, r = exp_reduce(v)
        bits[i] = b
        a[i] = exp_poly13(r)
    exp_scale(a, bits)
