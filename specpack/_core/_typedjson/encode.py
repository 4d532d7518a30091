"""Encoding lowered values as typed JSON (see :mod:`.tags` for the grammar)."""

from __future__ import annotations

import base64
import enum
import hashlib
import json
import math
from typing import Any

import numpy as np

from .._carry.carried import Blob, EnumRef
from .._carry.ref import CodeRef
from .._carry.tree import MAX_INT_BITS
from .._errors import PackFormatError
from .tags import MAX_DECIMAL_DIGITS, MAX_DEPTH, SAFE_INT, VALUE_KINDS, decimal_text

__all__ = ["Encoder", "canonical_json", "encode", "payload_entry"]

#: More bits than this always means more than MAX_DECIMAL_DIGITS decimal digits.
_DECIMAL_BITS = int(MAX_DECIMAL_DIGITS / 0.30103) + 2


def _float(x: float) -> Any:
    if math.isfinite(x):
        return x
    return {"$float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def _int(x: int) -> Any:
    """A plain number within 2**53; else ``$int``: decimal up to 4,300 digits (the grammar's
    limit, not this interpreter's), else hex."""
    if -SAFE_INT <= x <= SAFE_INT:
        return x
    bits = x.bit_length()
    if bits > MAX_INT_BITS:  # what no reader reads is not written
        raise PackFormatError(f"an int of {bits} bits cannot be written in a manifest (at "
                              f"most {MAX_INT_BITS} bits); pass it another way (a file path, "
                              "a seed)")
    if bits <= _DECIMAL_BITS:
        text = decimal_text(x)
        if len(text) - (text[0] == "-") <= MAX_DECIMAL_DIGITS:
            return {"$int": text}
    return {"$int": hex(x)}


def canonical_json(node: Any) -> str:
    """The canonical text of a typed-JSON node (sorted keys, no spaces): what is hashed."""
    return json.dumps(node, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


class Encoder:
    """Lowered value -> typed JSON node; collects payload entries into ``payloads``."""

    def __init__(self, payloads: dict[str, Any] | None, canonical: bool) -> None:
        self.payloads = payloads
        self.canonical = canonical

    def value(self, value: Any, depth: int) -> Any:
        """The typed-JSON node of a lowered value (``depth``: its nesting so far)."""
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
        if t is list:
            return [self.value(v, d) for v in value]
        if t is dict:
            return self._dict(value, d)
        if t is bytes:
            return {"$bytes": base64.b64encode(value).decode("ascii")}
        if t is complex:
            return {"$complex": [_float(value.real), _float(value.imag)]}
        if t is tuple:
            return {"$tuple": [self.value(v, d) for v in value]}
        if t is set or t is frozenset:
            members = sorted((self.value(v, d) for v in value), key=canonical_json)
            return {"$set" if t is set else "$frozenset": members}
        if t is np.ndarray:
            return {"$ndarray": _encode_array(value)}
        if isinstance(value, np.generic):
            body = _encode_array(np.asarray(value).reshape(1))
            del body["shape"]
            if "values" in body:
                body["value"] = body.pop("values")[0]
            return {"$npscalar": body}
        if t is CodeRef:
            if value.payload is None:
                if value.bound is not None:  # a functools.partial of the named function
                    args, keywords = value.bound
                    return {"$ref": value.name, "args": [self.value(v, d) for v in args],
                            "keywords": self._dict(keywords, d)}
                if value.registered is not None:
                    return {"$ref": f"{value.module}:{value.qualname}",
                            "registered": value.registered}
                return {"$ref": value.name}
            digest = value.digest
            assert digest is not None
            if self.payloads is not None:
                self.payloads[digest] = payload_entry("code", value.name, value.payload,
                                                      value.python)
            return {"$code": digest}
        if t is Blob:
            if self.payloads is not None:
                self.payloads[value.digest] = payload_entry("object", value.type_name,
                                                            value.payload, value.python)
            return {"$object": value.digest}
        if t is EnumRef:
            return {"$enum": f"{value.module}:{value.qualname}", "name": value.member}
        if isinstance(value, enum.Enum) and isinstance(value.name, str):
            return {"$enum": f"{t.__module__}:{t.__qualname__}", "name": value.name}
        raise PackFormatError(
            f"cannot encode a {t.__module__}.{t.__qualname__} value in a manifest; "
            "capture the pack again so the value is carried (specpack.capture lowers it)")

    def _dict(self, value: dict[Any, Any], d: int) -> Any:
        """A plain object when every key is a str not starting with ``$``, else ``$dict``."""
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: self.value(v, d) for k, v in value.items()}
        pairs = [[self.value(k, d), self.value(v, d)] for k, v in value.items()]
        if self.canonical:
            pairs.sort(key=lambda p: canonical_json(p[0]))
        return {"$dict": pairs}


def encode(value: Any, payloads: dict[str, Any] | None = None, *,
           canonical: bool = False) -> Any:
    """The typed-JSON form of a lowered value (``encode((1, {2: b"x"}))`` is ``{'$tuple': [1,
    {'$dict': [[2, {'$bytes': 'eA=='}]]}]}``); ``payloads`` (None: left out) collects the
    payload-table entries; ``canonical`` orders ``$dict`` pairs by key (the fingerprint)."""
    try:
        return Encoder(payloads, canonical).value(value, 0)
    except RecursionError:
        raise PackFormatError("value nested too deeply to encode") from None


def _encode_array(arr: np.ndarray) -> dict[str, Any]:
    dtype = arr.dtype
    if dtype.hasobject:
        raise PackFormatError("object arrays cannot be written in a manifest (they hold "
                              "pointers): capture lowers them to payloads")
    out: dict[str, Any] = {"dtype": _descr(dtype), "shape": list(arr.shape)}
    if dtype.kind in VALUE_KINDS and dtype.fields is None and dtype.itemsize <= 8:
        items = arr.ravel(order="C").tolist()
        if not _all_plain(arr):
            items = [_float(x) if type(x) is float else (_int(x) if type(x) is int else x)
                     for x in items]
        out["values"] = items
    else:
        out["base64"] = base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii")
    return out


def _all_plain(arr: np.ndarray) -> bool:
    """Whether every item of a bool/int/float array is a plain JSON number (finite, ints
    within 2**53), so that no item needs a look of its own."""
    if arr.size == 0 or arr.dtype.kind == "b":
        return True
    if arr.dtype.kind == "f":
        return bool(np.isfinite(arr).all())
    return bool(-SAFE_INT <= int(arr.min()) and int(arr.max()) <= SAFE_INT)


def _descr(dtype: np.dtype) -> Any:
    """numpy's array-protocol descr; not ``dtype_to_descr``, which warns about the metadata
    numpy 1.x attaches to unpickled datetime dtypes and gives non-JSON for non-legacy dtypes."""
    if dtype.names is not None:
        return dtype.descr
    if not getattr(type(dtype), "_legacy", True):
        raise PackFormatError(f"the numpy dtype {dtype} cannot be written in a manifest")
    return dtype.str


def payload_entry(kind: str, name: str, data: bytes, python: str | None) -> dict[str, Any]:
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
