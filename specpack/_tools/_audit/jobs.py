"""One unit of audit work (an env or a wrapper class) and the tasks it hands to workers: calls
of a job function (``"module:function"``) where the env is registered (*reference*) or in a
fresh worker (*remote*), whose outcomes :meth:`Job.take` turns into state or a verdict."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from typing import Any

from ..._core._process.protocol import Outcome
from ..._core._process.worker import label
from ..._core._text import printable
from .checks import first_step
from .classify import raised
from .output import sections
from .report import (
    CAPTURE_ERROR,
    EZPICKLE_GAP,
    IDENTICAL,
    NOT_COMPARED,
    NOT_IDENTICAL,
    NOT_REPRODUCIBLE,
    REBUILD_ERROR,
    ROLLOUT_ERROR,
    TIMEOUT,
    Finding,
    clip,
)

__all__ = ["CONTROL", "REFERENCE", "REMOTE", "Context", "Decided", "Job", "Task", "private_tmp"]

#: The sides a task runs on: here, across the boundary, and the hash control (across the
#: boundary too, under another ``PYTHONHASHSEED``: see :class:`Context`).
REFERENCE = "reference"
REMOTE = "remote"
CONTROL = "control"


def private_tmp() -> None:
    """Make :mod:`tempfile` use the worker's own TMPDIR (a ``fork`` child inherits the temp dir
    its parent already chose); job functions call this first."""
    wanted = os.environ.get("TMPDIR")
    if wanted and tempfile.tempdir is not None and tempfile.tempdir != wanted:
        tempfile.tempdir = None


@dataclass(frozen=True)
class Context:
    """The options every job of one audit shares. ``seeds``: the ``PYTHONHASHSEED`` of the
    remote (``"rebuild"``) and hash-control (``"control"``; None: no hash control for ``where``)
    workers (verify's :func:`~specpack._tools._verify.judge.hash_seeds`); ``control_always``: a
    control for every rebuild, not only one that differs."""

    steps: int
    seed: int
    timeout: float
    where: str
    tmp: str
    seeds: dict[str, int | None] = field(default_factory=dict)
    control_always: bool = False

    def seed_name(self, side: str) -> str:
        """``"PYTHONHASHSEED=1"``: how differences name a side's hash seed."""
        return f"PYTHONHASHSEED={self.seeds.get(side)}"

    @property
    def remote_label(self) -> str:
        """How the remote side is named in differences (``"fresh interpreter"``)."""
        return label(self.where)


@dataclass
class Task:
    """One job-function call for a worker: ``function(payload, **params)`` on ``side``."""

    job: Job
    label: str
    side: str
    function: str
    payload: bytes
    params: dict[str, Any] = field(default_factory=dict)
    retried: bool = False
    generation: int = 0
    clean: bool = False
    reused: bool = False


class Decided(Exception):
    """A job reached its verdict early (it carries the finding)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.status)
        self.finding = finding


class Job:
    """One env or wrapper under audit (subclasses: ``EnvJob``, ``WrapperJob``)."""

    kind = "env"

    def __init__(self, name: str, ctx: Context) -> None:
        self.name = name
        self.ctx = ctx
        self.t0 = 0.0
        self.pending: list[Task] = []
        self.outstanding: set[str] = set()
        self.finding: Finding | None = None
        self.notes: list[str] = []
        self.generation = 0
        self.tainted = False
        self.remote: list[Task] = []
        self.first: Finding | None = None
        self.printed: dict[str, tuple[str, str]] = {}
        self.confirmed: dict[str, Any] | None = None

    # -- what subclasses implement

    def prepare(self) -> None:
        """Start the job here: queue its first task(s), or raise :class:`Decided`."""
        raise NotImplementedError

    def take(self, label: str, outcome: Outcome) -> None:
        """Take the outcome of task ``label``; may queue tasks or raise :class:`Decided`."""
        raise NotImplementedError

    def verdict(self) -> Finding:
        """The finding, once no task is outstanding."""
        raise NotImplementedError

    def forget_remote(self) -> None:
        """Drop what the remote tasks brought (before they run again in clean workers)."""

    # -- shared

    def hear(self, source: str, stdout: str, stderr: str) -> None:
        """Keep what the env's code printed at ``source`` (a task run again replaces it)."""
        if stdout or stderr:
            self.printed[source] = (stdout, stderr)
        else:
            self.printed.pop(source, None)

    def output(self) -> str:
        """Everything the env's code printed, as :attr:`.report.Finding.output` holds it."""
        return sections((source, *texts) for source, texts in self.printed.items())

    def add_task(self, label: str, side: str, function: str, payload: bytes,
                 **params: Any) -> None:
        """Queue one task; the job is not decided before its outcome is taken."""
        task = Task(self, label, side, function, payload, dict(params), generation=self.generation)
        if side in (REMOTE, CONTROL):
            self.remote.append(task)
        self.pending.append(task)
        self.outstanding.add(label)

    def rerun_remote(self, finding: Finding) -> None:
        """Run the remote tasks again, each in a worker that never ran another: ``finding`` came
        from workers whose leftovers of other envs (a class attribute) must not judge this one."""
        self.first = finding
        self.generation += 1
        self.tainted = False
        self.outstanding.clear()
        self.forget_remote()
        again, self.remote = self.remote, []
        for task in again:
            self.add_task(task.label, task.side, task.function, task.payload, **task.params)
        for task in self.pending:
            task.clean = True

    def repeated(self, repeat: list[str], record: list[str], step: int | None, *,
                 ezpickle_only: bool = False) -> None:
        """Raise :class:`Decided` when two builds here already differ (``repeat``)."""
        how = "two builds in this process already differ"
        if repeat and record:  # a wrong record is wrong whatever the rollouts do: said first
            raise Decided(self.wrong_record(record, repeat, how, step,
                                            ezpickle_only=ezpickle_only))
        if repeat:
            raise Decided(self.finish(
                NOT_REPRODUCIBLE, f"{how}, so a rebuild elsewhere cannot be compared with them: "
                f"{repeat[0]}", differences=tuple(repeat), step=first_step(repeat)))

    # -- the confirmation of a rebuild that differs (see .control.confirm)

    def take_confirmation(self, outcome: Outcome) -> None:
        """Keep what the confirmation task found (when it could not run, the verdict says so)."""
        self.confirmed = (dict(outcome.value) if outcome.status == "ok" else
                          {"builds": 0, "repeat": [], "failed": outcome.error or outcome.status})

    def confirmed_verdict(self, record: list[str], rollout: list[str],
                          step: int | None, *, ezpickle_only: bool = False,
                          what: str = "") -> Finding | None:
        """The finding when the confirmation found a clean build here that differs from the
        reference, else None. ``record``: differences of a wrong record (``step``: the first's);
        ``rollout``: those the confirmation ran for, of the rebuild or of ``what``."""
        repeat = list((self.confirmed or {}).get("repeat") or ())
        where = self.ctx.remote_label
        said = (f"{what} ({self.ctx.seed_name('control')}) differs from the rebuild in a "
                f"{where}" if what else f"the rebuild in a {where} differs")
        if repeat and record:
            return self.wrong_record(record, repeat, "a clean build in this process differs "
                                     "from the reference", step, ezpickle_only=ezpickle_only)
        if repeat:
            return self.finish(
                NOT_REPRODUCIBLE,
                f"{said}, and so does a clean build in this process, "
                "so the rebuild cannot be compared with them (the repeat control's two builds "
                f"agreed by chance): {repeat[0]}",
                differences=(*repeat, *(f"{what or 'the rebuild'}: {d}" for d in rollout)),
                step=first_step(repeat))
        return None

    def wrong_record(self, record: list[str], repeat: list[str], how: str,
                     step: int | None, *, ezpickle_only: bool = False) -> Finding:
        """``not_identical`` for a wrong record even when the rollouts do not repeat themselves
        (``repeat``, found as ``how`` says), the record first; ``ezpickle_gap`` instead when the
        only wrong record is the env's EzPickle record (``ezpickle_only``)."""
        tail = f"its rollouts are not reproducible here either ({how}): {repeat[0]}"
        if ezpickle_only:
            found = self.ezpickle_gap(record, step)
            return replace(found, differences=(*found.differences, tail))
        return self.finish(NOT_IDENTICAL, record[0], step=step, differences=(*record, tail))

    def ezpickle_gap(self, gaps: list[str], step: int | None) -> Finding:
        """``ezpickle_gap``: the env's EzPickle record does not rebuild it (``gaps``), while the
        pack has nothing against it; the reason gives a fix that works for a registered id."""
        name = printable(self.name)
        reason = (
            f"{gaps[0]}. This is about pickling the env itself (pickle.dumps(env) rebuilds it "
            "from its EzPickle record), not about the pack: a pack never rebuilds from that "
            f"record. To send the env to another process, pickle a pack instead of the env: "
            f"specpack.capture({name!r}); to make pickle.dumps(env) faithful, fix the "
            "EzPickle.__init__ call as said")
        return self.finish(EZPICKLE_GAP, reason, differences=tuple(gaps), step=step)

    def confirmation_noted(self, finding: Finding, rollout: list[str]) -> Finding:
        """``finding`` with a note on how a ``not_identical`` rollout difference was confirmed
        (only the final finding gets it: one from a reused worker is rerun in a clean one)."""
        found = self.confirmed
        if finding.status != NOT_IDENTICAL or not rollout or found is None:
            return finding
        n = int(found["builds"])
        note = (f"the confirmation (more clean builds here) failed ({found['failed']}): the "
                "rebuild's difference rests on the two builds of the repeat control alone"
                if found.get("failed") else
                f"confirmed: {n} more clean build{'s' if n != 1 else ''} here (beyond the "
                "two of the repeat control), fed the same actions, agree with the reference; "
                f"the rebuild in a {self.ctx.remote_label} does not")
        return replace(finding, notes=(*finding.notes, note))

    def finish(self, status: str, reason: str, **extra: Any) -> Finding:
        """A finding for this job (notes and elapsed time filled in)."""
        notes = list(self.notes)
        first = self.first
        if first is not None and (first.status, first.reason) != (status, reason):
            notes.append(
                f"a first rebuild in a worker that had rebuilt other envs before gave "
                f"{first.status} ({clip(first.reason, 300)}); in workers that ran nothing else "
                f"it is {status}: the env depends on state that other envs leave in a process")
        return Finding(kind=self.kind, name=self.name, status=status, reason=reason,
                       notes=tuple(notes), elapsed=time.perf_counter() - self.t0, **extra)

    def judge(self, differences: list[str], step: int | None, error: dict[str, Any] | None,
              uncompared: bool) -> Finding:
        """The verdict once both sides' traces are compared (``error``: the rollout raised alike
        on both sides; ``uncompared``: the spec says ``nondeterministic=True``)."""
        if differences:
            if uncompared:
                self.notes.append("rollout not compared: the spec says nondeterministic=True")
            return self.finish(NOT_IDENTICAL, differences[0], differences=tuple(differences),
                               step=step)
        if error is not None:
            return self.raised_alike(error)
        if uncompared:
            return self.finish(NOT_COMPARED, "the spec says nondeterministic=True: the wrapper "
                               "layers, spaces, render_mode and spec fields are identical; the "
                               "rollout was not compared")
        return self.finish(IDENTICAL, "")

    def raised_alike(self, error: dict[str, Any]) -> Finding:
        """``rollout_error`` (the rollout raised the same on both sides): an env that cannot run
        a rollout where it is registered is not known to be portable."""
        reason = (f"the rollout raised {raised(error)} on both sides alike, so nothing after "
                  "it was compared")
        return self.finish(ROLLOUT_ERROR, reason, differences=(reason,), step=error.get("step"))

    def finish_failure(self, failure: dict[str, Any]) -> Finding:
        """The finding for a classified failure (see :func:`.classify.failure`)."""
        return self.finish(failure["status"], failure["reason"], package=failure.get("package"),
                           detail=failure.get("detail", ""))

    def value(self, outcome: Outcome, side: str) -> Any:
        """The value of a finished task, or raise :class:`Decided` with what went wrong: on the
        reference side the env's failure here, on the remote side a rebuild error."""
        if outcome.status == "ok":
            value = outcome.value
            if isinstance(value, dict) and isinstance(value.get("failed"), dict):
                raise Decided(self.finish_failure(value["failed"]))
            return value
        here, where, limit = side == REFERENCE, self.ctx.remote_label, self.ctx.timeout
        if outcome.status == "timeout":
            reason = (f"building and rolling it out here did not finish within {limit:g} s"
                      if here else f"the rebuild in a {where} did not finish within {limit:g} s "
                      "(the worker was killed and replaced)")
            raise Decided(self.finish(TIMEOUT, reason, detail=outcome.stderr[-3000:]))
        detail = outcome.detail
        if outcome.stderr.strip():
            detail = f"{detail}\nstderr:\n{outcome.stderr[-3000:]}".strip()
        if outcome.status == "died":
            why = (outcome.error or outcome.detail).removeprefix("WorkerDied: ")
            reason = (f"building it here killed the process: {why}" if here
                      else f"the worker process died while rebuilding it: {why}")
        else:
            reason = (f"building it here failed: {outcome.error}" if here
                      else f"the rebuild in a {where} failed: {outcome.error}")
        raise Decided(self.finish(CAPTURE_ERROR if here else REBUILD_ERROR, reason, detail=detail))
