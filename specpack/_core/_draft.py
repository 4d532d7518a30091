"""A resolved env before its :class:`SpecPack` is made, held while capture adds what the pack
needs (:mod:`specpack._core._needs`): it makes one pack, not one per step."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._carry.carried import Blob
from ._carry.code import CodeRef
from ._pack import SpecPack
from ._packvalue import carried_by

__all__ = ["Draft"]


@dataclass(frozen=True, slots=True, eq=False)
class Draft:
    """A resolved pack not yet made: :class:`SpecPack`'s constructor keywords, whether its
    kwargs are ``plain``, and its code ``refs`` when no kwargs can hold code (else None).
    ``made``: the pack :func:`~._needs.with_needs` made of it without files (a memoised capture
    returns the same draft, so the same pack); kept here, it lives exactly as long as the draft
    (the capture memo's entry), not in a table of its own that would keep dropped drafts alive."""

    fields: Mapping[str, Any]
    plain: bool
    refs: tuple[CodeRef, ...] | None = None
    made: SpecPack | None = field(default=None, init=False, compare=False, repr=False)

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

    def keep(self, pack: SpecPack) -> None:
        """Keep ``pack`` as :attr:`made`, once: the draft writes its own field, not its callers."""
        object.__setattr__(self, "made", pack)

    def pack(self, **changes: Any) -> SpecPack:
        """The pack of these fields with ``changes`` (``plain`` given there or computed). A
        ``requires`` dict given alone is taken over (:meth:`PackValue._of`): a fresh one."""
        if len(changes) == 1 and "requires" in changes:  # a first capture's one change
            return SpecPack._of(self.fields, changes["requires"])
        if "requires" in changes:
            changes["_requires"] = changes.pop("requires")
        return SpecPack(**{**self.fields, **changes})
