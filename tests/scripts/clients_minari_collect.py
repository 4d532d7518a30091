"""Collect a Minari dataset from an env registered in this script's main guard (a script).

``python clients_minari_collect.py DATASET_ID`` with MINARI_DATASETS_PATH set and the signing
key's hex in CLIENTS_KEY: two seeded episodes of fixed actions through
``DataCollector(pack.make())``, the pack attached to the dataset (signed). Prints one JSON line
with the observations the parent saw. clients_minari_replay.py reads it in a fresh interpreter.
"""

import os

import gymnasium as gym
import numpy as np
from clients_common import SEED, STEPS, action, emit, note_build

import specpack

if __name__ == "__main__":
    import sys

    from minari import DataCollector

    from specpack.adapters.minari import attach

    class Walk(gym.Env):
        """Defined inside the main guard: a fresh interpreter cannot import it."""

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

    # A string entry point: Minari stores the EnvSpec as JSON, which cannot hold a class.
    gym.register("Walk-v0", entry_point="__main__:Walk", max_episode_steps=STEPS)
    dataset_id = sys.argv[1]
    pack = specpack.capture("Walk-v0", record_spaces=True)
    env = DataCollector(pack.make())
    seen = []
    for i in range(2):
        obs, _ = env.reset(seed=SEED + i)
        episode = [obs.tolist()]
        for t in range(STEPS):
            obs, _, terminated, truncated, _ = env.step(action(t, i))
            episode.append(obs.tolist())
        assert truncated and not terminated
        seen.append(episode)
    dataset = env.create_dataset(dataset_id=dataset_id, algorithm_name="fixed-actions")
    attach(dataset, pack, key=bytes.fromhex(os.environ["CLIENTS_KEY"]))
    env.close()
    emit({"observations": seen, "env_spec_entry_point": str(dataset.spec.env_spec.entry_point)})
