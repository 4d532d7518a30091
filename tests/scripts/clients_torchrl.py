"""TorchRL ParallelEnv of an env registered in this script's main guard (run as a script).

``python clients_torchrl.py specpack|control``; prints one JSON line: per case, whether it
worked, the workers' seeded rollouts next to the parent's (a SerialEnv here, seeded and driven
alike), the env constructors run in the parent, and whether shared buffers were used.
tests/integrations/test_torchrl_workers.py asserts on it.
"""

import multiprocessing as mp

import gymnasium as gym
import numpy as np
from clients_common import SEED, STEPS, attempt, call_in_child, emit, note_build

import specpack


def rollout(env):
    """set_seed(SEED), then STEPS random actions drawn from a seeded torch generator."""
    import torch

    env.set_seed(SEED)
    torch.manual_seed(SEED)
    td = env.rollout(STEPS, break_when_any_done=False)
    return {"obs": td["next", "observation"].tolist(), "reward": td["next", "reward"].tolist()}


def run(make_env):
    env = make_env()
    try:
        value = rollout(env)
        value["use_buffers"] = bool(getattr(env, "_use_buffers", False))
        return value
    finally:
        env.close()


if __name__ == "__main__":
    import sys

    from torchrl.envs import EnvCreator, GymEnv, GymWrapper, ParallelEnv, SerialEnv

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
        # What TorchRL's docs show: an EnvCreator of GymEnv(id).
        out["reference"] = run(lambda: SerialEnv(2, lambda: GymEnv("Walk-v0")))
        out["parallel_spawn"] = attempt(lambda: run(lambda: ParallelEnv(
            2, EnvCreator(lambda: GymEnv("Walk-v0")), mp_start_method="spawn")))
    else:
        from specpack.adapters.torchrl import env_fn, parallel_env

        pack = specpack.capture("Walk-v0", record_spaces=True)
        out["reference"] = run(lambda: SerialEnv(2, env_fn(pack)))
        # As a user writes it (the form): EnvCreator over a lambda.
        out["envcreator_spawn"] = attempt(lambda: run(lambda: ParallelEnv(
            2, EnvCreator(lambda: GymWrapper(pack.make())), mp_start_method="spawn")))
        out["env_fn_spawn"] = attempt(lambda: run(lambda: ParallelEnv(
            2, env_fn(pack), mp_start_method="spawn")))
        out["adapter_spawn"] = attempt(lambda: run(lambda: parallel_env(
            pack, 2, mp_start_method="spawn")))
        out["from_workers_spawn"] = attempt(lambda: run(lambda: ParallelEnv(
            2, env_fn(pack), mp_start_method="spawn", metadata_from_workers=True,
            use_buffers=False)))

        class RewardSpaced(Walk):
            """A reward_space, which TorchRL reads and the recorded spaces do not show."""

            def __init__(self):
                super().__init__()
                self.reward_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

        spaced = specpack.capture(RewardSpaced, record_spaces=True)
        penv = parallel_env(spaced, 2)  # the parent reads the metadata; no worker started
        with mp.get_context("fork").Pool(1) as pool:
            out["reward_space_mismatch"] = pool.apply(call_in_child, (penv.create_env_fn[0],))
        penv.close(raise_if_closed=False)
    emit(out)
