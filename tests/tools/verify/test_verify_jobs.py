"""verify's jobs: which planned actions cross processes exactly (else each side plans its own
from its fresh space), and planning from a pack or from a zero-argument env factory."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import verifyenvs

import specpack
from specpack._tools._verify.jobs import carried_exactly, plan, run_trace


def test_values_typed_json_carries_exactly_are_recognised() -> None:
    assert carried_exactly([1, 2.5, "a", b"b", None, True, 1j])
    assert carried_exactly({"a": (np.int64(3), np.float32(1.5)), 2: {frozenset({1})}})
    assert carried_exactly(np.zeros((2, 2), dtype=np.uint8))


def test_values_typed_json_cannot_carry_exactly_are_recognised() -> None:
    assert not carried_exactly(np.array([1, None], dtype=object))
    assert not carried_exactly(np.void(b"ab"))
    assert not carried_exactly({"k": object()})
    assert not carried_exactly([object()])
    deep: Any = 1
    for _ in range(150):
        deep = [deep]
    assert not carried_exactly(deep)


def test_plan_from_a_pack_gives_the_actions_and_the_space() -> None:
    out = plan(pickle.dumps(specpack.capture("CartPole-v1")), steps=5, seed=3)
    assert len(out["actions"]) == 5 and all(a in (0, 1) for a in out["actions"])
    assert out["action_space"]["type"] == "gymnasium.spaces.discrete.Discrete"
    again = plan(pickle.dumps(specpack.capture("CartPole-v1")), steps=5, seed=3)
    assert again["actions"] == out["actions"]


def test_plan_says_why_when_the_actions_do_not_cross_exactly() -> None:
    out = plan(pickle.dumps(verifyenvs.GraphActions), steps=3, seed=0)
    assert out["actions"] is None
    assert out["why"].startswith("the actions (") and "do not cross processes exactly" in out["why"]


def test_run_trace_builds_a_factory_repeatedly_with_the_given_actions() -> None:
    out = run_trace(pickle.dumps(verifyenvs.Base), steps=3, seed=0, repeat=2, actions=[1, 0, 1, 1])
    first, second = out["traces"]
    assert first == second  # the same actions, the same rollout, build after build


def test_every_job_a_worker_runs_names_a_function_of_this_package() -> None:
    """A job (``"module:function"``) names its module as this tree spells it: a stale path
    would fail in a child, or load another install's copy of the module there."""
    import importlib
    import pkgutil
    from pathlib import Path

    from specpack._core._process.child import load_job

    root = Path(specpack.__file__).resolve().parent
    jobs = {}
    for info in pkgutil.walk_packages(specpack._tools.__path__, "specpack._tools."):
        if info.name.endswith("__main__"):
            continue  # runs the command line
        module = importlib.import_module(info.name)
        jobs.update({f"{info.name}.{name}": value for name, value in vars(module).items()
                     if name.endswith("_JOB") and isinstance(value, str)})
    assert "specpack._tools._verify.jobs.RUN_JOB" in jobs  # the control: the walk saw them
    for name, job in jobs.items():
        function = load_job(job)
        source = Path(importlib.import_module(function.__module__).__file__ or "").resolve()
        assert source.is_relative_to(root), f"{name} = {job!r} loads {source}"
