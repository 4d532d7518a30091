"""Encoding lowered values as typed JSON (see :mod:`.tags` for the grammar)."""

from __future__ import annotations

import base64
import enum
import hashlib
import json
import math
from typing import Any

import numpy as np

from ..carry.code import CodeRef
from ..carry.values import Blob, EnumRef
from ..errors import PackFormatError
from .tags import MAX_DEPTH, SAFE_INT, VALUE_KINDS

__all__ = ["Encoder", "canonical_json", "encode", "payload_entry"]

_SAFE_INT = SAFE_INT
_VALUE_KINDS = VALUE_KINDS


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


def canonical_json(node: Any) -> str:
    return json.dumps(node, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


class Encoder:
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
            members.sort(key=canonical_json)
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
                pairs.sort(key=lambda p: canonical_json(p[0]))
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
            "capture the pack again so the value is carried (specpack.capture lowers it)"
        )


def encode(value: Any, payloads: dict[str, Any] | None = None, _depth: int = 0, *,
                 canonical: bool = False) -> Any:
    """The typed-JSON form of a lowered value; payloads are collected into ``payloads``.

    ``canonical=True`` orders ``$dict`` pairs by key, so that equal dicts encode equally
    (used for the fingerprint).

    Example::

        >>> encode_value((1, {2: b"x"}))
        {'$tuple': [1, {'$dict': [[2, {'$bytes': 'eA=='}]]}]}
    """
    try:
        return Encoder(payloads, canonical).value(value, _depth)
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


