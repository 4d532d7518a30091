"""RLlib multi-agent PPO (``ParallelPettingZooEnv``, 2 remote env runners) on a PettingZoo env
class defined in this driver's ``__main__`` that holds an unpicklable native handle (a lock).

Run as a script by tests/integrations/rllib/test_rllib_pettingzoo.py, in the RLlib venv. One
Ray node (``ray.cluster_utils.Cluster``, 2 CPUs) started here serves two jobs:

- ``pack``: ``pack = specpack.capture(HandleDrift, speed=0.25)`` and
  ``tune.register_env(NAME, lambda cfg: ParallelPettingZooEnv(pack.make()))``;
- ``control``: the usual shortcut without specpack, the live env in the creator's closure
  (``lambda cfg: ParallelPettingZooEnv(live)``): Ray must pickle the lock to ship it.

Each remote runner reports the env it built (pid, the speed and agents of its PettingZoo env,
whether it holds its own lock, the episode lengths it saw). One JSON line is printed.

Usage: ``python ray_rllib_pz_driver.py MODE [MODE...]``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

MAX_CYCLES = 6
NAME = "specpack_handle_drift"


class HandleDrift(ParallelEnv):  # type: ignore[misc]
    """Two walkers on a seeded random walk scaled by ``speed``; holds a lock (a native handle)."""

    metadata = {"name": "handle_drift_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, speed: float = 1.0) -> None:
        self.speed = speed
        self.lock = threading.Lock()
        self.possible_agents = ["walker_0", "walker_1"]
        self.agents = list(self.possible_agents)
        self.render_mode = None
        self.lengths: list[int] = []
        self.t = 0

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return spaces.Box(-100.0, 100.0, (3,), np.float32)

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return spaces.Discrete(3)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
        if self.t:
            self.lengths.append(self.t)
        self.agents = list(self.possible_agents)
        self.pos = np.zeros((2, 3), np.float32)
        self.t = 0
        return self._obs(), {a: {} for a in self.agents}

    def _obs(self) -> dict[str, Any]:
        self.pos = self.pos + (self.rng.normal(size=(2, 3)) * self.speed).astype(np.float32)
        return {a: self.pos[i].copy() for i, a in enumerate(self.possible_agents)}

    def step(self, actions: dict[str, Any]) -> Any:
        with self.lock:
            self.t += 1
            obs = self._obs()
        rewards = {a: float(actions[a]) - 1.0 for a in self.agents}
        done = self.t >= MAX_CYCLES
        terms = {a: False for a in self.agents}
        truncs = {a: done for a in self.agents}
        infos: dict[str, Any] = {a: {} for a in self.agents}
        if done:
            self.agents = []
        return obs, rewards, terms, truncs, infos


def runner_report(runner: Any) -> dict[str, Any]:
    """Run on each remote env runner: the PettingZoo env under its ParallelPettingZooEnv."""
    vector = runner.env.unwrapped  # RLlib's SyncVectorMultiAgentEnv
    subs = [getattr(s, "unwrapped", s) for s in vector.envs]
    pars = [s.par_env for s in subs]
    return {
        "pid": os.getpid(),
        "wrappers": [type(s).__name__ for s in subs],
        "classes": [type(p).__qualname__ for p in pars],
        "speeds": [p.speed for p in pars],
        "agents": [list(p.possible_agents) for p in pars],
        "locks": [isinstance(p.lock, type(threading.Lock())) for p in pars],
        "lengths": [list(p.lengths) for p in pars],
    }


def ppo_config() -> Any:
    from ray.rllib.algorithms.ppo import PPOConfig

    return (
        PPOConfig()
        .environment(NAME)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda aid, *a, **k: "shared")
        .env_runners(num_env_runners=2, num_envs_per_env_runner=1, num_cpus_per_env_runner=0,
                     rollout_fragment_length=MAX_CYCLES * 2)
        .training(train_batch_size_per_learner=MAX_CYCLES * 8, minibatch_size=MAX_CYCLES * 4,
                  num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [8]})
        .debugging(log_level="ERROR")
    )


def run_job(mode: str, address: str) -> dict[str, Any]:
    """One Ray job: register the creator, build PPO, train once, ask the runners."""
    import ray
    from ray import tune
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    import specpack

    started = time.monotonic()
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    out: dict[str, Any] = {"driver_pid": os.getpid()}
    try:
        try:
            if mode == "pack":
                pack = specpack.capture(HandleDrift, speed=0.25)
                out["pack"] = {"backend": pack.backend, "by_value": pack.entry_point.by_value}
                tune.register_env(NAME, lambda cfg: ParallelPettingZooEnv(pack.make()))
            else:
                live = HandleDrift(speed=0.25)
                tune.register_env(NAME, lambda cfg: ParallelPettingZooEnv(live))
            algo = ppo_config().build_algo()
        except Exception as e:  # noqa: BLE001 - the control reports how it failed
            out["error"] = f"{type(e).__name__}: {e}"[:2000]
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
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 2, "include_dashboard": False})
    result: dict[str, Any] = {}
    try:
        for mode in modes:
            result[mode] = run_job(mode, cluster.address)
    finally:
        cluster.shutdown()
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main(sys.argv[1:])
