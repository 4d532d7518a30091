"""A pack's text form: ``SpecPack.to_json`` and ``SpecPack.from_json`` call these functions.

The manifest schema and the trust policy live in :mod:`specpack._core._fileformat`; this module only
calls them, importing them when a function runs, so a worker that unpickles a pack and builds
it never loads the file format or the typed-JSON codec. Nothing here imports the pack module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._errors import PackFormatError
from ._state import content, fingerprint
from ._surface import Surface, surface_to_json

if TYPE_CHECKING:
    from ._packvalue import PackValue

__all__ = ["read", "to_json"]


def _data_only(surface: Surface) -> Surface:
    """``surface`` without the metadata items that are not plain data.

    A manifest's surface holds no code references or payloads (reading refuses them), so an
    item that would be written as one (an enum member, a class) is left out, as are items
    that cannot be written at all.
    """
    from ._typedjson.encode import encode
    from ._typedjson.walk import payload_uses, references

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
    from ._fileformat.manifest import FORMAT, dumps
    from ._fileformat.needs import needs_to_json
    from ._typedjson.encode import Encoder, encode

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
    from ._fileformat.read import read_fields

    return read_fields(text, trust=trust, key=key, allow=allow, source=source)
