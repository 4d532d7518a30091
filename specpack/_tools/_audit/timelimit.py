"""A time limit on work in the audit's own process (a worker is bounded by killing it): a
``SIGALRM`` interrupt, possible only in the main thread when the caller runs no alarm."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["Overtime", "time_limit"]


class Overtime(BaseException):
    """Raised by the alarm when work here exceeds the per-env timeout (a ``BaseException`` so
    that an env's own ``except Exception`` cannot swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the body with :class:`Overtime` after ``seconds``; the body runs unbounded off
    the main thread, without ``setitimer``, or while an alarm of the caller is running."""
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
