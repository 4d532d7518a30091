"""One wrapper of a pack's stack: :class:`Layer`, its class and constructor kwargs."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ._carry.ref import CodeRef
from ._carry.tree import exact_key, materialize, pickle_exact
from ._restorer import restorer
from ._text import short

__all__ = ["Layer"]


@dataclasses.dataclass(frozen=True, slots=True, eq=False, repr=False)
class Layer:
    """One wrapper of a stack: its class and the lowered constructor kwargs it was built with.
    Layers are equal if their classes are and their kwargs identical (``1`` and ``1.0`` differ)."""

    cls: CodeRef
    _kwargs: dict[str, Any]
    #: The exact comparison key, computed on first comparison (derived, never part of the value).
    _key: Any = dataclasses.field(default=None, init=False)

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_layer, (self.cls, pickle_exact(self._kwargs)))

    @property
    def name(self) -> str:
        """The wrapper class's qualified name, e.g. ``TimeLimit``."""
        return self.cls.qualname

    @property
    def kwargs(self) -> Mapping[str, Any]:
        """The constructor kwargs (without ``env``): a read-only mapping of fresh values (imports
        referenced code, unpickles by-value values: a pack from a file needs its trust)."""
        return MappingProxyType(materialize(self._kwargs))

    def _exact(self) -> Any:
        key = self._key
        if key is None:
            key = (self.cls, exact_key(self._kwargs))
            object.__setattr__(self, "_key", key)
        return key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layer):
            return NotImplemented
        return bool(self._exact() == other._exact())

    def __hash__(self) -> int:
        return hash(self.cls)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={short(v, 60)}" for k, v in self._kwargs.items())
        return f"Layer({self.cls.name}{', ' if args else ''}{args})"


@restorer
def restore_layer(cls: CodeRef, kwargs: dict[str, Any]) -> Layer:
    """A pickled :class:`Layer`: its class and lowered kwargs."""
    return Layer(cls, kwargs)
