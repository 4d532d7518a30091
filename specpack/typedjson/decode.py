"""Decoding typed JSON into lowered values, without importing or unpickling anything.

References stay lazy (:class:`~specpack.carry.CodeRef`, :class:`~specpack.carry.EnumRef`) and
payloads stay bytes until ``make()`` needs them. Every malformed input raises
:class:`~specpack.errors.PackFormatError` naming the source and the place.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

import numpy as np

from .._text import printable
from ..carry.code import CodeRef
from ..carry.values import Blob, EnumRef
from ..errors import PackFormatError
from .encode import _descr
from .tags import MAX_ARRAY_BYTES, MAX_ARRAY_ITEMS, MAX_DEPTH, MAX_INT_CHARS, VALUE_KINDS

__all__ = ["Decoder", "decode"]

_MAX_INT_CHARS = MAX_INT_CHARS
_MAX_ARRAY_ITEMS = MAX_ARRAY_ITEMS
_MAX_ARRAY_BYTES = MAX_ARRAY_BYTES
_VALUE_KINDS = VALUE_KINDS


def _dotted(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


class Decoder:
    """Typed JSON node -> lowered value; payload references are resolved in ``payloads``."""

    def __init__(
        self, payloads: dict[str, Any], source: str, allow: tuple[str, ...] | None = None
    ) -> None:
        self.payloads = payloads
        self.source = source
        self.allow = allow
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
            return EnumRef(mod, qual, name, allow=self.allow)
        if tag == "$ref":
            ref = self._str(body, where, tag)
            mod, sep, qual = ref.partition(":")
            if not sep or not _dotted(mod) or not _dotted(qual):
                raise self.fail(where, f"$ref {ref[:80]!r} is not of the form "
                                "'package.module:QualName'")
            return CodeRef(mod, qual, allow=self.allow)
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


def decode(node: Any, payloads: dict[str, Any] | None = None,
                 source: str = "<manifest>") -> Any:
    """The lowered value of a typed-JSON node (inverse of :func:`encode_value`).

    Nothing is imported or unpickled: code stays a lazy :class:`CodeRef`, enum members a lazy
    :class:`EnumRef`, payloads bytes.
    """
    try:
        return Decoder(payloads or {}, source).value(node, "value")
    except RecursionError:
        raise PackFormatError(f"{source}: value nested too deeply") from None


