"""A resolved env before its :class:`SpecPack` is made, held while capture adds what the pack
needs (:mod:`specpack._core._needs`): it makes one pack, not one per step."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ._carry.carried import Blob
from ._carry.code import CodeRef
from ._pack import SpecPack
from ._packvalue import carried_by

__all__ = ["Draft"]


@dataclass(frozen=True, slots=True, eq=False)
class Draft:
    """A resolved pack not yet made: :class:`SpecPack`'s constructor keywords, whether its
    kwargs are ``plain``, and its code ``refs`` when no kwargs can hold code (else None)."""

    fields: Mapping[str, Any]
    plain: bool
    refs: tuple[CodeRef, ...] | None = None

    @property
    def entry_point(self) -> CodeRef:
        ref: CodeRef = self.fields["entry_point"]  # not cast(): a call on the hot path
        return ref

    @property
    def kwargs(self) -> dict[str, Any]:
        """The lowered env kwargs (the pack's private ``_kwargs``)."""
        kwargs: dict[str, Any] = self.fields["_kwargs"]
        return kwargs

    @property
    def label(self) -> str:
        """As :attr:`SpecPack.label`."""
        id_ = self.fields["id"]
        name: str = id_ if id_ is not None else self.entry_point.name
        return name

    def carried(self) -> Iterator[CodeRef | Blob]:
        """As :meth:`SpecPack.carried`."""
        return carried_by(self.entry_point, self.kwargs, self.fields["layers"])

    def code_refs(self) -> list[CodeRef]:
        """The :class:`CodeRef` among :meth:`carried`, in order."""
        if self.refs is not None:
            return list(self.refs)
        return [c for c in self.carried() if isinstance(c, CodeRef)]

    def pack(self, **changes: Any) -> SpecPack:
        """The pack of these fields with ``changes`` (``plain`` given there or computed)."""
        if "requires" in changes:
            changes["_requires"] = changes.pop("requires")
        return SpecPack(**{**self.fields, **changes})
