"""Tianshou vector envs of an env registered in this script's main guard (run as a script).

``python clients_tianshou.py specpack|control``; prints one JSON line: per case, whether it
worked, the workers' seeded rollouts next to the parent's, and the env constructors run in the
parent. tests/integrations/test_tianshou_workers.py asserts on it.
"""

import multiprocessing as mp

import gymnasium as gym
import numpy as np
from clients_common import SEED, STEPS, action, attempt, emit, note_build, reference

import specpack


def vec_rollouts(envs, n):
    """Env i reset with SEED + i, then the fixed actions, through the vector env."""
    steps = [[] for _ in range(n)]
    for i in range(n):
        obs, _ = envs.reset(env_id=[i], seed=SEED + i)
        steps[i].append(obs[0].tolist())
    for t in range(STEPS):
        obs, *_ = envs.step(np.array([action(t, i) for i in range(n)]))
        for i in range(n):
            steps[i].append(obs[i].tolist())
    return steps


def run(make_envs, n=2):
    envs = make_envs()
    try:
        return vec_rollouts(envs, n)
    finally:
        envs.close()


if __name__ == "__main__":
    import sys

    from tianshou.env import ShmemVectorEnv, SubprocVectorEnv

    class Walk(gym.Env):
        """Defined inside the main guard: no spawn or forkserver worker can import it."""

        def __init__(self, n=3, stride=0.5):
            note_build()
            self.n, self.stride = n, stride
            self.observation_space = gym.spaces.Box(-100.0, 100.0, (n,), np.float32)
            self.action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.pos = self.np_random.normal(size=self.n).astype(np.float32)
            return self.pos.copy(), {}

        def step(self, action):
            sign = np.float32(self.stride if action else -self.stride)
            self.pos += sign * self.np_random.random(self.n, dtype=np.float32)
            return self.pos.copy(), float(self.pos.sum()), False, False, {}

    gym.register("Walk-v0", entry_point=Walk, max_episode_steps=50)
    mode = sys.argv[1]
    out = {}
    if mode == "control":
        # What Tianshou's docs show: a factory of the id (as a lambda, cloudpickled by value).
        def make():
            return gym.make("Walk-v0")

        out["reference"] = reference(make, 2)
        out["subproc_spawn"] = attempt(
            lambda: run(lambda: SubprocVectorEnv([make] * 2, context="spawn")))
        mp.set_start_method("forkserver", force=True)
        out["shmem_forkserver"] = attempt(lambda: run(lambda: ShmemVectorEnv([make] * 2)))
    else:
        from specpack.adapters.tianshou import subproc_vector_env

        pack = specpack.capture("Walk-v0", record_spaces=True)
        out["reference"] = reference(pack.make, 2)
        out["subproc_spawn"] = attempt(
            lambda: run(lambda: SubprocVectorEnv([pack.make] * 2, context="spawn")))
        out["adapter_shmem_spawn"] = attempt(
            lambda: run(lambda: subproc_vector_env(pack, 2, share_memory=True, context="spawn")))
        kw = {"stride": 1.5}
        out["reference_kwargs"] = reference(lambda: pack.make(**kw), 2)
        out["adapter_kwargs_spawn"] = attempt(lambda: run(lambda: subproc_vector_env(
            pack, 2, env_kwargs=kw, share_memory=True, context="spawn")))
        mp.set_start_method("forkserver", force=True)
        out["shmem_forkserver"] = attempt(lambda: run(lambda: ShmemVectorEnv([pack.make] * 2)))
        out["adapter_shmem_forkserver"] = attempt(lambda: run(
            lambda: subproc_vector_env(pack, 2, share_memory=True, context="forkserver")))
    emit(out)
