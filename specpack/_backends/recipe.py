"""What a backend resolves (:class:`Recipe`) and what it builds from (:class:`Blueprint`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .._carry.ref import CodeRef

__all__ = ["Blueprint", "PackLike", "Recipe"]

# Both classes are written out rather than made with ``@dataclass``: every worker that builds a
# pack imports this module, and generating a dataclass's methods costs about 0.7 ms of import
# (source text compiled at import, never cached), more than the rest of the module.


class Recipe:
    """What a backend resolved, before capture lowers it into a pack.

    ``layers`` run from the outermost wrapper inwards; each is ``(class, kwargs)``.
    ``entry_string`` keeps a registered ``"module:attr"`` entry point as written.
    ``vector`` says the entry point is a vector env creator (a spec with only
    ``vector_entry_point``); ``entry_ref`` is how the entry point travels when the backend
    decided it (e.g. a registry reference). Compared by fields.
    """

    __slots__ = ("auto_render", "entry", "entry_ref", "entry_string", "id", "kwargs", "layers",
                 "notes", "spec", "vector")

    def __init__(
        self,
        id: str | None,
        entry: Any,
        entry_string: str | None,
        kwargs: dict[str, Any],
        spec: dict[str, Any],
        layers: list[tuple[type, dict[str, Any]]] | None = None,
        auto_render: bool = False,
        notes: list[str] | None = None,
        vector: bool = False,
        entry_ref: CodeRef | None = None,
    ) -> None:
        self.id = id
        self.entry = entry
        self.entry_string = entry_string
        self.kwargs = kwargs
        self.spec = spec
        self.layers: list[tuple[type, dict[str, Any]]] = [] if layers is None else layers
        self.auto_render = auto_render
        self.notes: list[str] = [] if notes is None else notes
        self.vector = vector
        self.entry_ref = entry_ref

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Recipe)
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by fields

    def __repr__(self) -> str:
        return "Recipe(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"


class Blueprint:
    """The read-only projection of a pack that a backend builds from.

    ``layers`` run from the innermost wrapper outwards (the order they are applied in); each
    is ``(class, lowered kwargs, plain)`` where ``plain`` says the kwargs hold only immutable
    scalars. Lowered values are never mutated: a build materialises fresh copies. Compared by
    identity (a backend keys its build plan on it, weakly).
    """

    __slots__ = ("__weakref__", "auto_render", "entry", "label", "layers", "spec", "versions")

    label: str
    entry: CodeRef
    layers: tuple[tuple[CodeRef, Mapping[str, Any], bool], ...]
    spec: Mapping[str, Any]
    auto_render: bool
    versions: Mapping[str, str]

    def __init__(
        self,
        label: str,
        entry: CodeRef,
        layers: tuple[tuple[CodeRef, Mapping[str, Any], bool], ...],
        spec: Mapping[str, Any],
        auto_render: bool,
        versions: Mapping[str, str],
    ) -> None:
        for name, value in (("label", label), ("entry", entry), ("layers", layers),
                            ("spec", spec), ("auto_render", auto_render),
                            ("versions", versions)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Blueprint is read-only (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Blueprint is read-only (cannot delete {name!r})")

    def __repr__(self) -> str:
        return f"Blueprint({self.label}, entry={self.entry!r}, {len(self.layers)} layers)"


class PackLike(Protocol):
    """The public face of a pack that registering needs."""

    @property
    def id(self) -> str | None: ...

    @property
    def spec(self) -> Mapping[str, Any]: ...

    @property
    def label(self) -> str: ...

    @property
    def nondeterministic(self) -> bool: ...

    def make(self, **kwargs: Any) -> Any: ...
