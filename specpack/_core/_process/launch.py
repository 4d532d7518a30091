"""Starting a worker child for each start method, and stopping it with its process tree.

Every child gets its own session (its process group can be killed as a whole) and the two
protocol pipe ends; on Linux it is the worker's *reaper*: it forks the process that serves and
adopts the orphans among its descendants (:mod:`.tree`), so killing it kills every process its
jobs started, new sessions, double-forked daemons and siblings of the worker
(``clone(CLONE_PARENT)``) included. ``"subprocess"`` starts
``sys.executable`` with the caller's environment, ``PYTHONPATH`` entries made absolute against
the caller's working directory, and the pipe fd numbers in a variable the child deletes (not on
its command line); ``"bare"`` is such an interpreter that sees only what an installed node
would have (:mod:`.bare`); ``"spawn"``/``"forkserver"`` are multiprocessing children;
``"fork"`` is a fork of this process (it shares this process's state) that can never return
into this process's code (:mod:`.forking`).
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

from .._errors import SpecPackError
from . import bare, child, tree
from .forking import fork_call

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

#: The specpack this process runs is the one the fresh interpreter imports (the protocol must
#: match on both ends); the directory that holds the ``specpack`` package is on ``sys.path``
#: only while that import runs. Counted from this module's own dotted name, so that it stays
#: right wherever the module sits in the package.
_HOME = str(Path(__file__).resolve().parents[__name__.count(".")])
_BOOT = (
    "import sys\n"
    "sys.path.insert(0, {home!r})\n"
    "try:\n"
    "    from specpack._core._process.child import main\n"
    "finally:\n"
    "    sys.path.remove({home!r})\n"
    "main()\n"
)
#: The variable that tells a fresh interpreter its pipe fds (``"CTL,RES"``); it deletes it.
FDS_VARIABLE = child.FDS_VARIABLE


def fork_available() -> bool:
    """Whether this platform can ``fork`` (the ``"fork"`` worker and verify's local side)."""
    return hasattr(os, "fork") and "fork" in mp.get_all_start_methods()


def label(where: str) -> str:
    """How reports name a worker of ``where``: ``"fresh interpreter"``, ``"spawn child"``."""
    names = {"subprocess": "fresh interpreter", "bare": "bare interpreter"}
    return names.get(where, f"{where} child")


def child_environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """The environment of a fresh interpreter: ``env`` (default: this process's), with every
    ``PYTHONPATH`` entry made absolute against this process's working directory (an empty
    entry, which Python reads as the working directory, becomes that directory)."""
    out = dict(os.environ if env is None else env)
    path = out.get("PYTHONPATH")
    if path:
        out["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(p) if p else os.getcwd() for p in path.split(os.pathsep))
    return out


class Child:
    """A started worker process: its pid, its exit code, and a kill of its process tree.

    On Linux the process is the worker's reaper (:func:`.tree.reaper_above`): the process that
    runs the jobs is its child, and its exit code is that process's.
    """

    def __init__(self, pid: int, where: Where, handle: Any = None,
                 report: str | None = None) -> None:
        self.pid = pid
        self.where = where
        self._handle = handle
        #: A bare child's report file (what it hid, :func:`.bare.read_report`).
        self.report = report
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
        """SIGKILL the child, every process below it and its process group.

        The tree is stopped before it is killed (:func:`.tree.kill_tree`), so a process that
        forks meanwhile cannot leave a child behind.
        """
        if self.poll() is None:  # not reaped: the pid is still this child's
            tree.kill_tree(self.pid)
        if hasattr(os, "killpg"):
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)


def start(where: Where, ctl_r: int, res_w: int, *, boot_out: str, boot_err: str,
          cwd: str | None, env: Mapping[str, str] | None,
          close_in_fork: Collection[int] = (), hide: Collection[str] = ()) -> Child:
    """Start a worker child that reads tasks on ``ctl_r`` and answers on ``res_w``.

    Parameters
    ----------
    where
        The start method.
    ctl_r, res_w
        The child's ends of the control and answer pipes (the caller closes its copies).
    boot_out, boot_err
        Files for what the child writes outside of tasks (start-up errors).
    cwd, env
        Working directory and environment (``None``: a fresh interpreter gets this process's
        environment and ``cwd``; other children keep this process's).
    close_in_fork
        This process's ends of other pipes, closed in a ``"fork"`` child.
    hide
        For ``"bare"``: more paths the child must not see (a file: its folder), besides this
        process's own folders (:mod:`.bare`).

    Raises
    ------
    SpecPackError
        The child cannot be started from here (a daemonic multiprocessing worker).
    OSError
        The interpreter could not be executed.
    """
    if where in FRESH:
        environment = {**child_environment(env), FDS_VARIABLE: f"{ctl_r},{res_w}"}
        loop = _BOOT.format(home=_HOME)
        argv, report = [sys.executable, "-c", loop], None
        if where == "bare":
            report = os.path.join(os.path.dirname(boot_out), "bare.json")
            argv, environment = bare.command(environment, home=_HOME, hide=hide, report=report,
                                             keep=(os.path.dirname(boot_out), cwd), loop=loop)
        with open(boot_out, "ab") as out, open(boot_err, "ab") as err:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd,
                env=environment, pass_fds=(ctl_r, res_w), start_new_session=True,
            )
        return Child(proc.pid, where, proc, report)
    if where == "fork":
        return _fork(ctl_r, res_w, boot_out, boot_err, cwd, env, close_in_fork)
    return _mp(where, ctl_r, res_w, boot_out, boot_err, cwd, env)


def _mp(where: Where, ctl_r: int, res_w: int, boot_out: str, boot_err: str, cwd: str | None,
        env: Mapping[str, str] | None) -> Child:
    ctx: Any = mp.get_context(where)
    ctl = Connection(os.dup(ctl_r), writable=False)
    res = Connection(os.dup(res_w), readable=False)
    try:
        proc = ctx.Process(
            target=child.mp_main,
            args=(ctl, res, boot_out, boot_err, cwd,
                  None if env is None else child_environment(env), where == "spawn"),
            name=f"specpack-{where}-worker", daemon=False,
        )
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
    return Child(proc.pid, where, proc)


def _fork(ctl_r: int, res_w: int, boot_out: str, boot_err: str, cwd: str | None,
          env: Mapping[str, str] | None, close_in_fork: Collection[int]) -> Child:
    if not fork_available():
        raise SpecPackError("where='fork' needs os.fork, which this platform does not have")
    environment = None if env is None else child_environment(env)

    def body() -> None:
        for fd in close_in_fork:
            with contextlib.suppress(OSError):
                os.close(fd)
        child.fork_main(ctl_r, res_w, boot_out, boot_err, cwd, environment)

    return Child(fork_call(body), "fork")


#: Threads waiting for a child that was asked to stop (see :func:`reap_later`).
_REAPERS: set[threading.Thread] = set()


def reap_later(child: Child, grace: float) -> None:
    """Leave a child that was asked to stop to a thread: it waits up to ``grace`` seconds for
    the child to end, then kills its process group (and its tree, if still there)."""
    reaper = threading.Thread(target=_reap, args=(child, grace), name="specpack-reaper",
                              daemon=True)
    _REAPERS.add(reaper)
    reaper.start()


def _reap(child: Child, grace: float) -> None:
    try:
        child.wait(grace)
        child.kill()
        child.wait(5.0)  # reap it
    finally:
        _REAPERS.discard(threading.current_thread())


def wait_stopped(timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for every child asked to stop to be gone.

    Parameters
    ----------
    timeout
        Seconds to wait in all.

    Returns
    -------
    bool
        True when none is left.
    """
    end = time.monotonic() + timeout
    for reaper in list(_REAPERS):
        reaper.join(max(end - time.monotonic(), 0.0))
    return not _REAPERS
