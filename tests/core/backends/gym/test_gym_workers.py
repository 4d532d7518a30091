"""A custom gym env registered inside the main guard: gym.make fails in a spawn child (the
control), the pack rebuilds it in spawn and forkserver children and in a fresh interpreter in
another working directory, with the parent's rollout and gym's TimeLimit truncation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _helpers import run_python

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).resolve().parent / "scripts" / "gym_main_guard.py"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("gym_main_guard")
    proc = run_python([str(SCRIPT)], cwd=cwd, timeout=240)  # a hang fails with every stack
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1])


def test_control_gym_make_in_a_spawn_child_cannot_find_the_main_guard_env(result):
    assert result["control_id_spawn"].startswith("NameNotFound"), result["control_id_spawn"]
    assert "GymDrift" in result["control_id_spawn"]
    # Passing the EnvSpec does not help: its string entry point names __main__.
    assert "has no attribute 'GymDrift'" in result["control_spec_spawn"]


@pytest.mark.parametrize("where", ["spawn", "forkserver", "fresh"])
def test_spawn_child_and_fresh_interpreter_rebuild_gym_env_registered_in_main_guard(result, where):
    got = result[where]
    assert "error" not in got, got.get("error")
    assert result["by_value"]
    assert got["stack"] == result["parent"]["stack"] == [
        "TimeLimit", "OrderEnforcing", "PassiveEnvChecker", "GymDrift"
    ]
    assert got["rollout"] == result["parent"]["rollout"] == result["gym_make_here"]
    if where == "fresh":
        assert got["gym_before_make"] is False  # unpickling needs neither gym nor the env


def test_max_episode_steps_from_the_registration_truncates_at_step_7(result):
    steps = [row for row in result["parent"]["rollout"] if isinstance(row[0], int)]
    assert [row[0] for row in steps if row[4]] == [7]
    assert not any(row[4] for row in steps if row[0] != 7)
