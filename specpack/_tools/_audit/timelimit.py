"""A time limit on work done in the audit's own process (capture, references built here).

Work in a worker process is bounded by killing the worker; work here can only be interrupted,
with ``SIGALRM``, in the main thread, when the caller has no alarm of its own running.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["Overtime", "time_limit"]


class Overtime(BaseException):
    """Raised by the alarm when work here exceeds the per-env timeout.

    A ``BaseException`` so that an env's own ``except Exception`` cannot swallow it.
    """


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the body with :class:`Overtime` after ``seconds``, where that is possible.

    Parameters
    ----------
    seconds
        The limit.

    Yields
    ------
    None
        The body runs unbounded off the main thread, without ``setitimer``, or while an
        alarm of the caller is running.
    """
    usable = (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    )
    if not usable:
        yield
        return

    def _ring(signum: int, frame: Any) -> None:
        raise Overtime()

    previous = signal.signal(signal.SIGALRM, _ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)
