"""Issue 15: RLlib multi-agent PPO through ``ParallelPettingZooEnv`` with 2 remote env runners,
on a PettingZoo env class defined in the driver's ``__main__`` that holds a native handle.

tests/scripts/ray_rllib_pz_driver.py runs once (module fixture) on one local Ray node: with
``tune.register_env(name, lambda cfg: ParallelPettingZooEnv(pack.make()))`` each runner builds
its own env from the pack; the control (the live env in the creator's closure, the usual
shortcut) fails in the driver because Ray must pickle the lock.
"""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import SCRIPTS
from ray_procs import DriverRun, run_driver

pytestmark = pytest.mark.integration

MAX_CYCLES = 6  # the driver's episode length


@pytest.fixture(scope="module")
def pz_run() -> DriverRun:
    return run_driver(SCRIPTS / "ray_rllib_pz_driver.py", "pack", "control", timeout=280)


@pytest.fixture(scope="module")
def pz(pz_run: DriverRun) -> dict[str, Any]:
    result: dict[str, Any] = pz_run.result
    return result


def test_the_pack_of_a_main_guard_class_is_a_pettingzoo_pack_carried_by_value(
        pz: dict[str, Any]) -> None:
    assert pz["pack"].get("pack") == {"backend": "pettingzoo", "by_value": True}, pz["pack"]


def test_each_remote_runner_builds_its_own_env_from_the_pack_and_trains(
        pz: dict[str, Any]) -> None:
    job = pz["pack"]
    assert "error" not in job, job.get("traceback", job.get("error"))
    runners = job["runners"]
    assert len(runners) == 2 and len({r["pid"] for r in runners}) == 2
    assert job["driver_pid"] not in {r["pid"] for r in runners}
    for runner in runners:
        assert runner["wrappers"] == ["ParallelPettingZooEnv"]
        assert runner["classes"] == ["HandleDrift"]
        assert runner["speeds"] == [0.25]  # the captured kwarg, not the default 1.0
        assert runner["agents"] == [["walker_0", "walker_1"]]
        assert runner["locks"] == [True]  # its own handle, built there
        assert MAX_CYCLES in runner["lengths"][0]
    assert job["episode_len_mean"] == MAX_CYCLES


def test_control_the_live_env_in_the_creator_cannot_reach_the_runners(
        pz: dict[str, Any]) -> None:
    error = pz["control"]["error"]
    assert error.startswith("TypeError: ray.cloudpickle.dumps(")
    assert "cannot pickle '_thread.lock' object" in pz["control"]["traceback"]


def test_no_ray_process_outlives_the_driver(pz_run: DriverRun) -> None:
    assert pz_run.returncode == 0
    assert pz_run.leftovers == []
