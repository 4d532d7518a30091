"""The pack manifest's schema (docs/file-format.md): :func:`parse_manifest` checks its shape,
:func:`decode_fields` makes a pack's lowered fields of it (importing and unpickling nothing),
:func:`dumps` writes one."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import Any

from .._backends import BACKENDS
from .._carry.code import CodeRef
from .._errors import PackFormatError
from .._layer import Layer
from .._surface import Surface, surface_from_json
from .._text import printable
from .._typedjson.decode import Decoder
from .._typedjson.tags import DIGEST, MAX_JSON_DEPTH, read_json
from .._typedjson.walk import Path, path_text, payload_uses, references
from .needs import needs_from_json
from .schema import check_layer_kwargs, check_spec, is_make_wrapper
from .signed import SIGNED_MAGIC

__all__ = ["FORMAT", "PackFields", "decode_fields", "dumps", "parse_manifest"]

#: The manifest format this module writes and reads (the ``format`` field).
FORMAT = "specpack/1"
_TOP_FIELDS = (
    "format", "backend", "id", "entry_point", "kwargs", "spec", "layers", "render_wrappers",
    "fingerprint", "versions", "notes", "payloads", "vector", "surface", "requires", "assets",
    "seal")
_REQUIRED = {
    "format": str, "backend": str, "entry_point": dict, "kwargs": dict, "spec": dict,
    "layers": list, "versions": dict, "payloads": dict,
}
_PAYLOAD_FIELDS = frozenset({"kind", "name", "python", "size", "digest", "format", "note",
                             "data"})
_JSON_NAMES = {dict: "object", list: "array", str: "string", int: "number", float: "number",
               bool: "boolean", type(None): "null"}
#: A pack's lowered fields as decoded from a manifest: ``SpecPack(**fields)`` makes the pack.
PackFields = dict[str, Any]
#: A high surrogate followed by a low one: ``\\ud83d\\ude00`` reads back as one character.
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def dumps(data: dict[str, Any], indent: int | None = 2) -> str:
    """A manifest dict as strict JSON text (no NaN literals) that encodes as UTF-8: a lone
    surrogate makes the whole text ASCII-only (``\\u`` escapes); a high and a low surrogate side
    by side (which JSON reads back as one character) cannot be written: PackFormatError."""
    try:
        text = json.dumps(data, indent=indent, allow_nan=False, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            pair = _SURROGATE_PAIR.search(text)
            if pair is not None:
                raise PackFormatError(
                    f"a string holds the surrogate pair {pair.group()!a} as two code "
                    "points, which JSON reads back as one character; such a string cannot "
                    "be written exactly") from None
            text = json.dumps(data, indent=indent, allow_nan=False, ensure_ascii=True)
        return text
    except RecursionError:
        raise PackFormatError("the pack's values are nested too deeply to write") from None


def _json_depth_ok(data: Any, limit: int) -> bool:
    """Whether parsed JSON nests at most ``limit`` levels (level by level: no recursion)."""
    level = [data]
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return False
        below: list[Any] = []
        for node in level:
            t = type(node)
            if t is dict:
                below.extend(node.values())
            elif t is list:
                below.extend(node)
        level = below
    return True


def parse_manifest(text: str | bytes, source: str = "<manifest>") -> dict[str, Any]:
    """Parse manifest text and check its fields and payload entries (digests recomputed; the
    values are checked by :func:`decode_fields`): :class:`PackFormatError` naming ``source``."""

    def bad(why: str) -> PackFormatError:
        return PackFormatError(f"{source}: {why}")

    signed = ("this is a signed pack file, not a bare manifest; read it with "
              "specpack.load(path, key=...)")
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        if raw.startswith(SIGNED_MAGIC):
            raise bad(signed)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise bad(f"not UTF-8 text ({e}); is this a pack file?") from None
    if not isinstance(text, str):
        raise bad(f"expected manifest text, got {type(text).__name__}")
    if not text.strip():
        raise bad("empty manifest (the file holds no JSON)")
    if text.startswith(SIGNED_MAGIC.decode("ascii")):
        raise bad(signed)
    try:
        data = read_json(text)
    except RecursionError:
        raise bad("JSON nested too deeply") from None
    except MemoryError:
        raise bad("too large to parse in the memory available") from None
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        raise bad(f"invalid JSON ({printable(str(e), 200)})") from None
    if type(data) is not dict:
        raise bad(f"a manifest is a JSON object, got {type(data).__name__}")
    if not _json_depth_ok(data, MAX_JSON_DEPTH):
        raise bad(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    fmt = data.get("format")
    if type(fmt) is str and fmt.startswith("specpack/") and fmt != FORMAT:
        raise bad(f"unknown format version {fmt[:40]!r}; this specpack reads {FORMAT!r}: "
                  "upgrade specpack")
    if "format" in data and fmt != FORMAT:
        raise bad(f"format {str(fmt)[:40]!r} is not a specpack manifest (expected {FORMAT!r})")
    for key, typ in _REQUIRED.items():
        if key not in data:
            raise bad(f"missing field {key!r}; is this a specpack manifest?")
        if type(data[key]) is not typ:
            raise bad(f"field {key!r} must be a JSON {_JSON_NAMES[typ]}, got "
                      f"{_json_name(data[key])}")
    unknown = [k for k in data if k not in _TOP_FIELDS]
    if unknown:
        raise bad(f"unknown field(s) {sorted(unknown)[:5]}; a {FORMAT} manifest has "
                  f"{list(_TOP_FIELDS)}")
    if data["backend"] not in BACKENDS:
        raise bad(f"unknown backend {str(data['backend'])[:40]!r} (expected one of "
                  f"{', '.join(map(repr, BACKENDS))})")
    for key in ("id", "fingerprint"):
        if data.get(key) is not None and type(data[key]) is not str:
            raise bad(f"field {key!r} must be a string or null, got {_json_name(data[key])}")
    if data.get("vector", False) is not True and "vector" in data:
        raise bad("field 'vector' is true or absent")
    if data.get("render_wrappers") not in (None, "make"):
        raise bad("field 'render_wrappers' must be 'make' or null")
    if not all(type(v) is str for v in data["versions"].values()):
        raise bad("field 'versions' must map names to version strings")
    notes = data.get("notes", [])
    if type(notes) is not list or not all(type(n) is str for n in notes):
        raise bad("field 'notes' must be a list of strings")
    for digest, entry in data["payloads"].items():
        _check_payload(digest, entry, source)
    return data


def _json_name(x: Any) -> str:
    return _JSON_NAMES.get(type(x), type(x).__name__)


def _check_payload(digest: str, entry: Any, source: str) -> None:
    where = f"{source}: payloads[{digest[:80]!r}]"
    if not DIGEST.fullmatch(digest):
        raise PackFormatError(f"{where}: a payload key is 'sha256:' and 64 hex digits")
    if type(entry) is not dict:
        raise PackFormatError(f"{where}: a payload entry is an object")
    unknown = set(entry) - _PAYLOAD_FIELDS
    if unknown:
        raise PackFormatError(f"{where}: unknown field(s) {sorted(unknown)[:5]}")
    if entry.get("kind") not in ("code", "object"):
        raise PackFormatError(f"{where}: 'kind' must be 'code' or 'object'")
    if type(entry.get("name")) is not str:
        raise PackFormatError(f"{where}: 'name' must be a string")
    if entry.get("python") is not None and type(entry["python"]) is not str:
        raise PackFormatError(f"{where}: 'python' must be a version string or null")
    for key in ("format", "note"):
        if key in entry and type(entry[key]) is not str:
            raise PackFormatError(f"{where}: {key!r} must be a string")
    if entry.get("format", "cloudpickle") != "cloudpickle":
        raise PackFormatError(f"{where}: unknown payload format {entry['format'][:40]!r}")
    data = entry.get("data")
    if type(data) is not str:
        raise PackFormatError(f"{where}: 'data' must be a base64 string")
    try:
        raw = base64.b64decode(data.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise PackFormatError(f"{where}: 'data' is not valid base64") from None
    size = entry.get("size", len(raw))
    if type(size) is not int or size != len(raw):
        raise PackFormatError(f"{where}: 'size' says {str(size)[:20]}, the data has "
                              f"{len(raw)} bytes")
    real = "sha256:" + hashlib.sha256(raw).hexdigest()
    if real != digest or entry.get("digest", digest) != digest:
        raise PackFormatError(f"{where}: the data hashes to {real}, not to its key: the "
                              "payload was altered")


def code_payloads(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The payload entries of a parsed manifest (what ``make()`` would unpickle), with digest."""
    return [dict(v, digest=k) for k, v in data["payloads"].items() if type(v) is dict]


def decode_fields(data: dict[str, Any], source: str = "<manifest>",
                  allow: tuple[str, ...] | None = None) -> PackFields:
    """A parsed manifest's fields as lowered values, every value checked (PackFormatError
    naming its place). ``allow`` is attached to every code reference, for ``make()``; a layer
    that is one of ``make()``'s own wrappers also admits its own module."""
    try:
        return _decode_fields(data, source, allow)
    except (RecursionError, MemoryError, OverflowError) as e:
        raise PackFormatError(f"{source}: values cannot be decoded ({type(e).__name__}: "
                              "nested too deeply or too large)") from None


def _str_keyed(value: Any, at: Path, source: str) -> dict[str, Any]:
    if type(value) is not dict or not all(type(k) is str for k in value):
        raise PackFormatError(f"{source}: {path_text(at)} must be an object with string keys")
    return value


def _decode_fields(data: dict[str, Any], source: str, allow: tuple[str, ...] | None
                   ) -> PackFields:
    dec = Decoder(data["payloads"], source, allow=allow)
    entry = dec.value(data["entry_point"], "entry_point")
    if type(entry) is not CodeRef:
        raise PackFormatError(f"{source}: entry_point must be a $ref or $code")
    kwargs = _str_keyed(dec.value(data["kwargs"], "kwargs"), "kwargs", source)
    spec = _str_keyed(dec.value(data["spec"], "spec"), "spec", source)
    check_spec(spec, source)
    backend = data["backend"]
    layers: list[tuple[CodeRef, dict[str, Any]]] = []
    for i, item in enumerate(data["layers"]):
        at: Path = ("layers", i)
        if type(item) is not dict or set(item) != {"class", "kwargs"}:
            raise PackFormatError(f"{source}: {path_text(at)} must be an object with 'class' "
                                  "and 'kwargs' only")
        cls = dec.value(item["class"], (at, "class"))
        if type(cls) is not CodeRef:
            raise PackFormatError(f"{source}: {path_text((at, 'class'))} must be a $ref or "
                                  "$code")
        lkw = _str_keyed(dec.value(item["kwargs"], (at, "kwargs")), (at, "kwargs"), source)
        if cls.payload is None:
            check_layer_kwargs(backend, i, cls.module, cls.qualname, lkw, source)
            if allow is not None and is_make_wrapper(backend, cls.module, cls.qualname):
                cls = CodeRef(cls.module, cls.qualname, allow=(*allow, cls.module))
        layers.append((cls, lkw))
    requires, assets, seal = needs_from_json(data, source)
    return {
        "backend": backend,
        "id": data.get("id"),
        "entry_point": entry,
        "_kwargs": kwargs,
        "spec": spec,
        "layers": tuple(Layer(c, kw) for c, kw in layers),
        "auto_render": data.get("render_wrappers") == "make",
        "versions": dict(data["versions"]),
        "notes": tuple(data.get("notes", [])),
        "vector": data.get("vector") is True,
        "surface": _surface(data, dec, source),
        "_requires": requires,
        "assets": assets,
        "sealed": seal,
    }


def _surface(data: dict[str, Any], dec: Decoder, source: str) -> Surface | None:
    """The optional ``surface`` field: data, so a code reference or payload there is refused
    (nothing the allow-list and ``describe`` do not see may reach ``pack.metadata``)."""
    if "surface" not in data:
        return None
    found = next(references(data["surface"], "surface"), None)
    if found is None:
        found = next((f[0] for f in payload_uses(data["surface"], "surface").values()), None)
    if found is not None:
        raise PackFormatError(
            f"{source}: {found.path()} = {{{found.tag!r}: {printable(found.body, 120)!r}}}: "
            "the recorded surface (spaces, metadata, render mode) is data and holds no code "
            "references or payloads; remove it (the surface field is optional) or capture "
            "the pack again")
    try:
        return surface_from_json(data["surface"], lambda node: dec.value(node, "surface"))
    except PackFormatError:
        raise
    except (ValueError, TypeError, AssertionError) as e:
        raise PackFormatError(f"{source}: surface: {printable(str(e), 300)}") from None
