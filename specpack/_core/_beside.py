"""What is computed once per pack (fingerprint, pickled state, build order), kept beside it by
identity and dropped with it."""

from __future__ import annotations

import weakref
from typing import Any, Generic, TypeVar

__all__ = ["Beside"]

V = TypeVar("V")


class Beside(Generic[V]):
    """A table of one derived value per live object, by identity (not by ``==``); an entry
    goes when its object (which must accept weak references) is collected."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref[Any], V]] = {}

    def get(self, obj: object) -> V | None:
        """The value kept for ``obj``, or None."""
        hit = self._items.get(id(obj))
        return hit[1] if hit is not None and hit[0]() is obj else None

    def put(self, obj: object, value: V) -> V:
        """Keep ``value`` for ``obj`` (replacing any) and return it."""
        key = id(obj)
        items = self._items

        def drop(ref: weakref.ref[Any]) -> None:
            entry = items.get(key)
            if entry is not None and entry[0] is ref:
                del items[key]

        items[key] = (weakref.ref(obj, drop), value)
        return value

    def __len__(self) -> int:
        return len(self._items)
