"""Stable-Baselines3 vec envs of packs whose envs are registered in the main guard (a script).

SB3's SubprocVecEnv starts its workers with forkserver by default. Prints one JSON line;
tests/integrations/test_sb3.py asserts on it.
"""

import json

import gymnasium as gym
import numpy as np
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
from vec_envs import load_by_path

import specpack
import specpack.vector


def sb3_rollout(venv, seed=5, steps=8):
    venv.seed(seed)  # SB3: env i is seeded with seed + i at the next reset
    obs = venv.reset()
    out = [np.asarray(obs, dtype=float).round(6).tolist()]
    for t in range(steps):
        actions = np.array([(t + i) % 2 for i in range(venv.num_envs)])
        obs, rewards, dones, _ = venv.step(actions)
        out.append([np.asarray(obs, dtype=float).round(6).tolist(), rewards.tolist(),
                    dones.tolist()])
    venv.close()
    return out


def attempt(fn):
    try:
        venv = fn()
        venv.close()
        return {"outcome": "ok"}
    except BaseException as e:  # noqa: BLE001
        return {"outcome": f"{type(e).__name__}: {e}", "type": type(e).__name__}


if __name__ == "__main__":

    class GuardEnv(gym.Env):
        def __init__(self, k=1.0):
            self.k = k
            self.observation_space = gym.spaces.Box(-10.0, 10.0, (2,), np.float32)
            self.action_space = gym.spaces.Discrete(2)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            return (self.np_random.uniform(-1, 1, 2) * self.k).astype(np.float32), {}

        def step(self, action):
            obs = (self.np_random.uniform(-1, 1, 2) * self.k + action).astype(np.float32)
            return obs, float(action), False, False, {}

    # SubprocVecEnv workers unpickle SB3's worker function, i.e. import SB3 and torch (~2 s
    # each); preloaded once in the forkserver, every worker forks with them loaded.
    specpack.vector.warm_forkserver(modules=["stable_baselines3.common.vec_env"])
    mod = load_by_path()
    gym.register("Sb3Main-v0", entry_point="__main__:GuardEnv", max_episode_steps=5)
    gym.register("Sb3File-v0", entry_point=f"{mod.__name__}:CounterEnv", max_episode_steps=5,
                 kwargs={"k": 2.0})
    results = {}
    for env_id in ("Sb3Main-v0", "Sb3File-v0"):
        pack = specpack.capture(env_id)
        res = {
            # What users try first: SB3's helper with the id; SubprocVecEnv -> forkserver.
            "control": attempt(
                lambda env_id=env_id: make_vec_env(env_id, n_envs=2, vec_env_cls=SubprocVecEnv)),
            "dummy": sb3_rollout(DummyVecEnv([pack.make] * 2)),
            "subproc_forkserver": sb3_rollout(
                SubprocVecEnv([pack.make] * 2, start_method="forkserver")),
            "make_vec_env_dummy": sb3_rollout(make_vec_env(pack.make, n_envs=2)),
            "make_vec_env_subproc": sb3_rollout(
                make_vec_env(pack.make, n_envs=2, vec_env_cls=SubprocVecEnv)),
            "single": [np.asarray(pack.make().reset(seed=5 + i)[0], dtype=float).round(6).tolist()
                       for i in range(2)],
        }
        results[env_id] = res
    print(json.dumps(results))
