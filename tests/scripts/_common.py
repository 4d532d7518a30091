"""Helpers shared by the test scripts (imported from the script directory)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ENVMODS = Path(__file__).resolve().parent.parent / "fixtures" / "envmods"


def load_by_path(name: str, filename: str):
    """Import ``tests/fixtures/envmods/<filename>`` by file path, as users of file-based configs
    do."""
    spec = importlib.util.spec_from_file_location(name, ENVMODS / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def rollout(env, steps=12, seed=3):
    """A seeded rollout as JSON-able lists: [obs, reward, terminated, truncated] per step."""
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    out = [[obs.tolist() if hasattr(obs, "tolist") else obs, 0.0, False, False]]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        out.append([obs.tolist() if hasattr(obs, "tolist") else obs, float(reward),
                    bool(terminated), bool(truncated)])
        if terminated or truncated:
            obs, _ = env.reset()
            out.append([obs.tolist() if hasattr(obs, "tolist") else obs, 0.0, False, False])
    return out


def layer_names(env):
    names = []
    while hasattr(env, "env"):
        names.append(type(env).__name__)
        env = env.env
    names.append(type(env).__name__)
    return names


def describe_error(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"
