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


#: OpenBLAS's idle threads spin for 2**n cycles before they sleep (n from 4 to 30; default 28,
#: about 0.1 s of a core in every interpreter that imports numpy). A fresh interpreter of the
#: harness is a probe that starts beside another (verify's rebuild and its hash control, the
#: audit's jobs): it gets the shortest wait unless its environment names one. The number of
#: threads, and so every result, is unchanged; only how long an idle thread spins.
BLAS_SPIN = ("OPENBLAS_THREAD_TIMEOUT", "4")


def child_environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """The environment of a fresh interpreter: ``env`` (default: this process's), with every
    ``PYTHONPATH`` entry made absolute against this process's working directory (an empty
    entry, which Python reads as the working directory, becomes that directory), and
    :data:`BLAS_SPIN` unless ``env`` sets that variable."""
    out = dict(os.environ if env is None else env)
    out.setdefault(*BLAS_SPIN)
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


#: Children asked to stop, each with the time it must be gone by (see :func:`reap_later`),
#: and the one thread of this process that watches them (started on first use, then idle).
_STOPPING: dict[Child, float] = {}
_STOPPING_CHANGED = threading.Condition()
_REAPER: list[threading.Thread] = []
#: Longest pause of the reaper thread between two looks at the children it watches.
_REAP_PAUSE = 0.05


def reap_later(child: Child, grace: float) -> None:
    """Leave a child that was asked to stop to this process's reaper thread: it waits up to
    ``grace`` seconds for the child to end, then kills its process group (and its tree, if
    still there).

    One thread watches every such child (started the first time, it then waits idle): a
    thread started per child made each worker's ``close`` wait until the new thread ran,
    which on a busy machine (the children that were just told to stop are ending) took
    milliseconds, at the end of every verify.
    """
    with _STOPPING_CHANGED:
        _STOPPING[child] = time.monotonic() + grace
        _STOPPING_CHANGED.notify_all()
        if not (_REAPER and _REAPER[0].is_alive()):
            _REAPER[:] = [threading.Thread(target=_reap, name="specpack-reaper", daemon=True)]
            _REAPER[0].start()


def _reap() -> None:
    """The reaper thread: end each child asked to stop once it ended by itself or its grace
    is over (kill its process group and tree, reap it)."""
    pause = 0.001
    while True:
        with _STOPPING_CHANGED:
            while not _STOPPING:
                _STOPPING_CHANGED.wait()
                pause = 0.001
            watched = list(_STOPPING.items())
        now = time.monotonic()
        for stopping, end in watched:
            try:
                if now < end and stopping.poll() is None:
                    continue
            except Exception:  # noqa: BLE001 - a child that cannot be polled is ended now
                pass
            try:
                stopping.kill()
                stopping.wait(5.0)  # reap it
            except Exception:  # noqa: BLE001 - one child's failure must not stop this thread,
                pass  # which watches the others too (a thread per child only lost its own)
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
    with _STOPPING_CHANGED:
        while _STOPPING:
            left = end - time.monotonic()
            if left <= 0:
                return False
            _STOPPING_CHANGED.wait(left)
    return True
