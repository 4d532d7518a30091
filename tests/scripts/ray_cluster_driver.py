"""A Ray driver on a 3-node cluster on this machine (run as a script by test_ray_cluster.py).

The env class is defined in this ``__main__`` and registered in the main guard: no Ray worker
can import it. The driver starts a head node and one worker node (``ray.cluster_utils.Cluster``,
one CPU each, custom resources ``node0``/``node1``), connects with
``runtime_env=specpack.ray.runtime_env(ENV_ID)``, then adds a third node (``node2``). On each
node a task and an actor call plain ``gymnasium.make(ENV_ID)`` (and a task ``make_vec``, SB3's
``make_vec_env``). The runtime_env extends a user's own (a setup hook, defined here, that
registers CartPole under ENV_ID, and an env var). The results, with the driver's own reference rollouts, are printed as one
JSON line. Then, as a new job without specpack (the control), a task on ``node1`` tries the id.

Usage: ``python ray_cluster_driver.py`` with HOME and RAY_TMPDIR set to a short temp folder
(tests/scripts/ray_procs.py does that, and cleans up after it).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import gymnasium as gym
import numpy as np
from _common import describe_error, layer_names, rollout

ENV_ID = "ClusterOdometer-v0"
KWARGS = {"k": 2.5, "tag": "from-driver"}
STEPS = 9  # the episode is truncated at 5: the rollouts cross one reset


class Odometer(gym.Env):
    """Defined in ``__main__``: a worker has it only if the pack carried it by value."""

    def __init__(self, k: float = 1.0, tag: str = "default") -> None:
        self.k = k
        self.tag = tag
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (3,), np.float64)
        self.action_space = gym.spaces.Discrete(3)
        self.state = np.zeros(3)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.state = self.np_random.normal(size=3)
        return self.state.copy(), {"k": self.k, "tag": self.tag}

    def step(self, action: Any) -> Any:
        self.state = self.state + self.k * (int(action) - 1) + self.np_random.normal(size=3)
        reward = float(-np.abs(self.state).sum())
        return self.state.copy(), reward, False, False, {"k": self.k, "tag": self.tag}


def users_setup_hook() -> None:
    """A user's own setup hook (defined here, so Ray ships it by value, as in most scripts).

    It marks the worker and registers CartPole under ``$SPECPACK_SQUAT_ID``: specpack's hook
    runs after it, and the captured env must replace that registration.
    """
    os.environ["SPECPACK_BASE_HOOK_RAN"] = str(os.getpid())
    gym.register(os.environ["SPECPACK_SQUAT_ID"],
                 entry_point="gymnasium.envs.classic_control:CartPoleEnv")


def summary(env: Any, seed: int) -> dict[str, Any]:
    """What a worker reports about the env it built: layers, kwargs, a seeded rollout."""
    base = env.unwrapped
    return {"layers": layer_names(env), "kwargs": [base.k, base.tag],
            "rollout": rollout(env, steps=STEPS, seed=seed)}


def where() -> dict[str, Any]:
    """This worker: node, pid, and whether the user's own setup hook ran here first."""
    import ray

    return {"node": ray.get_runtime_context().get_node_id(), "pid": os.getpid(),
            "base_hook": os.environ.get("SPECPACK_BASE_HOOK_RAN"),
            "task_env": os.environ.get("SPECPACK_TASK_ENV")}


def make_by_id(env_id: str, seed: int) -> dict[str, Any]:
    """A task: the unchanged user code, ``gymnasium.make(id)``."""
    import gymnasium

    try:
        return {**where(), **summary(gymnasium.make(env_id), seed)}
    except Exception as e:  # noqa: BLE001 - the control reports the error
        return {**where(), "error": describe_error(e)}


def make_vec_by_id(env_id: str, seed: int) -> dict[str, Any]:
    """A task: ``gymnasium.make_vec(id)`` (sync) and SB3's ``make_vec_env(id)`` (DummyVecEnv)."""
    import gymnasium
    from stable_baselines3.common.env_util import make_vec_env

    venv = gymnasium.make_vec(env_id, 2, vectorization_mode="sync")
    obs, _ = venv.reset(seed=seed)
    sb3 = make_vec_env(env_id, n_envs=2, seed=seed)
    return {**where(), "make_vec": np.asarray(obs).tolist(),
            "sb3": np.asarray(sb3.reset()).tolist(),
            "sb3_layers": layer_names(sb3.envs[0])}


class EnvActor:
    """An actor: builds the env by id in its constructor, rolls it out on request."""

    def __init__(self, env_id: str) -> None:
        import gymnasium

        self.env = gymnasium.make(env_id)

    def report(self, seed: int) -> dict[str, Any]:
        return {**where(), **summary(self.env, seed)}


def on_node(node: str) -> dict[str, Any]:
    """Ray options pinning a task or actor to ``node`` (its custom resource)."""
    return {"resources": {node: 0.01}, "num_cpus": 0}


def run_on_nodes(ray: Any, nodes: list[str], seed: int) -> dict[str, Any]:
    task = ray.remote(make_by_id)
    actor_cls = ray.remote(EnvActor)
    out: dict[str, Any] = {}
    actors = {n: actor_cls.options(**on_node(n)).remote(ENV_ID) for n in nodes}
    tasks = {n: task.options(**on_node(n)).remote(ENV_ID, seed) for n in nodes}
    reports = {n: actors[n].report.remote(seed) for n in nodes}
    for n in nodes:
        out[n] = {"task": ray.get(tasks[n], timeout=120),
                  "actor": ray.get(reports[n], timeout=120)}
        ray.kill(actors[n])
    return out


def main() -> None:
    import ray
    from ray.cluster_utils import Cluster

    import specpack
    import specpack.ray

    gym.register(ENV_ID, entry_point=Odometer, max_episode_steps=5, kwargs=KWARGS)
    pack = specpack.capture(ENV_ID)
    seed = 11
    result: dict[str, Any] = {
        "driver": {
            "pack": summary(pack.make(), seed),
            "by_id": summary(gym.make(ENV_ID), seed),
            "make_vec": np.asarray(
                gym.make_vec(ENV_ID, 2, vectorization_mode="sync").reset(seed=seed)[0]
            ).tolist(),
            # SB3's make_vec_env seeds its i-th env with seed + i.
            "sb3": [pack.make().reset(seed=seed + i)[0].tolist() for i in range(2)],
        }
    }
    started = time.monotonic()
    node_args = {"num_cpus": 1, "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args={**node_args,
                                                            "resources": {"node0": 1}})
    try:
        cluster.add_node(num_cpus=1, resources={"node1": 1})
        cluster.wait_for_nodes()
        # The user's own runtime_env: a setup hook (which registers CartPole under ENV_ID)
        # and an env var; runtime_env() extends it and must leave it as it was.
        env_vars = {"SPECPACK_SQUAT_ID": ENV_ID}
        base = {"worker_process_setup_hook": users_setup_hook, "env_vars": env_vars}
        env = specpack.ray.runtime_env(ENV_ID, base=base)
        ray.init(address=cluster.address, runtime_env=env, log_to_driver=False)
        result["base_unchanged"] = (
            base == {"worker_process_setup_hook": users_setup_hook, "env_vars": env_vars}
            and env_vars == {"SPECPACK_SQUAT_ID": ENV_ID})
        result["nodes_at_init"] = len(ray.nodes())
        result["first"] = run_on_nodes(ray, ["node0", "node1"], seed)
        result["vec"] = ray.get(ray.remote(make_vec_by_id).options(**on_node("node1")).remote(
            ENV_ID, seed), timeout=120)
        # A task with a runtime_env of its own runs in a worker of the job all the same.
        result["own_env"] = ray.get(ray.remote(make_by_id).options(
            runtime_env={"env_vars": {"SPECPACK_TASK_ENV": "own"}}, **on_node("node0")
        ).remote(ENV_ID, seed), timeout=120)
        cluster.add_node(num_cpus=1, resources={"node2": 1})  # after ray.init
        cluster.wait_for_nodes()
        result["late"] = run_on_nodes(ray, ["node2"], seed)
        result["node_ids"] = sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])
        ray.shutdown()

        # The control: a new job on the same cluster, without specpack's runtime_env.
        ray.init(address=cluster.address, log_to_driver=False)
        result["control"] = ray.get(ray.remote(make_by_id).options(**on_node("node1")).remote(
            ENV_ID, seed), timeout=120)
        ray.shutdown()
    finally:
        ray.shutdown()
        cluster.shutdown()
    result["cluster_seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
