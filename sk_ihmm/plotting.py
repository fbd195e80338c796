"""Plots of a fitted :class:`~sk_ihmm.InfiniteHMM` (requires matplotlib).

matplotlib is an optional dependency (``pip install "sk_ihmm[plot]"``); it
is imported when a function is called, not with the package.

* :func:`plot_trace`: per-sweep traces of every chain, burn-in shaded;
* :func:`plot_states`: observations coloured by their inferred state;
* :func:`plot_transmat`: the point-summary transition matrix as a heat map.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["plot_trace", "plot_states", "plot_transmat"]

_HINT = 'pip install "sk_ihmm[plot]"'


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised without matplotlib
        raise ImportError(
            f"sk_ihmm.plotting requires the optional dependency matplotlib; install it with {_HINT}."
        ) from exc
    return plt


def _state_colors(n_states):
    """One colour per state: tab10, then tab20, then a continuous colour map."""
    import matplotlib as mpl

    name = "tab10" if n_states <= 10 else "tab20" if n_states <= 20 else "turbo"
    cmap = mpl.colormaps[name]
    if name == "turbo":
        return [cmap(v) for v in np.linspace(0.05, 0.95, n_states)]
    return [cmap(i) for i in range(n_states)]


def plot_trace(model, keys=("n_states", "log_lik", "alpha", "gamma"), fig=None):
    """Per-sweep traces of every chain, one panel per quantity.

    Parameters
    ----------
    model : InfiniteHMM
        A fitted model.
    keys : sequence of str, default=("n_states", "log_lik", "alpha", "gamma")
        Keys of ``model.trace_`` to plot (e.g. add ``"kappa"``,
        ``"log_joint"`` or ``"accept_rate"``). The first two are the
        quantities ``fit`` checks for convergence.
    fig : matplotlib.figure.Figure, default=None
        Figure to draw into (cleared first); a new one by default.

    Returns
    -------
    fig : matplotlib.figure.Figure
        One axes per key (``fig.axes``); the burn-in sweeps (``n_burnin_``)
        are shaded.
    """
    check_is_fitted(model, "trace_")
    plt = _pyplot()
    keys = [keys] if isinstance(keys, str) else list(keys)
    missing = [k for k in keys if k not in model.trace_]
    if missing:
        raise ValueError(f"Unknown trace keys {missing}; available: {sorted(model.trace_)}.")
    if fig is None:
        fig = plt.figure(figsize=(8, 1.8 * len(keys) + 0.6))
    else:
        fig.clear()
    axes = fig.subplots(len(keys), 1, sharex=True, squeeze=False)[:, 0]
    # the fitted burn-in: after rounds or a warm start it is not the n_burnin parameter
    n_burnin = int(model.n_burnin_)
    n_chains = np.asarray(model.trace_[keys[0]]).shape[0]
    for ax, key in zip(axes, keys):
        values = np.asarray(model.trace_[key])
        sweeps = np.arange(1, values.shape[1] + 1)
        for c, chain in enumerate(values):
            ax.plot(sweeps, chain, lw=0.8, label=f"chain {c}",
                    drawstyle="steps-mid" if key == "n_states" else "default")
        if n_burnin:
            ax.axvspan(0.5, n_burnin + 0.5, color="0.85", zorder=0, lw=0)
        ax.set_ylabel(key)
    axes[-1].set_xlabel("sweep")
    axes[0].set_title(f"{model.sampler}: {n_chains} chains, burn-in shaded")
    if n_chains > 1:
        axes[0].legend(loc="upper right", fontsize="small", ncol=min(n_chains, 4))
    fig.tight_layout()
    return fig


def plot_states(model, X, lengths=None, *, states=None, sequence_ids=None, ax=None):
    """Observations against time, coloured by inferred hidden state.

    Each time step is drawn as a point coloured by its state and the state
    runs are shaded in the background (as in Fig. 6 of Tripuraneni et al.,
    2015). Several features are drawn on the same axes; sequence boundaries
    are marked by dashed lines.

    Parameters
    ----------
    model : InfiniteHMM
        A fitted model.
    X : array-like of shape (n_samples, n_features)
        Observations (concatenated sequences).
    lengths : array-like of int, default=None
        Sequence lengths of ``X``.
    states : array-like of int of shape (n_samples,), default=None
        The labels to show; by default ``model.predict(X, lengths)`` (Viterbi
        under the representative sample). For the training data
        ``model.point_estimate()`` is a label-switching-robust alternative.
    sequence_ids : array-like of shape (n_samples,), default=None
        Alternative to ``lengths`` (as in :meth:`InfiniteHMM.fit <sk_ihmm.InfiniteHMM.fit>`).
    ax : matplotlib.axes.Axes, default=None
        Axes to draw into; a new figure by default.

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    check_is_fitted(model, "state_samples_")
    plt = _pyplot()
    X = np.asarray(X)
    if X.ndim == 1:
        X = X[:, None]
    if states is None:
        states = model.predict(X, lengths, sequence_ids=sequence_ids)
    states = np.asarray(states).ravel()
    if states.shape[0] != X.shape[0]:
        raise ValueError(f"states has {states.shape[0]} entries but X has {X.shape[0]} rows.")
    labels, codes = np.unique(states, return_inverse=True)
    colors = _state_colors(labels.shape[0])
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 3))
    t = np.arange(X.shape[0])
    # shaded runs of equal state
    change = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate([[0], change])
    stops = np.concatenate([change, [X.shape[0]]])
    for a, b in zip(starts, stops):
        ax.axvspan(a - 0.5, b - 0.5, color=colors[codes[a]], alpha=0.15, lw=0, zorder=0)
    for d in range(X.shape[1]):
        ax.plot(t, X[:, d], color="0.5", lw=0.6, zorder=1)
        ax.scatter(t, X[:, d], c=[colors[c] for c in codes], s=10, zorder=2,
                   marker="o" if d == 0 else "s^vD<>"[(d - 1) % 6])
    if lengths is not None:
        for b in np.cumsum(np.asarray(lengths))[:-1]:
            ax.axvline(b - 0.5, color="k", ls="--", lw=0.8)
    elif sequence_ids is not None:
        ids = np.asarray(sequence_ids)
        for b in np.flatnonzero(ids[1:] != ids[:-1]) + 1:
            ax.axvline(b - 0.5, color="k", ls="--", lw=0.8)
    handles = [plt.Line2D([], [], marker="o", ls="", color=colors[i], label=str(lab))
               for i, lab in enumerate(labels)]
    if len(handles) <= 20:
        ax.legend(handles=handles, title="state", loc="upper left", bbox_to_anchor=(1.0, 1.0),
                  fontsize="small")
    ax.set_xlabel("time step")
    ax.set_ylabel("observation")
    ax.set_xlim(-0.5, X.shape[0] - 0.5)
    return ax


def plot_transmat(model, ax=None, annotate=None):
    """Heat map of the point-summary transition matrix ``model.transmat_``.

    Row ``start`` is ``model.startprob_``; rows/columns are the states of the
    representative sample (see ``representative_`` in :class:`~sk_ihmm.InfiniteHMM`).

    Parameters
    ----------
    model : InfiniteHMM
        A fitted model.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw into; a new figure by default.
    annotate : bool, default=None
        Write the probabilities in the cells; by default when there are at
        most 12 states.

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    check_is_fitted(model, "transmat_")
    plt = _pyplot()
    P = np.vstack([model.startprob_[None, :], model.transmat_])
    K = P.shape[1]
    if ax is None:
        size = min(2.0 + 0.45 * K, 12.0)
        _, ax = plt.subplots(figsize=(size + 1.0, size))
    image = ax.imshow(P, vmin=0.0, vmax=1.0, cmap="Blues", aspect="auto")
    ax.figure.colorbar(image, ax=ax, label="probability")
    ax.set_xticks(range(K))
    ax.set_yticks(range(K + 1), ["start"] + [str(k) for k in range(K)])
    ax.axhline(0.5, color="k", lw=0.8)
    ax.set_xlabel("to state")
    ax.set_ylabel("from state")
    if annotate is None:
        annotate = K <= 12
    if annotate:
        for i in range(K + 1):
            for j in range(K):
                ax.text(j, i, f"{P[i, j]:.2f}", ha="center", va="center", fontsize="small",
                        color="white" if P[i, j] > 0.6 else "black")
    ax.set_title("transition probabilities")
    return ax
