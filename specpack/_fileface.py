"""A pack's file face: :meth:`to_json` and :meth:`from_json` (mixed into ``SpecPack``).

The manifest schema and the trust policy live in :mod:`specpack.fileformat`; this mixin only
calls them, importing them when a method runs, so a worker that unpickles a pack and builds it
never loads the file format or the typed-JSON codec. Nothing here imports the pack module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from ._surface import Surface, surface_to_json
from .errors import PackFormatError
from .layer import Layer

if TYPE_CHECKING:
    from .fileformat.manifest import PackFields
    from .typedjson.encode import Encoder

__all__ = ["FileFace"]

T = TypeVar("T", bound="FileFace")


def _data_only(surface: Surface) -> Surface:
    """``surface`` without the metadata items that are not plain data.

    A manifest's surface holds no code references or payloads (reading refuses them), so an
    item that would be written as one (an enum member, a class) is left out, as are items
    that cannot be written at all.
    """
    from .typedjson.encode import encode
    from .typedjson.walk import payload_uses, references

    kept = {}
    for key, value in surface.metadata.items():
        try:
            node = encode(value)
        except (PackFormatError, TypeError, ValueError):
            continue
        if next(references(node), None) is None and not payload_uses(node):
            kept[key] = value
    return dataclasses.replace(surface, metadata=kept)


class FileFace:
    """The manifest methods of a pack (its fields are read through the pack's own slots)."""

    __slots__ = ()
    versions: Any
    notes: tuple[str, ...]
    _surface: Surface | None
    requires: Any
    assets: Any
    sealed: Any

    @property
    def fingerprint(self) -> str:  # the pack's own
        raise NotImplementedError

    def _content(self, enc: Encoder) -> dict[str, Any]:  # the pack's own
        raise NotImplementedError

    def to_json(self, indent: int | None = 2) -> str:
        """The typed, human-readable manifest (see docs/file-format.md).

        Parameters
        ----------
        indent
            JSON indentation (``None``: one line).

        Returns
        -------
        str
            Strict JSON (no NaN literals); by-value code and objects in its ``payloads`` table.
        """
        from .fileformat.manifest import FORMAT, dumps
        from .fileformat.needs import needs_to_json
        from .typedjson.encode import Encoder, encode

        payloads: dict[str, Any] = {}
        try:
            body = self._content(Encoder(payloads, canonical=False))
        except RecursionError:
            raise PackFormatError("the pack's values are nested too deeply to write") from None
        data = {
            "format": FORMAT,
            **body,
            "fingerprint": self.fingerprint,
            "versions": dict(self.versions),
            "notes": list(self.notes),
            "payloads": payloads,
        }
        if self._surface is not None:
            surface = surface_to_json(_data_only(self._surface), encode)
            if surface is not None:
                data["surface"] = surface
        data.update(needs_to_json(self.requires, self.assets, self.sealed))
        return dumps(data, indent=indent)

    @classmethod
    def from_json(
        cls: type[T],
        text: str | bytes,
        *,
        trust: bool = False,
        key: bytes | None = None,
        allow: Iterable[str] | str | None = None,
        source: str = "<manifest>",
    ) -> T:
        """Read a manifest (or a signed file's bytes): the same checks as :func:`specpack.load`.

        Nothing is imported or unpickled here.

        Parameters
        ----------
        text
            The manifest (``pack.to_json()``), or the bytes of a pack file, signed or not.
        trust
            Accept by-value payloads without a signature (they run when ``make()`` loads them).
        key
            The HMAC key (bytes) the text must be signed with; a verified text's payloads are
            accepted.
        allow
            Module names and exact ``module:qualname`` references: refuse references outside
            them now; at ``make()`` a module admits its env and wrapper classes and values, a
            function or other callable needs its exact entry.
        source
            How messages name the text.

        Returns
        -------
        SpecPack
            The pack, code references still lazy and payloads still bytes.

        Raises
        ------
        PackFormatError
            The text is malformed (the message names the field).
        UntrustedPackError
            Payloads without trust or key, or references outside ``allow``.
        SignatureError
            ``key`` does not verify the text.
        """
        from .fileformat.read import read_fields

        return cls._from_fields(read_fields(text, trust=trust, key=key, allow=allow,
                                            source=source))

    @classmethod
    def _from_fields(cls: type[T], fields: PackFields) -> T:
        """A pack of decoded manifest fields (no check here: :meth:`from_json` checks)."""
        make: Any = cls
        pack: T = make(
            backend=fields.backend,
            id=fields.id,
            entry_point=fields.entry_point,
            kwargs=fields.kwargs,
            spec=fields.spec,
            layers=tuple(Layer(c, kw) for c, kw in fields.layers),
            auto_render=fields.auto_render,
            versions=fields.versions,
            notes=fields.notes,
            vector=fields.vector,
            surface=fields.surface,
            requires=fields.requires,
            assets=fields.assets,
            seal=fields.seal,
        )
        return pack


