"""The gymnasium (1.x) backend: resolution (:mod:`.resolve`), building (:mod:`.build`) and the
differences between 1.x releases (:mod:`.compat`), behind the :class:`~specpack.backends.Backend`
interface."""

from __future__ import annotations

from typing import Any

import gymnasium
from gymnasium.envs.registration import EnvSpec

from .. import Blueprint, PackLike, Recipe
from .._shared import memo_token, memo_valid, register_pack
from . import build as _build
from . import resolve as _resolve

__all__ = ["BACKEND", "GymnasiumBackend"]


class GymnasiumBackend:
    """The backend for gymnasium 1.x envs."""

    name = "gymnasium"
    library_prefixes: tuple[str, ...] = ("gymnasium.",)

    def owns(self, obj: Any) -> bool:
        """Whether ``obj`` is a gymnasium env, wrapper or spec."""
        return isinstance(obj, (gymnasium.Env, EnvSpec))

    def from_id(self, env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolve a registered id as ``gymnasium.make(env_id, **options, **kwargs)`` would."""
        return _resolve.from_id(env_id, options, kwargs)

    def from_spec(self, spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolve an ``EnvSpec`` as ``gymnasium.make(spec, ...)`` would."""
        return _resolve.from_spec(spec, options, kwargs)

    def from_callable(self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """A class or factory as the entry point of an anonymous spec."""
        return _resolve.from_callable(fn, options, kwargs)

    def from_env(self, env: Any) -> Recipe:
        """A live env's wrapper stack, outermost first, with recorded arguments."""
        return _resolve.from_env(env)

    def build(self, bp: Blueprint, kwargs: dict[str, Any]) -> Any:
        """Build the env of ``bp`` (see :mod:`.build`)."""
        return _build.build(bp, kwargs)

    def build_vector(self, bp: Blueprint, num_envs: int, kwargs: dict[str, Any]) -> Any:
        """Build the vector env of a vector-only ``bp`` (see :mod:`.build`)."""
        return _build.build_vector(bp, num_envs, kwargs)

    def register(self, pack: PackLike, env_id: str | None) -> str:
        """Register ``pack`` in gymnasium's registry; ``gymnasium.make(id)`` then builds it."""
        from gymnasium.envs.registration import registry

        return register_pack(pack, env_id, registry, gymnasium.register, "gymnasium")

    def memo_token(self, env_id: str) -> Any:
        """What resolving ``env_id`` read from the registry (None: not memoisable)."""
        from gymnasium.envs.registration import registry

        return memo_token(registry, env_id, strings_only=False)

    def memo_valid(self, env_id: str, token: Any) -> bool:
        """Whether the registry still holds exactly what ``token`` snapshotted."""
        from gymnasium.envs.registration import registry

        return memo_valid(registry, env_id, token)


BACKEND = GymnasiumBackend()
