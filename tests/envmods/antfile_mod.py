"""A custom env module that tests load by FILE PATH (never on sys.path)."""

import gymnasium as gym
import numpy as np


class FileAnt(gym.Env):
    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, k=1.0, render_mode=None):
        self.k = k
        self.render_mode = render_mode
        self.observation_space = gym.spaces.Box(-10.0, 10.0, (3,), np.float32)
        self.action_space = gym.spaces.Discrete(3)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return (self.np_random.uniform(-1, 1, 3) * self.k).astype(np.float32), {}

    def step(self, action):
        obs = (self.np_random.uniform(-1, 1, 3) * self.k + action).astype(np.float32)
        return obs, float(action) * self.k, False, False, {}

    def render(self):
        return np.zeros((4, 4, 3), np.uint8)


class ScaleReward(gym.RewardWrapper, gym.utils.RecordConstructorArgs):
    """A RecordConstructorArgs wrapper living in the file-loaded module."""

    def __init__(self, env, scale=1.0):
        gym.utils.RecordConstructorArgs.__init__(self, scale=scale)
        gym.RewardWrapper.__init__(self, env)
        self.scale = scale

    def reward(self, reward):
        return reward * self.scale
