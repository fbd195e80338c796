"""Hand a ``numpy.random.Generator`` to a numba kernel without unboxing it;
and :func:`draw_index`, the categorical draw every kernel shares.

Every kernel draws its randomness from a ``numpy.random.Generator`` that the
caller passes in (numba's global RNG is never used), which makes the chains
reproducible and independent of ``n_jobs``. Passing the Generator object
itself is slow, though: numba types it through Python and unboxes it with
three ``ctypes.cast`` calls (for the function pointers of its bit
generator), which on a short sequence costs more than anything else outside
the kernels.

:func:`generator_handle` reads those addresses once into a small ``uint64``
array -- an ordinary array argument, typed and unboxed in C -- and
:func:`as_generator`, called first thing in a kernel, rebuilds numba's
Generator value from it: the same bit generator state and functions, so the
draws are exactly those of passing the Generator (``tests/test_rng.py``).
Given a Generator, :func:`as_generator` returns it, so every kernel that
calls it first accepts either (the others, such as ``ffbs_linear``, take a
Generator only). The handle borrows the Generator's memory: it is valid only while the
caller holds the Generator, which is why the drivers make it per call
(it is cheap) rather than keep it.

This relies on numba's data model for ``Generator`` values (a struct of the
bit generator's state address and ``next_*`` function pointers; written
against numba 0.68). The first :func:`generator_handle` checks that a handle
draws what its Generator draws (:func:`handles_work`); if not (another
numba, or ``NUMBA_DISABLE_JIT``), :func:`generator_handle` returns the
Generator itself.
"""

import ctypes

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["generator_handle", "as_generator", "handles_work", "draw_index"]

# handle layout (uint64): the fields of numba's bit generator model
_STATE_ADDRESS, _STATE, _NEXT_U64, _NEXT_U32, _NEXT_DOUBLE = range(5)

# per bit-generator class: the addresses of its next_* functions
_FNPTRS = {}


def _fnptrs(bitgen):
    cls = type(bitgen)
    ptrs = _FNPTRS.get(cls)
    if ptrs is None:
        ct = bitgen.ctypes

        def addr(f):
            return ctypes.cast(f, ctypes.c_void_p).value

        ptrs = _FNPTRS[cls] = (addr(ct.next_uint64), addr(ct.next_uint32),
                               addr(ct.next_double))
    return ptrs


@intrinsic
def _from_handle(typingctx, handle):
    """numba's Generator value built from a handle (see the module docstring)."""
    if not (isinstance(handle, types.Array) and handle.dtype == types.uint64):
        return None
    sig = types.npy_rng(handle)

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        uintp = context.get_value_type(types.uintp)

        def field(i):
            v = builder.load(cgutils.gep(builder, arr.data, i))
            return builder.zext(v, uintp) if v.type.width < uintp.width else v

        bitgen_t = types.NumPyRandomBitGeneratorType("bit_generator")
        bitgen = cgutils.create_struct_proxy(bitgen_t)(context, builder)
        bitgen.parent = context.get_constant_null(types.pyobject)
        bitgen.state_address = field(_STATE_ADDRESS)
        bitgen.state = field(_STATE)
        bitgen.fnptr_next_uint64 = field(_NEXT_U64)
        bitgen.fnptr_next_uint32 = field(_NEXT_U32)
        bitgen.fnptr_next_double = field(_NEXT_DOUBLE)
        bitgen.bit_generator = ir.Constant(uintp, 0)
        gen = cgutils.create_struct_proxy(signature.return_type)(context, builder)
        gen.bit_generator = bitgen._getvalue()
        # no meminfo: numba's reference counting skips a null pointer
        gen.meminfo = context.get_constant_null(types.MemInfoPointer(types.voidptr))
        gen.parent = context.get_constant_null(types.pyobject)
        return gen._getvalue()

    return sig, codegen


def as_generator(rng):
    """The Generator of ``rng``: a Generator, or a :func:`generator_handle`
    (numba only; in Python a handle cannot be turned back)."""
    return rng


@overload(as_generator)
def _as_generator(rng):
    if isinstance(rng, types.NumPyRandomGeneratorType):
        return lambda rng: rng
    if isinstance(rng, types.Array) and rng.dtype == types.uint64 and rng.ndim == 1:
        return lambda rng: _from_handle(rng)
    return None


def generator_handle(rng):
    """A ``uint64`` array that kernels turn back into ``rng`` with
    :func:`as_generator` (``rng`` itself when handles are unavailable).

    Valid while ``rng`` is alive; make it right before the kernel call, from
    a Generator the caller holds (``generator_handle(np.random.default_rng())``
    hands the kernel freed memory).
    """
    if isinstance(rng, np.ndarray) or not handles_work():
        return rng
    return _make_handle(rng)


def _make_handle(rng):
    bitgen = rng.bit_generator
    u64, u32, dbl = _fnptrs(bitgen)
    addr = bitgen.ctypes.state_address
    return np.array((addr, addr, u64, u32, dbl), dtype=np.uint64)


@njit(cache=True, nogil=True)
def _probe(rng):
    g = as_generator(rng)
    return g.random()


_HANDLES = []


def handles_work():
    """True if a handle reproduces its Generator's draws on this numba
    (checked once, by one compiled draw)."""
    if not _HANDLES:
        _HANDLES.append(_check_handles())
    return _HANDLES[0]


def _check_handles():
    try:
        a = np.random.default_rng(12345)
        b = np.random.default_rng(12345)
        return _probe(_make_handle(a)) == b.random() and a.random() == b.random()
    except Exception:  # pragma: no cover - depends on numba internals
        return False



@njit(cache=True, nogil=True, inline="always")
def draw_index(w, n, r):
    """The categorical draw: the index ``i < n`` with ``r < w[0] + ... + w[i]``,
    skipping zero weights (``w >= 0``).

    ``r`` is a uniform variate times the total of ``w[:n]``, which the caller
    has at hand. Round-off can leave ``r`` above the last partial sum: the
    last positive weight's index is returned then (``-1`` if there is none).
    """
    acc = 0.0
    last = -1
    for i in range(n):
        wi = w[i]
        if wi > 0.0:
            acc += wi
            last = i
            if r < acc:
                return i
    return last
