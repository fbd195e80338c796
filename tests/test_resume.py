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


def _capacities(state):
    s = state.seating
    return s.pairs.shape[1], s.tables.shape[0], s.undo_log.shape[0]


# (sampler, module whose kernel must resume after growing, options, start);
# every chain is seated with few tables (alpha = 0.05, then resampled), so
# the tables its sweeps open use up the room of the moves
CASES = [
    ("rcd_gibbs", _rcd_gibbs, {}, "random"),
    ("rcd_blocked", _rcd_blocked, {}, "random"),
    ("rcd_beam", _rcd_blocked, {}, "random"),
    # split-merge trials alone, from one state: accepted splits use up the
    # free labels within a sweep
    ("split_merge", _split_merge, {"base_sampler": "none", "split_merge_trials": 30}, "one"),
]


@pytest.mark.parametrize("sampler, module, options, start", CASES, ids=[c[0] for c in CASES])
def test_growing_the_state_changes_no_draw(sampler, module, options, start, monkeypatch):
    """A chain whose kernel stops short for want of room and resumes after
    the state grew draws what a chain with room to spare draws."""
    rng = np.random.default_rng(1)
    T, K = 300, 6
    Y = np.concatenate([rng.normal(4.0 * k, 0.5, T // K + 1) for k in range(K)])[:T, None]
    problem = make_problem(Gaussian(), Y, 1, [120, 180], conc0=(0.05, 1.0, 0.0),
                           options=options)
    x0 = rng.integers(1, K + 1, T) if start == "random" else np.ones(T, np.int64)
    k0 = int(x0.max())
    roomy = _state(problem, x0, 64, 4 * T, 4 * T)
    # no free label and just the table slots of the first move (a Gibbs step
    # checks 8, a block of L steps 3 (L + 2)): whatever a move opens makes
    # the kernel stop short
    room = {"rcd_gibbs": 8, "rcd_blocked": 3 * 34, "rcd_beam": 3 * 66, "split_merge": 8}
    tight = _state(problem, x0, k0 + 1, roomy.seating.n_tables + room[sampler], 8)
    grown_resumes = []

    def counting(state, room_of, run):
        last = [None]

        def run_and_count(pos):
            if state is tight and pos > 0 and _capacities(state) != last[0]:
                grown_resumes.append(pos)
            out = run(pos)
            last[0] = _capacities(state)
            return out
        run_resumable(state, room_of, run_and_count)

    monkeypatch.setattr(module, "run_resumable", counting)
    step = get_sampler(sampler).step
    rng_tight, rng_roomy = np.random.default_rng(2), np.random.default_rng(2)
    for _ in range(N_SWEEPS):
        step(tight, problem, rng_tight)
        step(roomy, problem, rng_roomy)
    assert grown_resumes, "no kernel call stopped short for room and resumed after growing"
    np.testing.assert_array_equal(tight.x, roomy.x)
    np.testing.assert_array_equal(tight.seating.conc, roomy.seating.conc)
    assert tight.log_joint == roomy.log_joint
