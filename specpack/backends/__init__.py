"""Backends: what differs between gymnasium and the legacy gym package.

A backend knows its library's registry, ``make`` semantics (which wrappers ``make`` adds and
in which order), how to walk a live env's wrapper stack, and how to build an env from a pack.
Everything else (carrying code, kwargs, files, verification) is backend-independent.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import BackendUnavailableError, CaptureError

if TYPE_CHECKING:
    from ..pack import SpecPack

__all__ = ["Backend", "Recipe", "detect_backend", "get_backend"]

BACKENDS = ("gymnasium", "gym")


@dataclass
class Recipe:
    """What a backend resolved, before capture lowers it into a pack.

    ``layers`` run from the outermost wrapper inwards; each is ``(class, kwargs)``.
    ``entry_string`` keeps a registered ``"module:attr"`` entry point as written.
    """

    id: str | None
    entry: Any
    entry_string: str | None
    kwargs: dict[str, Any]
    spec: dict[str, Any]
    layers: list[tuple[type, dict[str, Any]]] = field(default_factory=list)
    auto_render: bool = False
    notes: list[str] = field(default_factory=list)


class Backend(Protocol):
    """The interface each backend module implements."""

    name: str
    #: Module prefixes whose classes always travel by reference (the library's own).
    library_prefixes: tuple[str, ...]

    def owns(self, obj: Any) -> bool:
        """Whether ``obj`` is this library's env, wrapper or spec."""

    def from_id(self, env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolve a registered id exactly as this library's ``make`` would."""

    def from_spec(self, spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolve an ``EnvSpec`` exactly as ``make(spec)`` would."""

    def from_callable(
        self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]
    ) -> Recipe:
        """Treat a class or factory as the entry point of an anonymous spec."""

    def from_env(self, env: Any) -> Recipe:
        """Walk a live env's wrapper stack, outermost first, with recorded arguments."""

    def build(self, pack: SpecPack, kwargs: dict[str, Any]) -> Any:
        """Build the env of ``pack`` with the final constructor kwargs."""

    def register(self, pack: SpecPack, env_id: str | None) -> str:
        """Register ``pack`` in this process's registry; returns the id."""

    def memo_token(self, env_id: str) -> Any:
        """A snapshot of what ``from_id(env_id)`` read, or None if it must not be memoised."""

    def memo_valid(self, env_id: str, token: Any) -> bool:
        """Whether the registry still holds exactly what ``token`` snapshotted."""


@functools.cache
def get_backend(name: str) -> Backend:
    """The backend called ``name`` (``"gymnasium"`` or ``"gym"``)."""
    if name == "gymnasium":
        from . import gymnasium as mod
    elif name == "gym":
        try:
            import gym  # noqa: F401
        except ImportError as e:
            raise BackendUnavailableError(
                "backend='gym' needs the legacy gym package, which is not installed here "
                f"({e}); install it with: pip install 'specpack[gym]' 'numpy<2'"
            ) from e
        from . import gym as mod  # type: ignore[no-redef]
    else:
        raise CaptureError(f"unknown backend {name!r}; use one of {', '.join(BACKENDS)}")
    return mod.BACKEND


def detect_backend(obj: Any) -> Backend:
    """The backend whose library ``obj`` (env, wrapper or spec) belongs to."""
    # gym objects are only possible if gym was imported: never import it just to check.
    gym = sys.modules.get("gym")
    if gym is not None and getattr(gym, "Env", None) is not None:
        gym_backend = get_backend("gym")
        if gym_backend.owns(obj) or (isinstance(obj, type) and issubclass(obj, gym.Env)):
            return gym_backend
    return get_backend("gymnasium")
