"""A :class:`~specpack._core._backends.Backend` for a gymnasium-like library, given its parts.

gymnasium 1.x and gym 0.26 differ in how they resolve and build (their ``resolve`` and ``build``
modules) but not in the backend's shape, written once here.
"""

from __future__ import annotations

import functools
import importlib
import re
from types import ModuleType
from typing import Any, cast

from .recipe import Blueprint, PackLike, Recipe

__all__ = ["LibraryBackend"]

_ID_SAFE = re.compile(r"[^\w.-]+")


class LibraryBackend:
    """A backend made of a library's ``resolve`` and ``build`` modules and its registry (the
    methods are :class:`~specpack._core._backends.Backend`'s). ``resolve`` may be a module name,
    imported on first use: a process that only builds never loads resolution.
    ``memo_strings_only`` memoises only ids whose entry point is a ``"module:attr"`` string.
    """

    def __init__(self, library: ModuleType, *, resolve: ModuleType | str, build: ModuleType,
                 memo_strings_only: bool) -> None:
        self.name: str = library.__name__
        #: Module prefixes whose classes always travel by reference.
        self.library_prefixes: tuple[str, ...] = (f"{self.name}.",)
        self._registration = importlib.import_module(f"{self.name}.envs.registration")
        self._spec_type: type = self._registration.EnvSpec
        self._owned: tuple[type, ...] = (library.Env, self._spec_type)
        self._resolver = resolve
        self._build = build
        self._register = library.register
        self._strings_only = memo_strings_only

    @property
    def _resolve(self) -> ModuleType:
        if isinstance(self._resolver, str):
            self._resolver = importlib.import_module(self._resolver)
        return self._resolver

    def owns(self, obj: Any) -> bool:
        return isinstance(obj, self._owned)

    def from_id(self, env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolve a registered id as the library's ``make`` would (warnings included)."""
        return cast(Recipe, self._resolve.from_id(env_id, options, kwargs))

    def from_spec(self, spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        return cast(Recipe, self._resolve.from_spec(spec, options, kwargs))

    def from_callable(self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """A class or factory as the entry point of an anonymous spec (named after it)."""
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "env"
        spec_id = _ID_SAFE.sub("_", str(name)).strip("_.-") or "env"
        recipe = self.from_spec(self._spec_type(id=spec_id, entry_point=fn), options, kwargs)
        recipe.id = None
        return recipe

    def from_env(self, env: Any) -> Recipe:
        return cast(Recipe, self._resolve.from_env(env))

    def build(self, bp: Blueprint, kwargs: dict[str, Any]) -> Any:
        return self._build.build(bp, kwargs)

    def build_vector(self, bp: Blueprint, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
        return self._build.build_vector(bp, num_envs, kwargs)

    def register(self, pack: PackLike, env_id: str | None) -> str:
        """Register ``pack`` in the library's registry; ``make(id)`` then builds it."""
        return cast(str, _ids().register_pack(pack, env_id, self._registration.registry,
                                              self._register, self.name))

    def memo_token(self, env_id: str) -> Any:
        """What resolving ``env_id`` read from the registry (None: not memoisable)."""
        return _ids().memo_token(self._registration.registry, env_id,
                                 strings_only=self._strings_only)

    def memo_valid(self, env_id: str, token: Any) -> bool:
        valid: bool = _ids().memo_valid(self._registration.registry, env_id, token)
        return valid  # not cast(): a call costs ~1% of a memoised capture


@functools.cache
def _ids() -> ModuleType:
    """:mod:`._registry`, imported on first use (capture and register only)."""
    from . import _registry

    return _registry
