"""The local repeat control (two builds here, fed the same actions, must agree) and the
confirmation of a reference that a rebuild elsewhere contradicts, both watching the global
generators (verify's :class:`~specpack._tools._verify.generators.Watch`): docs/audit.md ("How it
works") says why a third clean build decides a difference involving the build the checks read."""

from __future__ import annotations

import contextlib
import pickle
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from ..._core._exact.describe import describe_space, plain
from ..._core._process.child import load_job
from ..._core._text import one_line
from .._verify.compare import compare
from .._verify.generators import Watch, first_unseeded
from .._verify.jobs import multi_agent
from .._verify.trace import Trace, plan_actions, record, writable
from .jobs import private_tmp

__all__ = ["CONFIRM_BUILDS", "CONFIRM_JOB", "LABELS", "Build", "clean_build", "close_quietly",
           "confirm", "confirm_job", "control", "trace_differences", "trace_of", "watched_make"]

#: The confirmation job function, as workers import it.
CONFIRM_JOB = f"{__name__}:confirm_job"
#: At most this many clean builds confirm a reference that a rebuild elsewhere contradicts.
CONFIRM_BUILDS = 16

#: How the repeat control names its two builds in differences.
LABELS = ("the first build here", "the second")


class Build(NamedTuple):
    """One build here: its trace (``Trace.to_dict()``) and its global-generator touches
    (``[]`` when it was not watched)."""

    trace: dict[str, Any]
    touches: list[Any]


def trace_of(env: Any, actions: list[Any], steps: int, seed: int, watch: Watch) -> dict[str, Any]:
    """``Trace.to_dict()`` of a fresh env over ``actions`` (copied), as the engine's
    ``run_trace`` records one (a PettingZoo env per agent, its rollout one ``watch`` call)."""
    todo = writable(list(actions[:steps]))
    multi = multi_agent(env)
    if multi is not None:
        try:
            traced: dict[str, Any] = multi.record(env, todo, seed, describe=describe_space,
                                                  plain=plain)
        finally:
            watch.after("rollout", 0)
        return traced
    return record(env, todo, seed, watch=watch).to_dict()


def watched_make(make: Callable[[], Any]) -> tuple[Any, Watch]:
    """``make()``, and the :class:`Watch` holding the build's touches."""
    watch = Watch()
    try:
        env = make()
    finally:
        watch.after("make", 0)
    return env, watch


def clean_build(payload: bytes, actions: list[Any] | None, steps: int, seed: int) -> Build:
    """One clean, watched build of the pickled pack here and its rollout (``actions`` None:
    planned from the fresh env, as ``run_trace`` does for actions typed JSON cannot carry)."""
    env, watch = watched_make(lambda: pickle.loads(payload).make())
    try:
        if actions is None:
            multi = multi_agent(env)
            actions = (multi.plan_actions(env, steps, seed) if multi is not None
                       else plan_actions(env.action_space, steps, seed))
        return Build(trace_of(env, actions, steps, seed, watch), watch.touches)
    finally:
        close_quietly(env)


def close_quietly(env: Any) -> None:
    """``env.close()``, whatever it raises (the audit's verdict is about the rollout)."""
    with contextlib.suppress(Exception):
        env.close()


def trace_differences(a: dict[str, Any], b: dict[str, Any],
                      labels: tuple[str, str] = LABELS) -> list[str]:
    """What differs between two traces (``Trace.to_dict()``), each side named by ``labels``."""
    return compare(Trace.from_dict(a), Trace.from_dict(b), labels=labels, shared=False)


def control(first: Build, again: Callable[[], Build], *, checked: bool = True) -> dict[str, Any]:
    """Hold ``first`` (the build the checks read, unless not ``checked``) against clean builds
    (``again()``): the reference ``trace``, ``repeat`` (two clean builds' differences),
    ``notes`` and ``unseeded`` (the first ``[call, step, generator]`` two builds disagree on)."""

    def answer(trace: dict[str, Any], repeat: list[str], notes: list[str]) -> dict[str, Any]:
        return {"trace": trace, "repeat": repeat, "notes": notes,
                "unseeded": None if drawn is None else list(drawn)}

    second = again()
    drawn = first_unseeded(first.touches, second.touches)
    same = not trace_differences(first.trace, second.trace)
    if same and (drawn is None or not checked):
        return answer(first.trace, [], [])
    third = again()
    drawn = first_unseeded(second.touches, third.touches)
    clean = trace_differences(second.trace, third.trace)
    if clean or same:  # same: only the touches differed, and two clean builds agree
        return answer(second.trace if clean else first.trace, clean, [])
    changed = trace_differences(first.trace, second.trace,
                                ("the build the checks read", "clean builds"))
    return answer(second.trace, [], [
        "the constructor-argument checks' reads of the env changed its rollout, so two clean "
        f"builds are the reference (they agree): {changed[0]}"])


def confirm(reference: dict[str, Any], again: Callable[[], dict[str, Any]], builds: int,
            budget: float) -> dict[str, Any]:
    """Build the env again, clean, until a build differs from ``reference`` or ``builds`` agree,
    starting none likely to end past ``budget`` seconds: ``builds`` (how many ran) and
    ``repeat`` (the first differing or raising build's differences)."""
    start = time.perf_counter()
    longest = 0.0
    ran = 0
    for ran in range(1, builds + 1):
        began = time.perf_counter()
        label = f"clean build {ran} of the confirmation"
        try:
            trace = again()
        except Exception as e:  # noqa: BLE001 - the reference build did not raise: a difference
            return {"builds": ran, "repeat": [f"{label} raised {one_line(e)}; the reference "
                                              "build here did not"]}
        diffs = trace_differences(reference, trace, ("the reference build here", label))
        if diffs:
            return {"builds": ran, "repeat": diffs}
        now = time.perf_counter()
        longest = max(longest, now - began)
        if now - start + longest > budget:
            break
    return {"builds": ran, "repeat": []}


def confirm_job(payload: bytes, *, trace: dict[str, Any], run_job: str, budget: float,
                **params: Any) -> dict[str, Any]:
    """:func:`confirm` (:data:`CONFIRM_BUILDS` builds) as a job function where the env is
    registered; ``run_job(payload, **params)`` builds and records the pickled pack."""
    private_tmp()
    run = load_job(run_job)
    return confirm(trace, lambda: run(payload, **params)["traces"][0], CONFIRM_BUILDS, budget)
