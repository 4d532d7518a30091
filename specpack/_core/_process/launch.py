"""Starting a worker child for each start method, and stopping it with its process tree.

Every child gets its own session; on Linux the started process is the worker's reaper
(:mod:`.tree`), so killing it kills every process its jobs started. ``"fork"`` children can
never return into this process's code (:func:`.tree.fork_call`).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

from .._blas import BLAS_SPIN
from .._errors import SpecPackError
from . import bare, child, tree
from .tree import fork_call

__all__ = ["FRESH", "WHERE", "Child", "Where", "child_environment", "fork_available", "label",
           "reap_later", "start", "wait_stopped"]

Where = Literal["subprocess", "bare", "spawn", "forkserver", "fork"]
WHERE: tuple[Where, ...] = ("subprocess", "bare", "spawn", "forkserver", "fork")
#: Where a *rebuild* may run (verify, the audit, the CLI): every kind but "fork", which shares
#: this process's state and so proves nothing about a process boundary.
Boundary = Literal["subprocess", "bare", "spawn", "forkserver"]
BOUNDARIES: tuple[Boundary, ...] = ("subprocess", "bare", "spawn", "forkserver")
#: The kinds that are a fresh ``python`` (a hash seed of their own, set by specpack).
FRESH: tuple[Where, ...] = ("subprocess", "bare")

#: The fresh interpreter imports this process's specpack (the protocol must match on both ends),
#: its folder on ``sys.path`` only for that import; counted from this module's dotted name.
_HOME = str(Path(__file__).resolve().parents[__name__.count(".")])
_TREE = str(Path(__file__).resolve().with_name("tree.py"))
#: A fresh interpreter forks its reaper (:func:`.tree.reaper_above`, :mod:`.tree` loaded on its
#: own) before it imports anything else: forked after the imports, the worker went on to copy
#: some 2,000 pages it had shared with the reaper (~9 ms of each start). What the imports made
#: lives as long as the worker: frozen (``gc.freeze``), the GC never walks it again.
_BOOT = (
    "import importlib.util, os, sys\n"
    "spec = importlib.util.spec_from_file_location('_specpack_tree', {tree!r})\n"
    "tree = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(tree)\n"
    "tree.reaper_above(close=[int(fd) for fd in os.environ[{fds!r}].split(',')])\n"
    "del tree, spec\n"
    "sys.path.insert(0, {home!r})\n"
    "try:\n"
    "    from specpack._core._process.child import main\n"
    "finally:\n"
    "    sys.path.remove({home!r})\n"
    "import gc\n"
    "gc.freeze()\n"
    "main(reaper=False)\n"
)


def fork_available() -> bool:
    """Whether this platform can ``fork`` (the ``"fork"`` worker and verify's local side)."""
    return hasattr(os, "fork") and "fork" in mp.get_all_start_methods()


def label(where: str) -> str:
    """How reports name a worker of ``where``: ``"fresh interpreter"``, ``"spawn child"``."""
    names = {"subprocess": "fresh interpreter", "bare": "bare interpreter"}
    return names.get(where, f"{where} child")


def child_environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """A fresh interpreter's environment: ``env`` (default: this process's) with
    :data:`~specpack._core._blas.BLAS_SPIN` unless set, and ``PYTHONPATH`` made absolute (an
    empty entry: the working directory)."""
    out = dict(os.environ if env is None else env)
    out.setdefault(*BLAS_SPIN)
    path = out.get("PYTHONPATH")
    if path:
        out["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(p) if p else os.getcwd() for p in path.split(os.pathsep))
    return out


class Child:
    """A started worker process (on Linux the worker's reaper, which exits as the worker did):
    its pid, its exit code, and a kill of its process tree."""

    def __init__(self, pid: int, handle: Any = None, report: str | None = None) -> None:
        self.pid, self._handle, self.report = pid, handle, report
        self._code: int | None = None

    def poll(self) -> int | None:
        """The exit code (negative: killed by that signal) once exited, else ``None``."""
        if self._code is not None:
            return self._code
        handle = self._handle
        if isinstance(handle, subprocess.Popen):
            self._code = handle.poll()
        elif handle is not None:
            self._code = handle.exitcode
        else:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped by someone else (a SIGCHLD handler)
                self._code = 255
            else:
                if pid:
                    self._code = os.waitstatus_to_exitcode(status)
        return self._code

    def wait(self, timeout: float) -> int | None:
        """The exit code, waiting up to ``timeout`` seconds for it."""
        end = time.monotonic() + timeout
        pause = 0.001
        while self.poll() is None:
            left = end - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.05)
        return self._code

    def kill(self) -> None:
        """SIGKILL the child, every process below it (:func:`.tree.kill_tree`) and its group."""
        if self.poll() is None:  # not reaped: the pid is still this child's
            tree.kill_tree(self.pid)
        if hasattr(os, "killpg"):
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)


def start(where: Where, ctl_r: int, res_w: int, *, boot_out: str, boot_err: str,
          cwd: str | None, env: Mapping[str, str] | None,
          close_in_fork: Collection[int] = (), hide: Collection[str] = ()) -> Child:
    """Start a worker child that reads tasks on ``ctl_r`` and answers on ``res_w`` (the caller
    closes its copies); what it prints outside tasks goes to ``boot_out``/``boot_err``."""
    if where in FRESH:
        environment = {**child_environment(env), child.FDS_VARIABLE: f"{ctl_r},{res_w}"}
        loop = _BOOT.format(home=_HOME, tree=_TREE, fds=child.FDS_VARIABLE)
        argv, report = [sys.executable, "-c", loop], None
        if where == "bare":
            report = os.path.join(os.path.dirname(boot_out), "bare.json")
            argv, environment = bare.command(environment, home=_HOME, hide=hide, report=report,
                                             keep=(os.path.dirname(boot_out), cwd), loop=loop)
        with open(boot_out, "ab") as out, open(boot_err, "ab") as err:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    cwd=cwd, env=environment, pass_fds=(ctl_r, res_w),
                                    start_new_session=True)
        return Child(proc.pid, proc, report)
    if where == "fork" and not fork_available():
        raise SpecPackError("where='fork' needs os.fork, which this platform does not have")
    own_env = None if env is None else child_environment(env)
    if where != "fork":
        return _mp(where, ctl_r, res_w, boot_out, boot_err, cwd, own_env)

    def body() -> None:
        tree.close_fds(close_in_fork)
        child.fork_main(ctl_r, res_w, boot_out, boot_err, cwd, own_env)

    return Child(fork_call(body))


def _mp(where: Where, ctl_r: int, res_w: int, boot_out: str, boot_err: str, cwd: str | None,
        env: dict[str, str] | None) -> Child:
    ctx: Any = mp.get_context(where)
    ctl = Connection(os.dup(ctl_r), writable=False)
    res = Connection(os.dup(res_w), readable=False)
    try:
        proc = ctx.Process(target=child.mp_main, name=f"specpack-{where}-worker", daemon=False,
                           args=(ctl, res, boot_out, boot_err, cwd, env, where == "spawn"))
        try:
            proc.start()
        except AssertionError as e:  # "daemonic processes are not allowed to have children"
            raise SpecPackError(
                f"cannot start a {where} child from this process ({e}); use "
                "where='subprocess' (a fresh interpreter) instead"
            ) from None
    finally:
        ctl.close()
        res.close()
    return Child(proc.pid, proc)


#: Children asked to stop, with the time each must be gone by, and the one thread watching them.
_STOPPING: dict[Child, float] = {}
_STOPPING_CHANGED = threading.Condition()
_REAPER: list[threading.Thread] = []
#: Longest pause of the reaper thread between two looks at the children it watches.
_REAP_PAUSE = 0.05


def reap_later(child: Child, grace: float) -> None:
    """Leave a child asked to stop to the reaper thread: killed with its tree after ``grace``.
    One thread for all: a thread per child made every ``close`` wait milliseconds for it."""
    with _STOPPING_CHANGED:
        _STOPPING[child] = time.monotonic() + grace
        _STOPPING_CHANGED.notify_all()
        if not (_REAPER and _REAPER[0].is_alive()):
            _REAPER[:] = [threading.Thread(target=_reap, name="specpack-reaper", daemon=True)]
            _REAPER[0].start()


def _reap() -> None:
    """The reaper thread: kill and reap each child asked to stop once ended or out of grace."""
    pause = 0.001
    while True:
        with _STOPPING_CHANGED:
            while not _STOPPING:
                _STOPPING_CHANGED.wait()
                pause = 0.001
            watched = list(_STOPPING.items())
        now = time.monotonic()
        for stopping, end in watched:
            with contextlib.suppress(Exception):  # a child that cannot be polled is ended now
                if now < end and stopping.poll() is None:
                    continue
            try:  # one child's failure must not stop this thread, which watches the others too
                with contextlib.suppress(Exception):
                    stopping.kill()
                    stopping.wait(5.0)  # reap it
            finally:
                with _STOPPING_CHANGED:
                    _STOPPING.pop(stopping, None)
                    _STOPPING_CHANGED.notify_all()
        with _STOPPING_CHANGED:
            if _STOPPING:
                _STOPPING_CHANGED.wait(pause)
        pause = min(pause * 2, _REAP_PAUSE)


def _forget_stopping() -> None:
    """In a fork child: the children being stopped are its parent's, and so is the thread."""
    global _STOPPING_CHANGED
    _STOPPING.clear()
    _STOPPING_CHANGED = threading.Condition()
    _REAPER.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_stopping)


def wait_stopped(timeout: float) -> bool:
    """Whether every child asked to stop is gone within ``timeout`` seconds."""
    with _STOPPING_CHANGED:
        return _STOPPING_CHANGED.wait_for(lambda: not _STOPPING, timeout)
