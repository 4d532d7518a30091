"""A resolved env before its :class:`SpecPack` is made: capture's fields, gathered once.

Capture resolves an env (:mod:`specpack._core._capture`), then adds what the pack needs where it
is built (``requires``, ``assets``: :mod:`specpack._core._needs`) and, for a live env, its surface.
Each of those steps used to make a pack and ``evolve`` it, so a capture made two or three;
a :class:`Draft` holds the resolved fields instead, the steps read it as they read a pack,
and :meth:`Draft.pack` makes the one pack at the end, as ``evolve`` would have made it.
"""

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
    """A resolved pack not yet made: a memoised capture keeps its draft, and every capture
    makes its pack from one (:meth:`pack`).

    ``fields`` are :class:`SpecPack`'s constructor keywords as capture resolved them (the
    field list is the pack's own: nothing here repeats it); ``plain`` is what lowering the
    kwargs said (whether they hold only immutable builtins); ``refs`` the entry point and
    wrapper classes when no kwargs can hold code (None: :meth:`code_refs` walks them).
    """

    fields: Mapping[str, Any]
    plain: bool
    refs: tuple[CodeRef, ...] | None = None

    @property
    def entry_point(self) -> CodeRef:
        """The entry point's reference (as :attr:`SpecPack.entry_point`)."""
        ref: CodeRef = self.fields["entry_point"]
        return ref

    @property
    def kwargs(self) -> dict[str, Any]:
        """The lowered env kwargs (the pack's private ``_kwargs``)."""
        kwargs: dict[str, Any] = self.fields["_kwargs"]
        return kwargs

    @property
    def label(self) -> str:
        """As :attr:`SpecPack.label`: the id, else the entry point's qualified name."""
        id_: str | None = self.fields["id"]
        return id_ if id_ is not None else self.entry_point.name

    def carried(self) -> Iterator[CodeRef | Blob]:
        """As :meth:`SpecPack.carried`: the code and opaque objects, entry point first."""
        return carried_by(self.entry_point, self.kwargs, self.fields["layers"])

    def code_refs(self) -> list[CodeRef]:
        """The :class:`CodeRef` among :meth:`carried`, in its order, as a list (what
        ``requires`` is read from): :attr:`refs` when assembling knew them."""
        if self.refs is not None:
            return list(self.refs)
        return [c for c in self.carried() if isinstance(c, CodeRef)]

    def pack(self, **changes: Any) -> SpecPack:
        """The pack of these fields with ``changes`` (``requires``, ``assets``, ``surface``,
        ``_kwargs``, ``plain``) applied.

        ``plain`` is passed on only when given in ``changes``: otherwise the pack computes it
        from its kwargs, as a pack made by ``evolve`` of the resolved one always did (the
        value a capture returned before drafts existed, kept exactly).
        """
        if "requires" in changes:
            changes["_requires"] = changes.pop("requires")
        return SpecPack(**{**self.fields, **changes})
