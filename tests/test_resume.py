"""The resume loop of the collapsed samplers (``_collapsed.run_resumable``).

A collapsed kernel allocates nothing: when the seating runs short of free
labels, table slots or undo-log rows it stops, the loop grows the state and
calls it again from where it stopped. Growing must change capacities only,
never a draw, so a chain that starts with no room to spare is the chain that
starts with plenty.
"""

import numpy as np
import pytest

from sk_ihmm._chain import make_problem
from sk_ihmm._hcrp import new_seating
from sk_ihmm.emissions import Gaussian
from sk_ihmm.samplers import _rcd_blocked, _rcd_gibbs, _split_merge, get_sampler
from sk_ihmm.samplers._collapsed import CollapsedState, log_joint, run_resumable, seat_sequences


class _FakeState:
    def __init__(self):
        self.calls = []

    def ensure_capacity(self, labels, tables, log):
        self.calls.append(("grow", labels, tables, log))


def test_run_resumable_grows_before_every_call_and_resumes_where_it_stopped():
    state = _FakeState()
    stops = iter([(3, False), (7, False), (10, True)])

    def run(pos):
        state.calls.append(("run", pos))
        return next(stops)

    run_resumable(state, lambda: (2, 8, 16), run)
    assert state.calls == [("grow", 2, 8, 16), ("run", 0), ("grow", 2, 8, 16), ("run", 3),
                           ("grow", 2, 8, 16), ("run", 7)]


def _state(problem, x0, labels, tables, log):
    """``x0`` seated in a seating of the given capacities (seed 0)."""
    s = new_seating(labels, tables, log, *problem.conc0)
    stats = np.zeros((labels, problem.n_stats))
    x = x0.copy()
    seat_sequences(s, stats, x, problem.Y, problem.seq_first, problem.fam,
                   np.random.default_rng(0))
    state = CollapsedState(x, s, stats, problem.hyp.copy())
    state.log_joint = log_joint(state, problem)
    return state


N_SWEEPS = 20


@pytest.mark.parametrize("sampler", ["rcd_gibbs", "rcd_blocked", "rcd_beam", "split_merge"])
def test_growing_the_state_changes_no_draw(sampler, monkeypatch):
    """A chain whose sweeps stop short and resume, with the state grown in
    between, draws what a chain with room to spare draws."""
    rng = np.random.default_rng(1)
    # long enough for some move to open a table (beam blocks are 64 steps);
    # fixed seeds, so each case resumes at the same places on every run
    T, K = (150 if sampler in ("rcd_gibbs", "rcd_blocked") else 400), 6
    Y = np.concatenate([rng.normal(4.0 * k, 0.5, T // K + 1) for k in range(K)])[:T, None]
    problem = make_problem(Gaussian(), Y, 1, [2 * T // 5, T - 2 * T // 5])
    x0 = rng.integers(1, K + 1, T)
    roomy = _state(problem, x0, 16 * K, 4 * T, 4 * T)
    # no free label, and just the free table slots the first move needs (the
    # kernels check 8 for a Gibbs step, 3 (L + 2) for a block of L steps):
    # the first table a move opens makes the kernel stop short
    room = {"rcd_gibbs": 8, "rcd_blocked": 3 * 34, "rcd_beam": 3 * 66, "split_merge": 3 * 66}
    tight = _state(problem, x0, K + 1, roomy.seating.n_tables + room[sampler], 8)
    resumed = []

    def counting(state, room_of, run):
        def run_and_count(pos):
            if state is tight and pos > 0:
                resumed.append(pos)
            return run(pos)
        run_resumable(state, room_of, run_and_count)

    for module in (_rcd_gibbs, _rcd_blocked, _split_merge):
        monkeypatch.setattr(module, "run_resumable", counting)
    step = get_sampler(sampler).step
    rng_tight, rng_roomy = np.random.default_rng(2), np.random.default_rng(2)
    for _ in range(N_SWEEPS):
        step(tight, problem, rng_tight)
        step(roomy, problem, rng_roomy)
    assert resumed, "no sweep of the tight chain stopped short and resumed"
    np.testing.assert_array_equal(tight.x, roomy.x)
    np.testing.assert_array_equal(tight.seating.conc, roomy.seating.conc)
    assert tight.log_joint == roomy.log_joint
