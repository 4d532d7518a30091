"""Live values lowered at capture into a private, carriable deep copy: plain data keeps its exact
types, classes and functions become :class:`~specpack.CodeRef` (by reference if a fresh interpreter
could import them, else by value), other objects a :class:`Blob` pickled now; what cannot cross a
process is refused. :mod:`.tree`'s walks are re-exported here."""

from __future__ import annotations

import contextlib
import enum
import functools
import io
import operator
import sys
import threading
import types
from typing import Any

import numpy as np

from .._errors import CaptureError, UncarriableValueError
from .._text import short
from .carried import PY, Blob, EnumRef
from .importable import MAIN_NAMES, fresh_importable, reference_of
from .payload import Witness, dumps_witnessed, forced_modules, portable_dumps
from .ref import CodeRef, iter_carried
from .sources import located
from .tree import MAX_INT_BITS, SCALAR_TYPES, detached_void, exact_key, materialize

__all__ = ["MAX_INT_BITS", "SCALAR_TYPES", "Blob", "callable_ref", "exact_key", "iter_carried",
           "lower", "lower_mapping", "materialize", "payload_ref"]

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
    members, parts = cls.__members__, name.split("|")
    return members.get(name) is member or (
        isinstance(member, enum.Flag) and len(parts) > 1 and all(p in members for p in parts)
        and functools.reduce(operator.or_, (members[p] for p in parts)) is member)


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
    if t is list or t is tuple:
        return t(lower(v, f"{path}[{i}]", by_value, d) for i, v in enumerate(value))
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
    if isinstance(value, (CodeRef, Blob)) or (
            isinstance(value, np.generic) and not isinstance(value, np.object_)):
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
    socket = sys.modules.get("socket")  # not imported: nothing is a socket
    if isinstance(value, io.IOBase) or (socket is not None and isinstance(value, socket.socket)):
        raise _refuse(path, value, f"an open {t.__name__} is a handle owned by this process")
    return _blob(value, path)


def lower_mapping(mapping: Any, label: str, kind: str,
                  by_value: bool | None = None) -> tuple[dict[str, Any], bool]:
    """``lower`` over a kwargs mapping, and whether every value was a plain scalar (capture's
    hot path: scalars skip the walk; a path, ``'CartPole-v1' kwargs['cfg']``, is made lazily)."""
    out = {}
    plain = True
    for k, v in mapping.items():
        scalar = type(v) in SCALAR_TYPES and not (type(v) is int and v.bit_length() > MAX_INT_BITS)
        out[k] = v if scalar else lower(v, f"{label!r} {kind}[{k!r}]", by_value)
        plain = plain and scalar
    return out, plain


def _blob(value: Any, path: str) -> Blob:
    """``value`` pickled now, so that later changes to the caller's object change nothing."""
    try:
        payload = portable_dumps(value)
    except Exception as e:
        raise _refuse(path, value, f"it does not pickle ({type(e).__name__}: {e})") from e
    return Blob(payload, f"{type(value).__module__}.{type(value).__qualname__}")


_ref_cache: dict[Any, CodeRef] = {}
#: By-value CodeRefs of live objects, reused while the witness of their payload holds.
_value_cache: dict[Any, tuple[Any, Witness, CodeRef]] = {}


def callable_ref(obj: Any, by_value: bool | None, what: str) -> CodeRef:
    """The :class:`~.ref.CodeRef` for a class or function (not a partial); ``by_value=None``
    decides by fresh importability, ``True``/``False`` force it; ``what`` names it in errors."""
    if by_value is None:
        try:  # not contextlib.suppress: capture's hot path
            cached = _ref_cache.get(obj)
        except TypeError:  # an unhashable callable
            cached = None
        if cached is not None and cached._obj is obj:
            return cached
    ref = reference_of(obj)
    if by_value is None:
        by_value = ref is None or not fresh_importable(ref[0])
    if by_value:
        return payload_ref(obj, obj, what)
    if ref is None:
        raise CaptureError(
            f"the {what} {obj!r} has no importable name (it is a lambda, a closure or a "
            "local class); it can only travel by value: drop by_value=False"
        )
    out = CodeRef(ref[0], ref[1])
    out._set(_obj=obj)
    with contextlib.suppress(TypeError):  # an unhashable callable
        _ref_cache[obj] = out
    return out


def payload_ref(obj: Any, named: Any, what: str) -> CodeRef:
    """``obj`` carried by value, named as ``named`` is (whose module, when it is loaded and not
    ``__main__``, is pickled by value too)."""
    modname = getattr(named, "__module__", None) or "__main__"
    qualname = (getattr(named, "__qualname__", None) or getattr(named, "__name__", None)
                or repr(named))
    force = {modname} if (isinstance(modname, str) and modname not in MAIN_NAMES
                          and modname in sys.modules) else set()
    key = (id(obj), modname, qualname, forced_modules())
    if (hit := _value_cache.get(key)) is not None and hit[0] is obj and hit[1].holds():
        return hit[2]
    try:
        payload, witness = dumps_witnessed(located(obj), force_modules=force)
    except Exception as e:
        raise CaptureError(
            f"the {what} {modname}:{qualname} cannot be carried by value "
            f"({type(e).__name__}: {e}); move it to an importable module"
        ) from e
    out = CodeRef(str(modname), str(qualname), payload, PY)
    out._set(_witness=witness, _live=obj)  # _live: what was pickled, never what load() gives
    if witness is not None:
        if len(_value_cache) > 256:
            _value_cache.clear()
        _value_cache[key] = (obj, witness, out)
    return out
