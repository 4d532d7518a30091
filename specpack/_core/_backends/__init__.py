"""Backends: what differs between gymnasium and the legacy gym package.

A backend knows its library's registry, ``make`` semantics (which wrappers ``make`` adds and
in which order), how to walk a live env's wrapper stack, and how to build an env. Everything
else (carrying code, kwargs, files, verification) is backend-independent.

Backends never see a pack's private state. Resolution returns a :class:`Recipe` that capture
lowers into a pack; building reads a :class:`Blueprint`, the read-only projection of a pack
that the pack makes once and passes to :meth:`Backend.build`. A backend's per-process build
plan (loaded classes, ready kwargs) is kept by the backend, keyed by the blueprint.
"""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Any, Literal, Protocol

from .._errors import BackendUnavailableError, CaptureError
from .gymnasium import BACKEND as GYMNASIUM_BACKEND
from .recipe import Blueprint, PackLike, Recipe

__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "Backend",
    "Blueprint",
    "Recipe",
    "detect_backend",
    "get_backend",
    "with_trait",
]

#: What a backend supports, known without importing its library: ``ids`` (``capture`` resolves
#: a registered id by name, ``specpack capture --backend``), ``audit`` (``specpack audit
#: --backend`` walks its targets), ``vector`` (``make_vec`` builds gymnasium vector envs of its
#: packs), ``multi_agent`` (its envs are PettingZoo AEC/parallel envs).
Trait = Literal["ids", "audit", "vector", "multi_agent"]
#: The one table of backend names (the first is the default) and what each supports.
_TRAITS: dict[str, frozenset[Trait]] = {
    "gymnasium": frozenset({"ids", "audit", "vector"}),
    "gym": frozenset({"ids"}),
    "pettingzoo": frozenset({"audit", "multi_agent"}),
}
#: Every backend name, the default first.
BACKENDS: tuple[str, ...] = tuple(_TRAITS)
#: The backend of ``capture`` and ``audit`` when none is named.
DEFAULT_BACKEND: str = BACKENDS[0]


def with_trait(trait: Trait) -> tuple[str, ...]:
    """The names of the backends that support ``trait``, in :data:`BACKENDS` order.

    Parameters
    ----------
    trait
        ``"ids"``, ``"audit"``, ``"vector"`` or ``"multi_agent"`` (see :data:`Trait`).
    """
    return tuple(name for name, traits in _TRAITS.items() if trait in traits)


class Backend(Protocol):
    """The interface each backend implements."""

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

    def build(self, bp: Blueprint, kwargs: dict[str, Any]) -> Any:
        """Build the env of ``bp`` with the final constructor kwargs (a fresh dict)."""

    def build_vector(self, bp: Blueprint, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
        """Build the vector env of a vector-only ``bp`` (``vector_entry_point``)."""

    def register(self, pack: PackLike, env_id: str | None) -> str:
        """Register ``pack`` in this process's registry; returns the id."""

    def memo_token(self, env_id: str) -> Any:
        """A snapshot of what ``from_id(env_id)`` read, or None if it must not be memoised."""

    def memo_valid(self, env_id: str, token: Any) -> bool:
        """Whether the registry still holds exactly what ``token`` snapshotted."""


#: The backends at the edge of the package (specpack/_integrations/), by name: the core never
#: imports them by an import statement, only here, on first use, from their library's name
#: (docs/how-it-works.md, "The tree").
EDGE_BACKENDS = {"pettingzoo": "specpack._integrations.pettingzoo"}


def _edge_backend(name: str) -> Any:
    """The module of the edge backend called ``name`` (imported on first use)."""
    return importlib.import_module(EDGE_BACKENDS[name])


@functools.cache
def get_backend(name: str) -> Backend:
    """The backend called ``name`` (``"gymnasium"``, ``"gym"`` or ``"pettingzoo"``)."""
    if name == "gymnasium":
        return GYMNASIUM_BACKEND
    if name == "gym":
        try:
            import gym  # noqa: F401
        except ImportError as e:
            raise BackendUnavailableError(
                "backend='gym' needs the legacy gym package, which is not installed here "
                f"({e}); install it with: pip install 'specpack[gym]' 'numpy<2'"
            ) from e
        version = str(getattr(sys.modules["gym"], "__version__", "?"))
        if not version.startswith("0.26."):
            raise BackendUnavailableError(
                f"backend='gym' supports gym 0.26.x; gym {version} is installed here. Install "
                "gym 0.26.2 (pip install 'gym==0.26.2' 'numpy<2'), or port the env to gymnasium "
                "(its envs and wrappers are captured by the gymnasium backend)"
            )
        from .gym import BACKEND as gym_backend

        return gym_backend
    if name == "pettingzoo":
        try:
            import pettingzoo  # noqa: F401
        except ImportError as e:
            raise BackendUnavailableError(
                "backend='pettingzoo' needs the pettingzoo package, which is not installed "
                f"here ({e}); install it with: pip install 'specpack[pettingzoo]'"
            ) from e
        backend: Backend = _edge_backend("pettingzoo").BACKEND
        return backend
    raise CaptureError(
        f"unknown backend {name!r}; use one of {', '.join(BACKENDS)}. If 'backend' is a "
        "kwarg of your env, pass it as env_kwargs={'backend': ...}"
    )


def detect_backend(obj: Any) -> Backend:
    """The backend whose library ``obj`` (env, wrapper or spec) belongs to."""
    # Likewise pettingzoo: its envs, classes and factories exist only once it is imported.
    if sys.modules.get("pettingzoo") is not None and _edge_backend("pettingzoo").claims(obj):
        return get_backend("pettingzoo")
    # gym objects are only possible if gym was imported: never import it just to check.
    # Decide ownership from gym's own classes before loading the backend, which supports gym
    # 0.26 only: another gym (0.23, pulled in by PufferLib) imported beside gymnasium must not
    # stop a gymnasium object from being captured.
    gym = sys.modules.get("gym")
    if gym is not None and _from_gym(gym, obj):
        return get_backend("gym")
    return get_backend("gymnasium")


def _from_gym(gym: Any, obj: Any) -> bool:
    """Whether ``obj`` is an env, wrapper, env class or spec of the imported ``gym`` module."""
    env = getattr(gym, "Env", None)
    if not isinstance(env, type):
        return False
    if isinstance(obj, env) or (isinstance(obj, type) and issubclass(obj, env)):
        return True
    spec = getattr(getattr(getattr(gym, "envs", None), "registration", None), "EnvSpec", None)
    return isinstance(spec, type) and isinstance(obj, spec)
