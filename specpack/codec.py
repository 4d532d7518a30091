"""The typed JSON manifest: a pack as text a person can read, and a machine can round-trip.

Plain JSON carries ``null``, booleans, strings, lists, str-keyed objects, ints up to 2**53 and
finite floats as themselves. Everything else is a one-key object whose key starts with ``$``:
``$int`` (big ints), ``$float`` (nan/inf), ``$bytes``, ``$complex``, ``$tuple``, ``$set``,
``$frozenset``, ``$dict`` (non-str keys, or keys starting with ``$``), ``$ndarray``,
``$npscalar``, ``$enum``, ``$ref`` (code by reference), ``$code`` and ``$object`` (payloads in
the manifest's ``payloads`` table, marked with their kind, size and digest). The full field
list is in ``docs/file-format.md``.

Decoding never imports a module and never unpickles: references stay lazy
(:class:`~specpack._carry.CodeRef`, :class:`EnumRef`) and payloads stay bytes until ``make()``
needs them. Every malformed input raises :class:`~specpack.errors.PackFormatError` naming the
source and the place in the manifest.

Example::

    text = codec.to_json(pack)          # == pack.to_json()
    again = codec.from_json(text)       # again.fingerprint == pack.fingerprint
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import json
import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _values
from ._carry import CodeRef
from ._values import Blob, EnumRef
from .errors import PackFormatError, UntrustedPackError

if TYPE_CHECKING:
    from .pack import SpecPack

__all__ = [
    "FORMAT",
    "EnumRef",
    "check_allowed",
    "code_payloads",
    "content_bytes",
    "decode_value",
    "encode_value",
    "entry_modules",
    "from_json",
    "from_manifest",
    "manifest",
    "manifest_bytes",
    "named_modules",
    "parse_manifest",
    "to_json",
]

#: The manifest format this module writes and reads (the ``format`` field).
FORMAT = "specpack/1"
#: First bytes of a signed pack file (see :mod:`specpack.files`); a manifest never starts so.
SIGNED_MAGIC = b"specpack-signed/"

_SAFE_INT = 2**53
#: Deepest value nesting a manifest may hold: what ``capture`` accepts, plus the containers
#: a pack puts around its kwargs.
MAX_DEPTH = _values.MAX_DEPTH + 8
#: Deepest JSON nesting of a whole manifest (a ``$dict`` level takes three JSON levels).
MAX_JSON_DEPTH = 3 * MAX_DEPTH + 16
_MAX_INT_CHARS = 100_000
_MAX_ARRAY_ITEMS = 50_000_000
_MAX_ARRAY_BYTES = 2**31
_VALUE_KINDS = frozenset("biuf")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_TOP_FIELDS = (
    "format", "backend", "id", "entry_point", "kwargs", "spec", "layers", "render_wrappers",
    "fingerprint", "versions", "notes", "payloads",
)
_REQUIRED = {
    "format": str, "backend": str, "entry_point": dict, "kwargs": dict, "spec": dict,
    "layers": list, "versions": dict, "payloads": dict,
}
_PAYLOAD_FIELDS = ("kind", "name", "python", "size", "digest", "format", "note", "data")
#: Wrapper classes ``make()`` itself adds; ``allow`` always admits them for layer classes.
_MAKE_WRAPPERS = frozenset({
    "PassiveEnvChecker", "OrderEnforcing", "TimeLimit", "StepAPICompatibility",
    "EnvCompatibility",
})


# -- encoding ---------------------------------------------------------------------------------


def _float(x: float) -> Any:
    if math.isfinite(x):
        return x
    return {"$float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def _int(x: int) -> Any:
    if -_SAFE_INT <= x <= _SAFE_INT:
        return x
    try:
        return {"$int": str(x)}
    except ValueError:  # more decimal digits than Python converts: hexadecimal is exact
        return {"$int": hex(x)}


def _canon(node: Any) -> str:
    return json.dumps(node, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


class _Encoder:
    """Lowered value -> typed JSON node; collects payload entries into ``payloads``."""

    def __init__(self, payloads: dict[str, Any] | None, canonical: bool) -> None:
        self.payloads = payloads
        self.canonical = canonical

    def value(self, value: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise PackFormatError(f"value nested more than {MAX_DEPTH} levels deep")
        d = depth + 1
        t = type(value)
        if value is None or t is bool or t is str:
            return value
        if t is int:
            return _int(value)
        if t is float:
            return _float(value)
        if t is bytes:
            return {"$bytes": base64.b64encode(value).decode("ascii")}
        if t is complex:
            return {"$complex": [_float(value.real), _float(value.imag)]}
        if t is list or t is tuple:
            items = []
            for v in value:
                items.append(self.value(v, d))
            return items if t is list else {"$tuple": items}
        if t is set or t is frozenset:
            members = []
            for v in value:
                members.append(self.value(v, d))
            members.sort(key=_canon)
            return {"$set" if t is set else "$frozenset": members}
        if t is dict:
            if all(type(k) is str and not k.startswith("$") for k in value):
                out = {}
                for k, v in value.items():
                    out[k] = self.value(v, d)
                return out
            pairs = []
            for k, v in value.items():
                pairs.append([self.value(k, d), self.value(v, d)])
            if self.canonical:
                pairs.sort(key=lambda p: _canon(p[0]))
            return {"$dict": pairs}
        if t is np.ndarray:
            return {"$ndarray": _encode_array(value)}
        if isinstance(value, np.generic):
            enc = _encode_array(np.asarray(value).reshape(1))
            body: dict[str, Any] = {"dtype": enc["dtype"]}
            if "values" in enc:
                body["value"] = enc["values"][0]
            else:
                body["base64"] = enc["base64"]
            return {"$npscalar": body}
        if t is CodeRef:
            if value.payload is None:
                return {"$ref": value.name}
            digest = value.digest
            assert digest is not None
            if self.payloads is not None:
                self.payloads[digest] = _payload_entry("code", value.name, value.payload,
                                                       value.python)
            return {"$code": digest}
        if t is Blob:
            if self.payloads is not None:
                self.payloads[value.digest] = _payload_entry("object", value.type_name,
                                                             value.payload, value.python)
            return {"$object": value.digest}
        if t is EnumRef:
            return {"$enum": f"{value.module}:{value.qualname}", "name": value.member}
        if isinstance(value, enum.Enum) and isinstance(value.name, str):
            return {"$enum": f"{t.__module__}:{t.__qualname__}", "name": value.name}
        raise PackFormatError(
            f"cannot encode a {t.__module__}.{t.__qualname__} value in a manifest; "
            "capture the pack again so the value is carried (specpack.capture lowers it)"
        )


def encode_value(value: Any, payloads: dict[str, Any] | None = None, _depth: int = 0, *,
                 canonical: bool = False) -> Any:
    """The typed-JSON form of a lowered value; payloads are collected into ``payloads``.

    ``canonical=True`` orders ``$dict`` pairs by key, so that equal dicts encode equally
    (used for the fingerprint).

    Example::

        >>> encode_value((1, {2: b"x"}))
        {'$tuple': [1, {'$dict': [[2, {'$bytes': 'eA=='}]]}]}
    """
    try:
        return _Encoder(payloads, canonical).value(value, _depth)
    except RecursionError:
        raise PackFormatError("value nested too deeply to encode") from None


def _encode_array(arr: np.ndarray) -> dict[str, Any]:
    dtype = arr.dtype
    if dtype.hasobject:
        raise PackFormatError("object arrays cannot be written in a manifest (they hold "
                              "pointers): capture lowers them to payloads")
    out: dict[str, Any] = {"dtype": _descr(dtype), "shape": list(arr.shape)}
    if dtype.kind in _VALUE_KINDS and dtype.fields is None and dtype.itemsize <= 8:
        flat = []
        for x in arr.ravel(order="C").tolist():
            t = type(x)
            flat.append(_float(x) if t is float else (_int(x) if t is int else x))
        out["values"] = flat
    else:
        out["base64"] = base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii")
    return out


def _descr(dtype: np.dtype) -> Any:
    """numpy's array-protocol descr (what ``numpy.lib.format.dtype_to_descr`` gives).

    Written out here because ``dtype_to_descr`` warns about dtype metadata (which numpy 1.x
    attaches to datetime dtypes after a pickle round trip) and returns non-JSON values for
    non-legacy dtypes.
    """
    if dtype.names is not None:
        return dtype.descr
    if not getattr(type(dtype), "_legacy", True):
        raise PackFormatError(f"the numpy dtype {dtype} cannot be written in a manifest")
    return dtype.str


def _payload_entry(kind: str, name: str, data: bytes, python: str | None) -> dict[str, Any]:
    return {
        "kind": kind,
        "name": name,
        "python": python,
        "size": len(data),
        "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
        "format": "cloudpickle",
        "note": ("code: executes when make() loads it" if kind == "code"
                 else "object: unpickled (may execute code) when make() loads it"),
        "data": base64.b64encode(data).decode("ascii"),
    }


# -- decoding ---------------------------------------------------------------------------------


def printable(text: str, limit: int = 200) -> str:
    """``text`` safe to print in a message: control characters escaped, length capped.

    Names and keys in a hostile file could otherwise carry terminal escape sequences into
    error messages and ``specpack inspect`` output.
    """
    if len(text) > limit:
        text = text[:limit] + "..."
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def _dotted(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


class _Decoder:
    """Typed JSON node -> lowered value; payload references are resolved in ``payloads``."""

    def __init__(self, payloads: dict[str, Any], source: str) -> None:
        self.payloads = payloads
        self.source = source
        self.used: dict[str, dict[str, Any]] = {}

    def fail(self, where: str, why: str) -> PackFormatError:
        return PackFormatError(f"{self.source}: {printable(where)}: {printable(why, 400)}")

    def value(self, node: Any, where: str, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(where, f"nested more than {MAX_DEPTH} levels deep")
        d = depth + 1
        t = type(node)
        if node is None or t is bool or t is str or t is int or t is float:
            return node
        if t is list:
            out = []
            for i, v in enumerate(node):
                out.append(self.value(v, f"{where}[{i}]", d))
            return out
        if t is not dict:
            raise self.fail(where, f"unexpected JSON {t.__name__}")
        tags = [k for k in node if k.startswith("$")]
        if not tags:
            obj = {}
            for k, v in node.items():
                obj[k] = self.value(v, f"{where}.{k}", d)
            return obj
        if len(tags) != 1:
            raise self.fail(where, f"more than one type tag ({', '.join(tags)})")
        tag = tags[0]
        extra = set(node) - {tag} - ({"name"} if tag == "$enum" else set())
        if extra:
            raise self.fail(where, f"unexpected keys {sorted(extra)} beside {tag}")
        return self.tagged(tag, node[tag], node, where, d)

    def _str(self, body: Any, where: str, tag: str) -> str:
        if type(body) is not str:
            raise self.fail(where, f"{tag} must hold a string, got {type(body).__name__}")
        return body

    def _list(self, body: Any, where: str, tag: str) -> list[Any]:
        if type(body) is not list:
            raise self.fail(where, f"{tag} must hold a list, got {type(body).__name__}")
        return body

    def _num(self, x: Any, where: str) -> float:
        if type(x) is dict and set(x) == {"$float"}:
            v = x["$float"]
            if v not in ("nan", "inf", "-inf"):
                raise self.fail(where, f"$float must be 'nan', 'inf' or '-inf', got {v!r}")
            return float(v)
        if type(x) is int or type(x) is float:
            return float(x)
        raise self.fail(where, f"expected a number, got {type(x).__name__}")

    def _bigint(self, body: Any, where: str) -> int:
        s = self._str(body, where, "$int")
        if len(s) > _MAX_INT_CHARS:
            raise self.fail(where, f"$int has more than {_MAX_INT_CHARS} characters")
        try:
            if s.lstrip("+-").lower().startswith("0x"):
                return int(s, 16)
            return int(s)
        except ValueError:
            raise self.fail(where, f"$int {s[:40]!r} is not an integer") from None

    def _items(self, body: Any, where: str, tag: str, d: int) -> list[Any]:
        out = []
        for i, v in enumerate(self._list(body, where, tag)):
            out.append(self.value(v, f"{where}[{i}]", d))
        return out

    def tagged(self, tag: str, body: Any, node: dict[str, Any], where: str, d: int) -> Any:
        """Decode one ``{"$tag": body}`` node (``node`` holds the tag's siblings)."""
        if tag == "$int":
            return self._bigint(body, where)
        if tag == "$float":
            return self._num(node, where)
        if tag == "$bytes":
            return self._b64(self._str(body, where, tag), where)
        if tag == "$complex":
            parts = self._list(body, where, tag)
            if len(parts) != 2:
                raise self.fail(where, "$complex must hold [real, imag]")
            return complex(self._num(parts[0], where), self._num(parts[1], where))
        if tag == "$tuple":
            return tuple(self._items(body, where, tag, d))
        if tag in ("$set", "$frozenset"):
            items = self._items(body, where, tag, d)
            try:
                return set(items) if tag == "$set" else frozenset(items)
            except TypeError as e:
                raise self.fail(where, f"{tag} item is not hashable ({e})") from None
        if tag == "$dict":
            return self._dict(body, where, d)
        if tag == "$ndarray":
            return self.array(body, where, scalar=False)
        if tag == "$npscalar":
            return self.array(body, where, scalar=True)
        if tag == "$enum":
            ref = self._str(body, where, tag)
            name = node.get("name")
            mod, sep, qual = ref.partition(":")
            if not sep or not _dotted(mod) or not _dotted(qual) or type(name) is not str:
                raise self.fail(where, "$enum must be 'module:Class' with a 'name' string")
            return EnumRef(mod, qual, name)
        if tag == "$ref":
            ref = self._str(body, where, tag)
            mod, sep, qual = ref.partition(":")
            if not sep or not _dotted(mod) or not _dotted(qual):
                raise self.fail(where, f"$ref {ref[:80]!r} is not of the form "
                                "'package.module:QualName'")
            return CodeRef(mod, qual)
        if tag in ("$code", "$object"):
            return self.payload(tag, body, where)
        raise self.fail(where, f"unknown type tag {tag!r}")

    def _dict(self, body: Any, where: str, d: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for i, pair in enumerate(self._list(body, where, "$dict")):
            if type(pair) is not list or len(pair) != 2:
                raise self.fail(f"{where}[{i}]", "$dict items must be [key, value] pairs")
            k = self.value(pair[0], f"{where}[{i}][0]", d)
            v = self.value(pair[1], f"{where}[{i}][1]", d)
            try:
                out[k] = v
            except TypeError as e:
                raise self.fail(f"{where}[{i}]", f"$dict key is not hashable ({e})") from None
        return out

    def payload(self, tag: str, body: Any, where: str) -> CodeRef | Blob:
        """A ``$code``/``$object`` reference: the payload stays bytes (never unpickled here)."""
        digest = self._str(body, where, tag)
        entry = self.payloads.get(digest)
        if type(entry) is not dict:
            raise self.fail(where, f"{tag} {digest[:80]!r} is not in the payloads table")
        kind = "code" if tag == "$code" else "object"
        if entry.get("kind") != kind:
            raise self.fail(where, f"payload {digest} is of kind {entry.get('kind')!r}, "
                            f"expected {kind!r}")
        data = self._b64(self._str(entry.get("data"), f"payloads[{digest}].data", "data"),
                         f"payloads[{digest}].data")
        real = "sha256:" + hashlib.sha256(data).hexdigest()
        if real != digest:
            raise self.fail(where, f"payload digest mismatch: table says {digest}, data "
                            f"hashes to {real}")
        name = entry.get("name")
        python = entry.get("python")
        if type(name) is not str or (python is not None and type(python) is not str):
            raise self.fail(f"payloads[{digest}]", "name and python must be strings")
        self.used[digest] = entry
        if kind == "code":
            mod, sep, qual = name.partition(":")
            return CodeRef(mod if sep and mod else "__main__", qual if sep and qual else name,
                           data, python)
        return Blob(data, name, python or "unknown")

    def _b64(self, s: str, where: str) -> bytes:
        try:
            return base64.b64decode(s.encode("ascii"), validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise self.fail(where, "invalid base64 data") from None

    def _array_item(self, x: Any, where: str) -> Any:
        t = type(x)
        if t is bool or t is int or t is float:
            return x
        if t is dict and set(x) == {"$int"}:
            return self._bigint(x["$int"], where)
        if t is dict and set(x) == {"$float"}:
            return self._num(x, where)
        raise self.fail(where, f"array values must be numbers, got {t.__name__}")

    def array(self, body: Any, where: str, scalar: bool) -> Any:
        """Decode an ``$ndarray`` (read-only result) or ``$npscalar`` body."""
        if type(body) is not dict:
            raise self.fail(where, "array body must be an object")
        allowed = {"dtype", "value", "base64"} if scalar else {"dtype", "shape", "values",
                                                                 "base64"}
        if set(body) - allowed:
            raise self.fail(where, f"unexpected keys {sorted(set(body) - allowed)}")
        descr = body.get("dtype")
        if type(descr) is not str and type(descr) is not list:
            raise self.fail(where, "an array needs a 'dtype' (a numpy descr such as '<f4')")
        try:
            dtype = np.lib.format.descr_to_dtype(descr)  # type: ignore[arg-type]
            # numpy accepts some odd descrs whose canonical form it cannot read back; refuse
            # those, so that whatever is read here is written and read again the same way
            ok = np.lib.format.descr_to_dtype(json.loads(json.dumps(_descr(dtype)))) == dtype
        except Exception:  # noqa: BLE001 - any bad descr is a format error
            ok = False
        if not ok:
            raise self.fail(where, f"invalid dtype {str(descr)[:80]!r}")
        if dtype.hasobject:
            raise self.fail(where, "object arrays are not allowed in a manifest")
        if scalar:
            shape: Any = [1]
            values = [body["value"]] if "value" in body else None
        else:
            shape = body.get("shape")
            if type(shape) is not list or len(shape) > 64 or not all(
                    type(n) is int and 0 <= n for n in shape):
                raise self.fail(where, f"invalid shape {str(shape)[:80]}")
            values = body.get("values")
        if (values is None) == ("base64" not in body):
            raise self.fail(where, "an array holds exactly one of 'values' or 'base64'")
        count = 1
        for n in shape:
            count *= n
        if count > _MAX_ARRAY_ITEMS or count * dtype.itemsize > _MAX_ARRAY_BYTES:
            raise self.fail(where, f"array of {count} items is too large for a manifest")
        try:
            if values is not None:
                if dtype.kind not in _VALUE_KINDS or dtype.fields is not None:
                    raise self.fail(where, f"dtype {dtype.str} must be written as base64")
                if type(values) is not list or len(values) != count:
                    raise self.fail(where, f"expected a list of {count} values")
                conv = [self._array_item(v, where) for v in values]
                with np.errstate(over="raise", invalid="raise"):
                    arr = np.array(conv, dtype=dtype).reshape(shape)
            else:
                raw = self._b64(self._str(body.get("base64"), where, "base64"), where)
                if len(raw) != count * dtype.itemsize:
                    raise self.fail(where, f"array data has {len(raw)} bytes, expected "
                                    f"{count * dtype.itemsize}")
                arr = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        except PackFormatError:
            raise
        except (ValueError, TypeError, OverflowError, FloatingPointError) as e:
            raise self.fail(where, f"invalid array ({e})") from None
        if scalar:
            return arr.reshape(())[()]
        arr.flags.writeable = False
        return arr


def decode_value(node: Any, payloads: dict[str, Any] | None = None,
                 source: str = "<manifest>") -> Any:
    """The lowered value of a typed-JSON node (inverse of :func:`encode_value`).

    Nothing is imported or unpickled: code stays a lazy :class:`CodeRef`, enum members a lazy
    :class:`EnumRef`, payloads bytes.
    """
    try:
        return _Decoder(payloads or {}, source).value(node, "value")
    except RecursionError:
        raise PackFormatError(f"{source}: value nested too deeply") from None


# -- manifest ---------------------------------------------------------------------------------


def _content(pack: SpecPack, enc: _Encoder) -> dict[str, Any]:
    return {
        "backend": pack.backend,
        "id": pack.id,
        "entry_point": enc.value(pack.entry_point, 0),
        "kwargs": enc.value(pack._kwargs, 0),
        "spec": enc.value(dict(pack.spec), 0),
        "layers": [
            {"class": enc.value(layer.cls, 0), "kwargs": enc.value(layer._kwargs, 0)}
            for layer in pack.layers
        ],
        "render_wrappers": "make" if pack.auto_render else None,
    }


def content_bytes(pack: SpecPack) -> bytes:
    """Canonical bytes of what shapes the env: the fingerprint's input.

    Versions and notes are left out; by-value code counts by its payload digest.
    """
    try:
        return _canon(_content(pack, _Encoder(None, canonical=True))).encode("ascii")
    except RecursionError:
        raise PackFormatError("the pack's values are nested too deeply to fingerprint") from None


def manifest(pack: SpecPack) -> dict[str, Any]:
    """The manifest as a JSON-able dict (format, content, versions, notes, payloads)."""
    payloads: dict[str, Any] = {}
    try:
        body = _content(pack, _Encoder(payloads, canonical=False))
    except RecursionError:
        raise PackFormatError("the pack's values are nested too deeply to write") from None
    return {
        "format": FORMAT,
        **body,
        "fingerprint": pack.fingerprint,
        "versions": dict(pack.versions),
        "notes": list(pack.notes),
        "payloads": payloads,
    }


def to_json(pack: SpecPack, indent: int | None = 2) -> str:
    """The manifest as text (``json.loads``-able, strict JSON: no NaN literals)."""
    try:
        return json.dumps(manifest(pack), indent=indent, allow_nan=False, ensure_ascii=False)
    except RecursionError:
        raise PackFormatError("the pack's values are nested too deeply to write") from None


def manifest_bytes(pack: SpecPack) -> bytes:
    """The manifest as UTF-8 file bytes (ending in a newline), what :func:`files.dump` writes.

    Strings that UTF-8 cannot hold (lone surrogates) are written as ``\\u`` escapes.
    """
    data = manifest(pack)
    try:
        text = json.dumps(data, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
        return text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, indent=2, allow_nan=False, ensure_ascii=True) + "\n"
        return text.encode("ascii")
    except RecursionError:
        raise PackFormatError("the pack's values are nested too deeply to write") from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"duplicate key {k[:80]!r} in a JSON object")
            seen.add(k)
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name} (write {{\"$float\": \"nan\"}} etc.)")


def _json_depth_ok(data: Any, limit: int) -> bool:
    """Whether parsed JSON nests at most ``limit`` levels (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        if type(node) is dict:
            stack.extend((v, depth + 1) for v in node.values())
        elif type(node) is list:
            stack.extend((v, depth + 1) for v in node)
    return True


def parse_manifest(text: str | bytes, source: str = "<manifest>") -> dict[str, Any]:
    """Parse and shape-check manifest text; raises :class:`PackFormatError` naming ``source``.

    Checks the top-level fields, their types, the format version and every payload entry
    (its digest is recomputed). Values inside ``kwargs``/``spec``/``layers`` are checked when
    decoded (:func:`from_manifest`).
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        if raw.startswith(SIGNED_MAGIC):
            raise PackFormatError(f"{source}: this is a signed pack file, not a bare manifest; "
                                  "read it with specpack.load(path, key=...)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise PackFormatError(f"{source}: not UTF-8 text ({e}); is this a pack "
                                  "file?") from None
    if not isinstance(text, str):
        raise PackFormatError(f"{source}: expected manifest text, got {type(text).__name__}")
    if not text.strip():
        raise PackFormatError(f"{source}: empty manifest (the file holds no JSON)")
    if text.startswith(SIGNED_MAGIC.decode("ascii")):
        raise PackFormatError(f"{source}: this is a signed pack file, not a bare manifest; "
                              "read it with specpack.load(path, key=...)")
    try:
        data = json.loads(text, parse_constant=_reject_constant,
                          object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise PackFormatError(f"{source}: JSON nested too deeply") from None
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        raise PackFormatError(f"{source}: invalid JSON ({str(e)[:200]})") from None
    if type(data) is not dict:
        raise PackFormatError(f"{source}: a manifest is a JSON object, got "
                              f"{type(data).__name__}")
    if not _json_depth_ok(data, MAX_JSON_DEPTH):
        raise PackFormatError(f"{source}: JSON nested more than {MAX_JSON_DEPTH} levels deep")
    fmt = data.get("format")
    if type(fmt) is str and fmt.startswith("specpack/") and fmt != FORMAT:
        raise PackFormatError(f"{source}: unknown format version {fmt[:40]!r}; this specpack "
                              f"reads {FORMAT!r}: upgrade specpack")
    if "format" in data and fmt != FORMAT:
        raise PackFormatError(f"{source}: format {str(fmt)[:40]!r} is not a specpack manifest "
                              f"(expected {FORMAT!r})")
    for key, typ in _REQUIRED.items():
        if key not in data:
            raise PackFormatError(f"{source}: missing field {key!r}; is this a specpack "
                                  "manifest?")
        if type(data[key]) is not typ:
            raise PackFormatError(f"{source}: field {key!r} must be a JSON "
                                  f"{_JSON_NAMES[typ]}, got {_json_name(data[key])}")
    unknown = [k for k in data if k not in _TOP_FIELDS]
    if unknown:
        raise PackFormatError(f"{source}: unknown field(s) {sorted(unknown)[:5]}; a "
                              f"{FORMAT} manifest has {list(_TOP_FIELDS)}")
    if data["backend"] not in ("gymnasium", "gym"):
        raise PackFormatError(f"{source}: unknown backend {str(data['backend'])[:40]!r} "
                              "(expected 'gymnasium' or 'gym')")
    for key in ("id", "fingerprint"):
        if data.get(key) is not None and type(data[key]) is not str:
            raise PackFormatError(f"{source}: field {key!r} must be a string or null, got "
                                  f"{_json_name(data[key])}")
    if data.get("render_wrappers") not in (None, "make"):
        raise PackFormatError(f"{source}: field 'render_wrappers' must be 'make' or null")
    if not all(type(v) is str for v in data["versions"].values()):
        raise PackFormatError(f"{source}: field 'versions' must map names to version strings")
    notes = data.get("notes", [])
    if type(notes) is not list or not all(type(n) is str for n in notes):
        raise PackFormatError(f"{source}: field 'notes' must be a list of strings")
    for digest, entry in data["payloads"].items():
        _check_payload(digest, entry, source)
    return data


_JSON_NAMES = {str: "string", dict: "object", list: "array"}


def _json_name(x: Any) -> str:
    names = {dict: "object", list: "array", str: "string", int: "number", float: "number",
             bool: "boolean", type(None): "null"}
    return names.get(type(x), type(x).__name__)


def _check_payload(digest: str, entry: Any, source: str) -> None:
    where = f"{source}: payloads[{digest[:80]!r}]"
    if not _DIGEST.fullmatch(digest):
        raise PackFormatError(f"{where}: a payload key is 'sha256:' and 64 hex digits")
    if type(entry) is not dict:
        raise PackFormatError(f"{where}: a payload entry is an object")
    unknown = set(entry) - set(_PAYLOAD_FIELDS)
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


def named_modules(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(where, module, qualname)`` for every code reference in a parsed manifest.

    Covers ``$ref`` and ``$enum`` nodes in the entry point, kwargs, spec and layers, and the
    spec's ``vector_entry_point`` string. Iterative: safe on any nesting.
    """
    found: list[tuple[str, str, str]] = []
    stack: list[tuple[Any, str]] = []
    for key in ("layers", "spec", "kwargs", "entry_point"):
        stack.append((data.get(key), key))
    while stack:
        node, where = stack.pop()
        if type(node) is dict:
            for k in ("$ref", "$enum"):
                v = node.get(k)
                if type(v) is str:
                    mod, _, qual = v.partition(":")
                    found.append((where, mod, qual))
            for k, v in reversed(list(node.items())):
                if k not in ("$ref", "$enum"):
                    stack.append((v, f"{where}.{k}"))
        elif type(node) is list:
            for i in range(len(node) - 1, -1, -1):
                stack.append((node[i], f"{where}[{i}]"))
    spec = data.get("spec")
    vec = spec.get("vector_entry_point") if type(spec) is dict else None
    if type(vec) is str and ":" in vec:
        mod, _, qual = vec.partition(":")
        found.append(("spec.vector_entry_point", mod, qual))
    return found


def entry_modules(data: dict[str, Any]) -> list[str]:
    """Every module a parsed manifest names by reference (entry point, wrappers, kwargs)."""
    return list(dict.fromkeys(mod for _, mod, _ in named_modules(data)))


def check_allowed(data: dict[str, Any], allow: Iterable[str] | str, source: str) -> None:
    """Refuse (before any import) a manifest naming modules outside ``allow``.

    A module is allowed when it equals an entry of ``allow`` or lies inside one
    (``"my_pkg"`` admits ``my_pkg.envs``). The wrappers ``make()`` itself adds
    (``PassiveEnvChecker``, ``OrderEnforcing``, ``TimeLimit``, from the backend's
    ``wrappers`` package) are always admitted as layer classes. Raises
    :class:`~specpack.errors.UntrustedPackError`.
    """
    try:
        prefixes = (allow,) if isinstance(allow, str) else tuple(allow)
    except TypeError:
        raise UntrustedPackError(f"allow={allow!r} must be a list of module names, such as "
                                 "['my_pkg']") from None
    for p in prefixes:
        if type(p) is not str or not _dotted(p):
            raise UntrustedPackError(f"allow={list(prefixes)!r}: each entry must be a module "
                                     f"name such as 'my_pkg' (got {p!r})")
    backend = data.get("backend")
    refused: list[str] = []
    for where, mod, qual in named_modules(data):
        if any(mod == p or mod.startswith(p + ".") for p in prefixes):
            continue
        if (
            where.startswith("layers[") and where.endswith("].class")
            and type(backend) is str
            and (mod == f"{backend}.wrappers" or mod.startswith(f"{backend}.wrappers."))
            and qual in _MAKE_WRAPPERS
        ):
            continue
        refused.append(printable(f"{where} = {mod}:{qual}"))
    if refused:
        tops = sorted({printable(mod.partition(".")[0], 60) for where, mod, qual in
                       named_modules(data) if printable(f"{where} = {mod}:{qual}") in refused})
        raise UntrustedPackError(
            f"{source}: names code outside allow={list(prefixes)}: " + "; ".join(refused[:10])
            + (f" (and {len(refused) - 10} more)" if len(refused) > 10 else "")
            + f". Nothing was imported. Add {', '.join(repr(t) for t in tops)} to allow if "
            "you trust that code"
        )


def from_manifest(data: dict[str, Any], source: str = "<manifest>") -> SpecPack:
    """Build a pack from a parsed manifest (no import, no unpickling)."""
    try:
        return _from_manifest(data, source)
    except RecursionError:
        raise PackFormatError(f"{source}: values nested too deeply") from None


def _from_manifest(data: dict[str, Any], source: str) -> SpecPack:
    from .pack import Layer, SpecPack

    dec = _Decoder(data["payloads"], source)
    entry = dec.value(data["entry_point"], "entry_point")
    if type(entry) is not CodeRef:
        raise PackFormatError(f"{source}: entry_point must be a $ref or $code")
    kwargs = dec.value(data["kwargs"], "kwargs")
    spec = dec.value(data["spec"], "spec")
    if type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
        raise PackFormatError(f"{source}: kwargs must be an object with string keys")
    if type(spec) is not dict or not all(type(k) is str for k in spec):
        raise PackFormatError(f"{source}: spec must be an object with string keys")
    layers = []
    for i, item in enumerate(data["layers"]):
        where = f"layers[{i}]"
        if type(item) is not dict or set(item) != {"class", "kwargs"}:
            raise PackFormatError(f"{source}: {where} must be an object with 'class' and "
                                  "'kwargs' only")
        cls = dec.value(item["class"], f"{where}.class")
        lkw = dec.value(item["kwargs"], f"{where}.kwargs")
        if type(cls) is not CodeRef:
            raise PackFormatError(f"{source}: {where}.class must be a $ref or $code")
        if type(lkw) is not dict or not all(type(k) is str for k in lkw):
            raise PackFormatError(f"{source}: {where}.kwargs must be an object with string "
                                  "keys")
        layers.append(Layer(cls, lkw))
    return SpecPack(
        backend=data["backend"],
        id=data.get("id"),
        entry_point=entry,
        kwargs=kwargs,
        spec=spec,
        layers=tuple(layers),
        auto_render=data.get("render_wrappers") == "make",
        versions=data["versions"],
        notes=tuple(data.get("notes", [])),
    )


def from_json(text: str | bytes, *, allow: Iterable[str] | str | None = None,
              source: str = "<manifest>") -> SpecPack:
    """Read a manifest; ``allow`` restricts the modules it may name by reference.

    Accepts hand-edited manifests as long as they are well-formed (the recorded fingerprint
    is informative only). By-value payloads are accepted here: text in memory is yours;
    files go through :func:`specpack.load`, which refuses untrusted code.
    """
    data = parse_manifest(text, source)
    if allow is not None:
        check_allowed(data, allow, source)
    return from_manifest(data, source)
