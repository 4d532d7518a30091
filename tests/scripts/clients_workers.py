"""gymnasium's AsyncVectorEnv fed specpack.adapters.worker_env_fn (run as a script).

``python clients_workers.py``; prints one JSON line: the workers' seeded rollouts next to the
parent's, the env constructors run in the parent (worker_env_fn, pack.make, an id lambda), what
a factory gives in its own process, and what a worker says when the env it builds has other
spaces than the parent was shown. tests/integrations/adapters/test_adapters_workers.py asserts
on it.
"""

import multiprocessing as mp
import pickle

import gymnasium as gym
import numpy as np
from clients_common import (
    SEED,
    STEPS,
    action,
    attempt,
    call_in_child,
    describe,
    emit,
    note_build,
    reference,
)

import specpack


def vec_rollouts(envs, n):
    obs, _ = envs.reset(seed=SEED)  # sub-env i seeded with SEED + i
    steps = [[obs[i].tolist()] for i in range(n)]
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
    from gymnasium.vector import AsyncVectorEnv

    from specpack.adapters import worker_env_fn

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

    class Shifty(Walk):
        """Its observation size depends on the process: 3 in the parent, 4 in a worker."""

        def __init__(self):
            import multiprocessing

            super().__init__(n=3 if multiprocessing.parent_process() is None else 4)

    gym.register("Walk-v0", entry_point=Walk, max_episode_steps=50)
    out = {}
    pack = specpack.capture("Walk-v0", record_spaces=True)
    out["reference"] = reference(pack.make, 2)
    out["control_id_spawn"] = attempt(lambda: run(lambda: AsyncVectorEnv(
        [lambda: gym.make("Walk-v0")] * 2, context="spawn")))
    out["pack_make_spawn"] = attempt(lambda: run(lambda: AsyncVectorEnv(
        [pack.make] * 2, context="spawn")))
    out["worker_env_fn_spawn"] = attempt(lambda: run(lambda: AsyncVectorEnv(
        [worker_env_fn(pack)] * 2, context="spawn")))
    out["worker_env_fn_forkserver"] = attempt(lambda: run(lambda: AsyncVectorEnv(
        [worker_env_fn(pack)] * 2, context="forkserver")))

    fn = worker_env_fn(pack)
    here = attempt(lambda: type(fn()).__name__)
    out["home_call"] = here
    try:
        fn().reset(seed=0)
        out["home_reset"] = "ok"
    except Exception as e:  # noqa: BLE001
        out["home_reset"] = describe(e)
    out["unpickled_home_call"] = type(pickle.loads(pickle.dumps(fn))()).__name__
    with mp.get_context("spawn").Pool(1) as pool:
        out["spawn_child_call"] = pool.apply(call_in_child, (fn,))
        shifty = specpack.capture(Shifty, record_spaces=True)
        out["mismatch"] = pool.apply(call_in_child, (worker_env_fn(shifty),))
    out["fork_child_call"] = mp.get_context("fork").Pool(1).apply(call_in_child, (fn,))
    emit(out)
