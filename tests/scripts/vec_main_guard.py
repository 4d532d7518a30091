"""make_vec and pack.register with envs registered inside the main guard (run as a script).

Prints one JSON line: for each env id, the controls (id-based gymnasium.make_vec in spawn and
forkserver workers) and the make_vec rollouts per start method, plus pack.register checks in a
spawn worker. tests/core/vector/test_make_vec.py asserts on it.
"""

import json
import multiprocessing as mp
import time

import gymnasium as gym
import numpy as np
from vec_envs import load_by_path, rollout, vec_rollout

import specpack


def describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def worker_register_and_make(pack, env_id):
    """In a spawn worker: the id is unknown until pack.register() puts it in the registry."""
    out = {}
    try:
        gym.make(env_id)
        out["before"] = "ok"
    except Exception as e:  # noqa: BLE001
        out["before"] = describe(e)
    out["first"] = pack.register()
    out["again"] = pack.register()  # idempotent
    try:
        pack.register(env_id + "-other")
        out["other_id"] = "ok"
    except Exception as e:  # noqa: BLE001
        out["other_id"] = describe(e)
    out["rollout"] = rollout(gym.make(env_id))
    out["spec_id"] = gym.make(env_id).spec.id
    return out


def control_make_vec(env_id, ctx):
    """What users try first: the id, in async workers."""
    t0 = time.monotonic()
    try:
        venv = gym.make_vec(env_id, 2, vectorization_mode="async", vector_kwargs={"context": ctx})
        venv.close()
        return {"outcome": "ok", "seconds": time.monotonic() - t0}
    except BaseException as e:  # noqa: BLE001
        return {"outcome": describe(e), "type": type(e).__name__,
                "seconds": time.monotonic() - t0}


if __name__ == "__main__":

    class MainEnv(gym.Env):
        """Defined inside the main guard: no worker can import it."""

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

    mod = load_by_path()
    gym.register("VecMain-v0", entry_point="__main__:MainEnv", max_episode_steps=4,
                 kwargs={"k": 2.0})
    gym.register("VecFile-v0", entry_point=f"{mod.__name__}:CounterEnv", max_episode_steps=5,
                 kwargs={"k": 3.0})

    results = {}
    for env_id in ("VecMain-v0", "VecFile-v0"):
        pack = specpack.capture(env_id)
        res = {"by_value": pack.entry_point.by_value, "control": {}, "async": {}}
        for ctx in ("spawn", "forkserver"):
            res["control"][ctx] = control_make_vec(env_id, ctx)
        res["sync"] = vec_rollout(specpack.make_vec(pack, 3, "sync"), steps=9)
        for ctx in ("fork", "spawn", "forkserver"):
            res["async"][ctx] = vec_rollout(specpack.make_vec(pack, 3, context=ctx), steps=9)
        # Sub-env i of reset(seed=s) is pack.make() reset with s + i.
        res["single"] = [
            np.asarray(pack.make().reset(seed=11 + i)[0], dtype=float).round(6).tolist()
            for i in range(3)
        ]
        # seed= given to make_vec: the first reset() without a seed is reset(seed=s).
        venv = specpack.make_vec(pack, 3, context="forkserver", seed=11)
        first = venv.reset()[0]
        second = venv.reset()[0]
        venv.close()
        res["seeded_first_reset"] = np.asarray(first, dtype=float).round(6).tolist()
        res["seeded_second_reset_differs"] = not np.array_equal(first, second)
        sync = specpack.make_vec(pack, 3, "sync", seed=11)
        res["sync_seeded_first_reset"] = np.asarray(sync.reset()[0], dtype=float).round(6).tolist()
        sync.close()
        # pack.register() inside a spawn worker, where the id is unknown.
        with mp.get_context("spawn").Pool(1) as pool:
            res["register_in_spawn"] = pool.apply(worker_register_and_make, (pack, env_id))
        res["parent_rollout"] = rollout(pack.make())
        results[env_id] = res
    print(json.dumps(results))
