"""Ray: packs as task/actor arguments and through the object store; make_vec inside a task.

Ray is started once for this module (``num_cpus=2``, no dashboard, HOME and the temp dir in a
fresh temporary folder) and shut down after. Task functions are defined inside the tests
(Ray then ships them by value; this test module is not importable in a Ray worker).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest
import ray
from _helpers import SCRIPTS
from vec_envs import load_by_path

import specpack

TESTS = SCRIPTS
ENV_ID = "VecRay-v0"

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    # A short path: Ray's unix sockets live under its temp dir (107-byte limit).
    root = tempfile.mkdtemp(prefix="spray-")
    # ray.init sets RAY_AUTH_MODE=token (and PYTHONBREAKPOINT) in os.environ and shutdown does
    # not undo it: every Ray driver this session starts later inherits it, and its head's GCS
    # server never writes its port ("Timed out waiting for file .../gcs_server_port_...").
    saved = dict(os.environ)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("HOME", root)
            mp.setenv("RAY_TMPDIR", root)
            mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(num_cpus=2, include_dashboard=False, _temp_dir=root, log_to_driver=False,
                     configure_logging=False)
            try:
                yield
            finally:
                ray.shutdown()
    finally:  # also when ray.init fails half way, having set some of them
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def registered_pack(ray_cluster: None) -> Iterator[specpack.SpecPack]:
    """An env from a file-loaded module, registered at run time here, in the driver."""
    mod = load_by_path()
    gym.register(ENV_ID, entry_point=f"{mod.__name__}:CounterEnv", max_episode_steps=6,
                 kwargs={"k": 1.5})
    try:
        yield specpack.capture(ENV_ID)
    finally:
        gym.envs.registration.registry.pop(ENV_ID, None)


def seeded_obs(pack: Any, seed: int = 4, steps: int = 8) -> list[list[float]]:
    env = pack.make()
    obs, _ = env.reset(seed=seed)
    out = [[round(float(x), 6) for x in obs]]
    for t in range(steps):
        obs, *_ = env.step(t % 2)
        out.append([round(float(x), 6) for x in obs])
    return out


def _remote_rollout() -> Any:
    """``seeded_obs`` as a Ray task (a local copy, so that Ray ships it by value)."""

    def rollout_in_worker(pack: Any, seed: int) -> Any:
        env = pack.make()
        obs, _ = env.reset(seed=seed)
        out = [[round(float(x), 6) for x in obs]]
        for t in range(8):
            obs, *_ = env.step(t % 2)
            out.append([round(float(x), 6) for x in obs])
        return os.getpid(), out

    return ray.remote(rollout_in_worker)


def test_control_ray_task_cannot_make_id_registered_in_driver(
    registered_pack: specpack.SpecPack,
) -> None:
    def make_by_id(env_id: str) -> str:
        import gymnasium

        try:
            gymnasium.make(env_id)
            return "ok"
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"

    got = ray.get(ray.remote(make_by_id).remote(ENV_ID))
    assert got.startswith("NameNotFound"), got


def test_ray_task_rebuilds_pack_passed_as_argument(registered_pack: specpack.SpecPack) -> None:
    pid, got = ray.get(_remote_rollout().remote(registered_pack, 4))
    assert pid != os.getpid()
    assert got == seeded_obs(registered_pack)


def test_ray_task_rebuilds_pack_from_object_store(registered_pack: specpack.SpecPack) -> None:
    ref = ray.put(registered_pack)
    task = _remote_rollout()
    results = ray.get([task.remote(ref, 4), task.remote(ref, 5)])
    assert [r[1] for r in results] == [seeded_obs(registered_pack, 4), seeded_obs(registered_pack, 5)]


def test_ray_actor_rebuilds_pack_passed_to_its_constructor(
    registered_pack: specpack.SpecPack,
) -> None:
    class EnvActor:
        def __init__(self, pack: Any) -> None:
            self.env = pack.make()

        def first_obs(self, seed: int) -> list[float]:
            obs, _ = self.env.reset(seed=seed)
            return [round(float(x), 6) for x in obs]

    actor = ray.remote(EnvActor).remote(registered_pack)
    try:
        assert ray.get(actor.first_obs.remote(4)) == seeded_obs(registered_pack)[0]
    finally:
        ray.kill(actor)


# The task starts about six fresh interpreters, each of which imports Ray (a Ray worker is their
# __main__): 12 s on a quiet machine, 71-180 s beside CI's installs and the real packages' audit.
# No bound of its own (a 180 s one failed under that load): the suite's hang timeout, raised here.
@pytest.mark.timeout(900)
def test_make_vec_inside_ray_task_that_registers_and_captures(ray_cluster: None) -> None:
    """The imitation-under-Ray scenario: the task registers an env, then starts workers."""

    def task(env_file: str) -> dict[str, Any]:
        import importlib.util
        import sys

        import gymnasium
        import numpy as np

        import specpack

        spec = importlib.util.spec_from_file_location("ray_task_envs", env_file)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules["ray_task_envs"] = mod
        spec.loader.exec_module(mod)
        gymnasium.register("RayInner-v0", entry_point="ray_task_envs:CounterEnv",
                           max_episode_steps=5, kwargs={"k": 2.0})
        pack = specpack.capture("RayInner-v0")

        def obs_of(venv: Any) -> Any:
            obs, _ = venv.reset(seed=3)
            out = [np.asarray(obs).round(6).tolist()]
            for t in range(6):
                obs, *_ = venv.step(np.array([t % 2, (t + 1) % 2]))
                out.append(np.asarray(obs).round(6).tolist())
            venv.close()
            return out

        res: dict[str, Any] = {"sync": obs_of(specpack.make_vec(pack, 2, "sync"))}
        for ctx in ("spawn", "forkserver"):
            res[ctx] = obs_of(specpack.make_vec(pack, 2, context=ctx))
            try:  # control: the id, as users try first
                gymnasium.make_vec("RayInner-v0", 2, vectorization_mode="async",
                                   vector_kwargs={"context": ctx}).close()
                res[f"control_{ctx}"] = "ok"
            except Exception as e:  # noqa: BLE001
                res[f"control_{ctx}"] = type(e).__name__
        return res

    got = ray.get(ray.remote(task).remote(str(TESTS / "vec_envs.py")))
    for ctx in ("spawn", "forkserver"):
        assert got[ctx] == got["sync"], ctx
        assert got[f"control_{ctx}"] in {"ConnectionResetError", "EOFError", "BrokenPipeError"}
