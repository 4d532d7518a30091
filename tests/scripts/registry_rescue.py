"""Envs registered in the main guard, rebuilt everywhere from a pack (the registry rescue)."""

import json
import multiprocessing as mp
import os
import pickle
import subprocess
import sys
import tempfile

import gymnasium as gym
import numpy as np
from _common import describe_error, layer_names, load_by_path, rollout

import specpack


def make_by_id(env_id):
    try:
        gym.make(env_id)
        return "ok"
    except Exception as e:  # noqa: BLE001
        return describe_error(e)


def make_by_spec(spec):
    try:
        gym.make(spec)
        return "ok"
    except Exception as e:  # noqa: BLE001
        return describe_error(e)


def pack_rollout(pack):
    return rollout(pack.make())


def vector_obs(venv, steps=5):
    obs, _ = venv.reset(seed=11)
    out = [obs.tolist()]
    for t in range(steps):
        obs, *_ = venv.step(np.array([t % 2, (t + 1) % 2]))
        out.append(obs.tolist())
    venv.close()
    return out


if __name__ == "__main__":

    class MainAnt(gym.Env):
        def __init__(self, k=1.0):
            self.k = k
            self.observation_space = gym.spaces.Box(-10.0, 10.0, (2,), np.float32)
            self.action_space = gym.spaces.Discrete(2)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            return (self.np_random.uniform(-1, 1, 2) * self.k).astype(np.float32), {}

        def step(self, action):
            obs = (self.np_random.uniform(-1, 1, 2) * self.k + action).astype(np.float32)
            return obs, 1.0, False, False, {}

    gym.register("MainAnt-v0", entry_point="__main__:MainAnt", max_episode_steps=7)
    load_by_path("antfile_mod", "antfile_mod.py")
    gym.register("FileAnt-v0", entry_point="antfile_mod:FileAnt", max_episode_steps=7,
                 kwargs={"k": 2.0})

    results = {}
    for env_id in ("MainAnt-v0", "FileAnt-v0"):
        pack = specpack.capture(env_id)
        res = {
            "by_value": pack.entry_point.by_value,
            "layers": layer_names(pack.make()),
            "parent": pack_rollout(pack),
            "control_id": {},
            "control_spec": {},
            "pack": {},
            "vector": {},
        }
        for ctx in ("fork", "spawn", "forkserver"):
            with mp.get_context(ctx).Pool(1) as pool:
                res["control_id"][ctx] = pool.apply(make_by_id, (env_id,))
                res["control_spec"][ctx] = pool.apply(make_by_spec, (gym.spec(env_id),))
                res["pack"][ctx] = pool.apply(pack_rollout, (pack,))
        res["vector_parent"] = vector_obs(gym.vector.SyncVectorEnv([pack.make] * 2))
        for ctx in ("spawn", "forkserver"):
            res["vector"][ctx] = vector_obs(gym.vector.AsyncVectorEnv([pack.make] * 2, context=ctx))
        # A fresh python in another working directory loads the pickle from a file.
        other = tempfile.mkdtemp()
        path = os.path.join(other, "pack.pkl")
        with open(path, "wb") as fh:
            pickle.dump(pack, fh)
        code = (
            "import json, pickle, sys; sys.path.insert(0, sys.argv[2]);"
            "from _common import rollout;"
            "pack = pickle.load(open(sys.argv[1], 'rb'));"
            "mp_main = sys.modules.get('__mp_main__');"
            "loaded = 'antfile_mod' in sys.modules or mp_main not in (None, sys.modules['__main__']);"
            "print(json.dumps({'rollout': rollout(pack.make()), 'preloaded': loaded}))"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code, path, os.path.dirname(os.path.abspath(__file__))],
            cwd=other, capture_output=True, text=True, timeout=120,
        )
        res["fresh"] = json.loads(proc.stdout) if proc.returncode == 0 else proc.stderr
        results[env_id] = res
    print(json.dumps(results))
