"""The local repeat control: two builds here, fed the same actions, must agree.

It runs on the reference side (where the env is registered), inside the reference task, so
only its outcome crosses back: the reference trace and, when the builds differ, the
differences. The first build is the one the constructor-argument checks (:mod:`.checks`) read
before its rollout: they read it and never step it, so building it a third time just for the
rollout would cost one more construction per env (two ROM loads for an Atari env) and prove
nothing more. In case those reads did change its rollout, a difference between the first build
and a clean second one is never taken at its word: a third clean build decides. When the clean
builds differ too, the env does not repeat itself (``not_reproducible``, with the clean builds'
differences); when they agree, the clean builds are the reference and a note names what the
checks' reads changed.

When the rebuild across the boundary differs from the reference although the two local builds
agreed, that agreement may be chance (an env that draws a value from an unseeded generator with
few outcomes repeats itself now and then). :func:`confirm` (the job :data:`CONFIRM_JOB`, run on
the reference side only for such an env) builds it up to :data:`CONFIRM_BUILDS` more times
here, each clean, and stops at the first build that differs from the reference: the env is then
``not_reproducible`` after all.

The builds here also watch the global generators, with verify's own mechanism
(:class:`specpack._tools._verify.generators.Watch`, :func:`~specpack._tools._verify.generators.first_unseeded`):
each records which call (the build, each ``reset`` and ``step``) changed the state of Python's
``random``, numpy's global generator or torch's default one, and the state it left. Two builds
in one process start from different states (the first one's draws moved it), so when their
touches disagree the env drew from a generator that ``reset(seed=...)`` does not seed: its
rollout follows whatever state a process has, and a verdict from comparing values would be
chance (the control answers ``unseeded``: the call and the generator). The checked build's
watch skips the checks' own reads (it starts again after them); a disagreement between it and a
clean build is never taken at its word either: a third clean build decides, as for the traces.
Nothing is watched across the boundary: the builds here answer the question.
"""

from __future__ import annotations

import contextlib
import pickle
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from ..._core._process.child import load_job
from ..._core._text import one_line
from .._verify import Trace, compare, describe_space, plain, plan_actions, record, writable
from .._verify.generators import Watch, first_unseeded
from .._verify.jobs import multi_agent
from .jobs import private_tmp

__all__ = ["CONFIRM_BUILDS", "CONFIRM_JOB", "LABELS", "Build", "clean_build", "confirm",
           "confirm_job", "control", "trace_of", "watched_make"]

#: The confirmation job function, as workers import it.
CONFIRM_JOB = f"{__name__}:confirm_job"
#: At most this many clean builds confirm a reference that a rebuild elsewhere contradicts.
CONFIRM_BUILDS = 16

#: How the repeat control names its two builds in differences.
LABELS = ("the first build here", "the second")


class Build(NamedTuple):
    """One build here: its trace (``Trace.to_dict()``) and its global-generator touches
    (:attr:`~specpack._tools._verify.generators.Watch.touches`; ``[]`` when it was not watched)."""

    trace: dict[str, Any]
    touches: list[Any]


def trace_of(env: Any, actions: list[Any], steps: int, seed: int,
             watch: Watch | None = None) -> dict[str, Any]:
    """The trace of a built env over ``actions`` (as the engine's ``run_trace`` records one).

    Parameters
    ----------
    env
        A freshly built env (a PettingZoo env is recorded per agent); it is stepped.
    actions
        The planned actions (copied, so the env may change them in place).
    steps, seed
        The rollout.
    watch
        Records which call of the rollout changed a global generator's state (a PettingZoo
        env's rollout is one call, ``"rollout"``, as in ``run_trace``).

    Returns
    -------
    dict
        ``Trace.to_dict()`` (a rollout that raised is recorded, not raised).
    """
    todo = writable(list(actions[:steps]))
    multi = multi_agent(env)
    if multi is not None:
        try:
            traced: dict[str, Any] = multi.record(env, todo, seed, describe=describe_space,
                                                  plain=plain)
        finally:
            if watch is not None:
                watch.after("rollout", 0)
        return traced
    return record(env, todo, seed, watch=watch).to_dict()


def watched_make(make: Callable[[], Any]) -> tuple[Any, Watch]:
    """``make()``, watched: the env and the :class:`Watch` holding the build's touches (a
    build that raises raises, as unwatched)."""
    watch = Watch()
    try:
        env = make()
    finally:
        watch.after("make", 0)
    return env, watch


def clean_build(payload: bytes, actions: list[Any] | None, steps: int, seed: int) -> Build:
    """One clean build of the pickled pack here, watched, and its rollout (the repeat
    control's and the confirmation's unit, as ``run_trace(..., watch=True)`` builds one).

    ``actions``: the planned actions, or None to plan them from the fresh env's action space
    (actions typed JSON cannot carry: ``run_trace`` plans its own then, and so does this).
    """
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


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return compare(Trace.from_dict(a), Trace.from_dict(b), labels=LABELS, shared=False)


def control(first: Build, again: Callable[[], Build], *, checked: bool = True) -> dict[str, Any]:
    """Hold ``first`` (the checked build) against clean builds (``again()`` makes one).

    Parameters
    ----------
    first
        The build the checks read (its trace and touches).
    again
        Builds the env anew, clean, and returns its build over the same actions.
    checked
        Whether the checks read ``first`` (else it is a clean build too, and a difference
        between it and the second needs no third build to be believed).

    Returns
    -------
    dict
        ``trace`` (the reference trace), ``repeat`` (differences between two clean builds:
        the env is not reproducible here; empty otherwise), ``notes``, and ``unseeded``:
        ``[call, step, generator]``, the first call on which two builds' global-generator
        touches disagree (:func:`~specpack._tools._verify.generators.first_unseeded`: a draw the env
        did not seed; two clean builds' when a third build ran), or None.
    """
    second = again()
    drawn = first_unseeded(first.touches, second.touches)
    same = not _differences(first.trace, second.trace)
    if same and (drawn is None or not checked):
        return {"trace": first.trace, "repeat": [], "notes": [], "unseeded": _listed(drawn)}
    third = again()
    drawn = first_unseeded(second.touches, third.touches)
    clean = _differences(second.trace, third.trace)
    if clean:
        return {"trace": second.trace, "repeat": clean, "notes": [], "unseeded": _listed(drawn)}
    if same:  # only the touches differed, and two clean builds agree on the rollout
        return {"trace": first.trace, "repeat": [], "notes": [], "unseeded": _listed(drawn)}
    changed = compare(Trace.from_dict(first.trace), Trace.from_dict(second.trace),
                      labels=("the build the checks read", "clean builds"), shared=False)
    return {"trace": second.trace, "repeat": [], "unseeded": _listed(drawn), "notes": [
        "the constructor-argument checks' reads of the env changed its rollout, so two clean "
        f"builds are the reference (they agree): {changed[0]}"]}


def _listed(found: tuple[str, int, str] | None) -> list[Any] | None:
    """:func:`~specpack._tools._verify.generators.first_unseeded`'s answer as a job sends it."""
    return None if found is None else list(found)


def confirm(reference: dict[str, Any], again: Callable[[], dict[str, Any]], builds: int,
            budget: float) -> dict[str, Any]:
    """Build the env again, clean, until a build differs from ``reference`` (or enough agree).

    Parameters
    ----------
    reference
        The reference trace (the repeat control's agreeing builds).
    again
        Builds the env anew and returns its trace over the same actions.
    builds
        At most this many builds.
    budget
        Seconds: no build is started that would likely end past it (the task's own timeout is
        longer), so a slow env gets fewer builds instead of a timeout. One build always runs.

    Returns
    -------
    dict
        ``builds`` (how many ran), ``repeat`` (the differences of the first build that differs
        from the reference, or of one that raised; empty when every build agreed).
    """
    start = time.perf_counter()
    longest = 0.0
    ran = 0
    while ran < builds:
        began = time.perf_counter()
        ran += 1
        label = f"clean build {ran} of the confirmation"
        try:
            trace = again()
        except Exception as e:  # noqa: BLE001 - the reference build did not raise: a difference
            return {"builds": ran, "repeat": [f"{label} raised {one_line(e)}; the reference "
                                              "build here did not"]}
        diffs = compare(Trace.from_dict(reference), Trace.from_dict(trace),
                        labels=("the reference build here", label), shared=False)
        if diffs:
            return {"builds": ran, "repeat": diffs}
        now = time.perf_counter()
        longest = max(longest, now - began)
        if now - start + longest > budget:
            break
    return {"builds": ran, "repeat": []}


def confirm_job(payload: bytes, *, trace: dict[str, Any], run_job: str, builds: int,
                budget: float, **params: Any) -> dict[str, Any]:
    """:func:`confirm` as a job function (run where the env is registered, as the reference).

    Parameters
    ----------
    payload
        The pickled pack.
    trace
        The reference trace.
    run_job
        The job function that builds and records the pack (``run_trace`` or the vector one),
        called with ``payload`` and ``params`` (the rollout and the planned actions).
    builds, budget
        See :func:`confirm`.
    """
    private_tmp()
    run = load_job(run_job)

    def again() -> dict[str, Any]:
        traced: dict[str, Any] = run(payload, **params)["traces"][0]
        return traced

    return confirm(trace, again, builds, budget)
