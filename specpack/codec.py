"""The typed JSON manifest: a pack as text a person can read, and a machine can round-trip.

Plain JSON carries ``null``, booleans, strings, lists, str-keyed objects, ints up to 2**53 and
finite floats as themselves. Everything else is a one-key object whose key starts with ``$``:
``$int`` (big ints), ``$float`` (nan/inf), ``$bytes``, ``$complex``, ``$tuple``, ``$set``,
``$frozenset``, ``$dict`` (non-str keys, or keys starting with ``$``), ``$ndarray``,
``$npscalar``, ``$enum``, ``$ref`` (code by reference), ``$code`` and ``$object`` (payloads in
the manifest's ``payloads`` table, marked with their kind, size and digest).

Decoding never imports a module and never unpickles: references stay lazy
(:class:`~specpack._carry.CodeRef`, :class:`EnumRef`) until ``make()`` needs them.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import json
import math
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._carry import CodeRef
from ._values import Blob, EnumRef
from .errors import PackFormatError

if TYPE_CHECKING:
    from .pack import SpecPack

__all__ = ["EnumRef", "content_bytes", "decode_value", "encode_value", "from_json", "to_json"]

FORMAT = "specpack/1"
_SAFE_INT = 2**53
MAX_DEPTH = 100
_NUMERIC_KINDS = frozenset("biuf")


# -- encoding ---------------------------------------------------------------------------------


def _float(x: float) -> Any:
    if math.isfinite(x):
        return x
    return {"$float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def _canon(node: Any) -> str:
    return json.dumps(node, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def encode_value(value: Any, payloads: dict[str, Any] | None = None, _depth: int = 0) -> Any:
    """The typed-JSON form of a lowered value; payloads are collected into ``payloads``."""
    if _depth > MAX_DEPTH:
        raise PackFormatError(f"value nested more than {MAX_DEPTH} levels deep")
    d = _depth + 1
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        return value if -_SAFE_INT <= value <= _SAFE_INT else {"$int": str(value)}
    if t is float:
        return _float(value)
    if t is bytes:
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if t is complex:
        return {"$complex": [_float(value.real), _float(value.imag)]}
    if t is list:
        return [encode_value(v, payloads, d) for v in value]
    if t is tuple:
        return {"$tuple": [encode_value(v, payloads, d) for v in value]}
    if t is set or t is frozenset:
        items = sorted((encode_value(v, payloads, d) for v in value), key=_canon)
        return {"$set" if t is set else "$frozenset": items}
    if t is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: encode_value(v, payloads, d) for k, v in value.items()}
        return {"$dict": [[encode_value(k, payloads, d), encode_value(v, payloads, d)]
                          for k, v in value.items()]}
    if t is np.ndarray:
        return {"$ndarray": _encode_array(value)}
    if isinstance(value, np.generic):
        arr = np.asarray(value)
        enc = _encode_array(arr.reshape(1))
        return {"$npscalar": {"dtype": enc["dtype"], **({"value": enc["values"][0]}
                              if "values" in enc else {"base64": enc["base64"]})}}
    if t is CodeRef:
        if value.payload is None:
            return {"$ref": value.name}
        if payloads is not None:
            payloads[value.digest] = _payload_entry("code", value.name, value.payload, value.python)
        return {"$code": value.digest}
    if t is Blob:
        if payloads is not None:
            payloads[value.digest] = _payload_entry("object", value.type_name, value.payload,
                                                    value.python)
        return {"$object": value.digest}
    if t is EnumRef:
        return {"$enum": f"{value.module}:{value.qualname}", "name": value.member}
    if isinstance(value, enum.Enum):
        return {"$enum": f"{type(value).__module__}:{type(value).__qualname__}",
                "name": value.name}
    raise PackFormatError(f"cannot encode a {t.__module__}.{t.__qualname__} value in a manifest")


def _encode_array(arr: np.ndarray) -> dict[str, Any]:
    dtype = arr.dtype
    out: dict[str, Any] = {"dtype": np.lib.format.dtype_to_descr(dtype), "shape": list(arr.shape)}
    if dtype.kind in _NUMERIC_KINDS and dtype.fields is None and dtype.itemsize <= 8:
        flat = [_float(x) if isinstance(x, float) else x for x in arr.ravel(order="C").tolist()]
        out["values"] = flat
    else:
        out["base64"] = base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii")
    return out


def _payload_entry(kind: str, name: str, data: bytes, python: str | None) -> dict[str, Any]:
    return {
        "kind": kind,
        "name": name,
        "python": python,
        "size": len(data),
        "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
        "format": "cloudpickle",
        "note": "executes code when loaded" if kind == "code" else "unpickled when loaded",
        "data": base64.b64encode(data).decode("ascii"),
    }


# -- decoding ---------------------------------------------------------------------------------


class _Decoder:
    def __init__(self, payloads: dict[str, Any], source: str) -> None:
        self.payloads = payloads
        self.source = source
        self.used: dict[str, dict[str, Any]] = {}

    def fail(self, where: str, why: str) -> PackFormatError:
        return PackFormatError(f"{self.source}: {where}: {why}")

    def value(self, node: Any, where: str, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(where, f"nested more than {MAX_DEPTH} levels deep")
        d = depth + 1
        t = type(node)
        if node is None or t is bool or t is str or t is int:
            return node
        if t is float:
            return node
        if t is list:
            return [self.value(v, f"{where}[{i}]", d) for i, v in enumerate(node)]
        if t is not dict:
            raise self.fail(where, f"unexpected JSON {t.__name__}")
        tags = [k for k in node if k.startswith("$")]
        if not tags:
            return {k: self.value(v, f"{where}.{k}", d) for k, v in node.items()}
        if len(tags) != 1:
            raise self.fail(where, f"more than one type tag ({', '.join(tags)})")
        tag = tags[0]
        body = node[tag]
        extra = set(node) - {tag} - ({"name"} if tag == "$enum" else set())
        if extra:
            raise self.fail(where, f"unexpected keys {sorted(extra)} beside {tag}")
        return self.tagged(tag, body, node, where, d)

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
        if type(x) in (int, float):
            return float(x)
        raise self.fail(where, f"expected a number, got {type(x).__name__}")

    def tagged(self, tag: str, body: Any, node: dict[str, Any], where: str, d: int) -> Any:
        if tag == "$int":
            s = self._str(body, where, tag)
            if len(s) > 5000:
                raise self.fail(where, "$int has more than 5000 digits")
            try:
                return int(s)
            except ValueError:
                raise self.fail(where, f"$int {s[:40]!r} is not an integer") from None
        if tag == "$float":
            return self._num(node, where)
        if tag == "$bytes":
            return self._b64(self._str(body, where, tag), where)
        if tag == "$complex":
            items = self._list(body, where, tag)
            if len(items) != 2:
                raise self.fail(where, "$complex must hold [real, imag]")
            return complex(self._num(items[0], where), self._num(items[1], where))
        if tag == "$tuple":
            return tuple(self.value(v, f"{where}[{i}]", d)
                         for i, v in enumerate(self._list(body, where, tag)))
        if tag in ("$set", "$frozenset"):
            items = [self.value(v, f"{where}[{i}]", d)
                     for i, v in enumerate(self._list(body, where, tag))]
            try:
                return set(items) if tag == "$set" else frozenset(items)
            except TypeError as e:
                raise self.fail(where, f"{tag} item is not hashable ({e})") from None
        if tag == "$dict":
            out = {}
            for i, pair in enumerate(self._list(body, where, tag)):
                if type(pair) is not list or len(pair) != 2:
                    raise self.fail(f"{where}[{i}]", "$dict items must be [key, value] pairs")
                k = self.value(pair[0], f"{where}[{i}].key", d)
                try:
                    out[k] = self.value(pair[1], f"{where}[{k!r}]", d)
                except TypeError as e:
                    raise self.fail(where, f"$dict key is not hashable ({e})") from None
            return out
        if tag == "$ndarray":
            return self.array(body, where, scalar=False)
        if tag == "$npscalar":
            return self.array(body, where, scalar=True)
        if tag == "$enum":
            ref = self._str(body, where, tag)
            name = node.get("name")
            mod, sep, qual = ref.partition(":")
            if not sep or not mod or not qual or type(name) is not str:
                raise self.fail(where, "$enum must be 'module:Class' with a 'name' string")
            return EnumRef(mod, qual, name)
        if tag == "$ref":
            ref = self._str(body, where, tag)
            mod, sep, qual = ref.partition(":")
            if not sep or not mod or not qual:
                raise self.fail(where, f"$ref {ref!r} is not of the form 'module:qualname'")
            return CodeRef(mod, qual)
        if tag in ("$code", "$object"):
            digest = self._str(body, where, tag)
            entry = self.payloads.get(digest)
            if type(entry) is not dict:
                raise self.fail(where, f"{tag} {digest!r} is not in the payloads table")
            kind = "code" if tag == "$code" else "object"
            if entry.get("kind") != kind:
                raise self.fail(where, f"payload {digest} is of kind {entry.get('kind')!r}, "
                                f"expected {kind!r}")
            data = self._b64(self._str(entry.get("data"), f"payloads[{digest}].data", "data"),
                             f"payloads[{digest}]")
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
                mod, _, qual = name.partition(":")
                return CodeRef(mod or "__main__", qual or name, data, python)
            return Blob(data, name, python or "unknown")
        raise self.fail(where, f"unknown type tag {tag!r}")

    def _b64(self, s: str, where: str) -> bytes:
        try:
            return base64.b64decode(s.encode("ascii"), validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise self.fail(where, "invalid base64 data") from None

    def array(self, body: Any, where: str, scalar: bool) -> Any:
        if type(body) is not dict:
            raise self.fail(where, "array body must be an object")
        descr = body.get("dtype")
        try:
            dtype = np.lib.format.descr_to_dtype(descr)
        except Exception:  # noqa: BLE001 - any bad descr is a format error
            raise self.fail(where, f"invalid dtype {descr!r}") from None
        if dtype.hasobject:
            raise self.fail(where, "object arrays are not allowed in a manifest")
        if scalar:
            shape: list[int] = [1]
            values = [body["value"]] if "value" in body else None
        else:
            shape = body.get("shape")  # type: ignore[assignment]
            if type(shape) is not list or not all(type(n) is int and 0 <= n for n in shape):
                raise self.fail(where, f"invalid shape {shape!r}")
            values = body.get("values")
        count = 1
        for n in shape:
            count *= n
            if count > 50_000_000:
                raise self.fail(where, "array too large")
        try:
            if values is not None:
                if type(values) is not list or len(values) != count:
                    raise self.fail(where, f"expected {count} values")
                conv = [self._num(v, where) if type(v) is dict else v for v in values]
                if not all(type(v) in (int, float, bool) for v in conv):
                    raise self.fail(where, "array values must be numbers")
                arr = np.array(conv, dtype=dtype).reshape(shape)
            else:
                raw = self._b64(self._str(body.get("base64"), where, "base64"), where)
                if len(raw) != count * dtype.itemsize:
                    raise self.fail(where, "array data has the wrong length")
                arr = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        except PackFormatError:
            raise
        except (ValueError, TypeError, OverflowError) as e:
            raise self.fail(where, f"invalid array ({e})") from None
        if scalar:
            return arr.reshape(())[()]
        arr.flags.writeable = False
        return arr


# -- manifest ---------------------------------------------------------------------------------


def _content(pack: SpecPack, payloads: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "backend": pack.backend,
        "id": pack.id,
        "entry_point": encode_value(pack.entry_point, payloads),
        "kwargs": encode_value(pack._kwargs, payloads),
        "spec": encode_value(dict(pack.spec), payloads),
        "layers": [
            {"class": encode_value(layer.cls, payloads),
             "kwargs": encode_value(layer._kwargs, payloads)}
            for layer in pack.layers
        ],
        "render_wrappers": "make" if pack.auto_render else None,
    }


def content_bytes(pack: SpecPack) -> bytes:
    """Canonical bytes of what shapes the env: the fingerprint's input."""
    return _canon(_content(pack, None)).encode("ascii")


def manifest(pack: SpecPack) -> dict[str, Any]:
    """The manifest as a JSON-able dict (format, content, versions, notes, payloads)."""
    payloads: dict[str, Any] = {}
    body = _content(pack, payloads)
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
    return json.dumps(manifest(pack), indent=indent, allow_nan=False, ensure_ascii=False)


_REQUIRED = {
    "format": str, "backend": str, "entry_point": dict, "kwargs": dict, "spec": dict,
    "layers": list, "versions": dict, "payloads": dict,
}


def parse_manifest(text: str | bytes, source: str = "<manifest>") -> dict[str, Any]:
    """Parse and shape-check manifest text; raises :class:`PackFormatError`."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise PackFormatError(f"{source}: not UTF-8 text ({e})") from None
    if not isinstance(text, str):
        raise PackFormatError(f"{source}: expected text, got {type(text).__name__}")
    if not text.strip():
        raise PackFormatError(f"{source}: empty manifest")
    limit = sys.getrecursionlimit()
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise PackFormatError(f"{source}: JSON nested too deeply") from None
    except (json.JSONDecodeError, ValueError) as e:
        raise PackFormatError(f"{source}: invalid JSON ({e})") from None
    finally:
        sys.setrecursionlimit(limit)
    if type(data) is not dict:
        raise PackFormatError(f"{source}: the manifest must be a JSON object, got "
                              f"{type(data).__name__}")
    fmt = data.get("format")
    if type(fmt) is str and fmt.startswith("specpack/") and fmt != FORMAT:
        raise PackFormatError(f"{source}: unknown format version {fmt!r}; this specpack reads "
                              f"{FORMAT!r}: upgrade specpack")
    for key, typ in _REQUIRED.items():
        if key not in data:
            raise PackFormatError(f"{source}: missing field {key!r}")
        if type(data[key]) is not typ:
            raise PackFormatError(f"{source}: field {key!r} must be a {typ.__name__}, got "
                                  f"{type(data[key]).__name__}")
    if fmt != FORMAT:
        raise PackFormatError(f"{source}: format {fmt!r} is not a specpack manifest")
    if data["backend"] not in ("gymnasium", "gym"):
        raise PackFormatError(f"{source}: unknown backend {data['backend']!r}")
    if data.get("id") is not None and type(data.get("id")) is not str:
        raise PackFormatError(f"{source}: field 'id' must be a string or null")
    if data.get("render_wrappers") not in (None, "make"):
        raise PackFormatError(f"{source}: field 'render_wrappers' must be 'make' or null")
    if not all(type(k) is str and type(v) is str for k, v in data["versions"].items()):
        raise PackFormatError(f"{source}: field 'versions' must map strings to strings")
    notes = data.get("notes", [])
    if type(notes) is not list or not all(type(n) is str for n in notes):
        raise PackFormatError(f"{source}: field 'notes' must be a list of strings")
    return data


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def code_payloads(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The payload entries of a parsed manifest (what loading it would unpickle)."""
    return [dict(v, digest=k) for k, v in data["payloads"].items() if type(v) is dict]


def entry_modules(data: dict[str, Any]) -> list[str]:
    """Every module a parsed manifest names by reference (entry point, wrappers, kwargs)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if type(node) is dict:
            for k, v in node.items():
                if k in ("$ref", "$enum") and type(v) is str:
                    found.append(v.partition(":")[0])
                else:
                    walk(v)
        elif type(node) is list:
            for v in node:
                walk(v)

    for key in ("entry_point", "kwargs", "spec", "layers"):
        walk(data.get(key))
    return list(dict.fromkeys(found))


def from_manifest(data: dict[str, Any], source: str = "<manifest>") -> SpecPack:
    """Build a pack from a parsed manifest (no import, no unpickling)."""
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
            raise PackFormatError(f"{source}: {where} must be an object with 'class' and 'kwargs'")
        cls = dec.value(item["class"], f"{where}.class")
        lkw = dec.value(item["kwargs"], f"{where}.kwargs")
        if type(cls) is not CodeRef:
            raise PackFormatError(f"{source}: {where}.class must be a $ref or $code")
        if type(lkw) is not dict or not all(type(k) is str for k in lkw):
            raise PackFormatError(f"{source}: {where}.kwargs must be an object with string keys")
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


def from_json(text: str | bytes, *, allow: Iterable[str] | None = None,
              source: str = "<manifest>") -> SpecPack:
    """Read a manifest; ``allow`` restricts the modules it may name by reference."""
    data = parse_manifest(text, source)
    if allow is not None:
        check_allowed(data, allow, source)
    return from_manifest(data, source)


def check_allowed(data: dict[str, Any], allow: Iterable[str], source: str) -> None:
    """Refuse (before any import) a manifest naming modules outside ``allow``."""
    from .errors import UntrustedPackError

    prefixes = tuple(allow)
    builtin = ("gymnasium", "gym", "numpy", "specpack", "builtins")
    for mod in entry_modules(data):
        ok = any(mod == p or mod.startswith(p + ".") for p in (*prefixes, *builtin))
        if not ok:
            raise UntrustedPackError(
                f"{source}: names the module {mod!r}, which is not in allow={list(prefixes)}; "
                f"add {mod.partition('.')[0]!r} to allow if you trust it"
            )
