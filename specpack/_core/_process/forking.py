"""Forking so that the child can never return into the caller's code.

A plain ``os.fork`` child runs on the caller's stack: if anything raises on its way out, it
goes on running the caller's program (a test session, a training script) as a second copy.
Two things can make that happen in a process that holds other libraries' hooks:

- ``os._exit`` replaced by a wrapper that can raise (coverage's ``patch = ["_exit"]`` saves its
  data first and lets anything but ``Exception`` through);
- a Python signal handler that raises (Ray's driver installs ``SIGTERM -> sys.exit``, and never
  restores it) running between ``os.fork()`` returning and the child's ``try`` block, or during
  that wrapper.

:func:`fork_call` blocks every signal around ``os.fork()`` (the child starts with them blocked
and with no signal pending at the Python level), resets the handlers the caller installed to
their defaults and unblocks signals only inside the protected region, and ends the child with
:func:`hard_exit`: ``os._exit`` (whatever wraps it) and, should that raise, the real
``posix._exit``.
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

#: The operating system's own ``_exit`` (``posix._exit``): whatever replaces ``os._exit`` later
#: (coverage, a test double) does not replace it.
_REAL_EXIT: Callable[[int], NoReturn] = importlib.import_module(os.name)._exit


def block_all() -> set[int | signal.Signals] | None:
    """Block every signal in this thread; the previous mask (None where there are no masks)."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())


def hard_exit(code: int) -> NoReturn:
    """End this process now with ``code``; never returns, never raises.

    Signals are blocked first (a handler cannot run, and raise, any more); then ``os._exit``
    runs, which may be a wrapper (coverage saves its data there); if that raises, the real
    ``posix._exit`` ends the process.
    """
    try:
        block_all()
        os._exit(code)
    finally:
        _REAL_EXIT(code)


def default_handlers() -> None:
    """Put back the default action of every signal whose handler is Python code.

    A fork child inherits the caller's Python handlers (Ray's ``SIGTERM -> sys.exit``,
    coverage's ``SIGTERM`` saver, a training loop's ``SIGINT`` handler); they are not the
    child's business. ``SIGINT`` gets Python's own default (``KeyboardInterrupt``); handlers
    set to ignore stay ignored.
    """
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
    """Fork; the child runs ``body`` and ends (code 0, or 1 if ``body`` raised).

    Parameters
    ----------
    body
        What the child does. Everything it raises is written to file descriptor 2.

    Returns
    -------
    int
        The child's pid (in the parent; the child never returns from this call).

    Raises
    ------
    OSError
        The fork failed.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    parent = os.getpid()
    mask = block_all()
    pid = -1
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking a threaded process may deadlock the child; a
            # worker child only runs the job (and is killed at the deadline if it deadlocks).
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            _child(body, mask)
    finally:
        # the child, whatever happened on its way here (even before ``pid`` was assigned:
        # a wrapper of os.fork that raises in the child)
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
