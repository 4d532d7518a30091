"""The exact encoding of a value an env returns: what a trace records and compares.

:func:`encode` gives a typed-JSON-able *node*, equal for two values exactly when they are
identical (same types, same bits). ``None``, ``bool``, ``int`` (up to 64 bits), ``float`` and
``str`` stay as they are; anything else is a list whose first item names its kind:
``["nan", bits]``, ``["int", type, text]``, ``["complex", type, real hex, imag hex]``,
``["str" | "bytes", type, base64]``, ``["enum", type, name, value]``, ``["array", type, dtype,
shape, base64 | items, state]`` (numpy and its subclasses, jax), ``["scalar", type, dtype,
base64]``, ``["tensor", type, dtype, shape, base64]``, ``["list" | "tuple" | "set" |
"frozenset", type, items]`` (set items sorted), ``["dict" | "mapping" | "namedtuple", type,
[[key, value], ...]]``, ``["global", "module:qualname"]``, ``["function", name, code, defaults,
kwdefaults, cells]``, ``["object", type, how, args, state, items, pairs]`` (the parts of
``__reduce_ex__(4)``) and ``["<cycle>", levels up]``. A value over :data:`LIMIT` characters (an
array over :data:`SMALL` elements) becomes ``[DIGEST, type, what, sha256]``; one with no exact
encoding ``[NOT_COMPARABLE, type, why]``, which :func:`.nodes.equal` finds equal to nothing.
"""

from __future__ import annotations

import base64
import copyreg
import enum
import functools
import hashlib
import json
import math
import re
import struct
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from .._text import one_line
from .nodes import DIGEST, MAX_DEPTH, NOT_COMPARABLE, first_marker

__all__ = ["LIMIT", "SMALL", "encode", "float_hex", "nan_bits", "type_name"]

#: Arrays with more elements than this are digested.
SMALL = 64
#: Encodings longer than this many characters (about) are digested.
LIMIT = 4096
#: Parts (values visited) of one value beyond which it is not comparable.
MAX_PARTS = 1_000_000
#: The pickle protocol whose ``__reduce_ex__`` parts describe other objects.
PROTOCOL = 4
_NATIVE = (type(None), bool, str, float)
#: The parts of a code object that say what it does (not where it was written).
_CODE = ("co_code", "co_consts", "co_names", "co_varnames", "co_freevars", "co_cellvars",
         "co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_flags")
_EMPTY = "<empty cell>"
_SURROGATE = re.compile("[\ud800-\udfff]")  # what UTF-8 cannot encode
_INT_BITS = 64


def type_name(t: type) -> str:
    """``"module.QualName"`` of a type (``"int"`` for builtins)."""
    module = getattr(t, "__module__", "?")
    qual = getattr(t, "__qualname__", getattr(t, "__name__", "?"))
    return qual if module == "builtins" else f"{module}.{qual}"


def nan_bits(x: float) -> str:
    """A float's 64 bits as ``"0x7ff8000000000000"`` (how a NaN is told from another NaN)."""
    return f"0x{struct.unpack('<Q', struct.pack('<d', x))[0]:016x}"


def float_hex(x: float) -> str:
    """``x.hex()``, or for a NaN ``"nan:"`` and its bits (``hex()`` gives ``"nan"`` for all)."""
    return x.hex() if x == x else f"nan:{nan_bits(x)}"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _text(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"), ensure_ascii=True, allow_nan=True)


def _sha(*parts: bytes | str) -> str:
    sha = hashlib.sha256()
    for p in parts:
        data = p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p
        sha.update(len(data).to_bytes(8, "little"))
        sha.update(data)
    return sha.hexdigest()


class _TooMany(BaseException):
    """More than :data:`MAX_PARTS` parts: the whole value is not comparable (a BaseException,
    so that the ``except Exception`` of one part does not catch it)."""


class _Encoder:
    """One value's encoding; ``bad`` holds (by ``id``, kept alive so no id is reused) every
    node that is or holds a not-comparable marker, so that a digest never hides one."""

    def __init__(self) -> None:
        self.parts = 0
        self.stack: list[int] = []
        self.bad: dict[int, Any] = {}

    def marker(self, t: type, why: str) -> list[Any]:
        node = [NOT_COMPARABLE, type_name(t), why]
        self.bad[id(node)] = node
        return node

    def value(self, value: Any, depth: int) -> tuple[Any, int]:
        """``(node, size)``: the encoding and about how many characters its JSON takes."""
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise _TooMany
        t = type(value)
        if t in _NATIVE:
            if t is float and value != value:
                return ["nan", nan_bits(value)], 40
            if t is str and not value.isascii() and _SURROGATE.search(value):
                return self.small(["str", "str", _b64(value.encode("utf-8", "surrogatepass"))],
                                  t, len(value) * 2)
            size = len(value) + 2 if t is str else 24
            return (value, size) if size <= LIMIT else self.digest([value], t, f"str of "
                                                                   f"{len(value)} characters")
        if t is int:
            if value.bit_length() <= _INT_BITS:
                return value, 20
            text = str(value) if value.bit_length() < 12000 else hex(value)
            return self.small(["int", "int", text], t, len(text))
        if depth > MAX_DEPTH:
            return self.marker(t, f"nested more than {MAX_DEPTH} levels deep"), 60
        if id(value) in self.stack:
            return ["<cycle>", len(self.stack) - self.stack.index(id(value))], 16
        self.stack.append(id(value))
        try:
            return self.compound(value, t, depth + 1)
        except RecursionError:
            return self.marker(t, "nested too deeply to encode"), 60
        except Exception as e:  # noqa: BLE001 - a value we cannot read is not comparable
            return self.marker(t, f"cannot be read: {one_line(e, 200)}"), 80
        finally:
            self.stack.pop()

    def compound(self, value: Any, t: type, d: int) -> tuple[Any, int]:
        name = type_name(t)
        if isinstance(value, np.ndarray):
            return self.array(value, t, d)
        if isinstance(value, np.generic):
            arr = np.asarray(value)
            if arr.dtype.hasobject:
                return self.value(value.item(), d)
            data = arr.tobytes()
            return self.small(["scalar", name, _dtype(arr.dtype), _b64(data)], t, len(data) * 2)
        if t is complex:
            return ["complex", name, float_hex(value.real), float_hex(value.imag)], 60
        if t in (bytes, bytearray) or t is memoryview:
            data = value.tobytes() if t is memoryview else bytes(value)
            if len(data) * 4 // 3 > LIMIT:
                return [DIGEST, name, f"{len(data)} bytes", _sha(name, data)], 100
            return ["bytes", name, _b64(data)], len(data) * 4 // 3 + 20
        if t in (list, tuple):
            return self.items(t.__name__, t, value, d)
        if t in (set, frozenset):
            nodes = self.many(value, d + 1)
            nodes.sort(key=lambda ns: _text(ns[0]))
            return self.container([t.__name__, name, [n for n, _ in nodes]], t, nodes)
        if t is dict:
            return self.pairs("dict", t, value.items(), d)
        if isinstance(value, enum.Enum):
            v, size = self.value(value._value_, d)
            return self.container(["enum", name, str(value._name_), v], t, [(v, size)])
        if isinstance(value, tuple) and hasattr(t, "_fields"):
            return self.pairs("namedtuple", t, zip(t._fields, value), d)
        torch = sys.modules.get("torch") if t.__module__.startswith("torch") else None
        if torch is not None and isinstance(value, torch.Tensor):
            return self.tensor(value, t, torch)
        if t.__module__.startswith(("jax", "jaxlib")) and hasattr(value, "__array__"):
            return self.array(np.asarray(value), t, d)
        if isinstance(value, type):
            return _global(value, self)
        if t is types.FunctionType:
            return _global(value, self) if _by_name(value) else self.function(value, d)
        if t is types.CodeType:
            return self.items("code", t, [getattr(value, f) for f in _CODE], d)
        return self.reduced(value, t, d)

    def function(self, value: Any, d: int) -> tuple[Any, int]:
        """A function pickle cannot name (a lambda, a local function): its code, defaults and
        closure values, each exact (not its file, which by-value code keeps anyway)."""
        cells = []
        for cell in value.__closure__ or ():
            try:
                cells.append(cell.cell_contents)
            except ValueError:  # an empty cell
                cells.append(_EMPTY)
        parts = [self.value(v, d + 1) for v in (value.__code__, value.__defaults__,
                                                value.__kwdefaults__, cells)]
        name = f"{value.__module__}:{value.__qualname__}"
        return self.container(["function", name, *(n for n, _ in parts)], type(value), parts)

    def small(self, node: list[Any], t: type, size: int) -> tuple[Any, int]:
        if size <= LIMIT:
            return node, size + 20
        return self.digest(node, t, f"{type_name(t)} of {size} characters")

    def many(self, values: Any, d: int) -> list[tuple[Any, int]]:
        """:meth:`value` of each of ``values`` (floats, bools and None the fast way)."""
        out = []
        for v in values:
            tv = type(v)
            if (tv is float and v == v) or tv is bool or v is None:
                self.parts += 1
                out.append((v, 24))
            else:
                out.append(self.value(v, d))
        if self.parts > MAX_PARTS:
            raise _TooMany
        return out

    def items(self, kind: str, t: type, value: Any, d: int) -> tuple[Any, int]:
        if type(value) in (list, tuple) and all(type(v) is float and v == v for v in value):
            # floats only (a long observation list): nothing to walk, one pass to digest
            node, size = [kind, type_name(t), list(value)], 32 * len(value) + 40
            return (node, size) if size <= LIMIT else self.digest(
                node, t, f"{kind} of {len(value)} items")
        nodes = self.many(value, d + 1)
        return self.container([kind, type_name(t), [n for n, _ in nodes]], t, nodes,
                              f"{kind} of {len(nodes)} items")

    def pairs(self, kind: str, t: type, pairs: Any, d: int) -> tuple[Any, int]:
        nodes: list[tuple[Any, int]] = []
        out = []
        for k, v in pairs:
            kn, vn = self.value(k, d + 2), self.value(v, d + 2)
            nodes += (kn, vn)
            out.append([kn[0], vn[0]])
        return self.container([kind, type_name(t), out], t, nodes, f"{kind} of {len(out)} items")

    def container(self, node: list[Any], t: type, parts: list[tuple[Any, int]],
                  what: str = "") -> tuple[Any, int]:
        """``node`` (holding ``parts``), or its digest when it is too large."""
        if self.bad and any(id(n) in self.bad for n, _ in parts):
            self.bad[id(node)] = node
        size = sum(s for _, s in parts) + 8 * len(parts) + 40
        if size <= LIMIT:
            return node, size
        return self.digest(node, t, what or f"{type_name(t)} of {len(parts)} parts")

    def digest(self, node: Any, t: type, what: str) -> tuple[Any, int]:
        if id(node) in self.bad:
            first = first_marker(node)
            why = f"holds a value that is not comparable: {first[1]} {first[2]}" if first else \
                "holds a value that is not comparable"
            return self.marker(t, why), 200
        return [DIGEST, type_name(t), what, _sha(_text(node))], 120

    def array(self, arr: np.ndarray, t: type, d: int) -> tuple[Any, int]:
        name, dt = type_name(t), arr.dtype
        shape = [int(s) for s in arr.shape]
        state: Any = None
        parts: list[tuple[Any, int]] = []
        if t is not np.ndarray and getattr(arr, "__dict__", None):
            parts.append(self.value(dict(vars(arr)), d + 2))
            state = parts[0][0]
        if dt.hasobject:
            items = arr.tolist() if dt.names else list(np.asarray(arr).ravel())
            body = self.items("list", list, items, d + 2)
            parts.append(body)
            return self.container(["array", name, _dtype(dt), shape, body[0], state], t, parts,
                                  f"{dt} {name} of shape {tuple(shape)}")
        data = np.ascontiguousarray(arr).tobytes()
        if arr.size > SMALL or len(data) * 4 // 3 > LIMIT:
            if id(state) in self.bad:
                return self.digest(state, t, "")
            return [DIGEST, name, f"{dt} array of shape {tuple(shape)}",
                    _sha(name, _dtype(dt), repr(shape), _text(state), data)], 120
        return self.container(["array", name, _dtype(dt), shape, _b64(data), state], t,
                              [*parts, (None, len(data) * 4 // 3 + 60)])

    def tensor(self, value: Any, t: type, torch: Any) -> tuple[Any, int]:
        name = type_name(t)
        x = value.detach().cpu().contiguous()
        dtype = str(x.dtype)
        if x.is_floating_point():  # by bits: numpy has no bfloat16
            x = x.view(getattr(torch, f"int{x.element_size() * 8}"))
        data = x.numpy().tobytes()
        shape = [int(s) for s in value.shape]
        if math.prod(shape) > SMALL or len(data) * 4 // 3 > LIMIT:
            return [DIGEST, name, f"{dtype} tensor of shape {tuple(shape)}",
                    _sha(name, dtype, repr(shape), data)], 120
        return ["tensor", name, dtype, shape, _b64(data)], len(data) * 4 // 3 + 80

    def reduced(self, value: Any, t: type, d: int) -> tuple[Any, int]:
        """An object as pickle sees it: the parts of its ``__reduce_ex__``, each exact."""
        reducer = copyreg.dispatch_table.get(t)
        try:
            rv = reducer(value) if reducer is not None else value.__reduce_ex__(PROTOCOL)
        except Exception as e:  # noqa: BLE001 - what pickle refuses has no exact encoding
            if isinstance(value, Mapping):
                return self.pairs("mapping", t, list(value.items()), d)
            return self.marker(t, f"cannot be pickled: {one_line(e, 200)}"), 200
        if isinstance(rv, str):
            return _global(value, self, rv)
        if not isinstance(rv, tuple) or not 2 <= len(rv) <= 6:
            return self.marker(t, f"cannot be pickled: __reduce_ex__ gave {type(rv).__name__}"), 200
        how, args, state, items, pairs = (list(rv) + [None] * 4)[:5]
        parts = [self.value(how, d + 1), self.value(args, d + 1), self.value(state, d + 1),
                 self.value(None if items is None else list(_iter(items)), d + 1),
                 self.value(None if pairs is None else dict(_iter(pairs)), d + 1)]
        return self.container(["object", type_name(t), *(n for n, _ in parts)], t, parts)


def _iter(items: Any) -> Iterator[Any]:
    for n, item in enumerate(items):
        if n >= MAX_PARTS:
            raise _TooMany
        yield item


def _dtype(dt: np.dtype) -> str:
    return str(dt.descr) if dt.names or dt.subdtype else dt.str


def _find(module: str, qualname: str) -> Any:
    """``module:qualname`` in the loaded modules, as pickle finds it (nothing is imported)."""
    return functools.reduce(getattr, qualname.split("."), sys.modules[module])


def _by_name(value: Any) -> bool:
    """Whether ``value`` is the object its module and qualified name find (pickle's test)."""
    try:
        return _find(value.__module__, value.__qualname__) is value
    except Exception:  # noqa: BLE001 - not found by name
        return False


def _global(value: Any, enc: _Encoder, name: str | None = None) -> tuple[Any, int]:
    """A class (always: by-value classes keep their names) or a function as pickle stores it,
    by ``module:qualname``; a function must be that name's object in its loaded module."""
    module = getattr(value, "__module__", None)
    qual = name or getattr(value, "__qualname__", None)
    t = type(value)
    if not isinstance(module, str) or not isinstance(qual, str):
        return enc.marker(t, "cannot be pickled: it has no module and qualified name"), 200
    node = ["global", f"{module}:{qual}"], len(module) + len(qual) + 20
    if isinstance(value, type):
        return node
    try:
        found = _find(module, qual)
    except Exception as e:  # noqa: BLE001 - not found by name: pickle refuses it too
        return enc.marker(t, f"cannot be pickled: {module}:{qual} is not found by name "
                             f"({one_line(e, 120)})"), 200
    if found is not value and found != value:  # a bound method is equal, not the same
        return enc.marker(t, f"cannot be pickled: {module}:{qual} is another object"), 200
    return node


def encode(value: Any) -> Any:
    """The exact, typed-JSON-able encoding of ``value`` (see the module docstring); never raises.

    >>> encode(1.5), encode((1, b"x"))
    (1.5, ['tuple', 'tuple', [1, ['bytes', 'bytes', 'eA==']]])
    """
    enc = _Encoder()
    try:
        return enc.value(value, 0)[0]
    except _TooMany:
        return [NOT_COMPARABLE, type_name(type(value)), f"has more than {MAX_PARTS} parts"]
    except RecursionError:
        return [NOT_COMPARABLE, type_name(type(value)), "nested too deeply to encode"]
