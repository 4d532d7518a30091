"""Decoding ``$ndarray`` and ``$npscalar`` bodies exactly (for :class:`.decode.Decoder`):
a value the dtype cannot hold exactly (``300`` in ``|i1``, ``0.1`` in ``<f4``) is refused."""

from __future__ import annotations

import json
import math
from typing import Any, Protocol

import numpy as np

from .._errors import PackFormatError
from .encode import _descr
from .tags import MAX_ARRAY_BYTES, MAX_ARRAY_ITEMS, VALUE_KINDS
from .walk import Path

__all__ = ["decode_array"]


class Decoder(Protocol):
    """What decoding an array takes from :class:`.decode.Decoder` (no import of it: a circle)."""

    def fail(self, at: Path, why: str) -> PackFormatError: ...

    def number(self, x: Any, at: Path) -> float: ...

    def bigint(self, s: str, at: Path) -> int: ...

    def b64(self, s: str, at: Path) -> bytes: ...


#: dtype kind -> the plain value types whose lists are checked vectorised.
_FAST: dict[str, set[type]] = {"b": {bool}, "i": {int}, "u": {int}, "f": {float}}


def decode_array(dec: Decoder, body: dict[str, Any], at: Path, scalar: bool) -> Any:
    """An ``$ndarray`` (read-only) or ``$npscalar`` body, exactly."""
    allowed = {"dtype", "value", "base64"} if scalar else {"dtype", "shape", "values", "base64"}
    if set(body) - allowed:
        raise dec.fail(at, f"unexpected keys {sorted(set(body) - allowed)[:5]}")
    dtype = _dtype(dec, body.get("dtype"), at)
    if scalar:
        shape: list[int] = [1]
        values = [body["value"]] if "value" in body else None
    else:
        shape = body.get("shape")  # type: ignore[assignment]
        if type(shape) is not list or len(shape) > 64 or not all(
                type(n) is int and 0 <= n for n in shape):
            raise dec.fail(at, f"invalid shape {str(shape)[:80]}")
        values = body.get("values")
    if (values is None) == ("base64" not in body):
        raise dec.fail(at, "an array holds exactly one of 'values' or 'base64'")
    count = 1
    for n in shape:
        count *= n
        if count > MAX_ARRAY_ITEMS:
            break
    if count > MAX_ARRAY_ITEMS or count * dtype.itemsize > MAX_ARRAY_BYTES:
        raise dec.fail(at, "array is too large for a manifest")
    try:
        if values is not None:
            arr = _from_values(dec, values, dtype, count, at)
        else:
            raw = body.get("base64")
            if type(raw) is not str:
                raise dec.fail(at, "base64 must hold a string")
            data = dec.b64(raw, at)
            if len(data) != count * dtype.itemsize:
                raise dec.fail(at, f"array data has {len(data)} bytes, expected "
                               f"{count * dtype.itemsize}")
            arr = np.frombuffer(data, dtype=dtype).copy()
        arr = arr.reshape(shape)
    except PackFormatError:
        raise
    except (ValueError, TypeError, OverflowError, FloatingPointError) as e:
        raise dec.fail(at, f"invalid array ({e})") from None
    if scalar:
        return arr.reshape(())[()]
    arr.flags.writeable = False
    return arr


def _dtype(dec: Decoder, descr: Any, at: Path) -> np.dtype[Any]:
    if type(descr) is not str and type(descr) is not list:
        raise dec.fail(at, "an array needs a 'dtype' (a numpy descr such as '<f4')")
    try:
        dtype = np.lib.format.descr_to_dtype(descr)  # type: ignore[arg-type]
        # numpy accepts some odd descrs whose canonical form it cannot read back: refused, so
        # that whatever is read here is written and read again the same way
        ok = np.lib.format.descr_to_dtype(json.loads(json.dumps(_descr(dtype)))) == dtype
    except Exception:  # noqa: BLE001 - any bad descr is a format error
        ok = False
    if not ok:
        raise dec.fail(at, f"invalid dtype {str(descr)[:80]!r}")
    if dtype.hasobject:
        raise dec.fail(at, "object arrays are not allowed in a manifest")
    return dtype


def _from_values(dec: Decoder, values: Any, dtype: np.dtype[Any], count: int, at: Path) -> Any:
    """A flat array of ``values``, each of which the dtype must hold exactly."""
    if dtype.kind not in VALUE_KINDS or dtype.fields is not None:
        raise dec.fail(at, f"dtype {dtype.str} must be written as base64")
    if type(values) is not list or len(values) != count:
        raise dec.fail(at, f"expected a list of {count} values")
    kind = dtype.kind
    if set(map(type, values)) <= _FAST.get(kind, set()):
        return _fast_values(dec, values, dtype, at)
    conv = [_array_item(dec, v, kind, ((at, "values"), i)) for i, v in enumerate(values)]
    with np.errstate(over="raise", invalid="raise"):
        arr = np.array(conv, dtype=dtype)
    for i, (want, got) in enumerate(zip(conv, arr.tolist())):
        if got != want or (type(want) is float and math.copysign(1.0, want) !=
                           math.copysign(1.0, got)):
            if want != want and got != got:  # nan stays nan
                continue
            raise dec.fail(((at, "values"), i), f"{str(want)[:40]} does not fit dtype "
                           f"{dtype.str} exactly (it would read as {str(got)[:40]})")
    return arr


def _fast_values(dec: Decoder, values: list[Any], dtype: np.dtype[Any], at: Path) -> Any:
    """:func:`_from_values` of bools, ints or floats only, vectorised: numpy refuses ints
    out of range (``OverflowError``), floats are compared back bit for bit (signs of zero)."""
    if dtype.kind != "f":
        return np.array(values, dtype=dtype)
    src = np.array(values, dtype=np.float64)
    if not np.isfinite(src).all():
        raise dec.fail(at, "nan and inf are written {\"$float\": \"nan\"} etc.")
    with np.errstate(over="raise", invalid="raise"):
        arr = src.astype(dtype)
    back = arr.astype(np.float64)
    bad = np.flatnonzero((back != src) | (np.signbit(back) != np.signbit(src)))
    if bad.size:
        i = int(bad[0])
        raise dec.fail(((at, "values"), i), f"{values[i]!r} does not fit dtype {dtype.str} "
                       f"exactly (it would read as {float(back[i])!r})")
    return arr


def _array_item(dec: Decoder, x: Any, kind: str, at: Path) -> Any:
    t = type(x)
    if kind == "b":
        if t is bool:
            return x
        raise dec.fail(at, f"a bool array holds true/false, got {t.__name__}")
    if t is int:
        return x
    if t is dict and len(x) == 1 and "$int" in x and type(x["$int"]) is str:
        return dec.bigint(x["$int"], at)
    if kind == "f" and (t is float or t is dict):
        return dec.number(x, at)
    raise dec.fail(at, f"array values of dtype kind {kind!r} must be "
                   f"{'numbers' if kind == 'f' else 'integers'}, got {t.__name__}")
