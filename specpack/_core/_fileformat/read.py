"""Reading a manifest or a pack file's bytes into a pack's fields, under the one trust policy.

``SpecPack.from_json`` and ``specpack.load`` both read through :func:`read_fields`: the
signature (when a key is given), the schema, the allow-list and the payload refusal, in that
order, before anything is decoded; nothing is imported or unpickled.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._errors import PackFormatError
from .._keywords import check_flag
from .manifest import PackFields, decode_fields, parse_manifest
from .signed import SignedFile, check_key
from .trust import check_allowed, normalize_allow, refuse_payloads

__all__ = ["read_fields"]


def read_fields(
    text: str | bytes,
    *,
    trust: bool = False,
    key: bytes | None = None,
    allow: Iterable[str] | str | None = None,
    source: str = "<manifest>",
) -> PackFields:
    """The fields of a manifest or signed pack file, checked as ``load`` checks them.

    Parameters
    ----------
    text
        Manifest text, or the bytes of a pack file (signed or not).
    trust, key, allow, source
        As for :func:`specpack.load` (``source`` names the text in messages).

    Returns
    -------
    PackFields
        Lowered fields: code references lazy, payloads bytes.

    Raises
    ------
    PackFormatError, UntrustedPackError, SignatureError
        As :func:`specpack.load`.
    """
    check_flag(trust, "trust", "SpecPack.from_json()")
    k = check_key(key)
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    f = SignedFile(source, raw)
    verified = False
    if k is not None:
        f.verify(k)
        verified = True
    elif f.header_error is not None:
        raise PackFormatError(f"{source}: {f.header_error}")
    data = parse_manifest(f.manifest, source)
    prefixes = normalize_allow(allow)
    if prefixes is not None:
        check_allowed(data, prefixes, source)
    if data["payloads"] and not (trust or verified):
        raise refuse_payloads(data, source, f.kid)
    return decode_fields(data, source, prefixes)
