"""Wall time spent compiling numba kernels, so that time budgets can leave it out.

The first fit after installing (or after numba's cache was cleared) compiles
every kernel it uses, which takes tens of seconds and says nothing about how
fast the chains sweep. :class:`compile_clock` listens to numba's event API
(``numba:compile`` events, :mod:`numba.core.event`) while it is active and
adds up the wall time of the outermost compilations (a kernel's callees are
compiled inside it and not counted twice). Loading a kernel from numba's
on-disk cache also raises the event, for a few milliseconds.

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
    compilations in this process are seen (a joblib worker runs its own
    clock).
    """

    def __init__(self):
        self.seconds = 0.0
        self._depth = 0
        self._started = 0.0
        self._listener = None
        self._thread = threading.get_ident()

    def __enter__(self):
        if _event is not None:
            clock = self

            class _Listener(_event.Listener):
                def on_start(self, ev):
                    if threading.get_ident() != clock._thread:
                        return
                    if clock._depth == 0:
                        clock._started = time.perf_counter()
                    clock._depth += 1

                def on_end(self, ev):
                    if threading.get_ident() != clock._thread or clock._depth == 0:
                        return
                    clock._depth -= 1
                    if clock._depth == 0:
                        clock.seconds += time.perf_counter() - clock._started

            self._listener = _Listener()
            _event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        if self._listener is not None:
            _event.unregister("numba:compile", self._listener)
            if self._depth:     # interrupted inside a compilation
                self.seconds += time.perf_counter() - self._started
                self._depth = 0
        return False
