"""The legacy ``gym`` (0.26.x) backend: resolution (:mod:`.resolve`), building (:mod:`.build`),
live-stack arguments (:mod:`.wrappers`) and numpy-2 diagnosis (:mod:`.numpy2`), behind the
:class:`~specpack.backends.Backend` interface."""

from __future__ import annotations

from typing import Any

import gym as _gym
from gym.envs.registration import EnvSpec as GymSpec

from ...errors import BuildError
from .. import Blueprint, PackLike, Recipe
from .._shared import memo_token, memo_valid, register_pack
from . import build as _build
from . import resolve as _resolve
from .numpy2 import numpy2_problem

#: gym's partial type hints do not help here: treat the package as untyped.
gym: Any = _gym

__all__ = ["BACKEND", "GymBackend", "numpy2_problem"]


class GymBackend:
    """The backend for the legacy ``gym`` package, release 0.26.x."""

    name = "gym"
    library_prefixes: tuple[str, ...] = ("gym.",)

    def owns(self, obj: Any) -> bool:
        """Whether ``obj`` is a gym env, wrapper or spec."""
        return isinstance(obj, (gym.Env, GymSpec))

    def from_id(self, env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolve a registered id as ``gym.make`` would (its warnings included)."""
        return _resolve.from_id(env_id, options, kwargs)

    def from_spec(self, spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolve a gym ``EnvSpec`` as ``gym.make(spec)`` would."""
        return _resolve.from_spec(spec, options, kwargs)

    def from_callable(self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """A class or factory as the entry point of an anonymous gym spec."""
        return _resolve.from_callable(fn, options, kwargs)

    def from_env(self, env: Any) -> Recipe:
        """A live gym stack, outermost first, with the arguments gym's wrappers keep."""
        return _resolve.from_env(env)

    def build(self, bp: Blueprint, kwargs: dict[str, Any]) -> Any:
        """Build the env of ``bp`` (see :mod:`.build`)."""
        return _build.build(bp, kwargs)

    def build_vector(self, bp: Blueprint, num_envs: int, kwargs: dict[str, Any]) -> Any:
        """gym 0.26 has no vector-only specs; a gym pack is never vector-only."""
        raise BuildError(f"pack {bp.label}: gym packs are never vector-only")

    def register(self, pack: PackLike, env_id: str | None) -> str:
        """Register ``pack`` in gym's registry; ``gym.make(id)`` then builds it."""
        from gym.envs.registration import registry

        return register_pack(pack, env_id, registry, gym.register, "gym")

    def memo_token(self, env_id: str) -> Any:
        """What resolving ``env_id`` read (string entry points only; else not memoisable)."""
        from gym.envs.registration import registry

        # string entry points only (also skips unversioned ids: gym.make resolves and warns)
        return memo_token(registry, env_id, strings_only=True)

    def memo_valid(self, env_id: str, token: Any) -> bool:
        """Whether the registry still holds exactly what ``token`` snapshotted."""
        from gym.envs.registration import registry

        return memo_valid(registry, env_id, token)


BACKEND = GymBackend()
