"""Values derived from an object, kept beside it instead of in it.

A :class:`~specpack.SpecPack` is a value: nothing writes its fields once it is made. What is
worth computing once per pack (its fingerprint, its pickled state, its build order) is kept in
a :class:`Beside` table owned by the module that computes it, keyed by the pack's identity and
dropped when the pack is (a weak reference), so equal packs never share an entry and a
pack's pickle, ``requires`` and equality are the same before and after any use.
"""

from __future__ import annotations

import weakref
from typing import Any, Generic, TypeVar

__all__ = ["Beside"]

V = TypeVar("V")


class Beside(Generic[V]):
    """A table of one derived value per live object, by identity (not by ``==``).

    The objects must accept weak references; an entry goes when its object is collected.
    """

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref[Any], V]] = {}

    def get(self, obj: object) -> V | None:
        """The value kept for ``obj``, or None."""
        hit = self._items.get(id(obj))
        if hit is not None and hit[0]() is obj:
            return hit[1]
        return None

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
