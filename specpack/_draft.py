"""A resolved env before its :class:`SpecPack` is made: capture's fields, gathered once.

Capture resolves an env (:mod:`specpack._capture`), then adds what the pack needs where it
is built (``requires``, ``assets``: :mod:`specpack._needs`) and, for a live env, its surface.
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
from ._carry.values import iter_carried
from ._layer import Layer
from ._pack import SpecPack
from ._packvalue import carried_by

__all__ = ["Draft"]


@dataclass(frozen=True, slots=True, eq=False)
class Draft:
    """The fields of a resolved pack (:class:`SpecPack`'s, of the same names), not yet a
    pack: a memoised capture keeps its draft, and every capture makes its pack from one.

    ``plain`` is what lowering the kwargs said (whether they hold only immutable builtins).
    """

    backend: str
    id: str | None
    entry_point: CodeRef
    _kwargs: dict[str, Any]
    spec: Mapping[str, Any]
    layers: tuple[Layer, ...]
    auto_render: bool
    versions: Mapping[str, str]
    notes: tuple[str, ...]
    plain: bool
    vector: bool

    @property
    def label(self) -> str:
        """As :attr:`SpecPack.label`: the id, else the entry point's qualified name."""
        return self.id if self.id is not None else self.entry_point.name

    def carried(self) -> Iterator[CodeRef | Blob]:
        """As :meth:`SpecPack.carried`: the code and opaque objects, entry point first."""
        return carried_by(self.entry_point, self._kwargs, self.layers)

    def code_refs(self) -> list[CodeRef]:
        """The :class:`CodeRef` among :meth:`carried`, in its order, as a list (what
        ``requires`` is read from; built without a generator per layer: every capture asks)."""
        out = [self.entry_point]
        if self._kwargs:
            out += [c for c in iter_carried(self._kwargs) if isinstance(c, CodeRef)]
        for layer in self.layers:
            out.append(layer.cls)
            if layer._kwargs:
                out += [c for c in iter_carried(layer._kwargs) if isinstance(c, CodeRef)]
        return out

    def pack(self, **changes: Any) -> SpecPack:
        """The pack of these fields with ``changes`` (``requires``, ``assets``, ``surface``,
        ``_kwargs``, ``plain``) applied.

        ``plain`` is passed on only when given in ``changes``: otherwise the pack computes it
        from its kwargs, as a pack made by ``evolve`` of the resolved one always did (the
        value a capture returned before drafts existed, kept exactly).
        """
        fields: dict[str, Any] = {
            "backend": self.backend, "id": self.id, "entry_point": self.entry_point,
            "_kwargs": self._kwargs, "spec": self.spec, "layers": self.layers,
            "auto_render": self.auto_render, "versions": self.versions, "notes": self.notes,
            "vector": self.vector,
        }
        if "requires" in changes:
            changes["_requires"] = changes.pop("requires")
        fields.update(changes)
        return SpecPack(**fields)
