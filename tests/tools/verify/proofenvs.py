"""Envs for test_verify_proof whose spaces the children must import by name."""

from __future__ import annotations

import os
import time
from typing import Any

import gymnasium
import numpy as np


class SpyBox(gymnasium.spaces.Box):
    """A Box whose ``__repr__``/``__eq__``/pickling log the calling pid and hang in one chosen
    process."""

    def _spy(self) -> None:
        log = os.environ.get("SPY_LOG")
        if log:
            with open(log, "a") as fh:
                fh.write(f"{os.getpid()}\n")
        if str(os.getpid()) == os.environ.get("SPY_HANG_PID"):
            time.sleep(20)

    def __repr__(self) -> str:
        self._spy()
        return "SpyBox()"

    def __eq__(self, other: object) -> bool:
        self._spy()
        return isinstance(other, SpyBox)

    def __reduce_ex__(self, protocol: Any) -> Any:
        self._spy()
        return super().__reduce_ex__(protocol)

    __hash__ = None  # type: ignore[assignment]


class SpySpaces(gymnasium.Env):
    def __init__(self) -> None:
        self.observation_space = SpyBox(-1.0, 1.0, (2,), np.float64)
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        return np.zeros(2), {}

    def step(self, action: Any) -> Any:
        return np.zeros(2), 0.0, False, False, {}


class OpaqueObservation(gymnasium.Env):
    """An env whose observation holds a lock (no exact encoding: pickle refuses it)."""

    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float64)
    action_space = gymnasium.spaces.Discrete(2)

    def _obs(self) -> Any:
        import threading

        return {"x": np.zeros(2), "lock": threading.Lock()}

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action: Any) -> Any:
        return self._obs(), 0.0, False, False, {}
