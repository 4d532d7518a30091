"""A pack's text form: ``SpecPack.to_json`` and ``SpecPack.from_json`` enter the file format here.

The manifest schema and the trust policy live beside this module; the pack module loads this
one when it first writes or reads a text (its one door into the file format), so a worker that
unpickles a pack and builds it never loads the file format or the typed-JSON codec. Nothing
here imports the pack module: it works on :class:`~specpack._core._packvalue.PackValue`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._errors import PackFormatError
from .._state import content, fingerprint
from .._surface import Surface, surface_to_json
from .._typedjson.encode import Encoder, encode
from .._typedjson.walk import payload_uses, references
from .manifest import FORMAT, dumps
from .needs import needs_to_json
from .read import read_fields

if TYPE_CHECKING:
    from .._packvalue import PackValue

__all__ = ["read", "to_json"]


def _data_only(surface: Surface) -> Surface:
    """``surface`` without the metadata items that are not plain data.

    A manifest's surface holds no code references or payloads (reading refuses them), so an
    item that would be written as one (an enum member, a class) is left out, as are items
    that cannot be written at all.
    """
    kept = {}
    for key, value in surface.metadata.items():
        try:
            node = encode(value)
        except (PackFormatError, TypeError, ValueError):
            continue
        if next(references(node), None) is None and not payload_uses(node):
            kept[key] = value
    return dataclasses.replace(surface, metadata=kept)


def to_json(pack: PackValue, indent: int | None) -> str:
    """``pack.to_json(indent)``: the typed manifest (see :meth:`SpecPack.to_json`)."""
    payloads: dict[str, Any] = {}
    try:
        body = content(pack, Encoder(payloads, canonical=False))
    except RecursionError:
        raise PackFormatError("the pack's values are nested too deeply to write") from None
    data = {
        "format": FORMAT,
        **body,
        "fingerprint": fingerprint(pack),
        "versions": dict(pack.versions),
        "notes": list(pack.notes),
        "payloads": payloads,
    }
    if pack.surface is not None:
        surface = surface_to_json(_data_only(pack.surface), encode)
        if surface is not None:
            data["surface"] = surface
    data.update(needs_to_json(pack.requires, pack.assets, pack.sealed))
    return dumps(data, indent=indent)


def read(text: str | bytes, *, trust: bool, key: bytes | None,
         allow: Iterable[str] | str | None, source: str) -> dict[str, Any]:
    """The constructor fields of a manifest or pack file's bytes, checked as ``load`` checks
    them (see :meth:`SpecPack.from_json`)."""
    return read_fields(text, trust=trust, key=key, allow=allow, source=source)
