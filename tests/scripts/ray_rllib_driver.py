"""RLlib PPO with 2 remote env runners on an env registered in this driver's main guard.

Run as a script by tests/integrations/rllib/test_rllib_runners.py, in the RLlib venv (ray[rllib]
pins its own gymnasium). One Ray node (``ray.cluster_utils.Cluster``, 2 CPUs) started here
serves three jobs in turn, each building PPO and training one tiny iteration:

- ``register_env``: ``tune.register_env(NAME, lambda cfg: pack.make(**cfg))`` with an
  ``env_config`` override;
- ``runtime_env``: ``ray.init(runtime_env=specpack.ray.runtime_env(ENV_ID))`` and the plain id
  in ``config.environment(ENV_ID)``;
- ``control``: the plain id without specpack (remote runners cannot make it).

After training, each remote runner reports the env it built (pid, node, kwargs, layers, the
episode lengths its sub-envs saw). One JSON line is printed.

Usage: ``python ray_rllib_driver.py MODE [MODE...]`` (modes as above). Put ``register_env``
first: Tune's registry keeps the id of the first job of a driver process as its key prefix, so
a creator registered in a later job is invisible to that job's runners (a Ray quirk of several
jobs in one driver, unrelated to specpack).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any

import gymnasium as gym
import numpy as np
from _common import layer_names

ENV_ID = "RllibOdometer-v0"
KWARGS = {"k": 0.5, "tag": "from-driver"}
MAX_STEPS = 7


class Odometer(gym.Env):
    """Defined in ``__main__``; records its kwargs and the length of each finished episode."""

    def __init__(self, k: float = 1.0, tag: str = "default") -> None:
        self.k = k
        self.tag = tag
        self.observation_space = gym.spaces.Box(-10.0, 10.0, (3,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.state = np.zeros(3, np.float32)
        self.t = 0
        self.lengths: list[int] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        if self.t:
            self.lengths.append(self.t)
        self.t = 0
        self.state = self.np_random.uniform(-1, 1, size=3).astype(np.float32)
        return self.state.copy(), {}

    def step(self, action: Any) -> Any:
        self.t += 1
        self.state = np.clip(self.state + self.k * (int(action) - 0.5), -10, 10).astype(
            np.float32)
        return self.state.copy(), float(-abs(self.state).sum()), False, False, {}


def runner_report(runner: Any) -> dict[str, Any]:
    """Run on each remote env runner: the env it built."""
    import ray

    subs = runner.env.unwrapped.envs
    return {
        "pid": os.getpid(),
        "node": ray.get_runtime_context().get_node_id(),
        "kwargs": [[s.unwrapped.k, s.unwrapped.tag] for s in subs],
        "layers": [layer_names(s) for s in subs],
        "lengths": [list(s.unwrapped.lengths) for s in subs],
    }


def ppo_config(env: str, env_config: dict[str, Any]) -> Any:
    from ray.rllib.algorithms.ppo import PPOConfig

    return (
        PPOConfig()
        .environment(env, env_config=env_config)
        .env_runners(num_env_runners=2, num_envs_per_env_runner=1, num_cpus_per_env_runner=0,
                     rollout_fragment_length=MAX_STEPS * 2)
        .training(train_batch_size_per_learner=MAX_STEPS * 4, minibatch_size=MAX_STEPS * 2,
                  num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [8]})
        .debugging(log_level="ERROR")
    )


def run_job(mode: str, pack: Any, address: str) -> dict[str, Any]:
    """One Ray job on the cluster at ``address``: build PPO, train once, ask the runners."""
    import ray
    from ray import tune

    import specpack.ray

    started = time.monotonic()
    init: dict[str, Any] = {"address": address, "log_to_driver": False,
                            "configure_logging": False}
    if mode == "runtime_env":
        init["runtime_env"] = specpack.ray.runtime_env(ENV_ID)
    ray.init(**init)
    out: dict[str, Any] = {"driver_pid": os.getpid()}
    try:
        if mode == "register_env":
            tune.register_env("specpack_odometer", lambda cfg: pack.make(**cfg))
            config = ppo_config("specpack_odometer", {"tag": "override"})
        else:
            config = ppo_config(ENV_ID, {})
        try:
            algo = config.build_algo()
        except Exception as e:  # noqa: BLE001 - the control reports how it failed
            out["error"] = f"{type(e).__name__}: {e}"
            out["traceback"] = traceback.format_exc()[-3000:]
            return out
        try:
            result = algo.train()
            out["episode_len_mean"] = result["env_runners"]["episode_len_mean"]
            out["runners"] = algo.env_runner_group.foreach_env_runner(
                runner_report, local_env_runner=False)
        finally:
            algo.stop()
    finally:
        ray.shutdown()
        out["seconds"] = round(time.monotonic() - started, 1)
    return out


def main(modes: list[str]) -> None:
    import specpack

    gym.register(ENV_ID, entry_point=Odometer, max_episode_steps=MAX_STEPS, kwargs=KWARGS)
    pack = specpack.capture(ENV_ID)
    result: dict[str, Any] = {"pack_layers": layer_names(pack.make())}
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 2, "include_dashboard": False})
    try:
        for mode in modes:
            result[mode] = run_job(mode, pack, cluster.address)
    finally:
        cluster.shutdown()
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
