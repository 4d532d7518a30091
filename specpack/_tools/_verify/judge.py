"""Running verify's sides under one deadline and judging what they sent back: *here* (a fork
that pickles the pack, plans, then builds twice), the *rebuild* (a worker of ``where``) and the
hash *control* (a fresh interpreter under another ``PYTHONHASHSEED``). Data only, no env code.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

from ..._core._process.launch import FRESH
from ..._core._process.protocol import Outcome
from ..._core._process.thread import ThreadWorker
from ..._core._process.worker import Worker, label
from ..._core._text import one_line
from .compare import compare, not_comparable, same, show
from .generators import HASH_FIX, drawn, generator_finding
from .jobs import PLAN_HERE_JOB, RUN_JOB
from .report import (
    GLOBAL_GENERATOR,
    HASH_ORDER,
    IDENTICAL,
    NOT_COMPARED,
    NOT_IDENTICAL,
    NOT_REPRODUCIBLE,
    REBUILD_ERROR,
    ROLLOUT_ERROR,
    TIMEOUT,
    UNSEEDED,
    Status,
)
from .trace import Trace

__all__ = ["HERE", "NO_CONTROL", "REBUILD_HASH_SEED", "Sides", "Verdict", "control_is_cheap",
           "hash_seeds", "judge", "seeded_env"]

#: The rebuild's ``PYTHONHASHSEED`` when this process's is random (else this process's own).
REBUILD_HASH_SEED = 1
_SEEDS = 1 << 32
HERE = "the build here"
#: The note of a verify without a hash control (one CPU).
NO_CONTROL = ("no hash control ran (this process has one CPU): an env whose behaviour depends "
              "on hash order is not told apart from one that differs for another reason")


def this_process_seed() -> int | None:
    """This process's ``PYTHONHASHSEED`` as its environment says (``None``: random)."""
    text = os.environ.get("PYTHONHASHSEED", "")
    return int(text) if text.isdigit() and int(text) < _SEEDS else None


def hash_seeds(where: str, control: bool) -> dict[str, int | None]:
    """The ``PYTHONHASHSEED`` of each process verify starts (the report's ``hash_seeds``): a
    fresh interpreter's is this process's or :data:`REBUILD_HASH_SEED`, the control's the next;
    a spawn child's is this process's; a forkserver child's is unknown (left out)."""
    here = this_process_seed()
    seeds: dict[str, int | None] = {"here": here}
    if where in FRESH:
        rebuild = REBUILD_HASH_SEED if here is None else here
        seeds["rebuild"] = rebuild
        if control:
            seeds["control"] = (rebuild + 1) % _SEEDS
    elif where == "spawn":
        seeds["rebuild"] = here
    return seeds


def control_is_cheap() -> bool:
    """Whether this process may use two CPUs (on one, the hash control doubles verify's time)."""
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):  # no sched_getaffinity (macOS, Windows)
        return (os.cpu_count() or 1) >= 2


def seeded_env(seed: int | None) -> dict[str, str] | None:
    """This process's environment with ``PYTHONHASHSEED=seed`` (``None``: unchanged)."""
    return None if seed is None else {**os.environ, "PYTHONHASHSEED": str(seed)}


@dataclass
class Sides:
    """The workers of one verify call (``control`` is None when there is no hash control)."""

    here: Worker | ThreadWorker
    rebuild: Worker
    control: Worker | None
    seeds: dict[str, int | None]
    #: Starts another worker like the rebuild's, to confirm a verdict that rests on one rebuild.
    again: Callable[[], Worker]
    #: The build here's outcomes, in order (the caller replays their output).
    outcomes_here: list[Outcome] = field(default_factory=list)


@dataclass
class Verdict:
    """What :func:`judge` found (the report is assembled from it)."""

    status: Status
    differences: list[str]
    notes: list[str] = field(default_factory=list)
    outcome: Outcome | None = None  # the rebuild's (its stdout/stderr go into the report)
    rollout_compared: bool = False
    cause: str | None = None  # for UNSEEDED: GLOBAL_GENERATOR or HASH_ORDER


def judge(token: str, sides: Sides, params: Mapping[str, Any], *, nondeterministic: bool,
          deadline: float, timeout: float) -> Verdict:
    """Plan here, roll out on every side at once, and judge, all by ``deadline`` (``token``:
    the pack's key in :data:`~.jobs.STASH`; ``params``: ``steps``, ``seed``, ``ignore_info``)."""
    there = label(sides.rebuild.where)
    sides.here.submit(PLAN_HERE_JOB, b"", {"token": token, "steps": params["steps"],
                                           "seed": params["seed"]})
    plan = sides.here.collect(max(deadline - time.monotonic(), 0.0))
    sides.outcomes_here.append(plan)
    if plan.status == "timeout":
        return Verdict(TIMEOUT, [f"{HERE} (planning the actions) did not finish within "
                                 f"{timeout:g} s"])
    if plan.status != "ok":
        return Verdict(REBUILD_ERROR, [failure(plan, HERE)])
    notes: list[str] = []
    planned = plan.value if isinstance(plan.value, dict) else {}
    payload = planned.get("payload")
    if type(payload) is not bytes:
        return Verdict(REBUILD_ERROR, [f"{HERE} sent no pickle of the pack"])
    actions = planned.get("actions")
    if actions is None:
        notes.append(f"each side planned its own actions: {planned.get('why', '?')}")
    run = {**params, "actions": actions}
    workers: dict[str, Worker | ThreadWorker] = {"rebuild": sides.rebuild, "here": sides.here}
    if sides.control is not None:
        workers["control"] = sides.control
    for name, worker in workers.items():
        # the two builds here watch the global generators: one after the other, they start
        # from different states, so a draw the env did not seed shows
        extra = {"repeat": 2, "watch": True} if name == "here" else {"repeat": 1}
        worker.submit(RUN_JOB, payload, {**run, **extra})
    done = collect_all(workers, deadline)
    r, h = done["rebuild"], done["here"]
    sides.outcomes_here.append(h)
    named = [(f"the {there}", r), (HERE, h)]
    if "control" in done:
        named.append((f"the hash control ({_seed_name(sides.seeds, 'control')})",
                      done["control"]))
    if any(o.status == "timeout" for _, o in named):
        lines = [f"{side} did not finish within {timeout:g} s (killed)"
                 for side, o in named if o.status == "timeout"]
        lines += [failure(o, side) for side, o in named if o.status in ("error", "died")]
        return Verdict(TIMEOUT, lines, notes, r)
    if r.status != "ok" or h.status != "ok":
        return Verdict(REBUILD_ERROR, [failure(o, side) for side, o in named[:2]
                                       if o.status != "ok"], notes, r)
    try:
        first, again = (Trace.from_dict(d) for d in h.value["traces"][:2])
        rebuilt = Trace.from_dict(r.value["traces"][0])
    except Exception as e:  # noqa: BLE001 - a hostile or broken answer is data, not a crash
        return Verdict(REBUILD_ERROR, [f"unreadable traces ({one_line(e)})"], notes, r)
    digests = [_digests(h, 2), _digests(r, 1)]
    unseeded = drawn(h.value.get("unseeded")) if isinstance(h.value, dict) else None
    verdict = _compared(first, again, rebuilt, done.get("control"), sides.seeds, there, notes,
                        digests, unseeded)
    if verdict.status == NOT_IDENTICAL or verdict.cause == HASH_ORDER:
        _confirm(verdict, sides, payload, run, rebuilt, digests[1][0], there, deadline)
    verdict.outcome = r
    surface_differences(planned.get("surface"), rebuilt, verdict)
    if nondeterministic or first.nondeterministic or rebuilt.nondeterministic:
        if verdict.status == IDENTICAL:
            verdict.status, verdict.rollout_compared = NOT_COMPARED, False
        if not verdict.rollout_compared:
            verdict.notes.insert(0, "rollout not compared: the spec says nondeterministic=True")
    return verdict


def _digests(o: Outcome, n: int) -> list[str | None]:
    """The first ``n`` trace digests of an answer (``None`` for each one missing)."""
    value = o.value.get("digests") if isinstance(o.value, dict) else None
    got = [d if type(d) is str else None for d in value[:n]] if type(value) is list else []
    return got + [None] * (n - len(got))


def _alike(a: str | None, b: str | None) -> bool:
    """Two traces with one digest (computed in their children): nothing to compare."""
    return a is not None and a == b


def _compared(first: Trace, again: Trace, rebuilt: Trace, control: Outcome | None,
              seeds: dict[str, int | None], there: str, notes: list[str],
              digests: list[list[str | None]], unseeded: tuple[str, int, str] | None) -> Verdict:
    """The verdict from the traces (``digests``: ``[[here, here again], [rebuild]]``): the
    global generators, the repeat here, the hash control, then the rebuild."""
    (d_first, d_again), (d_rebuilt,) = digests
    deterministic = not (first.nondeterministic or rebuilt.nondeterministic)
    compared = deterministic and bool(first.events) and bool(rebuilt.events)

    def repeat() -> list[str]:
        return [] if _alike(d_first, d_again) else compare(
            first, again, labels=("the first build here", "the second"), shared=False)

    if deterministic and unseeded is not None:
        found = [generator_finding(unseeded)]
        found += [f"what the two builds here show: {d}" for d in repeat()[:3]]
        return Verdict(UNSEEDED, found, notes, cause=GLOBAL_GENERATOR)
    # A value with no exact encoding equals nothing, itself included: judged before any
    # comparison, so it is never taken for a build that is not reproducible or not identical.
    odd = [f"{side}: {v}" for side, t in (("here", first), (there, rebuilt))
           for v in not_comparable(t)] if deterministic else []
    if odd:
        return Verdict(NOT_COMPARED, [], [
            "rollout not compared: values with no exact encoding: " + "; ".join(odd), *notes])
    if repeated := repeat():
        head, *rest = repeated
        return Verdict(NOT_REPRODUCIBLE, [
            "two builds in this process already differ, so a rebuild elsewhere cannot be "
            f"compared with them: {head}", *rest], notes)
    if hashed := _hash_control(rebuilt, control, seeds, d_rebuilt):
        return Verdict(UNSEEDED, hashed, notes, cause=HASH_ORDER)
    differences = compare(first, rebuilt, labels=("here", there))
    if first.error is not None or rebuilt.error is not None:
        return Verdict(ROLLOUT_ERROR, differences, notes, rollout_compared=compared)
    if differences:
        if seeds.get("here") is None and seeds.get("control") is not None:
            notes.append(
                "this process's hash seed is random (PYTHONHASHSEED is not set); the two fresh "
                "interpreters agree with each other, which does not rule out hash order (two "
                "seeds order a small set of strings alike about half the time): run this "
                f"process with PYTHONHASHSEED={seeds['rebuild']} to rule it out")
        return Verdict(NOT_IDENTICAL, differences, notes, rollout_compared=compared)
    return Verdict(IDENTICAL if deterministic else NOT_COMPARED, [], notes,
                   rollout_compared=deterministic)


def _confirm(verdict: Verdict, sides: Sides, payload: bytes, run: Mapping[str, Any],
             rebuilt: Trace, d_rebuilt: str | None, there: str, deadline: float) -> None:
    """Confirm a ``not_identical`` verdict, or an ``unseeded`` one from the hash control, with a
    second rebuild like the first: if the two differ, the verdict is ``not_reproducible``."""
    second = f"a second {there}"
    try:
        with sides.again() as worker:
            worker.submit(RUN_JOB, payload, {**run, "repeat": 1})
            o = worker.collect(max(deadline - time.monotonic(), 0.0))
    except Exception as e:  # noqa: BLE001 - the confirmation could not start
        verdict.notes.append(f"not confirmed: {second} could not be started ({one_line(e)}); "
                             "the difference rests on one rebuild")
        return
    if o.status != "ok":
        why = "did not finish in time" if o.status == "timeout" else f"failed ({o.error})"
        verdict.notes.append(f"not confirmed: {second} {why}; the difference rests on one "
                             "rebuild")
        return
    try:
        other = Trace.from_dict(o.value["traces"][0])
    except Exception as e:  # noqa: BLE001 - a hostile or broken answer is data, not a crash
        verdict.notes.append(f"not confirmed: unreadable trace from {second} ({one_line(e)})")
        return
    found = [] if _alike(d_rebuilt, _digests(o, 1)[0]) else compare(
        rebuilt, other, labels=(f"the {there}", second), shared=False)
    seed = sides.seeds.get("rebuild")
    under = f" under one hash seed (PYTHONHASHSEED={seed})" if seed is not None else ""
    if found:
        head, *rest = found
        hashed = verdict.cause == HASH_ORDER
        verdict.status, verdict.rollout_compared, verdict.cause = NOT_REPRODUCIBLE, False, None
        lines = [f"two rebuilds, each in a {there}{under}, already differ, so neither can be "
                 f"compared with the build here: {head}", *rest]
        if hashed:  # not the hash seed's doing: the hash control's finding is a consequence
            verdict.differences[:] = lines
        else:
            verdict.differences[:0] = lines
    elif verdict.cause == HASH_ORDER:
        verdict.notes.append(f"confirmed: {second}{under} rebuilt the same rollout as the "
                             "first, so the hash seed decides it")
    else:
        verdict.notes.append(f"confirmed: {second}{under} rebuilt the same rollout, so the "
                             "difference from the build here is not chance")


def _seed_name(seeds: dict[str, int | None], side: str) -> str:
    return f"PYTHONHASHSEED={seeds.get(side)}"


def _hash_control(rebuilt: Trace, control: Outcome | None, seeds: dict[str, int | None],
                  d_rebuilt: str | None) -> list[str]:
    """The findings that the rebuild and the control disagree (hash order), or ``[]``."""
    if control is None:
        return []
    a, b = _seed_name(seeds, "rebuild"), _seed_name(seeds, "control")
    why = (f"two fresh interpreters that differ only in their hash seed ({a} and {b}) already "
           "differ: the env depends on hash randomisation (the iteration order of a set of "
           "strings, hash() of a str or bytes), so a rebuild cannot be compared with the build "
           f"here; {HASH_FIX}")
    if control.status != "ok":
        return [f"{why}: the one under {b} failed and the one under {a} did not: "
                + failure(control, f"the hash control ({b})")]
    if _alike(d_rebuilt, _digests(control, 1)[0]):
        return []
    try:
        other = Trace.from_dict(control.value["traces"][0])
    except Exception as e:  # noqa: BLE001 - a hostile or broken answer is data, not a crash
        return [f"unreadable trace from the hash control ({one_line(e)})"]
    found = compare(rebuilt, other, labels=(a, b), shared=False)
    return [f"{why}: {found[0]}", *found[1:]] if found else []


def surface_differences(recorded: Any, rebuilt: Trace, verdict: Verdict) -> None:
    """Hold the spaces the pack recorded at capture against the rebuilt env's (``make_vec``
    hands the recorded ones to the vector env): a difference is a finding."""
    if not isinstance(recorded, dict):
        return
    for name in ("observation_space", "action_space"):
        mine, theirs = recorded.get(name), getattr(rebuilt, name)
        if name in recorded and not same(mine, theirs):
            verdict.differences.append(
                f"{name} recorded in the pack differs from the rebuilt env's: recorded "
                f"{show(mine)} vs rebuilt {show(theirs)}")
            if verdict.status in (IDENTICAL, NOT_COMPARED):
                verdict.status = NOT_IDENTICAL


def failure(o: Outcome, side: str) -> str:
    """One difference line (with the traceback or stderr tail) for a side that failed."""
    head = f"{HERE} failed" if side == HERE else f"rebuild failed in {side}"
    body = o.detail.strip() or o.error
    if o.status == "died":
        return f"{head}: {body}"
    return f"{head}: {o.error}\n{body}" if body != o.error else f"{head}: {o.error}"


def collect_all(workers: Mapping[str, Worker | ThreadWorker],
                 deadline: float) -> dict[str, Outcome]:
    """Every worker's outcome by ``deadline`` (those still running then are killed)."""
    done: dict[str, Outcome] = {}
    pending = dict(workers)
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            done.update({name: w.collect(0.0) for name, w in pending.items()})
            break
        wait([w.waitable for w in pending.values()], min(left, 1.0))
        for name, w in list(pending.items()):
            if (outcome := w.poll_outcome(0.0)) is not None:
                done[name] = outcome
                del pending[name]
    return done
