"""``SpecPack.to_json`` and ``SpecPack.from_json`` (:func:`read`) on a ``PackValue``: the pack
module's one door into the file format, loaded on the first text written or read, so a worker
never loads the file format or the typed-JSON codec."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._errors import PackFormatError
from .._keywords import check_flag
from .._state import content, fingerprint
from .._surface import Surface, surface_to_json
from .._typedjson.encode import Encoder, encode
from .._typedjson.walk import payload_uses, references
from .manifest import FORMAT, PackFields, decode_fields, dumps, parse_manifest
from .needs import needs_to_json
from .signed import SignedFile, check_key
from .trust import check_allowed, normalize_allow, refuse_payloads

if TYPE_CHECKING:
    from .._packvalue import PackValue

__all__ = ["read", "to_json"]


def _data_only(surface: Surface) -> Surface:
    """``surface`` without the metadata items a manifest's surface cannot hold: code
    references and payloads (reading refuses them) and what cannot be written at all."""
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


def read(text: str | bytes, *, trust: bool = False, key: bytes | None = None,
         allow: Iterable[str] | str | None = None, source: str = "<manifest>") -> PackFields:
    """``SpecPack.from_json``: the lowered fields of a manifest or pack file (signed or not),
    checked as :func:`specpack.load` checks them and raising what it raises: the signature,
    the schema, the allow-list and the payloads, in that order, before anything is decoded."""
    check_flag(trust, "trust", "SpecPack.from_json()")
    k = check_key(key)
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    f = SignedFile(source, raw)
    if k is not None:
        f.verify(k)
    elif f.header_error is not None:
        raise PackFormatError(f"{source}: {f.header_error}")
    data = parse_manifest(f.manifest, source)
    prefixes = normalize_allow(allow)
    if prefixes is not None:
        check_allowed(data, prefixes, source)
    if data["payloads"] and not (trust or k is not None):
        raise refuse_payloads(data, source, f.kid)
    return decode_fields(data, source, prefixes)
