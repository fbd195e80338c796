"""The progress display: one line per second on stderr, also from joblib workers."""

import io

import numpy as np
import pytest

from sk_ihmm import InfiniteHMM
from sk_ihmm._progress import ChainProgress, ProgressDisplay, progress_wanted
from sk_ihmm.datasets import make_gaussian_hmm

pytestmark = pytest.mark.usefixtures("no_convergence_warnings")
X, _ = make_gaussian_hmm(150, 3, random_state=0)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_fit_shows_every_chain(capsys, n_jobs):
    InfiniteHMM(progress=True, n_jobs=n_jobs, n_chains=2, n_burnin=5, n_samples=10, max_time=0,
                random_state=0).fit(X)
    err = capsys.readouterr().err
    last = err.rstrip("\n").split("\r")[-1]
    assert last.startswith("[sk_ihmm] round 1")
    assert "0: 15/15" in last and "1: 15/15" in last and "K=" in last, err


def test_silent_when_not_interactive(capsys):
    assert progress_wanted("auto") is False       # pytest captures stderr: not a terminal
    InfiniteHMM(n_chains=1, n_burnin=2, n_samples=2, max_time=0, random_state=0).fit(X)
    assert "[sk_ihmm]" not in capsys.readouterr().err


def test_display_reads_rates_and_time_left(tmp_path):
    shown = ProgressDisplay(str(tmp_path), 2, stream=io.StringIO())
    shown.new_round(3)
    (tmp_path / "chain_0").write_text("50 200 4 100")
    line = shown.line()
    assert line.startswith("[sk_ihmm] round 3, ~2 s left in the round")
    assert "0: 50/200 100/s K=4" in line and "1: waiting" in line
    report = ChainProgress(str(tmp_path / "chain_1"), 10)
    report.update(10, 7)               # the last sweep is always written
    assert "1: 10/10 K=7" in shown.line()        # no rate from a single sweep


def test_rate_leaves_out_the_first_sweep(tmp_path):
    """The first sweep of a first fit includes compiling the kernels (tens
    of seconds); the rate counts from its end, so it is not shown as 0/s."""
    clock = iter([0.0, 30.0, 31.0])
    report = ChainProgress(str(tmp_path / "chain_0"), 1000, clock=lambda: next(clock))
    report.update(1, 3)                # after 30 s, of which compilation
    report.update(101, 3)              # 100 sweeps in the next second
    done, total, k, rate = (tmp_path / "chain_0").read_text().split()
    assert (done, total, k) == ("101", "1000", "3") and float(rate) == 100.0


def test_display_says_while_kernels_compile(tmp_path, monkeypatch):
    """A compilation under way in any thread of the fitting process (the
    chains run in threads) shows on the line, with the compile time so far;
    the line drops it two redraws after the last compilation ended. numba's
    ``numba:compile`` events are sent by hand, so the test does not depend
    on the cache."""
    import threading

    from sk_ihmm import _progress

    event = pytest.importorskip("numba.core.event")

    monkeypatch.setattr(_progress, "COMPILE_NOTICE_AFTER", 0.0)
    shown = ProgressDisplay(str(tmp_path), 1, stream=io.StringIO())
    started, release = threading.Event(), threading.Event()

    def compiling_chain():
        event.start_event("numba:compile")
        started.set()
        release.wait(10)
        event.end_event("numba:compile")

    with shown:
        assert "compiling" not in shown.line()
        worker = threading.Thread(target=compiling_chain)
        worker.start()
        try:
            assert started.wait(10)
            line = shown.line()
        finally:
            release.set()
            worker.join()
        assert "| compiling numba kernels, 0 s so far (once: they are cached)" in line, line
        # it stays through the gap before the next kernel's compilation ...
        assert "compiling" in shown.line()
        shown._compiles.last_end -= 3 * _progress.INTERVAL
        # ... and not after, nor on the line left at the end
        assert "compiling" not in shown.line()
        event.start_event("numba:compile")
        try:
            assert "compiling" not in shown.line(final=True)
        finally:
            event.end_event("numba:compile")
    assert shown._compiles._listener not in event._registered["numba:compile"]
    monkeypatch.setattr(_progress, "COMPILE_NOTICE_AFTER", 1.0)
    with ProgressDisplay(str(tmp_path), 1, stream=io.StringIO()) as quick:
        event.start_event("numba:compile")
        try:
            assert "compiling" not in quick.line()     # under a second: not worth a word
        finally:
            event.end_event("numba:compile")
