"""Driving audit jobs to findings over workers of :mod:`specpack._core._process`: per side
``jobs`` slots of one worker each, a new ``fork`` per reference task, long-lived remote and
hash-control workers fed one env after another (docs/audit.md, "How it works", says why)."""

from __future__ import annotations

import os
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import wait
from typing import Any

from ..._core._process.child import load_job
from ..._core._process.protocol import Outcome
from ..._core._process.worker import Worker
from ..._core._text import format_exception, one_line
from ..._core._typedjson import decode, encode
from .classify import Overtime, time_limit
from .jobs import CONTROL, REFERENCE, REMOTE, Context, Decided, Job, Task
from .output import Capture
from .report import CAPTURE_ERROR, NOT_IDENTICAL, REBUILD_ERROR, UNSEEDED, Finding

__all__ = ["CONFIRMED", "Scheduler", "run_here"]

#: Verdicts that a remote worker's history could cause, so they are confirmed in clean ones.
CONFIRMED = frozenset({NOT_IDENTICAL, REBUILD_ERROR, UNSEEDED})
#: The order the scheduler feeds the sides' slots.
SIDES = (REMOTE, CONTROL, REFERENCE)


def _outcome(status: str, *, value: Any = None, error: str = "", detail: str = "") -> Outcome:
    return Outcome(status=status, value=value, error=error, detail=detail,  # type: ignore[arg-type]
                   stdout="", stderr="", elapsed=0.0)


def run_here(task: Task, timeout: float) -> Outcome:
    """Run a task's job function in this process, bounded by ``timeout`` where possible: its
    value through typed JSON and its output captured, as from a worker."""
    printed = Capture()
    with printed:
        start = time.perf_counter()
        try:
            with time_limit(timeout):
                value = load_job(task.function)(task.payload, **task.params)
            outcome = _outcome("ok", value=decode(encode(value), source="the job's result"))
        except Overtime:
            outcome = _outcome("timeout",
                               error=f"TimeoutError: did not finish within {timeout:g} s")
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            outcome = _outcome("error", error=one_line(e), detail=format_exception(e))
        elapsed = time.perf_counter() - start
    return replace(outcome, stdout=printed.stdout, stderr=printed.stderr, elapsed=elapsed)


class _Slot:
    """One worker (started on first use) and the task it is running."""

    def __init__(self, where: str, base: str, single_use: bool,
                 hash_seed: int | None = None) -> None:
        self.where = where
        # A fresh interpreter works in a folder of its own (a fork stays here); each worker has
        # its own TMPDIR, so envs that write fixed temp names (AntMaze-v3's /tmp/ant_maze.xml)
        # do not race between workers.
        self.cwd = None if where == "fork" else os.path.join(base, "cwd")
        tmp = os.path.join(base, "tmp")
        for path in filter(None, (self.cwd, tmp)):
            os.makedirs(path, exist_ok=True)
        self.env = {**os.environ, "TMPDIR": tmp}
        if hash_seed is not None:  # a fresh interpreter's, as verify's hash control sets it
            self.env["PYTHONHASHSEED"] = str(hash_seed)
        self.single_use = single_use
        self.worker: Worker | None = None
        self.task: Task | None = None
        self.started = 0.0
        self.used = 0  # tasks the current worker finished

    def start(self, task: Task) -> None:
        if self.worker is not None and (task.clean or self.single_use) and self.used:
            self.drop(kill=False)
        if self.worker is None:
            self.worker = Worker(self.where, cwd=self.cwd, env=self.env)  # type: ignore[arg-type]
            self.used = 0
        task.reused = self.used > 0
        self.worker.submit(task.function, task.payload, task.params)
        self.task = task
        self.started = time.perf_counter()

    def drop(self, kill: bool = True) -> None:
        """Stop the worker (killing it when ``kill``); the next task starts a new one."""
        worker, self.worker = self.worker, None
        if worker is not None:
            try:
                if kill:
                    worker.kill()
            finally:
                worker.close()


class Scheduler:
    """Runs jobs to findings; see the module docstring."""

    def __init__(self, jobs: list[Job], n_workers: int, ctx: Context,
                 on_done: Callable[[Finding], None] | None, fork_refs: bool) -> None:
        self.ctx = ctx
        self.n = n_workers
        self.on_done = on_done
        self.jobs = jobs
        self.queue: deque[Job] = deque(jobs)
        self.tasks: dict[str, deque[Task]] = {side: deque() for side in SIDES}
        self.active: list[Job] = []
        self.cap = 4 * n_workers

        def slots(where: str, name: str, single_use: bool, seed: int | None = None) -> list[_Slot]:
            return [_Slot(where, tempfile.mkdtemp(prefix=f"{name}{i}-", dir=ctx.tmp), single_use,
                          seed) for i in range(n_workers)]

        fresh = ctx.seeds.get("control") is not None  # the seeds of fresh interpreters are set
        self.slots: dict[str, list[_Slot]] = {
            REFERENCE: slots("fork", "reference", True) if fork_refs else [],
            REMOTE: slots(ctx.where, "worker", False, ctx.seeds.get("rebuild") if fresh else None),
            CONTROL: slots(ctx.where, "control", False, ctx.seeds["control"]) if fresh else [],
        }

    # -- jobs

    def decide(self, job: Job, finding: Finding) -> None:
        if job.finding is not None:
            return
        if finding.status in CONFIRMED and job.tainted:
            job.rerun_remote(finding)
            self.queue_tasks(job)
            return
        job.finding = finding = replace(finding, output=job.output())
        if job in self.active:
            self.active.remove(job)
        if self.on_done is not None:
            self.on_done(finding)

    def settle(self, job: Job) -> None:
        if job.finding is None and not job.outstanding:
            try:
                finding = job.verdict()
            except Exception as e:  # noqa: BLE001 - a bug here must not stop the audit
                finding = job.finish(CAPTURE_ERROR, f"audit error: {one_line(e)}",
                                     detail=format_exception(e))
            self.decide(job, finding)

    def queue_tasks(self, job: Job) -> None:
        for task in job.pending:
            self.tasks[task.side].append(task)
        job.pending.clear()

    def take(self, task: Task, outcome: Outcome) -> None:
        job = task.job
        if job.finding is not None or task.generation != job.generation:
            return
        job.outstanding.discard(task.label)
        job.tainted = job.tainted or task.reused
        where = ("here" if task.side == REFERENCE else self.ctx.remote_label
                 if task.side == REMOTE else
                 f"{self.ctx.remote_label}, {self.ctx.seed_name('control')}")
        job.hear(f"{task.label} ({where})", outcome.stdout, outcome.stderr)
        try:
            job.take(task.label, outcome)
        except Decided as d:
            self.decide(job, d.finding)
        except Exception as e:  # noqa: BLE001 - a bug here must not stop the audit
            self.decide(job, job.finish(CAPTURE_ERROR, f"audit error: {one_line(e)}",
                                        detail=format_exception(e)))
        else:
            self.queue_tasks(job)
            self.settle(job)

    def can_prepare(self) -> bool:
        return bool(self.queue) and len(self.active) < self.cap

    def prepare_one(self) -> None:
        job = self.queue.popleft()
        job.t0 = time.perf_counter()
        decided: Finding | None = None
        printed = Capture()  # capture(id) may import the env's module: its prints are its own
        with printed:
            try:
                job.prepare()
            except Decided as d:
                decided = d.finding
        job.hear("capture (here)", printed.stdout, printed.stderr)
        if decided is not None:
            self.decide(job, decided)
            return
        self.active.append(job)
        self.queue_tasks(job)

    def next_task(self, side: str) -> Task | None:
        """The next task for ``side`` (preparing jobs for the reference side as needed)."""
        queue = self.tasks[side]
        while True:
            while queue and (
                queue[0].job.finding is not None or queue[0].generation != queue[0].job.generation
            ):
                queue.popleft()
            if queue:
                return queue.popleft()
            if side == REFERENCE and self.can_prepare():
                self.prepare_one()
                continue
            return None

    # -- workers

    def feed(self) -> None:
        for side in SIDES:
            for slot in self.slots[side]:
                while slot.task is None and (task := self.next_task(side)) is not None:
                    self.start(slot, task)

    def start(self, slot: _Slot, task: Task) -> None:
        try:
            slot.start(task)
        except Exception as e:  # noqa: BLE001 - the worker was gone or never booted
            slot.drop()
            if task.retried:
                self.take(task, _outcome("died", error=f"the worker could not be given the task "
                                         f"({one_line(e)})", detail=format_exception(e)))
            else:
                task.retried = True
                self.tasks[task.side].appendleft(task)

    def finish(self, slot: _Slot, outcome: Outcome) -> None:
        task, slot.task = slot.task, None
        slot.used += 1
        if outcome.status in ("died", "timeout"):
            slot.drop()
        elif slot.single_use:
            slot.drop(kill=False)
        if task is not None:
            self.take(task, outcome)

    def collect(self, wait_for: float) -> None:
        busy = [s for side in SIDES for s in self.slots[side] if s.task is not None]
        if not busy:
            return
        left = min(s.started for s in busy) + self.ctx.timeout - time.perf_counter()
        waiting = {s.worker.waitable: s for s in busy if s.worker is not None}
        for handle in wait(list(waiting), max(0.0, min(wait_for, left))):
            slot = waiting[handle]  # type: ignore[index]
            assert slot.worker is not None
            self.finish(slot, slot.worker.collect())
        now = time.perf_counter()
        for slot in busy:
            if slot.task is not None and now - slot.started > self.ctx.timeout:
                assert slot.worker is not None
                # collect(0): the answer if it just came, else the worker is killed and the
                # outcome is a timeout with what the task printed until then
                self.finish(slot, slot.worker.collect(0.0))

    # -- the loop

    def run(self) -> list[Finding]:
        """Every job's finding, in the order the jobs were given."""
        try:
            while self.queue or self.active:
                self.feed()
                task = None if self.slots[REFERENCE] else self.next_task(REFERENCE)
                if task is not None:  # no reference workers: one reference task at a time here
                    self.take(task, run_here(task, self.ctx.timeout))
                    self.collect(0.0)
                    continue
                busy = any(s.task is not None for slots in self.slots.values() for s in slots)
                if not busy and not any(self.tasks.values()):
                    if self.can_prepare():
                        continue
                    if self.queue:  # the cap is reached with nothing in flight
                        self.cap += self.n
                        continue
                    for job in list(self.active):  # nothing can arrive any more
                        job.outstanding.clear()
                        self.settle(job)
                    continue
                self.collect(0.25)
        finally:
            for slots in self.slots.values():
                for slot in slots:
                    slot.drop(kill=slot.task is not None)
        return [job.finding for job in self.jobs if job.finding is not None]
