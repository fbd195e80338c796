"""Label-invariant diagnostics for iHMM samplers.

Three groups of tools:

* **Agreement between state sequences**, invariant to relabelling:
  :func:`mutual_information` and :func:`normalized_mutual_information`.
* **MCMC convergence and efficiency** of scalar traces (number of states, log
  joint probability, ...): :func:`integrated_autocorrelation_time` (Makino et
  al.'s convention [1]_, Geyer's window [3]_), :func:`effective_sample_size`
  and :func:`split_rhat` (Vehtari et al., 2021 [2]_).
* **Summaries of a posterior over state sequences** that are immune to label
  switching: :func:`posterior_similarity_matrix` and
  :func:`point_estimate_states` (Dahl's least-squares clustering [4]_).

References
----------
.. [1] T. Makino, S. Takei, I. Sato and D. Mochihashi, "Restricted collapsed
   draw: accurate sampling for hierarchical Chinese restaurant process hidden
   Markov models", arXiv:1106.0474, 2011.
.. [2] A. Vehtari, A. Gelman, D. Simpson, B. Carpenter and P.-C. Buerkner,
   "Rank-normalization, folding, and localization: an improved R-hat for
   assessing convergence of MCMC", Bayesian Analysis 16(2), 2021.
.. [3] C. J. Geyer, "Practical Markov chain Monte Carlo", Statistical Science
   7(4), 1992.
.. [4] D. B. Dahl, "Model-based clustering for expression data via a
   Dirichlet process mixture model", in *Bayesian Inference for Gene
   Expression and Proteomics*, Cambridge University Press, 2006.
"""

import math

import numpy as np
from scipy.linalg.blas import dsyrk, ssyrk
from scipy.special import ndtri
from scipy.stats import rankdata
from sklearn.metrics import normalized_mutual_info_score

__all__ = [
    "mutual_information",
    "normalized_mutual_information",
    "integrated_autocorrelation_time",
    "effective_sample_size",
    "split_rhat",
    "posterior_similarity_matrix",
    "point_estimate_states",
]

# Upper bound on the number of one-hot matrix entries built at once by the
# similarity-matrix routines (8M float32 entries = 32 MB).
_BATCH_ENTRIES = 8_000_000


# --------------------------------------------------------------------------
# Agreement between labelings
# --------------------------------------------------------------------------
def mutual_information(labels_true, labels_pred):
    """Mutual information between two labelings, in nats.

    Makino et al. (2011, Eq. 37) measure how well sampled hidden states ``h``
    explain reference labels ``x`` by

    .. math:: \\mathrm{MI} = \\sum_{x, h} p(x, h)
              \\log \\frac{p(x, h)}{p(x) p(h)},

    with the probabilities estimated by the empirical frequencies of the
    pairs ``(labels_true[t], labels_pred[t])``. The value is unchanged by any
    renaming of either labeling's labels. Identical labelings (up to
    renaming) give the entropy of the labeling.

    Parameters
    ----------
    labels_true : array-like of shape (n_timesteps,)
        Reference labels (e.g. the true states, or the observed symbols).
    labels_pred : array-like of shape (n_timesteps,)
        Labels to compare (e.g. one sample of the hidden states).

    Returns
    -------
    mi : float
        Mutual information in nats, ``>= 0``.

    See Also
    --------
    normalized_mutual_information : the same quantity scaled to ``[0, 1]``.
    """
    labels_true, labels_pred = _check_labelings(labels_true, labels_pred)
    codes_true, n_true = _compact(labels_true)
    codes_pred, n_pred = _compact(labels_pred)
    joint = np.bincount(codes_true * n_pred + codes_pred,
                        minlength=n_true * n_pred).reshape(n_true, n_pred)
    p_joint = joint / labels_true.size
    p_true = p_joint.sum(axis=1, keepdims=True)
    p_pred = p_joint.sum(axis=0, keepdims=True)
    nz = p_joint > 0
    mi = np.sum(p_joint[nz] * np.log(p_joint[nz] / (p_true @ p_pred)[nz]))
    return max(float(mi), 0.0)


def normalized_mutual_information(labels_true, labels_pred,
                                  average_method="arithmetic"):
    """Mutual information normalised to ``[0, 1]``.

    A thin wrapper of :func:`sklearn.metrics.normalized_mutual_info_score`.
    With the default ``average_method="arithmetic"`` the score is

    .. math:: \\mathrm{NMI} = \\frac{\\mathrm{MI}(x, h)}
              {\\tfrac12 \\left(H(x) + H(h)\\right)},

    where ``H`` is the entropy of a labeling; this equals the V-measure. It is
    1 for labelings identical up to renaming and 0 for independent ones.

    Parameters
    ----------
    labels_true : array-like of shape (n_timesteps,)
        Reference labels.
    labels_pred : array-like of shape (n_timesteps,)
        Labels to compare.
    average_method : {"arithmetic", "geometric", "min", "max"}, \
default="arithmetic"
        How the two entropies are averaged in the denominator.

    Returns
    -------
    nmi : float
        Normalised mutual information in ``[0, 1]``.

    See Also
    --------
    mutual_information : the unnormalised quantity, in nats.
    """
    labels_true, labels_pred = _check_labelings(labels_true, labels_pred)
    return float(normalized_mutual_info_score(
        labels_true, labels_pred, average_method=average_method))


# --------------------------------------------------------------------------
# MCMC efficiency and convergence
# --------------------------------------------------------------------------
def integrated_autocorrelation_time(x, max_lag=None, window="geyer",
                                    c=5.0):
    """Integrated autocorrelation time of a scalar trace (Makino's convention).

    Following Makino et al. (2011, Eqs. 35-36), the autocorrelation at lag
    ``t`` is estimated by

    .. math:: \\mathrm{ACF}_t = \\frac{1}{(T - t)\\,\\sigma^2}
              \\sum_{i=1}^{T-t} (x_i - \\mu)(x_{i+t} - \\mu),

    with ``mu`` and ``sigma**2`` the sample mean and (biased) variance, and

    .. math:: \\mathrm{ACT} = \\tfrac12 + \\sum_{t \\ge 1} \\mathrm{ACF}_t .

    **Convention.** This is half the usual integrated autocorrelation time
    ``tau = 1 + 2 * sum_t ACF_t`` (the factor by which a chain's variance of
    the mean exceeds the independent-draws value, so that the effective
    sample size is ``T / tau``): ``tau = 2 * ACT``. Independent draws have
    ``ACT = 0.5``; an AR(1) chain with coefficient ``rho`` has
    ``ACT = (1 + rho) / (2 * (1 - rho))``.

    The infinite sum must be truncated; the paper sums up to a fixed lag.
    Here the window is chosen automatically unless ``max_lag`` is given:

    * ``window="geyer"`` (default): Geyer's (1992) initial monotone sequence
      estimator. The sums of adjacent pairs ``ACF_{2k} + ACF_{2k+1}`` are
      accumulated up to the first non-positive one and forced to be
      non-increasing. The resulting ``tau`` is floored at ``1 / log10(T)``,
      as in Stan.
    * ``window="sokal"``: Sokal's adaptive window, the smallest lag ``M``
      with ``M >= c * tau(M)``, where ``tau(M) = 1 + 2 * sum_{t<=M} ACF_t``.

    Parameters
    ----------
    x : array-like of shape (n_draws,)
        The trace (e.g. number of states or log joint probability per
        iteration).
    max_lag : int, default=None
        If given, sum ``ACF_1 .. ACF_max_lag`` exactly (Makino's fixed
        truncation, no flooring) and ignore ``window``. Must be in
        ``[0, n_draws - 1]``.
    window : {"geyer", "sokal"}, default="geyer"
        Automatic truncation rule used when ``max_lag`` is None.
    c : float, default=5.0
        Window constant of Sokal's rule.

    Returns
    -------
    act : float
        Makino's ACT. A constant trace (zero variance) has no defined
        autocorrelation and gives ``nan``.

    See Also
    --------
    effective_sample_size : multi-chain ESS of Vehtari et al. (2021).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x must be one-dimensional, got shape {x.shape}.")
    n = x.size
    if n < 2:
        raise ValueError("x needs at least two draws.")
    if not np.all(np.isfinite(x)):
        raise ValueError("x contains non-finite values.")
    if max_lag is not None:
        if not 0 <= max_lag <= n - 1:
            raise ValueError(
                f"max_lag must be in [0, {n - 1}], got {max_lag!r}.")
    elif window not in ("geyer", "sokal"):
        raise ValueError(
            f"window must be 'geyer' or 'sokal', got {window!r}.")

    lagged = _lagged_products(x - x.mean())
    if lagged[0] <= 0.0:
        return math.nan
    acf = lagged / (np.arange(n, 0, -1) * (lagged[0] / n))
    if max_lag is not None:
        return 0.5 + float(acf[1:max_lag + 1].sum())
    if window == "geyer":
        return 0.5 * _geyer_tau(acf, n)
    taus = 1.0 + 2.0 * np.cumsum(acf[1:])
    ok = np.flatnonzero(np.arange(1, n) >= c * taus)
    return 0.5 * float(taus[ok[0]] if ok.size else taus[-1])


def effective_sample_size(chains, method="bulk"):
    """Effective sample size of MCMC draws (Vehtari et al., 2021).

    The chains are split into halves and the autocorrelations of all halves
    are combined, so that between-chain differences lower the estimate:
    ``rho_t = 1 - (W - mean_m acov_{m,t}) / var_plus``, where ``W`` is the
    mean within-chain variance and ``var_plus`` the pooled variance estimate
    of R-hat. The sum of autocorrelations is truncated with Geyer's initial
    monotone sequence, and ``ESS = n_chains * n_draws / tau`` with
    ``tau = 1 + 2 * sum_t rho_t`` floored at ``1 / log10(n_chains *
    n_draws)``. Autocovariances are computed with the FFT.

    Parameters
    ----------
    chains : array-like of shape (n_chains, n_draws) or (n_draws,)
        Draws of a scalar quantity; a 1-D array is one chain. At least 4
        draws per chain are needed.
    method : {"bulk", "tail", "basic"}, default="bulk"
        ``"bulk"``: ESS of the rank-normalised split chains (efficiency for
        the centre of the distribution). ``"tail"``: the smaller ESS of the
        indicators ``x <= q05`` and ``x <= q95`` (efficiency for the 5 % and
        95 % quantiles). ``"basic"``: ESS of the raw split chains.

    Returns
    -------
    ess : float
        Effective sample size; ``nan`` when all draws are equal.

    See Also
    --------
    split_rhat : the companion convergence diagnostic.
    integrated_autocorrelation_time : single-chain ACT (Makino convention).
    """
    chains = _check_chains(chains)
    split = _split_chains(chains)
    if method == "bulk":
        return _ess(_rank_normalize(split))
    if method == "basic":
        return _ess(split)
    if method == "tail":
        q05, q95 = np.quantile(split, [0.05, 0.95])
        return min(_ess((split <= q05).astype(np.float64)),
                   _ess((split <= q95).astype(np.float64)))
    raise ValueError(
        f"method must be 'bulk', 'tail' or 'basic', got {method!r}.")


def split_rhat(chains, rank_normalize=True):
    """Split potential scale reduction factor R-hat (Vehtari et al., 2021).

    Each chain is split into two halves (the middle draw of an odd-length
    chain is dropped) and the halves are treated as separate chains, so that
    a drift inside a single chain is also detected. For ``M`` halves of ``N``
    draws, ``W`` the mean within-half variance and ``B / N`` the variance of
    the half means,

    .. math:: \\hat R = \\sqrt{\\frac{\\tfrac{N - 1}{N} W + B / N}{W}} .

    With ``rank_normalize=True`` (recommended) this is computed on the
    normal scores of the pooled ranks, and on the normal scores of the ranks
    of ``|x - median(x)|`` (folded draws, which detect differences in scale),
    and the larger value is returned. Values above 1.01 indicate that the
    chains have not mixed.

    Parameters
    ----------
    chains : array-like of shape (n_chains, n_draws) or (n_draws,)
        Draws of a scalar quantity; a 1-D array is one chain. At least 4
        draws per chain are needed.
    rank_normalize : bool, default=True
        Rank-normalised, folded split R-hat if True; the classic split R-hat
        of the raw draws if False.

    Returns
    -------
    rhat : float
        R-hat, ``>= 1`` up to sampling error; ``nan`` when all draws are
        equal.

    See Also
    --------
    effective_sample_size : the companion efficiency diagnostic.
    """
    split = _split_chains(_check_chains(chains))
    if not rank_normalize:
        return _rhat(split)
    folded = np.abs(split - np.median(split))
    bulk = _rhat(_rank_normalize(split))
    tail = _rhat(_rank_normalize(folded))
    return float(np.fmax(bulk, tail))


# --------------------------------------------------------------------------
# Posterior summaries of state sequences
# --------------------------------------------------------------------------
def posterior_similarity_matrix(state_samples, dtype=np.float32):
    """Posterior co-assignment probabilities of all pairs of time steps.

    Entry ``(i, j)`` is the fraction of samples in which time steps ``i`` and
    ``j`` are in the same state. It does not depend on how states are
    labelled, so it is immune to label switching.

    Samples are one-hot encoded in batches and accumulated with a symmetric
    rank-k BLAS update into a single ``(T, T)`` array, so the memory peak is
    that array plus about 32 MB (T = 5000 in ``float32``: 100 MB). Counts
    are exact in ``float32`` for fewer than 2**24 samples.

    Parameters
    ----------
    state_samples : array-like of int, shape (n_samples, n_timesteps)
        Sampled state sequences, one per row; a 1-D array is one sample.
        Labels need not be contiguous or consistent across samples.
    dtype : {numpy.float32, numpy.float64}, default=numpy.float32
        Floating type of the result.

    Returns
    -------
    psm : ndarray of shape (n_timesteps, n_timesteps)
        Symmetric, entries in ``[0, 1]``, unit diagonal.

    See Also
    --------
    point_estimate_states : a point estimate built on this matrix.
    """
    samples = _check_state_samples(state_samples)
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        syrk = ssyrk
    elif dtype == np.float64:
        syrk = dsyrk
    else:
        raise ValueError(f"dtype must be float32 or float64, got {dtype}.")
    n_samples, n_timesteps = samples.shape
    # Fortran order lets BLAS update the array in place (upper triangle).
    psm = np.zeros((n_timesteps, n_timesteps), dtype=dtype, order="F")
    for one_hot, _, _ in _one_hot_batches(samples, dtype):
        psm = syrk(1.0, one_hot, beta=1.0, c=psm, trans=0, lower=0,
                   overwrite_c=1)
    for i in range(1, n_timesteps):
        psm[i, :i] = psm[:i, i]
    psm /= n_samples
    # The array is symmetric: its transpose is the same matrix in C order.
    return psm.T


def _binder_scores_by_contingency(samples, candidates):
    """Dahl's scores of the ``candidates`` rows without a ``(T, T)`` matrix.

    ``1_k' P 1_k = (1/S) sum_s sum_k' N_kk'(z, z_s)**2`` with ``N`` the
    contingency table of the candidate ``z`` and sample ``z_s``, so the score
    ``sum_k n_k**2 - 2 sum_k 1_k' P 1_k`` costs ``O(S T)`` per candidate.
    """
    compact, n_labels = [], []
    for row in samples:
        # labels 0..K-1 all in use (as the estimator stores them) are kept;
        # others are recoded; either way in the smallest dtype (a 10^6-step,
        # 400-sample set would take 3.2 GB as int64)
        counts = np.bincount(row) if row.min() >= 0 else np.zeros(0)
        if counts.size and np.all(counts > 0):
            codes = row
        else:
            codes = np.unique(row, return_inverse=True)[1]
        k = int(codes.max()) + 1
        dtype = np.uint8 if k <= 256 else np.uint16 if k <= 65536 else np.int64
        compact.append(codes.astype(dtype, copy=False))
        n_labels.append(k)
    scores = np.empty(len(candidates))
    for i, c in enumerate(candidates):
        z, kz = compact[c].astype(np.int64), n_labels[c]
        sizes = np.bincount(z, minlength=kz).astype(np.float64)
        agreement = 0.0
        for zs, ks in zip(compact, n_labels):
            table = np.bincount(z * ks + zs, minlength=kz * ks).astype(np.float64)
            agreement += float(np.dot(table, table))
        scores[i] = np.dot(sizes, sizes) - 2.0 * agreement / len(compact)
    return scores


#: Above this many time steps :func:`point_estimate_states` works without the
#: ``(T, T)`` similarity matrix (float32: 100 MB at 5,000 steps).
POINT_ESTIMATE_MATRIX_MAX_T = 5000


def point_estimate_states(state_samples, psm=None, return_index=False, max_candidates=None):
    """Label-switching-robust point estimate of the state sequence.

    Among the sampled state sequences, return the one minimising the
    posterior expected Binder loss with equal misclassification costs,
    estimated with the posterior similarity matrix ``P``:

    .. math:: \\hat z = \\arg\\min_{z \\in \\text{samples}}
              \\sum_{i < j} \\left(\\delta_{z_i z_j} - P_{ij}\\right)^2 ,

    which is Dahl's (2006) least-squares clustering (the squared and the
    Binder loss differ by a constant because ``delta`` is 0 or 1). The sum is
    evaluated without forming any ``(T, T)`` indicator matrix, as
    ``sum_k n_k**2 - 2 * sum_k 1_k' P 1_k`` over the states ``k`` of each
    candidate (plus a constant).

    Parameters
    ----------
    state_samples : array-like of int, shape (n_samples, n_timesteps)
        Sampled state sequences, one per row; they are also the candidates.
    psm : ndarray of shape (n_timesteps, n_timesteps), default=None
        Posterior similarity matrix, if already computed; by default it is
        computed with :func:`posterior_similarity_matrix`.
    return_index : bool, default=False
        Also return the row of ``state_samples`` that was selected.
    max_candidates : int or None, default=None
        Only for long sequences (more than ``POINT_ESTIMATE_MATRIX_MAX_T``
        steps and no ``psm``), where the same scores are computed from the
        contingency tables of each candidate with every sample, in memory
        linear in ``n_timesteps`` and time ``O(candidates * samples *
        n_timesteps)``: score at most this many candidates, evenly spread
        over the samples (``None``: all of them up to 5,000 steps' worth of
        work, that is ``max(1, 2e8 // (n_samples * n_timesteps))``).

    Returns
    -------
    states : ndarray of shape (n_timesteps,), dtype int64
        The selected sample, relabelled ``0, 1, 2, ...`` in order of first
        appearance.
    index : int
        Row of the selected sample; only returned if ``return_index``.
    """
    samples = _check_state_samples(state_samples)
    n_samples, n_timesteps = samples.shape
    if psm is None and n_timesteps > POINT_ESTIMATE_MATRIX_MAX_T:
        if max_candidates is None:
            max_candidates = max(1, int(2e8 // (n_samples * n_timesteps)))
        candidates = np.unique(np.linspace(0, n_samples - 1, min(n_samples, max_candidates))
                               .round().astype(int))
        best = int(candidates[np.argmin(_binder_scores_by_contingency(samples, candidates))])
        states = _first_appearance_labels(samples[best])
        return (states, best) if return_index else states
    if psm is None:
        psm = posterior_similarity_matrix(samples)
    else:
        psm = np.asarray(psm)
        if psm.shape != (n_timesteps, n_timesteps):
            raise ValueError(
                f"psm must have shape ({n_timesteps}, {n_timesteps}), got "
                f"{psm.shape}.")
        if psm.dtype not in (np.float32, np.float64):
            psm = psm.astype(np.float64)
    rows = np.arange(n_timesteps)
    scores = np.empty(n_samples)
    for one_hot, first, columns in _one_hot_batches(samples, psm.dtype):
        within = psm @ one_hot  # (T, batch columns): sum_j P_ij [z_j = k]
        for s, (codes, offset) in enumerate(columns, start=first):
            sizes = np.bincount(codes)
            agreement = within[rows, offset + codes].sum(dtype=np.float64)
            scores[s] = np.dot(sizes, sizes) - 2.0 * agreement
    best = int(np.argmin(scores))
    states = _first_appearance_labels(samples[best])
    if return_index:
        return states, best
    return states


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------
def _check_labelings(labels_true, labels_pred):
    """Validate two 1-D labelings of the same length."""
    labels_true = np.asarray(labels_true)
    labels_pred = np.asarray(labels_pred)
    if labels_true.ndim != 1 or labels_pred.ndim != 1:
        raise ValueError("Labelings must be one-dimensional.")
    if labels_true.size != labels_pred.size:
        raise ValueError(
            f"Labelings differ in length: {labels_true.size} and "
            f"{labels_pred.size}.")
    if labels_true.size == 0:
        raise ValueError("Labelings must not be empty.")
    return labels_true, labels_pred


def _compact(labels):
    """Map labels to codes ``0 .. n_labels - 1``; return codes and count."""
    uniques, codes = np.unique(labels, return_inverse=True)
    return codes.ravel(), uniques.size


def _first_appearance_labels(labels):
    """Relabel a sequence ``0, 1, 2, ...`` in order of first appearance."""
    _, first, codes = np.unique(labels, return_index=True,
                                return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[codes.ravel()]


def _check_chains(chains):
    """Validate MCMC draws as a finite ``(n_chains, n_draws)`` float array."""
    chains = np.asarray(chains, dtype=np.float64)
    if chains.ndim == 1:
        chains = chains[np.newaxis, :]
    if chains.ndim != 2:
        raise ValueError(
            f"chains must have shape (n_chains, n_draws), got {chains.shape}.")
    if chains.shape[1] < 4:
        raise ValueError("Each chain needs at least 4 draws.")
    if not np.all(np.isfinite(chains)):
        raise ValueError("chains contains non-finite values.")
    return chains


def _split_chains(chains):
    """Split every chain in two halves, dropping the middle odd draw."""
    half = chains.shape[1] // 2
    return np.concatenate([chains[:, :half], chains[:, -half:]], axis=0)


def _rank_normalize(chains):
    """Normal scores of the pooled (average) ranks, Blom's offset 3/8."""
    ranks = rankdata(chains, method="average").reshape(chains.shape)
    return ndtri((ranks - 0.375) / (chains.size + 0.25))


def _lagged_products(x):
    """``sum_i x_i x_{i+t}`` for every lag ``t`` (last axis), via the FFT."""
    n = x.shape[-1]
    size = 1 << (2 * n - 1).bit_length()
    spectrum = np.fft.rfft(x, n=size, axis=-1)
    products = np.fft.irfft(spectrum * spectrum.conj(), n=size, axis=-1)
    return products[..., :n]


def _geyer_tau(rho, n_total):
    """``1 + 2 sum_t rho_t`` truncated by Geyer's initial monotone sequence,
    exactly as Stan and ArviZ compute it (Vehtari et al. 2021).

    ``rho[0]`` must be 1. Pairs ``rho_{2k} + rho_{2k+1}`` are kept up to the
    first non-positive one and made non-increasing; the even term of the
    pair that ends the sum is added once when positive (Stan's "improve
    estimation" step; the last pair before the end of the draws is counted
    that way too); the result is floored at ``1 / log10(n_total)``.
    """
    n = rho.size
    if n < 2:
        return 1.0 / math.log10(max(n_total, 2))
    kept = np.zeros(n)
    kept[0] = 1.0
    even, odd = 1.0, float(rho[1])
    kept[1] = odd
    t = 1
    while t < n - 3 and even + odd > 0.0:
        even, odd = float(rho[t + 1]), float(rho[t + 2])
        if even + odd >= 0.0:
            kept[t + 1], kept[t + 2] = even, odd
        t += 2
    last = t - 2
    if even > 0.0:
        kept[last + 1] = even
    t = 1
    while t <= last - 2:
        if kept[t + 1] + kept[t + 2] > kept[t - 1] + kept[t]:
            kept[t + 1] = kept[t + 2] = (kept[t - 1] + kept[t]) / 2.0
        t += 2
    tau = -1.0 + 2.0 * float(kept[:last + 1].sum()) + float(kept[last + 1:last + 2].sum())
    return max(tau, 1.0 / math.log10(n_total))


def _ess(chains):
    """Multi-chain ESS of already split (and possibly transformed) chains."""
    n_chains, n_draws = chains.shape
    centred = chains - chains.mean(axis=1, keepdims=True)
    acov = _lagged_products(centred) / n_draws
    within = acov[:, 0].mean() * n_draws / (n_draws - 1.0)
    var_plus = within * (n_draws - 1.0) / n_draws
    if n_chains > 1:
        var_plus += chains.mean(axis=1).var(ddof=1)
    if not var_plus > 0.0:
        return math.nan
    rho = 1.0 - (within - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    n_total = n_chains * n_draws
    return n_total / _geyer_tau(rho, n_total)


def _rhat(chains):
    """Classic R-hat of already split (and possibly transformed) chains."""
    n_draws = chains.shape[1]
    within = chains.var(axis=1, ddof=1).mean()
    if not within > 0.0:
        return math.nan
    between_over_n = chains.mean(axis=1).var(ddof=1)
    var_plus = within * (n_draws - 1.0) / n_draws + between_over_n
    return float(math.sqrt(var_plus / within))


def _check_state_samples(state_samples):
    """Validate state samples as an integer ``(n_samples, T)`` array."""
    samples = np.asarray(state_samples)
    if samples.ndim == 1:
        samples = samples[np.newaxis, :]
    if samples.ndim != 2 or samples.shape[0] == 0 or samples.shape[1] == 0:
        raise ValueError(
            "state_samples must have shape (n_samples, n_timesteps), got "
            f"{samples.shape}.")
    if not np.issubdtype(samples.dtype, np.integer):
        if not np.array_equal(samples, np.round(samples)):
            raise ValueError("state_samples must hold integer labels.")
        samples = samples.astype(np.int64)
    return samples


def _one_hot_batches(samples, dtype):
    """Yield one-hot encodings of consecutive batches of samples.

    Yields ``(one_hot, first, columns)``: ``one_hot`` is a Fortran-ordered
    ``(T, n_columns)`` array holding, side by side, the indicator columns of
    the states of samples ``first, first + 1, ...``; ``columns`` lists, for
    each of these samples, its compact state codes and its first column.
    """
    n_samples, n_timesteps = samples.shape
    max_columns = max(1, _BATCH_ENTRIES // n_timesteps)
    rows = np.arange(n_timesteps)
    start = 0
    while start < n_samples:
        columns = []
        n_columns = 0
        stop = start
        while stop < n_samples:
            codes, n_states = _compact(samples[stop])
            if columns and n_columns + n_states > max_columns:
                break
            columns.append((codes, n_columns))
            n_columns += n_states
            stop += 1
        one_hot = np.zeros((n_timesteps, n_columns), dtype=dtype, order="F")
        for codes, offset in columns:
            one_hot[rows, offset + codes] = 1.0
        yield one_hot, start, columns
        start = stop
