"""Env classes for the vector/worker tests.

Tests load this file BY PATH under another module name (``load_by_path``), as users of
file-based configs do: then no worker can import it by name and the env travels by value. The
forkserver preload test instead puts ``tests/`` on ``PYTHONPATH`` and imports it as
``vec_envs``, so that it travels by reference.
"""

from __future__ import annotations

import gc
import importlib.util
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

#: The pid of the process that imported this module (a forkserver worker sees the
#: forkserver's pid here when the module was preloaded there).
IMPORT_PID = os.getpid()

HERE = Path(__file__).resolve().parent


def load_by_path(name: str = "specpack_vec_file_envs") -> Any:
    """Import this file by path under ``name`` (a name no worker can import)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "vec_envs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def in_worker() -> bool:
    """True inside a multiprocessing child (fork, spawn or forkserver)."""
    return multiprocessing.parent_process() is not None


class CounterEnv(gym.Env):
    """A small seeded env: obs depend on the seed, ``k`` and the actions taken."""

    metadata = {"render_modes": []}

    def __init__(self, k: float = 1.0) -> None:
        self.k = float(k)
        self.observation_space = gym.spaces.Box(-100.0, 100.0, (3,), np.float32)
        self.action_space = gym.spaces.Discrete(3)
        self.import_pid = IMPORT_PID
        self.gc_frozen = gc.get_freeze_count()  # objects the forkserver froze before forking

    def getenv(self, name: str) -> str | None:
        """This process's environment variable ``name``."""
        return os.environ.get(name)

    def gc_now(self) -> tuple[bool, int]:
        """Whether this process's GC is on, and how many objects it has frozen, now."""
        return gc.isenabled(), gc.get_freeze_count()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self._t = 0
        return (self.np_random.uniform(-1, 1, 3) * self.k).astype(np.float32), {}

    def step(self, action: Any) -> Any:
        self._t += 1
        obs = (self.np_random.uniform(-1, 1, 3) * self.k + float(action)).astype(np.float32)
        return obs, float(action) * self.k, self._t >= 25, False, {}


class FailsInWorker(CounterEnv):
    """Builds in the parent, raises in any multiprocessing worker."""

    def __init__(self, k: float = 1.0) -> None:
        if in_worker():
            raise ValueError(f"vec-boom: FailsInWorker refuses to start in pid {os.getpid()}")
        super().__init__(k)


class DiesInWorker(CounterEnv):
    """Builds in the parent; a worker dies hard (no exception, no report)."""

    def __init__(self, k: float = 1.0) -> None:
        if in_worker():
            os._exit(3)
        super().__init__(k)


class HangsInWorker(CounterEnv):
    """Builds in the parent; a worker hangs in its constructor."""

    def __init__(self, k: float = 1.0) -> None:
        if in_worker():
            time.sleep(600)
        super().__init__(k)


class WaitsForGo(CounterEnv):
    """Builds in the parent; a worker writes ``<folder>/started.<pid>``, then waits until
    ``<folder>/go`` exists before it finishes building."""

    def __init__(self, folder: str = "", k: float = 1.0) -> None:
        if in_worker():
            Path(folder, f"started.{os.getpid()}").touch()
            while not Path(folder, "go").exists():
                time.sleep(0.01)
        super().__init__(k)


def rollout(env: Any, steps: int = 12, seed: int = 3) -> list[list[float]]:
    """A seeded rollout of a single env with fixed actions, as JSON-able floats."""
    obs, _ = env.reset(seed=seed)
    out = [np.asarray(obs, dtype=float).round(6).tolist()]
    n_actions = int(getattr(env.action_space, "n", 2))
    for t in range(steps):
        obs, reward, terminated, truncated, _ = env.step(t % n_actions)
        out.append([*np.asarray(obs, dtype=float).round(6).tolist(), float(reward)])
        if terminated or truncated:
            obs, _ = env.reset()
            out.append(np.asarray(obs, dtype=float).round(6).tolist())
    env.close()
    return out


def vec_rollout(venv: Any, steps: int = 6, seed: int | None = 11) -> list[Any]:
    """Batched obs of a seeded vector-env rollout with fixed actions, as JSON-able lists."""
    obs, _ = venv.reset(seed=seed) if seed is not None else venv.reset()
    out = [np.asarray(obs, dtype=float).round(6).tolist()]
    n = venv.num_envs
    for t in range(steps):
        obs, *_ = venv.step(np.array([(t + i) % 2 for i in range(n)]))
        out.append(np.asarray(obs, dtype=float).round(6).tolist())
    venv.close()
    return out
