"""Proving a rebuild is identical: ``verify`` (across a process boundary) and ``diff``.

``verify`` runs two sides at once under one deadline. The *rebuild* runs in a worker of
``where`` (a fresh interpreter by default); the *reference* runs in a fork of this process, so
it sees this process's state (a module global set at run time, a registration made here)
without this process running, or hanging in, the env's code. The reference side builds the
env once to plan the actions (from its fresh action space, before any reset), then both sides
build and roll out with those actions; the reference side does it twice, and if its two runs
already differ the verdict is ``not_reproducible`` (so ``not_identical`` always means
reproducible here, different there). Traces come back as typed JSON: nothing a child sends is
unpickled here.
"""

from __future__ import annotations

import copy
import math
import pickle
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any, Protocol

from .._deprecated import positional
from .._process import (
    BOUNDARIES,
    Boundary,
    Outcome,
    ThreadWorker,
    Worker,
    fork_available,
    label,
    replay,
)
from .._text import one_line, suggest
from ..errors import NotIdenticalError, SpecPackError
from .compare import compare as _differences
from .compare import same, show
from .describe import describe_space
from .jobs import PLAN_JOB, RUN_JOB
from .report import (
    IDENTICAL,
    NOT_IDENTICAL,
    NOT_REPRODUCIBLE,
    REBUILD_ERROR,
    ROLLOUT_ERROR,
    TIMEOUT,
    Status,
    VerifyReport,
)
from .trace import Trace, plan_actions, record


class SpecPack(Protocol):
    """What verify needs of a pack (it never imports the pack module: the pack calls it)."""

    @property
    def label(self) -> str: ...

    @property
    def nondeterministic(self) -> bool: ...

    def make(self, **kwargs: Any) -> Any: ...

__all__ = ["WHERE", "Trace", "check_rollout_options", "diff", "verify"]

WHERE = BOUNDARIES
_HERE = "the build here"


def check_rollout_options(steps: Any, seed: Any, where: Any, timeout: Any) -> None:
    """Refuse, naming it, a ``steps``/``seed``/``where``/``timeout`` that verify and the audit
    cannot use (one check for both)."""
    if where not in WHERE:
        raise SpecPackError(f"where={where!r} is not one of {', '.join(WHERE)};"
                            f"{suggest(str(where), WHERE) or ' use where=' + repr(WHERE[0])}")
    for name, value in (("steps", steps), ("seed", seed)):
        if type(value) is not int or value < 0:
            raise SpecPackError(f"{name}={value!r} must be a non-negative int")
    if (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout) or timeout <= 0):
        raise SpecPackError(f"timeout={timeout!r} must be a positive number of seconds")


def verify(
    pack: SpecPack,
    *,
    steps: int = 100,
    seed: int = 0,
    where: Boundary = "subprocess",
    check: bool = False,
    timeout: float = 120.0,
) -> VerifyReport:
    """Rebuild ``pack`` in another process and compare it with a build here.

    The rebuild runs in a worker of ``where``, the reference in a fork of this process, both at
    once; both step through the same actions (planned once from a seeded copy of the fresh
    action space); the reference runs twice, so an env that is not reproducible even here gets
    its own verdict. The same as ``pack.verify(...)``.

    Parameters
    ----------
    pack
        The pack to prove.
    steps, seed
        The seeded rollout both sides run.
    where
        ``"subprocess"`` (a fresh ``python``, the default), ``"spawn"`` or ``"forkserver"``.
    check
        Raise instead of returning a falsy report.
    timeout
        One deadline, in seconds, for the whole call (both sides; a child still running then
        is killed with its process group).

    Returns
    -------
    VerifyReport
        Truthy only when both rollouts completed and matched; ``status`` is one of
        ``identical``, ``not_identical``, ``not_reproducible``, ``rollout_error``,
        ``rebuild_error``, ``timeout``.

    Raises
    ------
    NotIdenticalError
        With ``check=True``, when the report is falsy (``.differences`` lists why).
    SpecPackError
        Bad options.
    """
    check_rollout_options(steps, seed, where, timeout)
    start = time.monotonic()
    deadline = start + timeout
    payload = pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL)
    remote = Worker(where)  # type: ignore[arg-type]  # checked above
    try:
        local: Worker | ThreadWorker = Worker("fork") if fork_available() else ThreadWorker()
        try:
            v = _run(payload, remote, local, steps, seed, deadline, timeout)
        finally:
            local.close()
    finally:
        remote.close()
    replay(v.here)
    _check_surface(pack, v)
    if isinstance(local, ThreadWorker):
        v.notes.append("the build here ran in a thread (this platform cannot fork)")
    rollout = v.rollout_compared and not pack.nondeterministic
    if pack.nondeterministic or v.nondeterministic:
        v.notes.insert(0, "rollout not compared: the spec says nondeterministic=True")
    out = v.outcome
    report = VerifyReport(
        status=v.status, identical=v.status == IDENTICAL, differences=v.differences,
        where=where, steps=steps, seed=seed, rollout_compared=rollout,
        elapsed=time.monotonic() - start, notes=v.notes,
        stdout=out.stdout if out else "", stderr=out.stderr if out else "",
    )
    if check and not report:
        raise NotIdenticalError(
            f"pack {pack.label} rebuilt in a {label(where)} is not identical "
            f"({v.status}): " + "; ".join(d.splitlines()[0] for d in v.differences if d),
            v.differences,
        )
    return report


@dataclass
class _Verdict:
    status: Status
    differences: list[str]
    notes: list[str] = field(default_factory=list)
    outcome: Outcome | None = None  # the rebuild's (its stdout/stderr go into the report)
    rollout_compared: bool = False  # traces were compared, rollouts included
    nondeterministic: bool = False
    here: list[Outcome] = field(default_factory=list)  # the build here's tasks


def _check_surface(pack: SpecPack, v: _Verdict) -> None:
    """Hold the spaces a pack recorded at capture against the rebuilt env's (a difference
    there is a finding: ``make_vec`` hands the recorded spaces to the vector env)."""
    surface = getattr(pack, "surface", None)
    out = v.outcome
    if surface is None or out is None or out.status != "ok":
        return
    try:
        rebuilt = Trace.from_dict(out.value["traces"][0])
    except Exception:  # noqa: BLE001 - an unreadable trace is reported elsewhere
        return
    for name in ("observation_space", "action_space"):
        recorded = describe_space(getattr(surface, name))
        if not same(recorded, getattr(rebuilt, name)):
            v.differences.append(
                f"{name} recorded in the pack differs from the rebuilt env's: recorded "
                f"{show(recorded)} vs rebuilt {show(getattr(rebuilt, name))}")
            if v.status == IDENTICAL:
                v.status = NOT_IDENTICAL


def _run(payload: bytes, remote: Worker, local: Worker | ThreadWorker, steps: int, seed: int,
         deadline: float, timeout: float) -> _Verdict:
    """Plan here, roll out on both sides, and judge."""
    here: list[Outcome] = []
    verdict = _judge(payload, remote, local, steps, seed, deadline, timeout, here)
    verdict.here = here
    return verdict


def _judge(payload: bytes, remote: Worker, local: Worker | ThreadWorker, steps: int, seed: int,
           deadline: float, timeout: float, here_outcomes: list[Outcome]) -> _Verdict:
    there = label(remote.where)
    local.submit(PLAN_JOB, payload, {"steps": steps, "seed": seed})
    plan = local.collect(max(deadline - time.monotonic(), 0.0))
    here_outcomes.append(plan)
    if plan.status == "timeout":
        return _Verdict(TIMEOUT, [f"{_HERE} (planning the actions) did not finish within "
                                  f"{timeout:g} s"])
    if plan.status != "ok":
        return _Verdict(REBUILD_ERROR, [_failure(plan, _HERE)])
    notes: list[str] = []
    planned = plan.value if isinstance(plan.value, dict) else {}
    actions = planned.get("actions")
    if actions is None:
        notes.append(f"each side planned its own actions: {planned.get('why', '?')}")
    params = {"steps": steps, "seed": seed, "actions": actions}
    remote.submit(RUN_JOB, payload, {**params, "repeat": 1})
    local.submit(RUN_JOB, payload, {**params, "repeat": 2})
    done = _collect_all({"remote": remote, "local": local}, deadline)
    r, h = done["remote"], done["local"]
    here_outcomes.append(h)
    if "timeout" in (r.status, h.status):
        lines = [f"{side} did not finish within {timeout:g} s (killed)"
                 for side, o in ((f"the {there}", r), (_HERE, h)) if o.status == "timeout"]
        lines += [_failure(o, side) for side, o in ((f"the {there}", r), (_HERE, h))
                  if o.status in ("error", "died")]
        return _Verdict(TIMEOUT, lines, notes, r)
    if r.status != "ok" or h.status != "ok":
        lines = [_failure(o, side) for side, o in ((f"the {there}", r), (_HERE, h))
                 if o.status != "ok"]
        return _Verdict(REBUILD_ERROR, lines, notes, r)
    try:
        here, again = (Trace.from_dict(d) for d in h.value["traces"][:2])
        rebuilt = Trace.from_dict(r.value["traces"][0])
    except Exception as e:  # noqa: BLE001 - a hostile or broken answer is data, not a crash
        return _Verdict(REBUILD_ERROR, [f"unreadable traces ({one_line(e)})"], notes, r)
    rollout = not (here.nondeterministic or rebuilt.nondeterministic)
    repeat = _differences(here, again, labels=("the first build here", "the second"),
                          shared=False)
    if repeat:
        first, *rest = repeat
        return _Verdict(NOT_REPRODUCIBLE, [
            "two builds in this process already differ, so a rebuild elsewhere cannot be "
            f"compared with them: {first}", *rest], notes, r, rollout, not rollout)
    differences = _differences(here, rebuilt, labels=("here", there))
    if here.error is not None or rebuilt.error is not None:
        return _Verdict(ROLLOUT_ERROR, differences, notes, r, rollout, not rollout)
    return _Verdict(NOT_IDENTICAL if differences else IDENTICAL, differences, notes, r, rollout,
                    not rollout)


def _failure(o: Outcome, side: str) -> str:
    """One difference line (with the traceback or stderr tail) for a side that failed."""
    if side == _HERE:
        head = f"{_HERE} failed"
    else:
        head = f"rebuild failed in {side}"
    body = o.detail.strip() or o.error
    if o.status == "died":
        return f"{head}: {body}"
    return f"{head}: {o.error}\n{body}" if body != o.error else f"{head}: {o.error}"


def _collect_all(workers: Mapping[str, Worker | ThreadWorker],
                 deadline: float) -> dict[str, Outcome]:
    """Every worker's outcome by ``deadline`` (those still running then are killed)."""
    done: dict[str, Outcome] = {}
    pending = dict(workers)
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            for name, w in pending.items():
                done[name] = w.collect(0.0)
            break
        wait([w.waitable for w in pending.values()], min(left, 1.0))
        for name, w in list(pending.items()):
            outcome = w.poll_outcome(0.0)
            if outcome is not None:
                done[name] = outcome
                del pending[name]
    return done


def diff(env_a: Any, env_b: Any, *args: Any, steps: int = 100, seed: int = 0) -> list[str]:
    """Compare two envs of this process by their traces; ``[]`` means identical.

    Both get the same actions, planned from a seeded copy of ``env_a``'s action space; both
    are reset and stepped (their state changes). Two envs whose rollouts raise the same
    exception at the same step behave alike: that is not a difference here (``verify``
    reports it as a ``rollout_error``). Example::

        assert specpack.diff(pack.make(), gymnasium.make("CartPole-v1"), steps=50) == []

    Parameters
    ----------
    env_a, env_b
        The envs (``env_a`` is called ``a`` in the lines, ``env_b`` ``b``).
    steps, seed
        The rollout (keyword-only; positional ones are deprecated).

    Returns
    -------
    list of str
        The differences, as :func:`~specpack._verify.compare.compare` lists them.
    """
    flags = positional(args, ("steps", "seed"), "specpack.diff()", {"steps": steps, "seed": seed})
    steps, seed = flags["steps"], flags["seed"]
    if type(steps) is not int or steps < 0:
        raise SpecPackError(f"steps={steps!r} must be a non-negative int")
    actions = plan_actions(env_a.action_space, steps, seed)
    a = record(env_a, copy.deepcopy(actions), seed)
    b = record(env_b, copy.deepcopy(actions), seed)
    return _differences(a, b, shared=False)
