"""Ctrl-C that waits for a safe point.

A KeyboardInterrupt raised while compiled (numba) code runs can surface
inside numba's own calls back into Python and crash the interpreter (a
segmentation fault, or a ``SystemError``). Inside :func:`deferred_interrupts`
SIGINT only records the request; the drivers call :func:`check_interrupt`
between kernel calls (after every sweep, between the chunks of a particle
filter), which raises the KeyboardInterrupt there. Nested uses share one request flag.

Chains run at once (in threads, or in joblib's worker processes) watch a
*stop file* instead (:func:`stop_file`): during such a round the parent's
SIGINT handler creates the file, and every chain stops after the sweep in
which it appears (:func:`check_interrupt` with its path, or by default the
path :func:`ignore_interrupts_in_worker` recorded for the current task).
Only the main thread reads and clears the request flag, so one chain
cannot take the request away from the others; worker processes ignore
SIGINT. Signal handlers belong to the main thread; elsewhere
:func:`deferred_interrupts` does nothing.
"""

import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
from contextlib import contextmanager

__all__ = ["deferred_interrupts", "check_interrupt", "take_interrupt", "stop_file",
           "request_stop", "ignore_interrupts_in_worker"]

_requested = False
_thread_stop = threading.local()     # .path: the stop file of the task this thread runs
_stop_path = None
_worker_stop_path = None     # the stop file of the chain task this worker runs


def _record(signum, frame):
    global _requested
    _requested = True
    if _stop_path is not None:
        request_stop(_stop_path)


@contextmanager
def deferred_interrupts():
    """Within the block SIGINT sets a flag that :func:`check_interrupt` raises.

    A request still pending when the block ends (it arrived after the last
    check) is raised on exit, unless an exception is already on its way.
    """
    global _requested
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN or previous is _record:
        yield           # ignored by the parent process, or already deferred by an outer block
        return
    signal.signal(signal.SIGINT, _record)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if _requested:
        _requested = False
        raise KeyboardInterrupt


def check_interrupt(stop_path=None):
    """Raise a KeyboardInterrupt when one was asked for: in the main thread,
    a request recorded since the last check (which clears it); in any
    thread, the file ``stop_path`` (by default the stop file of the chain
    task this thread or worker process runs) existing."""
    global _requested
    if _requested and threading.current_thread() is threading.main_thread():
        _requested = False
        raise KeyboardInterrupt
    if stop_path is None:
        stop_path = getattr(_thread_stop, "path", None) or _worker_stop_path
    if stop_path is not None and os.path.exists(stop_path):
        raise KeyboardInterrupt


@contextmanager
def stop_file():
    """A path that a Ctrl-C in this process creates while the block runs
    (inside :func:`deferred_interrupts`); removed afterwards. A request
    already pending creates it at once."""
    global _stop_path
    folder = tempfile.mkdtemp(prefix="sk_ihmm_stop_")
    previous, _stop_path = _stop_path, os.path.join(folder, "stop")
    if _requested:
        request_stop(_stop_path)
    try:
        yield _stop_path
    finally:
        _stop_path = previous
        shutil.rmtree(folder, ignore_errors=True)


def request_stop(stop_path):
    """Ask every chain of the round to stop: create its stop file (nothing
    when the path is not on this machine, as in a dask worker)."""
    try:
        open(stop_path, "w").close()
    except OSError:
        pass


def ignore_interrupts_in_worker(stop_path=None):
    """At the start of a chain task run at once with others: the parent asks
    the chains to stop through the stop file ``stop_path``, which
    :func:`check_interrupt` then watches by default. In a worker thread
    that is all; in a worker process (not the user's) SIGINT is ignored
    too."""
    global _worker_stop_path
    if threading.current_thread() is not threading.main_thread():
        _thread_stop.path = stop_path
    elif multiprocessing.parent_process() is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _worker_stop_path = stop_path


def take_interrupt():
    """Whether an interrupt was requested since the last check (and clear it)."""
    global _requested
    requested, _requested = _requested, False
    return requested

