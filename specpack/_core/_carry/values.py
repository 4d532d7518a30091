"""Kwargs trees: lowered at capture into a private, carriable copy; materialised at make.

*Lowering* deep-copies a kwargs tree, keeps plain data as it is (exact types preserved: a tuple
stays a tuple, a float32 array stays float32), turns classes and functions into
:class:`~specpack.CodeRef` (by reference or by value) and any other object into a
:class:`Blob` (a cloudpickle payload taken now, so later mutation of the caller's object changes
nothing). Values that cannot cross a process at all (generators, locks, open files, ...) are
refused here, in the parent, naming the kwarg.

*Materialising* builds a fresh copy for each ``make()`` (as ``gymnasium.make`` deep-copies the
spec kwargs), so envs made from one pack never share mutable state. It and the other walks a
lowered tree shares with the carried values inside it live in :mod:`.tree`, and are re-exported
here, where their users import them.
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

from .._errors import UncarriableValueError
from .._text import short
from .callables import callable_ref
from .carried import Blob, EnumRef
from .importable import fresh_importable, reference_of
from .payload import portable_dumps
from .ref import CodeRef, iter_carried
from .tree import (
    MAX_INT_BITS,
    SCALAR_TYPES,
    detached_void,
    exact_key,
    is_plain,
    materialize,
    pickle_exact,
)

__all__ = [
    "MAX_INT_BITS",
    "SCALAR_TYPES",
    "Blob",
    "EnumRef",
    "exact_key",
    "is_plain",
    "iter_carried",
    "lower",
    "lower_mapping",
    "materialize",
    "pickle_exact",
]

_CODE_TYPES = (type, types.FunctionType, types.BuiltinFunctionType)
_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()), threading.Condition,
               threading.Event, threading.Semaphore, threading.Thread)
_STREAM_TYPES = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
MAX_DEPTH = 200


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
    if t in SCALAR_TYPES:
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
        return detached_void(value)
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
        return callable_ref(value, by_value, f"callable {path}")
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
        if type(v) in SCALAR_TYPES and not (type(v) is int and v.bit_length() > MAX_INT_BITS):
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

