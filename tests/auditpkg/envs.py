"""The fixture envs (see the package docstring for what each one gets wrong)."""

from __future__ import annotations

import os
import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle

from .wrappers import HiddenBonus, OffsetReward, ScaleReward

#: Set by :func:`configure`, which the launcher (``auditpkg.launch``) calls: a fresh
#: interpreter that only imports this module never sets it.
CALIBRATION: float | None = None


def configure(calibration: float) -> None:
    """What a package's setup code does at run time: store a setting in a module global."""
    global CALIBRATION
    CALIBRATION = calibration


class GoodEnv(gym.Env[np.ndarray, np.int64]):
    """A walk on a line towards ``goal``; everything it does depends on its arguments and seed."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, goal: float = 4.0, gravity: float = 9.8) -> None:
        self.goal = goal
        self.gravity = gravity
        self.observation_space = spaces.Box(-100.0, 100.0, (2,), np.float64)
        self.action_space = spaces.Discrete(3)
        self._pos = 0.0

    def _obs(self) -> np.ndarray:
        return np.array([self._pos, self.goal], dtype=np.float64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self._pos = float(self.np_random.uniform(-1.0, 1.0))
        return self._obs(), {}

    def step(self, action: Any) -> Any:
        self._pos += (int(action) - 1) * 0.5 - self.gravity * 0.01
        done = abs(self._pos - self.goal) < 0.25
        return self._obs(), -abs(self._pos - self.goal), done, False, {}


class EzPickleGapEnv(GoodEnv, EzPickle):
    """Records ``gravity`` but forgets ``goal`` in ``EzPickle.__init__`` (gym's Atari bug)."""

    def __init__(self, gravity: float = 9.8, goal: float = 1.0) -> None:
        EzPickle.__init__(self, gravity=gravity)  # the bug: goal=goal is missing
        GoodEnv.__init__(self, goal=goal, gravity=gravity)


def make_scaled(scale: float = 1.0) -> gym.Env[Any, Any]:
    """A factory entry point that returns a wrapped env."""
    return ScaleReward(GoodEnv(), scale=scale)


def make_offset(offset: float = 0.0) -> gym.Env[Any, Any]:
    """A factory entry point whose wrapper records its argument faithfully."""
    return OffsetReward(GoodEnv(), offset=offset)


def make_bonus(amount: float = 0.0) -> gym.Env[Any, Any]:
    """A factory entry point whose wrapper hides an unrecorded argument."""
    return HiddenBonus(GoodEnv(), amount=amount)


class HashEnv(GoodEnv):
    """Its start position depends on ``hash(str)``: different in every process."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self._pos = float(hash("auditpkg-start") % 1000) / 100.0
        return self._obs(), {}


class NeedsLaunchEnv(GoodEnv):
    """Raises unless the launcher configured the package in this process."""

    def __init__(self) -> None:
        if CALIBRATION is None:
            raise RuntimeError(
                "auditpkg is not configured in this process: call "
                "auditpkg.envs.configure(...) first (auditpkg.launch does)"
            )
        super().__init__(goal=CALIBRATION)


class HangEnv(GoodEnv):
    """Hangs in a process the launcher did not configure."""

    def __init__(self) -> None:
        if CALIBRATION is None:
            time.sleep(3600)
        super().__init__()


class CrashEnv(GoodEnv):
    """Kills its process when the launcher did not configure it (like a native crash)."""

    def __init__(self) -> None:
        if CALIBRATION is None:
            os._exit(70)
        super().__init__()
