"""An importable env module whose behaviour depends on state set at run time."""

import gymnasium as gym
import numpy as np

SCALE = 1.0  # a training script may set this after import: a fresh worker will not see it
READY = False  # set by the parent; a fresh interpreter's constructor refuses to run


class Scaled(gym.Env):
    observation_space = gym.spaces.Box(-100, 100, (2,), np.float64)
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.np_random.uniform(-1, 1, 2) * SCALE, {}

    def step(self, action):
        return self.np_random.uniform(-1, 1, 2) * SCALE, 1.0, False, False, {}


class NeedsParent(Scaled):
    def __init__(self):
        if not READY:
            raise RuntimeError("runtime_mod.READY is False: the parent's setup did not run here")
