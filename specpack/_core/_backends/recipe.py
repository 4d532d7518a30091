"""What a backend resolves (:class:`Recipe`) and what it builds from (:class:`Blueprint`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Protocol

from .._carry.ref import CodeRef

__all__ = ["Blueprint", "PackLike", "Recipe"]


@dataclasses.dataclass(slots=True)
class Recipe:
    """What a backend resolved, before capture lowers it into a pack; compared by fields. ``layers``
    run outermost first, each ``(class, kwargs)``; ``entry_string``: a ``"module:attr"`` entry as
    written; ``vector``: a vector env creator; ``entry_ref``: how the entry travels, if decided."""

    id: str | None
    entry: Any
    entry_string: str | None
    kwargs: dict[str, Any]
    spec: dict[str, Any]
    layers: list[tuple[type, dict[str, Any]]] = dataclasses.field(default_factory=list)
    auto_render: bool = False
    notes: list[str] = dataclasses.field(default_factory=list)
    vector: bool = False
    entry_ref: CodeRef | None = None


class _Referable:
    """A slot for weak references (a backend keys its build plan on a blueprint, weakly)."""

    __slots__ = ("__weakref__",)


@dataclasses.dataclass(frozen=True, slots=True, eq=False, repr=False)
class Blueprint(_Referable):
    """The read-only projection of a pack that a backend builds from; compared by identity.
    ``layers`` run innermost first, each ``(class, lowered kwargs, plain)`` (``plain``: only
    immutable scalars); lowered values are never mutated: a build materialises fresh copies."""

    label: str
    entry: CodeRef
    layers: tuple[tuple[CodeRef, Mapping[str, Any], bool], ...]
    spec: Mapping[str, Any]
    auto_render: bool
    versions: Mapping[str, str]

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
