"""What an env shows before it is stepped: spaces, metadata, render mode (a pack's *surface*).

Recorded at capture (from the live env, or from one build when asked), a surface lets tools
that need an env's spaces get them from the pack without building an env in their own process:
``make_vec``'s parent (gymnasium's ``AsyncVectorEnv`` builds a throwaway env for the spaces),
TorchRL/Tianshou-style creators, schedulers. The spaces are copies with their random state
dropped, so a surface is a value: equal envs give equal surfaces.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import gymnasium

__all__ = ["Surface", "SurfaceEnv", "record_surface"]


@dataclass(frozen=True)
class Surface:
    """An env's observation and action spaces, metadata and render mode, as recorded."""

    observation_space: gymnasium.spaces.Space[Any]
    action_space: gymnasium.spaces.Space[Any]
    metadata: dict[str, Any]
    render_mode: str | None


def _quiet(space: Any) -> Any:
    """A copy of ``space`` without random state (seeding is the user's, not the pack's)."""
    out = copy.deepcopy(space)
    stack = [out]
    while stack:
        node = stack.pop()
        if isinstance(node, gymnasium.spaces.Space):
            node._np_random = None  # type: ignore[assignment]
            stack.extend(v for v in vars(node).values() if isinstance(v, gymnasium.spaces.Space))
            for v in vars(node).values():
                if isinstance(v, (list, tuple)):
                    stack.extend(x for x in v if isinstance(x, gymnasium.spaces.Space))
                elif isinstance(v, dict):
                    stack.extend(x for x in v.values() if isinstance(x, gymnasium.spaces.Space))
    return out


def record_surface(env: Any) -> Surface:
    """The surface of a built env (its outermost wrapper: what a user of the env sees)."""
    metadata = getattr(env, "metadata", {}) or {}
    return Surface(
        observation_space=_quiet(env.observation_space),
        action_space=_quiet(env.action_space),
        metadata={k: v for k, v in dict(metadata).items() if isinstance(k, str)},
        render_mode=getattr(env, "render_mode", None),
    )


class SurfaceEnv(gymnasium.Env):  # type: ignore[type-arg]
    """An env that only shows a recorded surface: what a vector env's parent reads.

    gymnasium's ``AsyncVectorEnv`` builds ``env_fns[0]()`` in the parent only to read its
    spaces, metadata and render mode; given a surface, ``make_vec`` hands it this instead, so no
    env is built in the parent. It refuses to be stepped.
    """

    def __init__(self, surface: Surface) -> None:
        self.observation_space = copy.deepcopy(surface.observation_space)
        self.action_space = copy.deepcopy(surface.action_space)
        self.metadata = dict(surface.metadata)
        self.render_mode = surface.render_mode

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Refused: this env only describes the real one."""
        raise RuntimeError("a SurfaceEnv only shows a pack's recorded spaces; build the env")

    def step(self, action: Any) -> Any:
        """Refused: this env only describes the real one."""
        raise RuntimeError("a SurfaceEnv only shows a pack's recorded spaces; build the env")
