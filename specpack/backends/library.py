"""One :class:`~specpack.backends.Backend` for a gymnasium-like library, given its parts.

gymnasium 1.x and gym 0.26 differ in how they resolve and build (their ``resolve`` and
``build`` modules) but not in the backend's shape: the same calls, a registry of ``EnvSpec``
objects, the same registration and memo rules. :class:`LibraryBackend` is that shape, written
once; each library's package makes one with its own modules.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from . import Blueprint, PackLike, Recipe
from ._registry import memo_token, memo_valid, register_pack

__all__ = ["LibraryBackend"]


class LibraryBackend:
    """A backend made of a library's ``resolve`` and ``build`` modules and its registry.

    Parameters
    ----------
    name
        The backend's name (``"gymnasium"``).
    library_prefixes
        Module prefixes whose classes always travel by reference.
    owned
        The library's env and spec types (what :meth:`owns` recognises).
    resolve
        A module with ``from_id``, ``from_spec``, ``from_callable`` and ``from_env``.
    build
        A module with ``build(bp, kwargs)`` and ``build_vector(bp, num_envs, kwargs)``.
    registry
        Returns the library's registry (read when needed: importing it may be costly).
    register
        The library's ``register`` function.
    memo_strings_only
        Memoise captures only of ids whose entry point is a ``"module:attr"`` string.
    """

    def __init__(
        self,
        *,
        name: str,
        library_prefixes: tuple[str, ...],
        owned: tuple[type, ...],
        resolve: ModuleType,
        build: ModuleType,
        registry: Callable[[], Any],
        register: Callable[..., Any],
        memo_strings_only: bool,
    ) -> None:
        self.name = name
        self.library_prefixes = library_prefixes
        self._owned = owned
        self._resolve = resolve
        self._build = build
        self._registry = registry
        self._register = register
        self._strings_only = memo_strings_only

    def owns(self, obj: Any) -> bool:
        """Whether ``obj`` is this library's env, wrapper or spec."""
        return isinstance(obj, self._owned)

    def from_id(self, env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolve a registered id as the library's ``make`` would (warnings included)."""
        recipe: Recipe = self._resolve.from_id(env_id, options, kwargs)
        return recipe

    def from_spec(self, spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolve an ``EnvSpec`` as ``make(spec)`` would."""
        recipe: Recipe = self._resolve.from_spec(spec, options, kwargs)
        return recipe

    def from_callable(self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """A class or factory as the entry point of an anonymous spec."""
        recipe: Recipe = self._resolve.from_callable(fn, options, kwargs)
        return recipe

    def from_env(self, env: Any) -> Recipe:
        """A live env's wrapper stack, outermost first, with recorded arguments."""
        recipe: Recipe = self._resolve.from_env(env)
        return recipe

    def build(self, bp: Blueprint, kwargs: dict[str, Any]) -> Any:
        """Build the env of ``bp`` with the final constructor kwargs."""
        return self._build.build(bp, kwargs)

    def build_vector(self, bp: Blueprint, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
        """Build the vector env of a vector-only ``bp``."""
        return self._build.build_vector(bp, num_envs, kwargs)

    def register(self, pack: PackLike, env_id: str | None) -> str:
        """Register ``pack`` in the library's registry; ``make(id)`` then builds it."""
        return register_pack(pack, env_id, self._registry(), self._register, self.name)

    def memo_token(self, env_id: str) -> Any:
        """What resolving ``env_id`` read from the registry (None: not memoisable)."""
        return memo_token(self._registry(), env_id, strings_only=self._strings_only)

    def memo_valid(self, env_id: str, token: Any) -> bool:
        """Whether the registry still holds exactly what ``token`` snapshotted."""
        return memo_valid(self._registry(), env_id, token)
