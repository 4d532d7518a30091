"""Fixture wrappers for ``specpack audit --wrappers --import auditpkg.wrappers``."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs


class ScaleReward(gym.Wrapper[Any, Any, Any, Any], RecordConstructorArgs):
    """Multiplies rewards by ``scale`` but forgets to record it (PR #1664's kind of bug)."""

    def __init__(self, env: gym.Env[Any, Any], scale: float = 1.0) -> None:
        RecordConstructorArgs.__init__(self)  # the bug: scale=scale is missing
        gym.Wrapper.__init__(self, env)
        self.scale = scale

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, float(reward) * self.scale, terminated, truncated, info


class OffsetReward(gym.Wrapper[Any, Any, Any, Any], RecordConstructorArgs):
    """Adds ``offset`` to rewards and records it faithfully."""

    def __init__(self, env: gym.Env[Any, Any], offset: float = 0.0) -> None:
        RecordConstructorArgs.__init__(self, offset=offset)
        gym.Wrapper.__init__(self, env)
        self.offset = offset

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        reward_out: SupportsFloat = float(reward) + self.offset
        return obs, reward_out, terminated, truncated, info


class RenamedArgs(gym.Wrapper[Any, Any, Any, Any], RecordConstructorArgs):
    """Records its argument under a stale name (PR #1658's kind of bug)."""

    def __init__(self, env: gym.Env[Any, Any], bonus: float = 0.0) -> None:
        RecordConstructorArgs.__init__(self, old_bonus=bonus)  # the bug: a stale name
        gym.Wrapper.__init__(self, env)
        self.bonus = bonus

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, float(reward) + self.bonus, terminated, truncated, info


class Unrecorded(gym.Wrapper[Any, Any, Any, Any]):
    """A plain wrapper with an argument and no ``RecordConstructorArgs`` (SB3 Monitor's kind)."""

    def __init__(self, env: gym.Env[Any, Any], penalty: float = 0.0) -> None:
        super().__init__(env)
        self.penalty = penalty

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, float(reward) - self.penalty, terminated, truncated, info


class HiddenBonus(gym.Wrapper[Any, Any, Any, Any], RecordConstructorArgs):
    """Forgets to record ``amount`` and stores it under another name (no visible evidence)."""

    def __init__(self, env: gym.Env[Any, Any], amount: float = 0.0) -> None:
        RecordConstructorArgs.__init__(self)  # the bug: amount=amount is missing
        gym.Wrapper.__init__(self, env)
        self._extra = amount

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, float(reward) + self._extra, terminated, truncated, info
