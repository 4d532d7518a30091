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
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from .._verify import Trace, compare, describe_space, plain, record, writable
from .._verify.jobs import multi_agent

__all__ = ["LABELS", "control", "trace_of"]

#: How the repeat control names its two builds in differences.
LABELS = ("the first build here", "the second")


def trace_of(env: Any, actions: list[Any], steps: int, seed: int) -> dict[str, Any]:
    """The trace of a built env over ``actions`` (as the engine's ``run_trace`` records one).

    Parameters
    ----------
    env
        A freshly built env (a PettingZoo env is recorded per agent); it is stepped.
    actions
        The planned actions (copied, so the env may change them in place).
    steps, seed
        The rollout.

    Returns
    -------
    dict
        ``Trace.to_dict()`` (a rollout that raised is recorded, not raised).
    """
    todo = writable(list(actions[:steps]))
    multi = multi_agent(env)
    if multi is not None:
        traced: dict[str, Any] = multi.record(env, todo, seed, describe=describe_space,
                                              plain=plain)
        return traced
    return record(env, todo, seed).to_dict()


def close_quietly(env: Any) -> None:
    """``env.close()``, whatever it raises (the audit's verdict is about the rollout)."""
    with contextlib.suppress(Exception):
        env.close()


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return compare(Trace.from_dict(a), Trace.from_dict(b), labels=LABELS, shared=False)


def control(first: dict[str, Any], again: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Hold ``first`` (the checked build's trace) against clean builds' (``again()`` builds one).

    Parameters
    ----------
    first
        The trace of the build the checks read.
    again
        Builds the env anew and returns its trace over the same actions.

    Returns
    -------
    dict
        ``trace`` (the reference trace), ``repeat`` (differences between two clean builds:
        the env is not reproducible here; empty otherwise), ``notes``.
    """
    second = again()
    if not _differences(first, second):
        return {"trace": first, "repeat": [], "notes": []}
    third = again()
    clean = _differences(second, third)
    if clean:
        return {"trace": second, "repeat": clean, "notes": []}
    changed = compare(Trace.from_dict(first), Trace.from_dict(second),
                      labels=("the build the checks read", "clean builds"), shared=False)
    return {"trace": second, "repeat": [], "notes": [
        "the constructor-argument checks' reads of the env changed its rollout, so two clean "
        f"builds are the reference (they agree): {changed[0]}"]}
