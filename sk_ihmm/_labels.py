"""Label bookkeeping shared by the chain driver and the samplers."""

import numpy as np
from numba import njit

__all__ = ["compact_labels"]


@njit(cache=True, nogil=True)
def compact_labels(x):
    """Relabel ``x`` (labels >= 1; 0 is reserved) in place to ``1..K`` by first appearance.

    One pass over ``x``, no sort (``np.unique`` sorts).

    Returns
    -------
    old : ndarray of shape (K + 1,), int64
        ``old[k]`` is the previous label of new label ``k`` (``old[0] = 0``).
    """
    lut = np.zeros(x.max() + 1, np.int64)
    old = np.zeros(x.shape[0] + 1, np.int64)
    K = 0
    for t in range(x.shape[0]):
        v = x[t]
        if lut[v] == 0:
            K += 1
            lut[v] = K
            old[K] = v
        x[t] = lut[v]
    return old[:K + 1].copy()
