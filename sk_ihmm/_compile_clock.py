"""Wall time spent compiling numba kernels, so that time budgets can leave it out.

The first fit after installing (or after numba's cache was cleared) compiles
every kernel it uses, which takes tens of seconds and says nothing about how
fast the chains sweep. :class:`compile_clock` listens to numba's event API
(``numba:compile`` events, :mod:`numba.core.event`) while it is active and
adds up the wall time of the outermost compilations (a kernel's callees are
compiled inside it and not counted twice). A kernel loaded from numba's
on-disk cache is not compiled and adds nothing.

If the event API is missing (it is marked experimental in numba), the clock
reads zero and budgets simply include compilation, as they did before.
"""

import threading
import time

try:
    from numba.core import event as _event
except ImportError:   # pragma: no cover - depends on numba
    _event = None


class compile_clock:
    """Context manager: ``seconds`` is the compile time seen while active.

    Usable once; nested clocks each count the compilations they see. Only
    compilations in this process are seen (a joblib worker process runs its
    own clock), and by default only those of the thread that made the
    clock. ``other_threads=True`` counts those of every other thread
    instead (chains run in threads, beside the clock of the thread that
    waits for them): numba compiles under one global lock, so outermost
    compilations never overlap and their durations add up to the wall time
    spent compiling. ``all_threads=True`` counts every thread's (the
    progress display's clock, which only asks :meth:`compiling_for`).
    """

    def __init__(self, other_threads=False, all_threads=False):
        self.seconds = 0.0
        self.last_end = -float("inf")   # time.perf_counter() when a compilation last ended
        self._other_threads = other_threads
        self._all_threads = all_threads
        self._thread = threading.get_ident()
        self._open = {}         # thread -> (depth of nested compilations, start)
        self._lock = threading.Lock()
        self._listener = None

    def _watched(self):
        thread = threading.get_ident()
        if self._all_threads:
            return thread
        return thread if (thread != self._thread) == self._other_threads else None

    def compiling_for(self):
        """Seconds since the compilation under way began (the earliest one
        among the watched threads), or 0.0 when none is."""
        with self._lock:
            if not self._open:
                return 0.0
            return time.perf_counter() - min(started for _, started in self._open.values())

    def __enter__(self):
        if _event is not None:
            clock = self

            class _Listener(_event.Listener):
                def on_start(self, ev):
                    thread = clock._watched()
                    if thread is None:
                        return
                    with clock._lock:
                        depth, started = clock._open.get(thread, (0, 0.0))
                        if depth == 0:
                            started = time.perf_counter()
                        clock._open[thread] = (depth + 1, started)

                def on_end(self, ev):
                    thread = clock._watched()
                    if thread is None:
                        return
                    with clock._lock:
                        depth, started = clock._open.pop(thread, (0, 0.0))
                        if depth > 1:
                            clock._open[thread] = (depth - 1, started)
                        elif depth == 1:
                            clock.last_end = time.perf_counter()
                            clock.seconds += clock.last_end - started

            self._listener = _Listener()
            _event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        if self._listener is not None:
            _event.unregister("numba:compile", self._listener)
            with self._lock:    # interrupted inside a compilation
                now = time.perf_counter()
                self.seconds += sum(now - started for _, started in self._open.values())
                self._open.clear()
        return False
