"""Forking so that the child can never return into the caller's code.

A plain ``os.fork`` child that raises on its way out runs the caller's program as a second
copy: ``os._exit`` may be a wrapper that raises (coverage), and a Python signal handler may
raise (Ray's ``SIGTERM -> sys.exit``). :func:`fork_call` blocks signals around the fork, resets
the caller's handlers in the child, and ends it with :func:`hard_exit`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import traceback
import warnings
from collections.abc import Callable
from typing import NoReturn

__all__ = ["block_all", "default_handlers", "fork_call", "hard_exit"]

#: ``posix._exit``: whatever replaces ``os._exit`` later (coverage, a test double) leaves it.
_REAL_EXIT: Callable[[int], NoReturn] = importlib.import_module(os.name)._exit


def block_all() -> set[int | signal.Signals] | None:
    """Block every signal in this thread; the previous mask (None where there are no masks)."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())


def hard_exit(code: int) -> NoReturn:
    """End this process now with ``code``; never returns, never raises. Signals are blocked
    first; if ``os._exit`` is a wrapper that raises (coverage's), ``posix._exit`` ends it."""
    try:
        block_all()
        os._exit(code)
    finally:
        _REAL_EXIT(code)


def default_handlers() -> None:
    """Put back the default action of every signal whose handler is Python code (the caller's,
    inherited by a fork); ``SIGINT`` gets ``KeyboardInterrupt``, ignored signals stay so."""
    for sig in signal.valid_signals():
        try:
            handler = signal.getsignal(sig)
        except (OSError, ValueError):
            continue
        if callable(handler) and handler is not signal.default_int_handler:
            default = (signal.default_int_handler if sig == signal.SIGINT
                       else signal.SIG_DFL)
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                signal.signal(sig, default)


def fork_call(body: Callable[[], None]) -> int:
    """Fork; the child runs ``body`` and ends (code 0, or 1 with the traceback on fd 2 if it
    raised). Returns the child's pid in the parent; the child never returns."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    parent = os.getpid()
    mask = block_all()
    pid = -1
    try:
        with warnings.catch_warnings():
            # 3.12+ warns that a fork of a threaded process may deadlock: the deadline kills it
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            _child(body, mask)
    finally:
        # the child, whatever happened (even a wrapper of os.fork that raised in the child)
        if os.getpid() != parent:
            hard_exit(1)
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return pid


def _child(body: Callable[[], None], mask: set[int | signal.Signals] | None) -> NoReturn:
    code = 1
    try:
        default_handlers()
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        body()
        code = 0
    except BaseException:  # noqa: BLE001 - never return into the caller's code
        with contextlib.suppress(BaseException):
            os.write(2, traceback.format_exc().encode("utf-8", "replace"))
    finally:
        hard_exit(code)
