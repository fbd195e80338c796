"""Forward simulation of a finite Markov chain (used by ``InfiniteHMM.sample``)."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def sample_markov_chain(startprob, transmat, n_steps, rng):
    """Draw ``n_steps`` states of a chain with the given start and transition
    probabilities (inverse-CDF sampling, one uniform per step)."""
    K = startprob.shape[0]
    cdf = np.empty((K + 1, K))
    acc = 0.0
    for k in range(K):
        acc += startprob[k]
        cdf[K, k] = acc
    for j in range(K):
        acc = 0.0
        for k in range(K):
            acc += transmat[j, k]
            cdf[j, k] = acc
    out = np.empty(n_steps, np.int64)
    row = K
    for t in range(n_steps):
        u = rng.random() * cdf[row, K - 1]
        k = 0
        while k < K - 1 and cdf[row, k] <= u:
            k += 1
        out[t] = k
        row = k
    return out
