"""Reading a manifest or a pack file's bytes into a pack's fields, under the one trust policy:
the signature, the schema, the allow-list and the payloads are checked in that order, before
anything is decoded."""

from __future__ import annotations

from collections.abc import Iterable

from .._errors import PackFormatError
from .._keywords import check_flag
from .manifest import PackFields, decode_fields, parse_manifest
from .signed import SignedFile, check_key
from .trust import check_allowed, normalize_allow, refuse_payloads

__all__ = ["read_fields"]


def read_fields(text: str | bytes, *, trust: bool = False, key: bytes | None = None,
                allow: Iterable[str] | str | None = None, source: str = "<manifest>"
                ) -> PackFields:
    """The lowered fields of a manifest or pack file (signed or not), checked as
    :func:`specpack.load` checks them, and raising what it raises."""
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
