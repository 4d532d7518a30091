"""The parent side of the worker protocol: :class:`Worker` and :func:`run_one`.

``submit`` writes the request to a file and names it on the control pipe; the answer comes back
on the answer pipe as a keyed frame. A deadline that passes kills the child with its tree.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
import time
import weakref
from collections.abc import Collection, Mapping
from multiprocessing.connection import wait
from typing import Any

from .._errors import SpecPackError
from .._text import one_line
from . import launch, protocol
from .launch import FRESH, WHERE, Where, label
from .protocol import Outcome, pack_frame, read_capture
from .tree import close_fds

__all__ = ["Worker", "label", "run_one"]

#: This process's ends of every live worker's pipes (closed in "fork" children).
_PARENT_FDS: set[int] = set()
_LIVE: weakref.WeakSet[Worker] = weakref.WeakSet()
#: Longest wait between two checks that a silent child is still alive.
_SLICE = 1.0
#: Seconds an idle child gets to exit by itself when its worker closes, before it is killed.
STOP_GRACE = 2.0

_MAIN_GUARD_HINT = ("it died before it could take the task: a {where} child first re-imports the "
                    "main script ({script}), so a script that calls verify()/audit() at top level "
                    "runs again in the child and fails there; put that code under "
                    "`if __name__ == \"__main__\":`")


class Worker:
    """One child process of ``where`` that runs jobs one at a time.

    ``"subprocess"`` is a fresh ``sys.executable`` (in a temporary ``cwd``), ``"bare"`` the same
    seeing only what an installed node would have (:mod:`.bare`; ``hide``: more paths to hide),
    ``"fork"`` shares this process's state. ``env`` defaults to this process's.
    """

    def __init__(self, where: Where, *, cwd: str | None = None,
                 env: Mapping[str, str] | None = None, hide: Collection[str] = ()) -> None:
        if where not in WHERE:
            raise SpecPackError(f"where={where!r} is not one of {', '.join(WHERE)}")
        self.where: Where = where
        self.label = label(where)
        self._dir = tempfile.mkdtemp(prefix="specpack-worker-")
        self._boot = (os.path.join(self._dir, "boot.out"), os.path.join(self._dir, "boot.err"))
        if cwd is None and where in FRESH:
            cwd = os.path.join(self._dir, "cwd")
            os.mkdir(cwd)
        self._task = 0
        self._pending: dict[str, Any] | None = None
        self._key = protocol.new_key()
        self._reader = protocol.FrameReader(f"the {self.label}", self._key)
        self._closed = False
        self._owner = os.getpid()
        self._start_error = ""
        self.child: launch.Child | None = None
        ctl_r, self._ctl = os.pipe()
        self._res, res_w = os.pipe()
        _PARENT_FDS.update((self._ctl, self._res))
        os.set_blocking(self._ctl, False)
        os.set_blocking(self._res, False)
        try:
            self.child = launch.start(where, ctl_r, res_w, boot_out=self._boot[0],
                                      boot_err=self._boot[1], cwd=cwd, env=env,
                                      close_in_fork=tuple(_PARENT_FDS), hide=hide)
        except OSError as e:
            self._start_error = f"could not start the {self.label}: {one_line(e)}"
        except BaseException:
            self._release()
            raise
        finally:
            os.close(ctl_r)
            os.close(res_w)
        if self.child is not None:
            with contextlib.suppress(OSError):  # a dead child: the first task says how it died
                os.write(self._ctl, pack_frame({"op": "key", "key": self._key.hex()}))
        _LIVE.add(self)

    def submit(self, job: str, payload: bytes, params: Mapping[str, Any]) -> None:
        """Run ``job(payload, **params)`` in the child: ``job`` is ``"package.module:function"``,
        ``params`` typed-JSON-able (SpecPackError if not, or if the worker is busy or closed)."""
        if self._closed:
            raise SpecPackError(f"this {self.label} worker is closed")
        if self._pending is not None:
            raise SpecPackError(f"this {self.label} worker is still running a task; collect "
                                "its outcome first")
        self._task += 1
        n = self._task
        paths = {k: os.path.join(self._dir, f"task{n}.{k}") for k in ("request", "out", "err")}
        header = {"task": n, "job": job, "params": dict(params),
                  "stdout": paths["out"], "stderr": paths["err"]}
        try:
            protocol.write_request(paths["request"], header, payload)
        except SpecPackError as e:
            raise SpecPackError(f"the params of job {job!r} cannot be sent to a worker: "
                                f"{e}") from None
        self._pending = {"task": n, "started": time.perf_counter(), **paths}
        if self.child is not None:
            with contextlib.suppress(OSError):  # a dead child: the outcome says how it died
                os.write(self._ctl, pack_frame({"op": "task", "task": n,
                                                "request": paths["request"]}))

    @property
    def waitable(self) -> int:
        """A ``multiprocessing.connection.wait`` fd: ready on an answer or the child's death."""
        return self._res

    def poll_outcome(self, timeout: float | None = 0.0) -> Outcome | None:
        """The task's outcome if there within ``timeout`` seconds (``None``: no limit), or None."""
        if self._pending is None:
            return None
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            outcome = self._step(end)
            if outcome is not None:
                self._pending = None
                return outcome
            if end is not None and time.monotonic() >= end:
                return None

    def collect(self, timeout: float | None = None) -> Outcome:
        """The task's outcome within ``timeout`` seconds, else ``"timeout"`` (its tree killed)."""
        outcome = self.poll_outcome(timeout)
        if outcome is not None:
            return outcome
        pending = self._pending
        assert pending is not None
        self.kill()
        took = time.perf_counter() - pending["started"]
        self._pending = None
        return Outcome(status="timeout", value=None,
                       error=f"TimeoutError: the {self.label} did not finish within {took:.3g} s "
                             "(killed with its process tree)",
                       detail="", stdout=read_capture(pending["out"]),
                       stderr=read_capture(pending["err"]), elapsed=took)

    def _step(self, end: float | None) -> Outcome | None:
        """Read what is there (waiting at most until ``end``); an outcome once complete."""
        outcome = self._parsed()
        if outcome is not None:
            return outcome
        if self.child is None:
            return self._died(self._start_error)
        left = _SLICE if end is None else min(_SLICE, max(end - time.monotonic(), 0.0))
        if not wait([self._res], left):  # exited, but a forked process may hold the pipe open
            return self._died("") if self.child.poll() is not None else None
        try:
            chunk = os.read(self._res, 1 << 20)
        except BlockingIOError:
            return None
        except OSError as e:
            return self._died(f"the answer pipe failed ({one_line(e)})")
        if not chunk:
            return self._died("")
        self._reader.feed(chunk)
        return self._parsed()

    def _parsed(self) -> Outcome | None:
        assert self._pending is not None
        try:
            message = self._reader.next()
            while message is not None and message.get("task") != self._pending["task"]:
                message = self._reader.next()  # a stale answer
        except protocol.ProtocolError as e:
            return self._died(f"ProtocolError: {e}", broken=True)
        return None if message is None else self._answer(message)

    def _answer(self, message: dict[str, Any]) -> Outcome:
        pending = self._pending
        assert pending is not None
        ok = message.get("status") == "ok"
        if not ok and message.get("status") != "error":
            return self._died("ProtocolError: an answer without a status", broken=True)
        return Outcome(status="ok" if ok else "error", value=message.get("value") if ok else None,
                       error="" if ok else str(message.get("error", "")),
                       detail="" if ok else str(message.get("detail", "")),
                       stdout=read_capture(pending["out"]), stderr=read_capture(pending["err"]),
                       elapsed=time.perf_counter() - pending["started"])

    def _died(self, why: str, broken: bool = False) -> Outcome:
        """The outcome of a child that will not answer, killed if still alive: at once if
        ``broken`` (it sent something unreadable), else after a moment to exit by itself."""
        pending = self._pending
        assert pending is not None
        code = None
        if self.child is not None:
            if broken:
                self.child.kill()
            code = self.child.wait(1.0)
            if code is None:
                self.child.kill()
                code = self.child.wait(5.0)
        started = not os.path.exists(pending["request"])
        stdout = read_capture(pending["out"] if started else self._boot[0])
        stderr = read_capture(pending["err"] if started else self._boot[1])
        how = why or f"the {self.label} {protocol.exit_text(code)}"
        lines = [how]
        if not started:
            script = getattr(sys.modules.get("__main__"), "__file__", None)
            lines.append(_MAIN_GUARD_HINT.format(where=self.where, script=script)
                         if self.where in ("spawn", "forkserver") and script
                         else "it died before it could take the task (while starting up)")
        if stderr.strip():
            lines += ["stderr:", *protocol.head_and_tail(stderr.rstrip().splitlines())]
        if self.child is not None:
            self.child.kill()
        return Outcome(status="died", value=None, error=f"WorkerDied: {how}",
                       detail="\n".join(lines), stdout=stdout, stderr=stderr,
                       elapsed=time.perf_counter() - pending["started"])

    def kill(self) -> None:
        """Kill the child and its process tree now (a running task then reads as died)."""
        if self.child is not None:
            self.child.kill()
            self.child.wait(5.0)

    def close(self) -> None:
        """End the child and remove the worker's files; returns at once. An idle child is asked
        to stop (so it runs its ``atexit`` hooks) and killed after :data:`STOP_GRACE` seconds by
        the reaper thread; a busy one is killed at once with its process tree."""
        if self._closed:
            return
        self._closed = True
        if os.getpid() != self._owner:  # a fork of the process that started it (atexit, gc):
            close_fds((self._ctl, self._res))  # its copies; leave the child be
            return
        if not self._ask_to_stop():
            self.kill()
        self._release()
        _LIVE.discard(self)

    def _ask_to_stop(self) -> bool:
        """Send an idle, live child the stop message and leave it to a reaper thread."""
        child = self.child
        if child is None or self._pending is not None or child.poll() is not None:
            return False
        try:
            os.write(self._ctl, pack_frame({"op": "stop"}))
        except OSError:  # its end of the pipe is gone: nothing to ask
            return False
        launch.reap_later(child, STOP_GRACE)
        return True

    def _release(self) -> None:
        _PARENT_FDS.difference_update((self._ctl, self._res))
        close_fds((self._ctl, self._res))
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __repr__(self) -> str:
        pid = self.child.pid if self.child is not None else None
        return f"<Worker {self.where} pid={pid}{' closed' if self._closed else ''}>"


def run_one(where: Where, job: str, payload: bytes, params: Mapping[str, Any], *,
            deadline: float) -> Outcome:
    """Run one job in a new worker of ``where`` and close it; at ``deadline`` (a
    ``time.monotonic()`` time) the child is killed (status ``"timeout"``)."""
    with Worker(where) as worker:
        worker.submit(job, payload, params)
        return worker.collect(timeout=max(deadline - time.monotonic(), 0.0))


@atexit.register
def _kill_leftovers() -> None:
    """No worker outlives this process (multiprocessing would otherwise wait for them)."""
    for worker in list(_LIVE):
        with contextlib.suppress(Exception):
            worker.close()
    launch.wait_stopped(STOP_GRACE + 1.0)
