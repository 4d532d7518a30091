"""Backends: what differs between gymnasium, the legacy gym package and the edge backends. A
backend resolves what capture is given into a :class:`Recipe` and builds an env from a
:class:`Blueprint` (a pack's read-only projection); it never sees a pack's private state."""

from __future__ import annotations

import functools
import importlib
import re
import sys
from types import ModuleType
from typing import Any, Literal, Protocol, cast

import gymnasium as gymnasium_library  # not ``gymnasium``: that name is the subpackage here

from .._errors import BackendUnavailableError, CaptureError
from .gymnasium import build as gymnasium_build
from .recipe import Blueprint, PackLike, Recipe

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "Backend", "Blueprint", "Recipe", "detect_backend",
           "get_backend", "with_trait"]

#: What a backend supports, known without importing its library: ``ids`` (capture resolves a
#: registered id), ``audit`` (``specpack audit --backend``), ``vector`` (``make_vec`` builds its
#: packs), ``multi_agent`` (PettingZoo AEC/parallel envs).
Trait = Literal["ids", "audit", "vector", "multi_agent"]
#: The one table of backend names (the first is the default) and what each supports.
_TRAITS: dict[str, frozenset[Trait]] = {
    "gymnasium": frozenset({"ids", "audit", "vector"}),
    "gym": frozenset({"ids"}),
    "pettingzoo": frozenset({"audit", "multi_agent"}),
}
BACKENDS: tuple[str, ...] = tuple(_TRAITS)
#: The backend of ``capture`` and ``audit`` when none is named.
DEFAULT_BACKEND: str = BACKENDS[0]
#: The backends at the edge of the package (specpack/_integrations/): the core imports them only
#: here, on first use (docs/how-it-works.md, "The tree").
EDGE_BACKENDS = {"pettingzoo": "specpack._integrations.pettingzoo"}
_ID_SAFE = re.compile(r"[^\w.-]+")


def with_trait(trait: Trait) -> tuple[str, ...]:
    """The names of the backends that support ``trait``, in :data:`BACKENDS` order."""
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

    def from_callable(self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
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


class LibraryBackend:
    """The :class:`Backend` of gymnasium or gym 0.26: its ``resolve`` (a module name is imported
    on first use: a process that only builds never loads it) and ``build`` modules, its registry.
    ``memo_strings_only`` memoises only ids whose entry point is a ``"module:attr"`` string."""

    def __init__(self, library: ModuleType, *, resolve: ModuleType | str, build: ModuleType,
                 memo_strings_only: bool) -> None:
        self.name: str = library.__name__
        self.library_prefixes: tuple[str, ...] = (f"{self.name}.",)
        self._registration = importlib.import_module(f"{self.name}.envs.registration")
        self._spec_type: type = self._registration.EnvSpec
        self._owned: tuple[type, ...] = (library.Env, self._spec_type)
        self._resolver = resolve
        self.build = build.build
        self.build_vector = build.build_vector
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
        recipe: Recipe = self._resolve.from_id(env_id, options, kwargs)  # not cast(): hot path
        return recipe

    def from_spec(self, spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        return cast(Recipe, self._resolve.from_spec(spec, options, kwargs))

    def from_callable(self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """Resolved as an anonymous spec named after ``fn``."""
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "env"
        spec_id = _ID_SAFE.sub("_", str(name)).strip("_.-") or "env"
        recipe = self.from_spec(self._spec_type(id=spec_id, entry_point=fn), options, kwargs)
        recipe.id = None
        return recipe

    def from_env(self, env: Any) -> Recipe:
        return cast(Recipe, self._resolve.from_env(env))

    def register(self, pack: PackLike, env_id: str | None) -> str:
        return cast(str, _ids().register_pack(pack, env_id, self._registration.registry,
                                              self._register, self.name))

    def memo_token(self, env_id: str) -> Any:
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


def _library(name: str, what: str, install: str) -> ModuleType:
    """The library of ``backend=name``, imported, or a refusal that says how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise BackendUnavailableError(
            f"backend={name!r} needs the {what} package, which is not installed here ({e}); "
            f"install it with: pip install {install}") from e


@functools.cache
def get_backend(name: str) -> Backend:
    """The backend called ``name`` (``"gymnasium"``, ``"gym"`` or ``"pettingzoo"``)."""
    if name == "gymnasium":
        # resolution is capture-side: loaded on first use, never in a worker that only builds
        return LibraryBackend(gymnasium_library, resolve=f"{__name__}.gymnasium.resolve",
                              build=gymnasium_build, memo_strings_only=False)
    if name == "gym":
        gym = _library("gym", "legacy gym", "'specpack[gym]' 'numpy<2'")
        version = str(getattr(gym, "__version__", "?"))
        if not version.startswith("0.26."):
            raise BackendUnavailableError(
                f"backend='gym' supports gym 0.26.x; gym {version} is installed here. Install "
                "gym 0.26.2 (pip install 'gym==0.26.2' 'numpy<2'), or port the env to gymnasium "
                "(its envs and wrappers are captured by the gymnasium backend)")
        # importing it registers the recorders of gym's own wrappers; the memo takes string
        # entry points only (it also skips unversioned ids: gym.make resolves and warns)
        module = importlib.import_module(f"{__name__}.gym")
        return LibraryBackend(gym, resolve=module, build=module, memo_strings_only=True)
    if name == "pettingzoo":
        _library("pettingzoo", "pettingzoo", "'specpack[pettingzoo]'")
        return cast(Backend, importlib.import_module(EDGE_BACKENDS[name]).BACKEND)
    raise CaptureError(
        f"unknown backend {name!r}; use one of {', '.join(BACKENDS)}. If 'backend' is a "
        "kwarg of your env, pass it as env_kwargs={'backend': ...}")


def detect_backend(obj: Any) -> Backend:
    """The backend whose library ``obj`` (env, wrapper or spec) belongs to."""
    # gym and pettingzoo objects exist only once their library is imported: never import it
    # to check. gym ownership is decided from gym's own classes, before loading the backend
    # (0.26 only): a gym 0.23 imported beside gymnasium (PufferLib) must not block a capture.
    for name, module in EDGE_BACKENDS.items():
        if sys.modules.get(name) is not None and importlib.import_module(module).claims(obj):
            return get_backend(name)
    gym = sys.modules.get("gym")
    if gym is not None and _from_gym(gym, obj):
        return get_backend("gym")
    return get_backend("gymnasium")


def _from_gym(gym: Any, obj: Any) -> bool:
    """Whether ``obj`` is an env, wrapper, env class or spec of the imported ``gym`` module."""
    env = getattr(gym, "Env", None)
    if not isinstance(env, type):
        return False
    spec = getattr(getattr(getattr(gym, "envs", None), "registration", None), "EnvSpec", None)
    return (isinstance(obj, env) or (isinstance(obj, type) and issubclass(obj, env))
            or (isinstance(spec, type) and isinstance(obj, spec)))
