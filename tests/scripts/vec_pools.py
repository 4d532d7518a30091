"""Packs in process pools: joblib's loky backend and ProcessPoolExecutor(spawn) (a script).

The envs are registered inside the main guard (one from a file-loaded module, one defined in
the guard itself); the controls ask the workers for the id. Prints one JSON line;
tests/integrations/test_joblib_threads.py asserts on it.
"""

import json
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

import gymnasium as gym
import numpy as np
from joblib import Parallel, delayed
from vec_envs import load_by_path, rollout

import specpack


def pack_rollout(pack, seed):
    return rollout(pack.make(), steps=10, seed=seed)


def id_rollout(env_id, seed):
    try:
        return rollout(gym.make(env_id), steps=10, seed=seed)
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


if __name__ == "__main__":

    class GuardEnv(gym.Env):
        def __init__(self, k=1.0):
            self.k = k
            self.observation_space = gym.spaces.Box(-10.0, 10.0, (3,), np.float32)
            self.action_space = gym.spaces.Discrete(3)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            return (self.np_random.uniform(-1, 1, 3) * self.k).astype(np.float32), {}

        def step(self, action):
            obs = (self.np_random.uniform(-1, 1, 3) * self.k + action).astype(np.float32)
            return obs, float(action), False, False, {}

    mod = load_by_path()
    gym.register("PoolMain-v0", entry_point="__main__:GuardEnv", max_episode_steps=4)
    gym.register("PoolFile-v0", entry_point=f"{mod.__name__}:CounterEnv", max_episode_steps=6,
                 kwargs={"k": 2.5})
    seeds = [0, 1, 2, 3]
    results = {}
    with ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as spawn_pool:
        for env_id in ("PoolMain-v0", "PoolFile-v0"):
            pack = specpack.capture(env_id)
            res = {"parent": [pack_rollout(pack, s) for s in seeds]}
            res["loky"] = Parallel(n_jobs=2, backend="loky")(
                delayed(pack_rollout)(pack, s) for s in seeds)
            res["loky_control"] = Parallel(n_jobs=2, backend="loky")(
                delayed(id_rollout)(env_id, s) for s in seeds)
            res["spawn_pool"] = list(spawn_pool.map(pack_rollout, [pack] * 4, seeds))
            res["spawn_pool_control"] = list(spawn_pool.map(id_rollout, [env_id] * 4, seeds))
            results[env_id] = res
    print(json.dumps(results))
