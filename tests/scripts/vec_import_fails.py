"""An env module whose import fails in any multiprocessing worker (see vec_failures.py)."""

import multiprocessing

if multiprocessing.parent_process() is not None:
    raise ImportError("vec-import-boom: this module cannot be imported in a worker")

import gymnasium as gym
import numpy as np


class ImportFailsEnv(gym.Env):
    def __init__(self):
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, False, False, {}
