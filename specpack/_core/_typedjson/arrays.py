"""Decoding ``$ndarray`` and ``$npscalar`` bodies exactly (a part of the :class:`Decoder`).

A dtype is read from numpy's array-protocol descr and must be one numpy writes back the same
way; ``values`` must each be held exactly by the dtype (``1.5`` or ``300`` in an ``|i1`` array,
``1e300`` or ``0.1`` in a ``<f4`` array are refused, naming the item); ``base64`` data must
have the size the shape and itemsize say. Lists of one plain type are checked vectorised.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from .._errors import PackFormatError
from .encode import _descr
from .tags import MAX_ARRAY_BYTES, MAX_ARRAY_ITEMS, VALUE_KINDS, Tag
from .walk import Path

__all__ = ["ArrayDecoding"]

#: dtype kind -> the plain value types :meth:`ArrayDecoding._fast_values` reads vectorised.
_FAST: dict[str, set[type]] = {"b": {bool}, "i": {int}, "u": {int}, "f": {float}}


class ArrayDecoding:
    """The array half of :class:`specpack._core._typedjson.decode.Decoder` (which provides the
    error, number and base64 readers declared here)."""

    def fail(self, at: Path, why: str) -> PackFormatError:
        """The error for a bad node at ``at`` (the decoder's)."""
        raise NotImplementedError

    def bigint(self, s: str, at: Path) -> int:
        """A ``$int`` body (the decoder's)."""
        raise NotImplementedError

    def _num(self, x: Any, at: Path) -> float:
        raise NotImplementedError

    def _b64(self, s: str, at: Path) -> bytes:
        raise NotImplementedError

    def _array(self, tag: Tag, body: dict[str, Any], node: Any, at: Path, d: int) -> Any:
        return self.array(body, at, scalar=tag.kind == "scalar")

    def array(self, body: dict[str, Any], at: Path, scalar: bool) -> Any:
        """Decode an ``$ndarray`` (read-only result) or ``$npscalar`` body, exactly."""
        allowed = {"dtype", "value", "base64"} if scalar else {"dtype", "shape", "values",
                                                                 "base64"}
        if set(body) - allowed:
            raise self.fail(at, f"unexpected keys {sorted(set(body) - allowed)[:5]}")
        dtype = self._dtype(body.get("dtype"), at)
        if scalar:
            shape: list[int] = [1]
            values = [body["value"]] if "value" in body else None
        else:
            shape = body.get("shape")  # type: ignore[assignment]
            if type(shape) is not list or len(shape) > 64 or not all(
                    type(n) is int and 0 <= n for n in shape):
                raise self.fail(at, f"invalid shape {str(shape)[:80]}")
            values = body.get("values")
        if (values is None) == ("base64" not in body):
            raise self.fail(at, "an array holds exactly one of 'values' or 'base64'")
        count = 1
        for n in shape:
            count *= n
            if count > MAX_ARRAY_ITEMS:
                break
        if count > MAX_ARRAY_ITEMS or count * dtype.itemsize > MAX_ARRAY_BYTES:
            raise self.fail(at, "array is too large for a manifest")
        try:
            if values is not None:
                arr = self._from_values(values, dtype, count, at)
            else:
                raw = body.get("base64")
                if type(raw) is not str:
                    raise self.fail(at, "base64 must hold a string")
                data = self._b64(raw, at)
                if len(data) != count * dtype.itemsize:
                    raise self.fail(at, f"array data has {len(data)} bytes, expected "
                                    f"{count * dtype.itemsize}")
                arr = np.frombuffer(data, dtype=dtype).copy()
            arr = arr.reshape(shape)
        except PackFormatError:
            raise
        except (ValueError, TypeError, OverflowError, FloatingPointError) as e:
            raise self.fail(at, f"invalid array ({e})") from None
        if scalar:
            return arr.reshape(())[()]
        arr.flags.writeable = False
        return arr

    def _dtype(self, descr: Any, at: Path) -> np.dtype[Any]:
        if type(descr) is not str and type(descr) is not list:
            raise self.fail(at, "an array needs a 'dtype' (a numpy descr such as '<f4')")
        try:
            dtype = np.lib.format.descr_to_dtype(descr)  # type: ignore[arg-type]
            # numpy accepts some odd descrs whose canonical form it cannot read back; refuse
            # those, so that whatever is read here is written and read again the same way
            ok = np.lib.format.descr_to_dtype(json.loads(json.dumps(_descr(dtype)))) == dtype
        except Exception:  # noqa: BLE001 - any bad descr is a format error
            ok = False
        if not ok:
            raise self.fail(at, f"invalid dtype {str(descr)[:80]!r}")
        if dtype.hasobject:
            raise self.fail(at, "object arrays are not allowed in a manifest")
        return dtype

    def _from_values(self, values: Any, dtype: np.dtype[Any], count: int, at: Path) -> Any:
        """A flat array of ``values``, each of which the dtype must hold exactly."""
        if dtype.kind not in VALUE_KINDS or dtype.fields is not None:
            raise self.fail(at, f"dtype {dtype.str} must be written as base64")
        if type(values) is not list or len(values) != count:
            raise self.fail(at, f"expected a list of {count} values")
        kind = dtype.kind
        types = set(map(type, values))
        if types <= _FAST.get(kind, set()):
            return self._fast_values(values, dtype, at)
        conv = [self._array_item(v, kind, ((at, "values"), i)) for i, v in enumerate(values)]
        with np.errstate(over="raise", invalid="raise"):
            arr = np.array(conv, dtype=dtype)
        back = arr.tolist()
        for i, (want, got) in enumerate(zip(conv, back)):
            if got != want or (type(want) is float and math.copysign(1.0, want) !=
                               math.copysign(1.0, got)):
                if want != want and got != got:  # nan stays nan
                    continue
                raise self.fail(((at, "values"), i), f"{str(want)[:40]} does not fit dtype "
                                f"{dtype.str} "
                                f"exactly (it would read as {str(got)[:40]})")
        return arr

    def _fast_values(self, values: list[Any], dtype: np.dtype[Any], at: Path) -> Any:
        """:meth:`_from_values` for lists of one plain type (bools, ints or floats), vectorised.

        numpy refuses ints out of an int dtype's range (``OverflowError``); floats are
        converted and compared back bit for bit (sign of zero included, nan to nan).
        """
        if dtype.kind != "f":
            return np.array(values, dtype=dtype)
        src = np.array(values, dtype=np.float64)
        if not np.isfinite(src).all():
            raise self.fail(at, "nan and inf are written {\"$float\": \"nan\"} etc.")
        with np.errstate(over="raise", invalid="raise"):
            arr = src.astype(dtype)
        back = arr.astype(np.float64)
        bad = np.flatnonzero((back != src) | (np.signbit(back) != np.signbit(src)))
        if bad.size:
            i = int(bad[0])
            raise self.fail(((at, "values"), i), f"{values[i]!r} does not fit dtype "
                            f"{dtype.str} exactly "
                            f"(it would read as {float(back[i])!r})")
        return arr

    def _array_item(self, x: Any, kind: str, at: Path) -> Any:
        t = type(x)
        if kind == "b":
            if t is bool:
                return x
            raise self.fail(at, f"a bool array holds true/false, got {t.__name__}")
        if t is int:
            return x
        if t is dict and len(x) == 1 and "$int" in x and type(x["$int"]) is str:
            return self.bigint(x["$int"], at)
        if kind == "f" and (t is float or t is dict):
            return self._num(x, at)
        raise self.fail(at, f"array values of dtype kind {kind!r} must be "
                        f"{'numbers' if kind == 'f' else 'integers'}, got {t.__name__}")
