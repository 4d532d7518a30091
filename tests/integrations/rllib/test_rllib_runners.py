"""RLlib PPO with 2 remote env runners on an env registered in the driver's main guard.

tests/scripts/ray_rllib_driver.py runs once (module fixture) on one local Ray node and trains
one tiny PPO iteration per job: with ``tune.register_env(name, lambda cfg: pack.make(**cfg))``,
with ``specpack.ray.runtime_env(id)`` and the plain id, and without specpack (the control, as
reported in ray-project/ray#21734: the runners log NameNotFound, the driver raises IndexError).
"""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import SCRIPTS
from ray_procs import DriverRun, run_driver

pytestmark = pytest.mark.integration

PACK_LAYERS = ["TimeLimit", "OrderEnforcing", "PassiveEnvChecker", "Odometer"]
MAX_STEPS = 7  # the driver's max_episode_steps; the env itself never ends an episode


@pytest.fixture(scope="module")
def rllib_run() -> DriverRun:
    return run_driver(SCRIPTS / "ray_rllib_driver.py", "register_env", "runtime_env", "control",
                      timeout=280)


@pytest.fixture(scope="module")
def rllib(rllib_run: DriverRun) -> dict[str, Any]:
    result: dict[str, Any] = rllib_run.result
    return result


def remote_runners(job: dict[str, Any]) -> list[dict[str, Any]]:
    assert "error" not in job, job.get("traceback", job.get("error"))
    runners: list[dict[str, Any]] = job["runners"]
    assert len(runners) == 2
    pids = {r["pid"] for r in runners}
    assert len(pids) == 2 and job["driver_pid"] not in pids
    return runners


def test_pack_layers_in_the_driver(rllib: dict[str, Any]) -> None:
    assert rllib["pack_layers"] == PACK_LAYERS


def test_ppo_with_tune_register_env_of_pack_make_builds_the_pack_in_each_runner(
    rllib: dict[str, Any],
) -> None:
    job = rllib["register_env"]
    for runner in remote_runners(job):
        assert runner["kwargs"] == [[0.5, "override"]]  # env_config overrides a kwarg
        # RLlib registers the creator under its own id and gymnasium.make adds its order
        # enforcing and checker on top: the pack's own stack is underneath, unchanged.
        assert runner["layers"] == [["OrderEnforcing", "PassiveEnvChecker", *PACK_LAYERS]]
        assert runner["lengths"][0] and set(runner["lengths"][0]) == {MAX_STEPS}
    assert job["episode_len_mean"] == MAX_STEPS


def test_ppo_with_the_plain_id_and_specpack_runtime_env_builds_the_captured_env(
    rllib: dict[str, Any],
) -> None:
    job = rllib["runtime_env"]
    for runner in remote_runners(job):
        assert runner["kwargs"] == [[0.5, "from-driver"]]
        assert runner["layers"] == [PACK_LAYERS]  # exactly the pack: no wrapper twice
        assert runner["lengths"][0] and set(runner["lengths"][0]) == {MAX_STEPS}
    assert job["episode_len_mean"] == MAX_STEPS


def test_control_ppo_with_the_plain_id_without_specpack_fails(
    rllib: dict[str, Any], rllib_run: DriverRun,
) -> None:
    assert rllib["control"]["error"] == "IndexError: list index out of range"
    assert "NameNotFound: Environment `RllibOdometer` doesn't exist" in rllib_run.stderr


def test_no_ray_process_outlives_the_driver(rllib_run: DriverRun) -> None:
    assert rllib_run.returncode == 0
    assert rllib_run.leftovers == []
