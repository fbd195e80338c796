"""Reference-count hygiene for the numba kernels.

Numba's runtime (NRT) takes a reference -- an atomic increment and decrement
-- for every array argument it binds and every view it creates, and the pass
that removes redundant pairs misses many in branchy inlined kernels, where
they can cost more than the arithmetic (doc/internals.rst, "Writing
kernels").

Two tools, used by the shared kernels:

* :func:`nrt_free` compiles a kernel with the runtime switched off
  (``njit(_nrt=False)``): no reference is ever counted inside it, nor in the
  kernels it inlines or calls. Such a kernel must not allocate (numba
  refuses to compile it otherwise), so it suits the loops over a
  preallocated state: the Gibbs and blocked sweep kernels, the customer
  moves of a block, the particle Gibbs time loop. Calling it still takes
  the references of its arguments once, so it is called per block, per
  chunk of steps or per sweep, never per time step.
* :func:`hold` ends an inlined kernel that has control flow and is called
  from counting code: ``hold(a)`` for each array argument makes every
  argument die in the last block, where the pass can remove its pair. It
  compiles to nothing, but it changes what the pass sees and can also make
  a kernel slower, so it is used only where a measurement showed a gain
  (``emissions.update``, the label scans of :mod:`sk_ihmm._hcrp`, the draws
  of the particle Gibbs loop; ``tests/test_nrt.py`` checks them).

``_nrt=False`` is a numba compiler flag without a public spelling; if a
numba version refuses it, :func:`nrt_free` falls back to plain ``njit``
(same results, slower).
"""

from numba import njit

__all__ = ["hold", "nrt_free", "uniform_int"]


@njit(cache=True, nogil=True, inline="always")
def hold(a):
    """Use ``a`` and do nothing: keeps it alive to the end of an inlined kernel."""
    pass


@njit(cache=True, nogil=True, inline="always")
def uniform_int(n, rng):
    """Uniform integer in ``0..n-1`` from one uniform double. numba's
    ``Generator.integers`` allocates, which a kernel compiled by
    :func:`nrt_free` may not."""
    return min(int(rng.random() * n), n - 1)


def nrt_free(func):
    """``njit(cache=True, nogil=True)`` with numba's reference counting switched off."""
    try:
        return njit(cache=True, nogil=True, _nrt=False)(func)
    except (KeyError, TypeError):  # pragma: no cover - depends on numba
        return njit(cache=True, nogil=True)(func)
