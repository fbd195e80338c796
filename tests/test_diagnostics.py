"""Diagnostics table, ArviZ export, posterior summaries and plotting helpers."""

import math
import warnings

import numpy as np
import pytest

from sk_ihmm import InfiniteHMM
from sk_ihmm._diagnostics import COLUMNS, kept_sweeps, summarize_traces
from sk_ihmm.metrics import normalized_mutual_information, posterior_similarity_matrix


def _two_state_data():
    rng = np.random.default_rng(0)
    z = np.repeat([0, 1, 0, 1], 25)
    return (np.array([-3.0, 3.0])[z] + rng.normal(size=z.size))[:, None], z


@pytest.fixture(scope="module")
def data():
    return _two_state_data()


@pytest.fixture(scope="module")
def model(data):
    X, _ = data
    # 300 burn-in sweeps: after 100, the R-hat of the log-likelihood was 1.19
    # with lambda0=0.01 (the chains had not settled yet)
    return InfiniteHMM(sampler="rcd_gibbs", max_time=0, n_samples=300, n_burnin=300, n_chains=4, random_state=0).fit(X)


# --------------------------------------------------------------------------
# diagnostics()
# --------------------------------------------------------------------------
def test_diagnostics_keys_and_values(model):
    table = model.diagnostics()
    # alpha and gamma are resampled, kappa is fixed (no kappa_prior)
    assert list(table) == ["n_states", "log_lik", "log_joint", "alpha", "gamma", "accept_rate"]
    n_kept = model.n_chains * model.n_samples
    for name, row in table.items():
        assert tuple(row) == COLUMNS
        assert all(np.isfinite(v) for v in row.values()), (name, row)
        assert row["sd"] >= 0 and 0 < row["ess_bulk"] <= 3 * n_kept and row["act"] > 0
    kept = model.trace_["n_states"][:, model.n_burnin:]
    assert table["n_states"]["mean"] == pytest.approx(kept.mean())
    assert table["n_states"]["sd"] == pytest.approx(kept.std(ddof=1))
    assert 0.0 < table["accept_rate"]["mean"] <= 1.0
    assert 1.5 <= table["n_states"]["mean"] <= 6
    text = str(table)
    assert text.splitlines()[0].split() == ["quantity", *COLUMNS]
    assert len(text.splitlines()) == len(table) + 1


def test_rhat_close_to_one_for_well_mixed_fit(model):
    table = model.diagnostics()
    for name in ("n_states", "log_lik", "alpha", "gamma", "accept_rate"):
        assert table[name]["r_hat"] < 1.1, (name, table[name])
    assert table["log_joint"]["r_hat"] < 1.25


def test_diagnostics_keys_argument_and_kappa(data):
    X, _ = data
    m = InfiniteHMM(max_time=0, kappa=1.0, kappa_prior=(1.0, 1.0), n_samples=8, n_burnin=4, n_chains=2,
                    random_state=0).fit(X)
    assert "kappa" in m.diagnostics()
    fixed = InfiniteHMM(max_time=0, resample_hyperparameters=False, n_samples=8, n_burnin=4, n_chains=2,
                        random_state=0).fit(X)
    assert list(fixed.diagnostics()) == ["n_states", "log_lik", "log_joint", "accept_rate"]
    table = fixed.diagnostics(keys=["alpha", "seconds"])
    assert list(table) == ["alpha", "seconds"]
    assert table["alpha"]["sd"] == 0.0 and math.isnan(table["alpha"]["r_hat"])
    with pytest.raises(ValueError, match="Unknown trace keys"):
        fixed.diagnostics(keys=["nope"])


def test_summarize_traces_on_synthetic_draws():
    rng = np.random.default_rng(1)
    n_chains, n_burnin, n_keep = 4, 50, 1000
    iid = rng.normal(size=(n_chains, n_burnin + n_keep))
    iid[:, :n_burnin] = 1e6                    # burn-in must be dropped
    shifted = rng.normal(size=(n_chains, n_burnin + n_keep)) + np.arange(n_chains)[:, None]
    ar = np.zeros((n_chains, n_burnin + n_keep))
    for t in range(1, ar.shape[1]):
        ar[:, t] = 0.9 * ar[:, t - 1] + rng.normal(size=n_chains)
    trace = {"x": iid, "shifted": shifted, "ar": ar, "const": np.ones_like(iid),
             "move_accept": np.full_like(iid, 0.25)}
    table = summarize_traces(trace, n_burnin, keys=["x", "shifted", "ar", "const"])
    x = table["x"]
    assert abs(x["mean"]) < 0.1 and x["sd"] == pytest.approx(1.0, abs=0.05)
    assert x["r_hat"] < 1.01
    assert 0.7 * n_chains * n_keep < x["ess_bulk"] < 1.3 * n_chains * n_keep
    assert x["act"] == pytest.approx(0.5, abs=0.1)            # Makino: 0.5 for iid draws
    assert table["shifted"]["r_hat"] > 1.5                    # chains disagree
    assert table["ar"]["act"] == pytest.approx(9.5, rel=0.35)  # (1 + rho) / (2 (1 - rho))
    assert table["ar"]["ess_bulk"] < 0.15 * n_chains * n_keep
    assert math.isnan(table["const"]["r_hat"]) and table["const"]["sd"] == 0.0
    # default keys pick up every acceptance statistic
    acc = summarize_traces({"n_states": iid, "log_joint": iid, "move_accept": trace["move_accept"],
                            "a_accept_rate": iid * 0 + 0.5}, n_burnin, resampled=(False,) * 3)
    assert list(acc) == ["n_states", "log_joint", "a_accept_rate", "move_accept"]
    assert acc["move_accept"]["mean"] == 0.25 and acc["a_accept_rate"]["mean"] == 0.5


def test_kept_sweeps_match_state_samples(data):
    X, _ = data
    m = InfiniteHMM(max_time=0, n_samples=4, n_burnin=3, thin=3, n_chains=1, random_state=0).fit(X)
    idx = kept_sweeps(m.trace_["n_states"].shape[1], m.n_burnin, m.thin)
    assert idx.tolist() == [5, 8, 11, 14]
    n_states = [len(np.unique(s)) for s in m.state_samples_[0]]
    assert m.trace_["n_states"][0, idx].tolist() == n_states
    table = m.diagnostics(keys=["n_states"])
    assert table["n_states"]["mean"] == pytest.approx(np.mean(n_states))
    assert math.isnan(table["n_states"]["r_hat"]) or table["n_states"]["r_hat"] > 0


# --------------------------------------------------------------------------
# posterior_similarity() and point_estimate()
# --------------------------------------------------------------------------
def test_posterior_similarity_and_point_estimate(model, data):
    X, z = data
    psm = model.posterior_similarity()
    T = X.shape[0]
    assert psm.shape == (T, T) and psm.dtype == np.float32
    np.testing.assert_allclose(np.diag(psm), 1.0)
    np.testing.assert_allclose(psm, psm.T)
    allsamples = np.concatenate(model.state_samples_)
    np.testing.assert_allclose(psm, posterior_similarity_matrix(allsamples), atol=1e-6)
    # well separated data: same true state -> co-assigned almost always
    same = z[:, None] == z[None, :]
    assert psm[same].mean() > 0.95 and psm[~same].mean() < 0.02
    states, (c, i) = model.point_estimate(return_index=True)
    assert states.shape == (T,)
    first = np.unique(states, return_index=True)[1]
    assert np.array_equal(np.sort(first), first)          # labels by first appearance
    assert normalized_mutual_information(states, model.state_samples_[c][i]) == pytest.approx(1.0)
    assert normalized_mutual_information(z, states) > 0.95
    np.testing.assert_array_equal(model.point_estimate(), states)


def test_unfitted_raises():
    from sklearn.exceptions import NotFittedError

    m = InfiniteHMM()
    for method in (m.diagnostics, m.to_arviz, m.posterior_similarity, m.point_estimate):
        with pytest.raises(NotFittedError):
            method()


# --------------------------------------------------------------------------
# to_arviz()
# --------------------------------------------------------------------------
def test_to_arviz(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        az = pytest.importorskip("arviz")
    idata = model.to_arviz()
    post = idata.posterior
    for key in ("n_states", "log_joint", "alpha", "gamma", "kappa"):
        assert post[key].dims == ("chain", "draw")
        np.testing.assert_array_equal(post[key].values, model.trace_[key][:, model.n_burnin:])
    assert post.sizes["chain"] == model.n_chains and post.sizes["draw"] == model.n_samples
    stats = idata.sample_stats
    np.testing.assert_array_equal(stats["lp"].values, post["log_joint"].values)
    assert "accept_rate" in stats and "seconds" in stats
    assert post.attrs["sampler"] == model.sampler
    table = model.diagnostics()
    rhat = az.rhat(idata, var_names=["n_states", "gamma"])
    for key in ("n_states", "gamma"):
        assert float(rhat[key]) == pytest.approx(table[key]["r_hat"], rel=1e-6)


# --------------------------------------------------------------------------
# plotting
# --------------------------------------------------------------------------
@pytest.fixture
def plt():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_plot_trace(model, plt):
    from sk_ihmm.plotting import plot_trace

    fig = plot_trace(model)
    assert len(fig.axes) == 4
    assert [ax.get_ylabel() for ax in fig.axes] == ["n_states", "log_lik", "alpha", "gamma"]
    assert len(fig.axes[0].get_lines()) == model.n_chains
    np.testing.assert_array_equal(fig.axes[2].get_lines()[1].get_ydata(), model.trace_["alpha"][1])
    fig = plot_trace(model, keys="accept_rate", fig=fig)
    assert len(fig.axes) == 1
    with pytest.raises(ValueError, match="Unknown trace keys"):
        plot_trace(model, keys=["nope"])


def test_plot_states(model, data, plt):
    from sk_ihmm.plotting import plot_states

    X, _ = data
    ax = plot_states(model, X, lengths=[60, 40])
    points = ax.collections[0]
    assert points.get_offsets().shape == (X.shape[0], 2)
    np.testing.assert_allclose(points.get_offsets()[:, 1], X[:, 0])
    # points of the same state share a colour
    states = model.predict(X, lengths=[60, 40])
    colours = points.get_facecolors()
    for k in np.unique(states):
        assert len(np.unique(colours[states == k], axis=0)) == 1
    _, ax2 = plt.subplots()
    assert plot_states(model, X, states=model.point_estimate(), ax=ax2) is ax2
    with pytest.raises(ValueError, match="entries"):
        plot_states(model, X, states=np.zeros(3, int))


def test_plot_transmat(model, plt):
    from sk_ihmm.plotting import plot_transmat

    ax = plot_transmat(model)
    image = ax.get_images()[0].get_array()
    np.testing.assert_allclose(image[0], model.startprob_)
    np.testing.assert_allclose(image[1:], model.transmat_)


def test_summaries_cover_the_sweeps_every_chain_completed():
    """An interrupt leaves chains of different lengths, padded with nan: the
    summary and the ArviZ draws use the sweeps every chain completed, and a
    chain that completed none is left out."""
    from sk_ihmm._diagnostics import completed_sweeps, summarize_traces

    rng = np.random.default_rng(0)
    full = {"n_states": rng.integers(3, 6, (4, 400)).astype(float),
            "log_lik": rng.normal(size=(4, 400))}
    padded = {k: v.copy() for k, v in full.items()}
    for k in padded:
        padded[k][1, 300:] = np.nan
        padded[k][3, :] = np.nan          # never started
    cut = completed_sweeps(padded)
    assert cut["n_states"].shape == (3, 300)
    np.testing.assert_array_equal(cut["log_lik"], full["log_lik"][[0, 1, 2], :300])
    assert completed_sweeps(full) is full
    table = summarize_traces(padded, n_burnin=100, keys=["n_states", "log_lik"])
    expected = summarize_traces({k: v[[0, 1, 2], :300] for k, v in full.items()}, n_burnin=100,
                                keys=["n_states", "log_lik"])
    for key in ("n_states", "log_lik"):
        assert np.isfinite(table[key]["r_hat"]) and np.isfinite(table[key]["ess_bulk"])
        assert table[key] == expected[key]
