"""A worker that runs jobs in a thread of this process, where ``fork`` does not exist.

It has :class:`~specpack._core._process.worker.Worker`'s interface and the same typed-JSON
round trip.
A thread cannot be killed: on timeout it is abandoned. Output is not captured.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from multiprocessing.connection import wait
from typing import Any

from .._errors import SpecPackError
from .._text import format_exception, one_line
from .._typedjson import decode, encode
from .child import run_job
from .protocol import Outcome
from .tree import close_fds

__all__ = ["ThreadWorker"]


class _Task:
    """One job's thread: its answer and a pipe that rings when the answer is there."""

    def __init__(self) -> None:
        self.bell_r, self.bell_w = os.pipe()
        self.lock = threading.Lock()
        self.answer: dict[str, Any] | None = None
        self.abandoned = False
        self.started = time.perf_counter()

    def run(self, job: str, payload: bytes, params: dict[str, Any]) -> None:
        answer = run_job(job, payload, params)
        if answer["status"] == "ok":
            try:
                answer["value"] = decode(encode(answer["value"]), source="the job's result")
            except Exception as e:  # noqa: BLE001 - the same refusal a child would send
                answer = {"status": "error",
                          "error": f"SpecPackError: the job's result cannot be sent back as "
                                   f"typed JSON ({one_line(e)})",
                          "detail": format_exception(e)}
        with self.lock:
            self.answer = answer
            if self.abandoned:  # nobody will read: this thread owns the pipe now
                self.release()
            else:
                os.write(self.bell_w, b"x")

    def release(self) -> None:
        close_fds((self.bell_r, self.bell_w))


class ThreadWorker:
    """Runs one job at a time in a daemon thread of this process (it shares its state)."""

    where = "thread"
    label = "thread here"

    def __init__(self) -> None:
        self._task: _Task | None = None
        self._idle_r, self._idle_w = os.pipe()  # the waitable while no task runs

    def submit(self, job: str, payload: bytes, params: Mapping[str, Any]) -> None:
        if self._task is not None:
            raise SpecPackError("this thread worker is still running a task")
        task = self._task = _Task()
        threading.Thread(target=task.run, args=(job, payload, dict(params)),
                         name="specpack-thread-worker", daemon=True).start()

    @property
    def waitable(self) -> int:
        return self._task.bell_r if self._task is not None else self._idle_r

    def poll_outcome(self, timeout: float | None = 0.0) -> Outcome | None:
        task = self._task
        if task is None or not wait([task.bell_r], timeout):
            return None
        with task.lock:
            answer = task.answer
        assert answer is not None
        task.release()
        self._task = None
        ok = answer["status"] == "ok"
        return Outcome(status="ok" if ok else "error", value=answer.get("value"),
                       error=answer.get("error", ""), detail=answer.get("detail", ""),
                       stdout="", stderr="", elapsed=time.perf_counter() - task.started)

    def collect(self, timeout: float | None = None) -> Outcome:
        task = self._task
        outcome = self.poll_outcome(timeout)
        if outcome is not None or task is None:
            assert outcome is not None, "collect() without a submitted task"
            return outcome
        took = time.perf_counter() - task.started
        self.kill()
        return Outcome(status="timeout", value=None,
                       error=f"TimeoutError: the thread here did not finish within {took:.3g} s "
                             "(abandoned: a thread cannot be killed)",
                       detail="", stdout="", stderr="", elapsed=took)

    def kill(self) -> None:
        """Abandon a running job (its daemon thread runs on, then cleans up)."""
        task, self._task = self._task, None
        if task is not None:
            with task.lock:
                task.abandoned = True
                if task.answer is not None:
                    task.release()

    def close(self) -> None:
        self.kill()
        close_fds((self._idle_r, self._idle_w))

    def __enter__(self) -> ThreadWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
