"""Held-out scoring against exact computations of the HCRP predictive.

The reference :func:`exact_log_lik` enumerates, for a posterior snapshot and a
short test sequence, every continuation of the seating: the state of each
test step (every existing state and one new one) *and* whether its customer
opens a new root table (which changes the root counts seen by later steps).
Emission predictives come from the families' closed-form marginal
likelihoods (:meth:`EmissionFamily.log_marginal`) of the observations in each
state, so the reference shares no code with the particle filter.

Model convention (``sk_ihmm._hcrp``): restaurant ``0`` is the start,
restaurant ``k >= 1`` state ``k``. A customer of restaurant ``j`` eats dish
``k`` with probability

    (n_jk + alpha p0(k) + kappa [j == k >= 1]) / (n_j + alpha + kappa [j >= 1]),

``p0(k) = M_k / (M + gamma)`` for an existing dish and ``gamma / (M + gamma)``
for the new one (Makino et al. 2011, Eq. 31-32 with the sticky term); given
dish ``k`` it opens a new root table (``M_k += 1``) with probability
``alpha p0(k) / (n_jk + alpha p0(k) + kappa [j == k >= 1])``.
"""

import copy
import itertools
import math

import numpy as np
import pytest
from scipy.special import logsumexp

from sk_ihmm import Categorical, Gaussian, InfiniteHMM
from sk_ihmm._chain import Snapshot
from sk_ihmm._particle import snapshot_log_likelihoods

V = 3  # alphabet of the categorical tests


# --------------------------------------------------------------------------
# Exact reference
# --------------------------------------------------------------------------
def _log_pred(family, dim, obs, y):
    """Closed-form log predictive of ``y`` given the observations ``obs`` of a state."""
    if not obs:
        return family.log_marginal(np.array([y]), dim)
    return family.log_marginal(np.array(obs + [y]), dim) - family.log_marginal(np.array(obs), dim)


def exact_log_lik(snap, state_obs, Y, family, dim):
    """``log p(y_1..y_L | snapshot)`` of one test sequence, by enumeration.

    Parameters
    ----------
    snap : Snapshot
        Counts ``n`` (restaurant x dish) and root tables ``m`` of the
        training seating, concentrations ``conc``.
    state_obs : list of list
        Training observations of each state (``state_obs[k - 1]`` for
        state index ``k``).
    Y : ndarray of shape (L, n_features)
    family : EmissionFamily
    dim : int
        Alphabet size or number of features.
    """
    alpha, gamma, kappa = (float(c) for c in snap.conc)
    K0 = snap.n.shape[0] - 1
    size = K0 + 1 + len(Y)
    n = np.zeros((size, size))
    n[:K0 + 1, :K0 + 1] = snap.n
    mk = np.zeros(size)
    mk[:K0 + 1] = np.asarray(snap.m).sum(axis=0)
    obs = [None] + [list(o) for o in state_obs] + [[] for _ in range(len(Y))]
    ys = [row[0] if Y.shape[1] == 1 else row for row in Y]

    def rec(t, j, K):
        if t == len(Y):
            return 1.0
        kap = kappa if j > 0 else 0.0
        den = n[j].sum() + alpha + kap
        M = mk.sum()
        total = 0.0
        for k in range(1, K + 2):
            p0 = mk[k] / (M + gamma) if k <= K else gamma / (M + gamma)
            stick = kap if j == k else 0.0
            w_root, w_stay = alpha * p0, n[j, k] + stick
            p_k = (w_root + w_stay) / den
            f_k = math.exp(_log_pred(family, dim, obs[k], ys[t]))
            n[j, k] += 1
            obs[k].append(ys[t])
            for opens_root, w in ((True, w_root), (False, w_stay)):
                if w == 0.0:
                    continue
                mk[k] += opens_root
                total += p_k * f_k * w / (w_root + w_stay) * rec(t + 1, k, max(K, k))
                mk[k] -= opens_root
            obs[k].pop()
            n[j, k] -= 1
        return total

    return math.log(rec(0, 0, K0))


def exact_step_log_liks(snap, state_obs, Y, family, dim):
    """``log p(y_t | y_<t, snapshot)`` for every ``t``."""
    prefix = [exact_log_lik(snap, state_obs, Y[:t], family, dim) if t else 0.0
              for t in range(len(Y) + 1)]
    return np.diff(prefix)


def pf_log_liks(problem, snap, Y, n_particles, n_runs, seed):
    """``(n_runs, L)`` per-step log likelihoods of independent filter runs."""
    first = np.zeros(len(Y), bool)
    first[0] = True
    rng = np.random.default_rng(seed)
    return snapshot_log_likelihoods(problem, [snap] * n_runs, np.ascontiguousarray(Y, float),
                                    first, n_particles, rng)


# --------------------------------------------------------------------------
# Fixtures: tiny fitted models (for their Problem and snapshots)
# --------------------------------------------------------------------------
X_CAT = np.array([0, 0, 1, 0, 2, 2, 1, 2, 2, 0, 0, 1])[:, None]
X_GAUSS = np.array([-2.1, -1.8, -2.3, 1.9, 2.2, 2.0, -1.9, 2.4])[:, None]


def _tiny(emission, X):
    return InfiniteHMM(max_time=0, emission=emission, n_samples=3, n_burnin=5, n_chains=2, n_score_samples=50,
                       n_score_particles=2000, random_state=0).fit(X)


@pytest.fixture(scope="module")
def cat_model():
    return _tiny(Categorical(concentration=0.5, n_symbols=V), X_CAT)


@pytest.fixture(scope="module")
def gauss_model():
    return _tiny(Gaussian(), X_GAUSS)


def _state_obs(model, X, chain, sample):
    labels = model.state_samples_[chain][sample]
    return [list(X[labels == k, 0]) for k in range(labels.max() + 1)]


def _hand_snapshot(conc, small=False):
    """Hand-made seating with categorical statistics.

    Two states with sticky-friendly counts, or (``small``) one state whose
    self-transition sits at an override table: few customers, so the table
    decisions of the test customers matter.
    """
    if small:
        state_obs = [[0, 0]]
        n, m, o = np.array([[0, 1], [0, 1]]), np.array([[0, 1], [0, 0]]), np.array([0, 1])
    else:
        state_obs = [[0, 0, 0, 1], [2, 2, 1]]
        n = np.array([[0, 2, 1], [0, 3, 1], [0, 1, 2]])
        m = np.array([[0, 1, 1], [0, 1, 1], [0, 1, 1]])   # root tables; the rest are overrides
        o = np.array([0, 1, 1])
    K = len(state_obs)
    stats = np.zeros((K + 1, V + 1))
    for k, ys in enumerate(state_obs, start=1):
        stats[k, :V] = np.bincount(ys, minlength=V)
        stats[k, V] = len(ys)
    return Snapshot(n, m, o, stats, np.asarray(conc, float), 0.0), state_obs


# --------------------------------------------------------------------------
# The reference itself
# --------------------------------------------------------------------------
@pytest.mark.parametrize("small, conc", [(False, (1.3, 0.7, 0.0)), (False, (0.8, 2.0, 1.5)),
                                         (True, (2.0, 1.0, 5.0))])
def test_exact_reference_is_normalised(small, conc):
    family = Categorical(concentration=0.5)
    snap, obs = _hand_snapshot(conc, small)
    for L in (1, 2, 3):
        total = sum(math.exp(exact_log_lik(snap, obs, np.array(y, float)[:, None], family, V))
                    for y in itertools.product(range(V), repeat=L))
        assert total == pytest.approx(1.0, abs=1e-12)


def _forward_log_lik(log_pi, log_A, log_B):
    a = log_pi + log_B[0]
    for t in range(1, log_B.shape[0]):
        a = logsumexp(a[:, None] + log_A, axis=0) + log_B[t]
    return float(logsumexp(a))


def _fixed_hmm(scale):
    """The hand snapshot with all counts times ``scale``, and its limiting finite HMM.

    As ``scale`` grows the HCRP predictive tends to the HMM with transition
    probabilities ``n_jk / n_j`` and emission probabilities ``c_kv / c_k``,
    and new states get probability ``O(1 / scale)``.
    """
    snap, obs = _hand_snapshot((1.0, 1.0, 1.0))
    big = Snapshot(snap.n * scale, snap.m * scale, snap.o * scale, snap.stats * scale,
                   snap.conc, 0.0)
    counts = big.stats[1:, :V] + 0.5
    log_emit = np.log(counts / counts.sum(axis=1, keepdims=True))
    trans = snap.n / snap.n.sum(axis=1, keepdims=True)
    return big, [o * scale for o in obs], np.log(trans[0, 1:]), np.log(trans[1:, 1:]), log_emit


def test_exact_reference_fixed_hmm_limit():
    """With huge counts the predictive is a fixed finite HMM (forward algorithm)."""
    big, big_obs, log_pi, log_A, log_emit = _fixed_hmm(10**4)
    Y = np.array([2, 0, 0])[:, None]
    ref = _forward_log_lik(log_pi, log_A, log_emit[:, Y[:, 0]].T)
    exact = exact_log_lik(big, big_obs, Y.astype(float), Categorical(concentration=0.5), V)
    assert exact == pytest.approx(ref, abs=2e-3)


# --------------------------------------------------------------------------
# Particle filter vs the exact predictive
# --------------------------------------------------------------------------
def _check_unbiased(problem, snap, Y, exact, n_particles, n_runs=3000, seed=0):
    """The filter's likelihood estimate prod_t l_t is unbiased for p(y_1:L)."""
    est = np.exp(pf_log_liks(problem, snap, Y, n_particles, n_runs, seed).sum(axis=1))
    ratio = est / math.exp(exact)
    se = ratio.std(ddof=1) / math.sqrt(n_runs)
    assert abs(ratio.mean() - 1.0) < 4.5 * se + 1e-9, (ratio.mean(), se)


@pytest.mark.parametrize("small, conc, tests", [
    (False, (1.3, 0.7, 0.0), [[2, 2, 0], [1, 0, 2, 2]]),
    (False, (0.8, 2.0, 1.5), [[2, 2, 0], [1, 0, 2, 2]]),
    (False, (0.3, 0.2, 4.0), [[2, 2, 0], [1, 0, 2, 2]]),
    # sticky, few customers: later steps depend strongly on root vs override tables
    (True, (2.0, 1.0, 5.0), [[2, 2, 1, 0], [0, 0, 2, 1]]),
])
@pytest.mark.parametrize("n_particles", [1, 3])
def test_particle_filter_unbiased_hand_snapshot(cat_model, small, conc, tests, n_particles):
    snap, obs = _hand_snapshot(conc, small)
    family = Categorical(concentration=0.5)
    for y in tests:
        Y = np.array(y, float)[:, None]
        exact = exact_log_lik(snap, obs, Y, family, V)
        _check_unbiased(cat_model._problem_, snap, Y, exact, n_particles)


@pytest.mark.parametrize("which", ["cat", "gauss"])
def test_particle_filter_unbiased_fitted_snapshots(cat_model, gauss_model, which):
    model, X, family, dim, tests = {
        "cat": (cat_model, X_CAT, Categorical(concentration=0.5), V, [[0, 2, 2], [1, 1, 0, 2]]),
        "gauss": (gauss_model, X_GAUSS, Gaussian(**gauss_model.emission_prior_), 1, [[2.1, -2.0, 0.3], [-1.7, -2.2, 2.5]]),
    }[which]
    for chain, sample in [(0, 2), (1, 0)]:
        snap = model.snapshots_[chain][sample]
        obs = _state_obs(model, X, chain, sample)
        assert np.array_equal(snap.stats[1:, 0 if which == "gauss" else V],
                              [len(o) for o in obs])
        for y in tests:
            Y = np.array(y, float)[:, None]
            exact = exact_log_lik(snap, obs, Y, family, dim)
            _check_unbiased(model._problem_, snap, Y, exact, n_particles=2, n_runs=2000,
                            seed=chain)


def test_particle_filter_many_particles_tight(cat_model):
    """With 4000 particles each per-step likelihood is within 1 % of the exact one."""
    snap, obs = _hand_snapshot((0.8, 2.0, 1.5))
    Y = np.array([1, 2, 2], float)[:, None]
    exact = exact_step_log_liks(snap, obs, Y, Categorical(concentration=0.5), V)
    est = pf_log_liks(cat_model._problem_, snap, Y, 4000, 1, seed=3)[0]
    np.testing.assert_allclose(est, exact, atol=0.01)


def test_particle_filter_step_predictive_is_normalised_long_sequences(cat_model):
    """sum_v l(y_T = v | y_<T) = 1 exactly, after any history of resampling.

    Up to the last step the filter does not depend on ``y_T``, so with the
    same random stream the particle system is the same for every ``v`` and
    the last per-step likelihoods must sum to one over the alphabet, for
    every number of steps (and resampling events) before it. Unnormalised
    transition weights (e.g. counts left over in a particle's buffer for a
    label it has not used yet) break this.
    """
    snaps = [cat_model.snapshots_[0][0], cat_model.snapshots_[1][-1],
             _hand_snapshot((1.0, 1.0, 0.0))[0]]
    first = np.zeros(80, bool)
    first[0] = True
    for s, snap in enumerate(snaps):
        for seed in range(15):
            Y = np.random.default_rng(seed).integers(0, V, 80).astype(float)[:, None]
            for T in range(10, 81, 10):
                total = 0.0
                for v in range(V):
                    Yv = Y[:T].copy()
                    Yv[-1] = v
                    rng = np.random.default_rng([s, seed])
                    total += math.exp(snapshot_log_likelihoods(
                        cat_model._problem_, [snap], Yv, first[:T], 5, rng)[0, -1])
                assert total == pytest.approx(1.0, abs=1e-9), (s, seed, T)


def test_particle_filter_fixed_hmm_limit_long_sequence(cat_model):
    """Huge counts: the filter estimates the forward-algorithm likelihood of a long sequence."""
    big, _, log_pi, log_A, log_emit = _fixed_hmm(10**6)
    Y = np.random.default_rng(0).integers(0, V, size=40)[:, None]
    ref = _forward_log_lik(log_pi, log_A, log_emit[:, Y[:, 0]].T)
    est = pf_log_liks(cat_model._problem_, big, Y.astype(float), 3000, 1, seed=4)[0].sum()
    assert est == pytest.approx(ref, abs=0.08)  # about 4.5 Monte-Carlo sd


# --------------------------------------------------------------------------
# The estimator's score (Makino et al. 2011, Eq. 38-39)
# --------------------------------------------------------------------------
def _exact_score(model, X_train, Y, family, dim):
    """sum_t log mean_z p(y_t | y_<t, s_z) over all kept snapshots z."""
    steps = []
    for c, snaps in enumerate(model.snapshots_):
        for i, snap in enumerate(snaps):
            steps.append(exact_step_log_liks(snap, _state_obs(model, X_train, c, i), Y, family, dim))
    steps = np.array(steps)
    return float(np.sum(logsumexp(steps, axis=0) - np.log(steps.shape[0])))


def test_score_matches_exact(cat_model):
    family = Categorical(concentration=0.5)
    Y1 = np.array([2, 2, 1])[:, None]
    Y2 = np.array([0, 1, 0])[:, None]
    exact1 = _exact_score(cat_model, X_CAT, Y1.astype(float), family, V)
    exact2 = _exact_score(cat_model, X_CAT, Y2.astype(float), family, V)
    assert cat_model.score(Y1) == pytest.approx(exact1, abs=0.015)
    # every sequence is scored from the start restaurant, on its own
    both = cat_model.score_sequences(np.vstack([Y1, Y2]), lengths=[3, 3])
    np.testing.assert_allclose(both, [exact1, exact2], atol=0.015)
    ids = np.repeat(["a", "b"], 3)
    np.testing.assert_allclose(
        cat_model.score_sequences(np.vstack([Y1, Y2]), sequence_ids=ids), [exact1, exact2],
        atol=0.015,
    )


def test_score_averages_per_step_likelihoods_over_samples(cat_model):
    """Eq. 39: l(y_t) is averaged over samples at every step, not p(y_1:L) per sequence.

    Two very different posterior samples make the two averages differ by
    about 0.1 nats on these sequences.
    """
    family = Categorical(concentration=0.5)
    samples = [_hand_snapshot((1.0, 1.0, 0.5)), _hand_snapshot((2.0, 1.0, 5.0), small=True)]
    model = copy.deepcopy(cat_model)
    model.snapshots_ = [[snap] for snap, _ in samples]
    for y in ([0, 0, 0, 0], [0, 0, 0, 1]):
        Y = np.array(y, float)[:, None]
        steps = np.array([exact_step_log_liks(snap, obs, Y, family, V) for snap, obs in samples])
        eq39 = float(np.sum(logsumexp(steps, axis=0) - np.log(2)))
        per_sequence = float(logsumexp(steps.sum(axis=1)) - np.log(2))
        assert abs(eq39 - per_sequence) > 0.06
        assert model.score(Y.astype(int)) == pytest.approx(eq39, abs=0.015)


def test_score_matches_exact_gaussian(gauss_model):
    Y = np.array([[1.8], [2.3], [-2.0]])
    exact = _exact_score(gauss_model, X_GAUSS, Y, Gaussian(**gauss_model.emission_prior_), 1)
    assert gauss_model.score(Y) == pytest.approx(exact, abs=0.015)


def test_score_sequences_sum_and_perplexity(cat_model):
    X = np.array([0, 1, 2, 2, 0, 1, 1, 2])[:, None]
    lengths = [3, 5]
    per_seq = cat_model.score_sequences(X, lengths)
    assert per_seq.shape == (2,) and np.all(per_seq < 0)
    total = cat_model.score(X, lengths=lengths)
    assert total == pytest.approx(per_seq.sum(), rel=1e-12)
    assert cat_model.perplexity(X, lengths) == pytest.approx(np.exp(-total / X.shape[0]), rel=1e-12)
    # deterministic given the fitted model
    assert cat_model.score(X, lengths=lengths) == total


def test_steps_left_out_of_the_score_add_exactly_nothing():
    """Rows that are not scored -- missing, or the conditioning steps of an
    autoregressive family -- add exactly 0 (not rounding noise, which read as
    a positive log-likelihood), and with none scored the perplexity is nan."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from sk_ihmm.datasets import make_ar_hmm
    from sk_ihmm.emissions import AutoRegressive

    X = make_ar_hmm(300, random_state=0)[0]
    quick = dict(max_time=0, n_samples=5, n_burnin=5, n_chains=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ar = InfiniteHMM(emission=AutoRegressive(order=2), **quick).fit(X)
        gauss = InfiniteHMM(allow_missing=True, **quick).fit(X)
    assert ar.score(X[:2]) == 0.0 and math.isnan(ar.perplexity(X[:2]))
    gaps = X[:10].copy()
    gaps[[0, 4]] = np.nan
    assert gauss.score(np.full((3, X.shape[1]), np.nan)) == 0.0
    assert math.isnan(gauss.perplexity(np.full((3, X.shape[1]), np.nan)))
    assert np.isfinite(gauss.perplexity(gaps))


def test_score_runs_its_filters_in_threads_and_does_not_depend_on_n_jobs():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from sk_ihmm.datasets import make_gaussian_hmm

    X = make_gaussian_hmm(400, n_states=3, random_state=0)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = InfiniteHMM(max_time=0, n_samples=10, n_burnin=10, n_chains=2, n_jobs=1,
                            random_state=0).fit(X)
    one = model.score_sequences(X, lengths=[150, 250])
    assert np.array_equal(one, model.score_sequences(X, lengths=[150, 250]))   # repeatable
    model.set_params(n_jobs=2)
    np.testing.assert_array_equal(model.score_sequences(X, lengths=[150, 250]), one)
