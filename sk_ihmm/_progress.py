"""A one-line progress display of the chains of a fit, also across processes.

Each chain, wherever it runs (this process or a joblib worker), writes its
state to a small file of its own at most once a second
(:class:`ChainProgress`); a thread of the fitting process reads the files
and redraws one line on ``stderr`` every second (:class:`ProgressDisplay`):
per chain the sweeps done in the current round, sweeps per second and the
current number of states, and the time left in the round. Files are used
because joblib workers cannot call back into the parent while they run.
While numba compiles kernels in the fitting process (the first fit after
installing, or of a new sampler or emission family), the line says so and
for how long, so that a first fit does not look stuck.

The display is on by default (``progress="auto"``) when ``stderr`` is a
terminal or the code runs in a Jupyter kernel, and off otherwise (scripts
with redirected output, tests).
"""

import os
import sys
import threading
import time

from ._compile_clock import compile_clock

__all__ = ["ChainProgress", "ProgressDisplay", "progress_wanted"]

#: Seconds between two writes of a chain's file and two redraws of the line.
INTERVAL = 1.0

#: Seconds of compilation (in total, during the fit) before the line mentions it.
COMPILE_NOTICE_AFTER = 1.0


def progress_wanted(progress):
    """Resolve ``progress`` (``"auto"``, True or False) to a bool."""
    if progress == "auto":
        return bool(getattr(sys.stderr, "isatty", lambda: False)()) or "ipykernel" in sys.modules
    return bool(progress)


class ChainProgress:
    """What one chain reports in its file: ``done total n_states rate``,
    the sweeps done in this round and the sweeps per second since the
    round's first sweep (0 until a second one is done). The first sweep is
    left out of the rate: on a first fit it includes compiling the kernels."""

    def __init__(self, path, total, clock=time.monotonic):
        self.path, self.total, self.clock = path, int(total), clock
        self.first = None               # (sweeps done, time) at the first update
        self.next_write = clock() + INTERVAL / 4

    def update(self, done, n_states):
        now = self.clock()
        if self.first is None:
            self.first = (done, now)
        if now < self.next_write and done < self.total:     # the last sweep is always written
            return
        self.next_write = now + INTERVAL / 2
        done0, t0 = self.first
        rate = (done - done0) / (now - t0) if done > done0 and now > t0 else 0.0
        tmp = self.path + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(f"{done} {self.total} {n_states} {rate:.3f}")
        os.replace(tmp, self.path)      # readers never see half a line


def _read(path):
    try:
        with open(path) as fh:
            done, total, k, rate = fh.read().split()
        return int(done), int(total), int(k), float(rate)
    except (OSError, ValueError):
        return None


class ProgressDisplay:
    """Redraws the progress line of ``n_chains`` chains from their files in ``folder``.

    Use as a context manager around the rounds; :meth:`path` names a
    chain's file; :meth:`new_round` resets the rates.
    """

    def __init__(self, folder, n_chains, stream=None):
        self.folder, self.n_chains = folder, n_chains
        self.stream = sys.stderr if stream is None else stream
        self.round = 1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._width = 0
        # every thread's compilations: the chains run in threads, the
        # initialisation in the fitting thread
        self._compiles = compile_clock(all_threads=True)

    def path(self, chain_id):
        return os.path.join(self.folder, f"chain_{chain_id}")

    def new_round(self, round_number):
        self.round = round_number
        for c in range(self.n_chains):
            try:
                os.remove(self.path(c))
            except OSError:
                pass

    def line(self, final=False):
        """The current text of the display (``final``: the line left on
        screen at the end, without the compile notice)."""
        parts, left = [], 0.0
        for c in range(self.n_chains):
            rec = _read(self.path(c))
            if rec is None:
                parts.append(f"{c}: waiting")
                continue
            done, total, k, rate = rec
            if rate > 0:
                left = max(left, (total - done) / rate)
                parts.append(f"{c}: {done}/{total} {rate:.0f}/s K={k}")
            else:
                parts.append(f"{c}: {done}/{total} K={k}")
        eta = f", ~{left:.0f} s left in the round" if left else ""
        busy = self._compiles.compiling_for()
        total = self._compiles.seconds + busy
        # kernels compile one after the other, with gaps of a fraction of a
        # second between them: the notice stays through the gaps
        recent = busy > 0.0 or time.perf_counter() - self._compiles.last_end <= 2 * INTERVAL
        if not final and recent and total >= COMPILE_NOTICE_AFTER:
            parts.append(f"compiling numba kernels, {total:.0f} s so far (once: they are cached)")
        return f"[sk_ihmm] round {self.round}{eta} | " + " | ".join(parts)

    def _draw(self, final=False):
        text = self.line(final)
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad + ("\n" if final else ""))
        self.stream.flush()

    def _run(self):
        while not self._stop.wait(INTERVAL):
            self._draw()

    def __enter__(self):
        self._compiles.__enter__()
        try:
            self._thread.start()
        except BaseException:
            self._compiles.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        # the clock's listener is unregistered whatever happens here (a
        # second Ctrl-C during the join included)
        try:
            self._stop.set()
            self._thread.join()
        finally:
            self._compiles.__exit__(*exc)
        self._draw(final=True)
        return False
