"""Kwargs trees: lowered at capture into a private, carriable copy; materialised at make.

*Lowering* deep-copies a kwargs tree, keeps plain data as it is (exact types preserved: a tuple
stays a tuple, a float32 array stays float32), turns classes and functions into
:class:`~specpack.carry.CodeRef` (by reference or by value) and any other object into a
:class:`Blob` (a cloudpickle payload taken now, so later mutation of the caller's object changes
nothing). Values that cannot cross a process at all (generators, locks, open files, ...) are
refused here, in the parent, naming the kwarg.

*Materialising* builds a fresh copy for each ``make()`` (as ``gymnasium.make`` deep-copies the
spec kwargs), so envs made from one pack never share mutable state.
"""

from __future__ import annotations

import enum
import functools
import io
import operator
import sys
import threading
import types
from typing import Any

import numpy as np

from .._text import short
from ..errors import UncarriableValueError
from .carried import Blob, EnumRef
from .code import CodeRef, code_ref, portable_dumps, reference_of
from .importable import fresh_importable

__all__ = [
    "Blob",
    "EnumRef",
    "exact_key",
    "is_plain",
    "iter_carried",
    "lower",
    "lower_mapping",
    "materialize",
]

_PY = f"{sys.version_info[0]}.{sys.version_info[1]}"
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_SCALAR_TYPES = frozenset(_SCALARS)
SCALAR_TYPES = _SCALAR_TYPES
_CODE_TYPES = (type, types.FunctionType, types.BuiltinFunctionType)
_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()), threading.Condition,
               threading.Event, threading.Semaphore, threading.Thread)
_STREAM_TYPES = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
MAX_DEPTH = 200
#: Largest int a pack carries (what a manifest's ``$int`` can hold, in hexadecimal).
MAX_INT_BITS = 4_000_000


def _named_member(cls: Any, member: Any) -> bool:
    """Whether ``cls[member.name]`` (or the OR of ``"A|B"`` flag names) gives ``member`` back."""
    name = member.name
    if not isinstance(name, str) or not name:
        return False
    members = cls.__members__
    if members.get(name) is member:
        return True
    if isinstance(member, enum.Flag) and "|" in name:
        parts = name.split("|")
        if all(p in members for p in parts):
            return bool(functools.reduce(operator.or_, (members[p] for p in parts)) is member)
    return False



def _refuse(path: str, value: Any, why: str) -> UncarriableValueError:
    return UncarriableValueError(
        f"{path} = {short(value)} cannot be carried to another process: {why}. "
        "Pass something a worker can rebuild instead (a path, a seed, a config value), or "
        "create the object inside the env constructor"
    )


def lower(value: Any, path: str, by_value: bool | None = None, _depth: int = 0) -> Any:
    """A private, carriable deep copy of ``value``; ``path`` names it in errors."""
    if _depth > MAX_DEPTH:
        raise UncarriableValueError(f"{path} is nested more than {MAX_DEPTH} levels deep")
    t = type(value)
    if t in _SCALAR_TYPES:
        if t is int and value.bit_length() > MAX_INT_BITS:
            raise UncarriableValueError(
                f"{path} is an int of {value.bit_length()} bits; a pack carries ints up to "
                f"{MAX_INT_BITS} bits. Pass it another way (a file path, a seed)"
            )
        return value
    d = _depth + 1
    if t is dict:
        return {
            lower(k, f"{path} (key {k!r})", by_value, d): lower(v, f"{path}[{k!r}]", by_value, d)
            for k, v in value.items()
        }
    if t is list:
        return [lower(v, f"{path}[{i}]", by_value, d) for i, v in enumerate(value)]
    if t is tuple:
        return tuple(lower(v, f"{path}[{i}]", by_value, d) for i, v in enumerate(value))
    if t is set or t is frozenset:
        return t(lower(v, f"{path} (item {v!r})", by_value, d) for v in value)
    if t is np.ndarray:
        if value.dtype.hasobject:
            return _blob(value, path)
        out = np.array(value, copy=True, order="K")
        out.flags.writeable = False
        return out
    if isinstance(value, np.void):
        return _detached_void(value)
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return value
    if isinstance(value, (CodeRef, Blob)):
        return value
    if isinstance(value, enum.Enum):
        ref = reference_of(t)
        if (ref is not None and fresh_importable(ref[0]) and by_value is not True
                and _named_member(t, value)):
            return EnumRef(ref[0], ref[1], value.name)
        return _blob(value, path)
    if isinstance(value, _CODE_TYPES):
        return code_ref(value, by_value=by_value, what=f"callable {path}")
    if isinstance(value, _STREAM_TYPES):
        raise _refuse(path, value, f"a {t.__name__} is a running computation, not a value")
    if isinstance(value, _LOCK_TYPES):
        raise _refuse(path, value, f"a {t.__name__} belongs to this process's threads")
    if isinstance(value, io.IOBase) or _is_socket(value):
        raise _refuse(path, value, f"an open {t.__name__} is a handle owned by this process")
    return _blob(value, path)


def lower_mapping(
    mapping: Any, label: str, kind: str, by_value: bool | None = None
) -> tuple[dict[str, Any], bool]:
    """``lower`` over a kwargs mapping, and whether every value was a plain scalar.

    Scalars skip the walk and error paths are only formatted when needed (capture's hot path);
    a path reads e.g. ``'CartPole-v1' kwargs['cfg']``.
    """
    out = {}
    plain = True
    for k, v in mapping.items():
        if type(v) in _SCALAR_TYPES and not (type(v) is int and v.bit_length() > MAX_INT_BITS):
            out[k] = v
        else:
            plain = False
            out[k] = lower(v, f"{label!r} {kind}[{k!r}]", by_value)
    return out, plain


def _is_socket(value: Any) -> bool:
    """A socket, without importing ``socket`` (if it is not imported, nothing is a socket)."""
    mod = sys.modules.get("socket")
    return mod is not None and isinstance(value, mod.socket)


def _blob(value: Any, path: str) -> Blob:
    try:
        payload = portable_dumps(value)
    except Exception as e:
        raise _refuse(path, value, f"it does not pickle ({type(e).__name__}: {e})") from e
    return Blob(payload, f"{type(value).__module__}.{type(value).__qualname__}")


def materialize(tree: Any) -> Any:
    """A fresh Python value from a lowered tree (code loaded, blobs unpickled, arrays copied)."""
    t = type(tree)
    if t in _SCALAR_TYPES:
        return tree
    if t is dict:
        return {materialize(k): materialize(v) for k, v in tree.items()}
    if t is list:
        return [materialize(v) for v in tree]
    if t is tuple:
        return tuple(materialize(v) for v in tree)
    if t is set or t is frozenset:
        return t(materialize(v) for v in tree)
    if t is np.ndarray:
        return tree.copy()
    if t is CodeRef or t is Blob or t is EnumRef:
        return tree.load()
    if t is np.void:
        return _detached_void(tree)  # a structured scalar is a mutable view: copy it
    return tree  # other numpy scalars: immutable


class _ExactArray:
    """Pickles a lowered array with its exact dtype.

    numpy's own array pickle (protocols below 5, the stdlib default on Python < 3.14)
    rebuilds a big-endian array as a native-order one, which would change a pack's values
    and fingerprint across a pickle round trip.
    """

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __reduce__(self) -> tuple[Any, ...]:
        a = self.array
        return (_rebuild_array, (a.dtype, a.shape, np.ascontiguousarray(a).tobytes()))


def _rebuild_array(dtype: np.dtype, shape: tuple[int, ...], data: bytes) -> np.ndarray:
    """``_ExactArray``'s unpickler: a read-only array of exactly that dtype and shape."""
    if data:
        arr = np.frombuffer(data, dtype=dtype).reshape(shape)
    else:
        arr = np.zeros(shape, dtype=dtype)
        arr.flags.writeable = False
    return arr


def pickle_exact(tree: Any) -> Any:
    """A lowered tree whose arrays pickle exactly (byte order kept); used by ``__reduce__``."""
    t = type(tree)
    if t is np.ndarray:
        return _ExactArray(tree)
    if t is dict:
        return {k: pickle_exact(v) for k, v in tree.items()}
    if t is list:
        return [pickle_exact(v) for v in tree]
    if t is tuple:
        return tuple(pickle_exact(v) for v in tree)
    return tree


def is_plain(tree: Any) -> bool:
    """True when materialising is a no-op (only immutable scalars, no code, no arrays)."""
    t = type(tree)
    if t in _SCALAR_TYPES:
        return True
    if t is tuple or t is frozenset:
        return all(is_plain(v) for v in tree)
    if t is dict or t is list or t is set or t is np.ndarray or t is CodeRef or t is Blob:
        return False
    return isinstance(tree, np.generic) and t is not np.void


def iter_carried(tree: Any) -> list[CodeRef | Blob]:
    """Every CodeRef and Blob inside a lowered tree, in a stable order."""
    out: list[CodeRef | Blob] = []

    def walk(node: Any) -> None:
        t = type(node)
        if t is CodeRef or t is Blob:
            out.append(node)
            if t is CodeRef and node.bound is not None:  # a partial's arguments
                walk(node.bound)
        elif t is dict:
            for k, v in node.items():
                walk(k)
                walk(v)
        elif t in (list, tuple):
            for v in node:
                walk(v)
        elif t in (set, frozenset):
            for v in sorted(node, key=repr):
                walk(v)

    walk(tree)
    return out


def _detached_void(value: np.void) -> np.void:
    """A copy of a structured numpy scalar that owns its memory (not a view of the caller's)."""
    # np.array(value, copy=True) still shares the caller's memory for a void scalar (numpy
    # 2.4): copy field by field into a 0-d array of our own.
    own = np.zeros((), dtype=value.dtype)
    own[()] = value
    out: Any = own[()]
    return out  # type: ignore[no-any-return]


def exact_key(tree: Any) -> Any:
    """A hashable key that is equal for two lowered trees exactly when they are identical.

    ``==`` is not identity: ``0 == 0.0 == False``, ``-0.0 == 0.0``, ``1 == 1.0``, and arrays of
    another dtype compare equal. This key keeps types, float signs and bit patterns, dtypes and
    byte orders apart (all NaNs of a type are one value). Caches of captures are keyed on it.
    """
    t = type(tree)
    if t is str or tree is None:
        return tree
    if t is float:
        return ("f", tree.hex())
    if t is int or t is bool or t is bytes:
        return (t.__name__, tree)
    if t is complex:
        return ("j", tree.real.hex(), tree.imag.hex())
    if t is tuple or t is list:
        return (t.__name__, tuple(exact_key(v) for v in tree))
    if t is dict:
        return ("d", frozenset((exact_key(k), exact_key(v)) for k, v in tree.items()))
    if t is set or t is frozenset:
        return (t.__name__, frozenset(exact_key(v) for v in tree))
    if t is np.ndarray:
        return ("a", tree.dtype.str, tree.dtype.descr if tree.dtype.names else None,
                tree.shape, np.ascontiguousarray(tree).tobytes())
    if isinstance(tree, np.generic):
        arr = np.asarray(tree)
        return ("g", arr.dtype.str, arr.dtype.descr if arr.dtype.names else None,
                arr.tobytes())
    if t is CodeRef:
        return ("c", *tree._key())
    if t is Blob:
        return ("o", tree.digest)
    if t is EnumRef:
        return ("e", tree.module, tree.qualname, tree.member)
    return ("?", t.__module__, t.__qualname__, id(tree))
