"""A worker's processes: forks that never return into the caller, and the tree below a worker.

A fork child that raised on its way out would run the caller's program twice (``os._exit`` may
be a wrapper that raises, a signal handler may raise): :func:`fork_call` cannot. On Linux the
worker is a child subreaper below a reaper (:func:`reaper_above`) that also gets its
``clone(CLONE_PARENT)`` siblings; without ``prctl``/``/proc`` the caller kills the process group.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import functools
import importlib
import os
import select
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Collection, Iterable
from types import FrameType
from typing import Any, NoReturn

__all__ = ["become_subreaper", "block_all", "close_fds", "default_handlers", "descendants",
           "fork_call", "hard_exit", "kill_tree", "reaper_above"]

#: ``posix._exit``: whatever replaces ``os._exit`` later (coverage, a test double) leaves it.
_REAL_EXIT: Callable[[int], NoReturn] = importlib.import_module(os.name)._exit
#: prctl options (linux/prctl.h).
_PR_SET_CHILD_SUBREAPER, _PR_SET_DUMPABLE = 36, 4
#: Rounds of stopping newly found descendants before giving up on a tree that keeps growing.
_ROUNDS = 50
#: waitpid option: every child, also one whose exit signal is not SIGCHLD (linux/wait.h).
_WALL = 0x40000000
#: The signals that tell a reaper to end its tree and itself (it dies of the signal after).
_STOP_SIGNALS = ("SIGTERM", "SIGHUP")
#: Signals a reaper ignores (real-time ones too) unless a C handler is installed: what a job
#: sends its own process group must not end the reaper and leave the tree behind.
_IGNORED = ("SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF",
            "SIGIO", "SIGPWR", "SIGSTKFLT", "SIGXCPU", "SIGXFSZ", "SIGPIPE")
#: Milliseconds between a reaper's checks that its parent is still there (and of clone
#: children, which send no SIGCHLD); 20 where it cannot be woken by SIGCHLD.
_IDLE_MS, _POLL_MS = 500, 20
#: Seconds a reaper waits for the processes it killed to be gone before it ends anyway.
_SETTLE = 2.0


def close_fds(fds: Iterable[int]) -> None:
    """Close each of ``fds``, one already closed included."""
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


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
            default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
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


def become_subreaper() -> bool:
    """Make this process adopt the orphans among its descendants (Linux); True if it did."""
    return sys.platform.startswith("linux") and _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _parents() -> dict[int, list[int]]:
    """Each live pid's children, from ``/proc/*/stat`` (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return children
    for name in filter(str.isdigit, names):
        state, ppid = _stat(name)
        if state is not None and state != b"Z":
            children.setdefault(ppid, []).append(int(name))
    return children


def _stat(pid: int | str) -> tuple[bytes | None, int]:
    """A process's state letter and parent pid (``(None, 0)``: gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:  # gone meanwhile
        return None, 0
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses
    fields = stat[stat.rfind(b")") + 2:].split()
    return (fields[0], int(fields[1])) if len(fields) >= 2 else (None, 0)


@functools.lru_cache(maxsize=1)
def _children_files() -> bool:
    """Whether ``/proc/<pid>/task/<tid>/children`` exists here (Linux 4.2+ builds it in)."""
    return os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def _children(pid: int) -> list[int]:
    """``pid``'s children, zombies included, from the ``children`` file of each of its
    threads (a child belongs to the thread that forked it)."""
    found: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:  # gone meanwhile
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                found.extend(map(int, fh.read().split()))
        except OSError:  # that thread ended meanwhile
            continue
    return found


def descendants(root: int) -> set[int]:
    """The live (not zombie) processes below ``root`` (its children, theirs, ...).

    Where the kernel lists each thread's children, only the tree is read: a scan of every
    ``/proc/*/stat`` cost each worker's end milliseconds on a busy node."""
    if not _children_files():
        return _descendants_by_scan(root)
    found: set[int] = set()
    todo = [root]
    while todo:
        for pid in _children(todo.pop()):
            if pid not in found and pid != root:
                found.add(pid)
                todo.append(pid)
    return {pid for pid in found if _stat(pid)[0] not in (None, b"Z")}


def _descendants_by_scan(root: int) -> set[int]:
    children = _parents()
    found: set[int] = set()
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            if pid not in found and pid != root:
                found.add(pid)
                todo.append(pid)
    return found


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, sig)


def kill_tree(root: int, *, include_root: bool = True) -> None:
    """SIGKILL every descendant of ``root`` (and ``root`` with ``include_root``), frozen first
    with SIGSTOP (a stopped process cannot fork, nor die and hand its children on)."""
    stop = getattr(signal, "SIGSTOP", None)
    kill = getattr(signal, "SIGKILL", signal.SIGTERM)
    if stop is None:  # not POSIX: no tree to walk, no way to freeze one
        if include_root:
            _signal(root, kill)
        return
    if include_root:
        _signal(root, stop)
    frozen: set[int] = set()
    for _ in range(_ROUNDS):
        new = descendants(root) - frozen
        if not new:
            break
        for pid in new:
            _signal(pid, stop)
        frozen |= new
    for pid in frozen:
        _signal(pid, kill)
    if include_root:
        _signal(root, kill)


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def reaper_above(close: Collection[int] = ()) -> None:
    """Fork; the child returns as the worker, and this process, closing ``close``, stays above
    it as its reaper: it ends the tree left below and ends as the worker did. Not on Linux:
    returns at once, without a fork."""
    if not become_subreaper():
        return
    parent = os.getppid()
    mask = block_all()
    # an ignored SIGCHLD (inherited through exec) would let the kernel reap the worker unseen
    chld = _set_handler(signal.SIGCHLD, signal.SIG_DFL)
    pid = -1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # forking a threaded process
            pid = os.fork()
    finally:
        if pid <= 0:  # the worker, as this process was (or the fork failed)
            _set_handler(signal.SIGCHLD, chld)
            if mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if pid == 0:
        return
    try:
        _reap(pid, parent, close)
    finally:
        hard_exit(1)


def _set_handler(signum: int, handler: Any) -> Any:
    """Set a signal's handler (if this thread may); the one it had (``None``: unknown)."""
    try:
        old = signal.getsignal(signum)
        if old is not None and old != handler:
            signal.signal(signum, handler)
        return old
    except (OSError, ValueError, TypeError):
        return None


def _reap(worker: int, parent: int, close: Collection[int]) -> NoReturn:
    """The reaper's life (signals blocked on entry): wait, end the tree, end like the worker."""
    close_fds(close)
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)  # a reaper runs on Linux only
    asked: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if signum != signal.SIGCHLD:
            asked.append(signum)

    idle = _IDLE_MS
    try:
        default_handlers()  # the handlers this process had are the worker's business
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        for name in ("SIGCHLD", *_STOP_SIGNALS):
            signal.signal(getattr(signal, name), on_signal)
        ignored = [getattr(signal, n) for n in _IGNORED if hasattr(signal, n)]
        ignored += range(signal.SIGRTMIN, signal.SIGRTMAX + 1)  # a reaper runs on Linux only
        for signum in ignored:  # those left to their default (a C handler stays)
            with contextlib.suppress(OSError, ValueError):
                if signal.getsignal(signum) in (signal.SIG_DFL, signal.default_int_handler):
                    signal.signal(signum, signal.SIG_IGN)
    except (ValueError, OSError):  # not the main thread: no handlers, poll more often
        idle = _POLL_MS
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    poller = select.poll()
    poller.register(wake_r, select.POLLIN)
    status: int | None = None
    while True:
        status, left = _collect(worker, status)
        if status is not None or not left or asked or os.getppid() != parent:
            break
        poller.poll(idle)
        _drain(wake_r)
    if left:
        with contextlib.suppress(Exception):
            kill_tree(os.getpid(), include_root=False)
        end = time.monotonic() + _SETTLE
        while time.monotonic() < end:
            status, left = _collect(worker, status)
            if not left:
                break
            poller.poll(_POLL_MS)
            _drain(wake_r)
    if asked:
        _die_of(asked[0])
    if status is None:  # the parent went away: nobody reads the code
        hard_exit(1)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        _die_of(-code)
    hard_exit(code)


def _collect(worker: int, status: int | None) -> tuple[int | None, bool]:
    """Reap every ended child: the worker's wait status (else ``status``); whether any is left."""
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG | _WALL)
        except ChildProcessError:
            return status, False
        if pid == 0:
            return status, True
        if pid == worker:
            status = st


def _drain(fd: int) -> None:
    with contextlib.suppress(OSError):
        while os.read(fd, 512):
            pass


def _die_of(signum: int) -> NoReturn:
    """End this process by ``signum`` (without a core dump); if it survives, code 128+n."""
    with contextlib.suppress(Exception):
        faulthandler.disable()
    _prctl(_PR_SET_DUMPABLE, 0)  # no core file for a signal the worker died of
    with contextlib.suppress(Exception):
        signal.signal(signum, signal.SIG_DFL)
    with contextlib.suppress(Exception):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        signal.raise_signal(signum)
    hard_exit(128 + signum)
