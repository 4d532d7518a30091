"""What a trace holds: values and spaces as typed-JSON-able data, alike on every side.

:func:`plain` turns an observation, action, reward or spec field into something
:mod:`specpack.typedjson` can carry: numbers, strings, bytes, lists, tuples, dicts, sets and
small numpy arrays stay as they are; an array of more than :data:`SMALL` elements becomes a
digest (so an image observation costs 64 hex digits, on both sides alike); anything else
becomes a stand-in tuple naming its type with its content (a namedtuple's fields, a mapping's
items) or a bounded repr with memory addresses removed.

:func:`describe_space` describes a space by its structure (type, shape, dtype, low/high, n,
start, nvec, sub-spaces) rather than by the object, so the description crosses processes and
two equal spaces describe alike even if they are different objects.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._text import one_line, short

__all__ = ["SMALL", "describe_space", "plain", "type_name"]

#: Arrays with more elements than this are compared by digest.
SMALL = 64
_MAX_DEPTH = 40
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_SPACE_FIELDS = ("shape", "dtype", "n", "start", "nvec", "low", "high", "max_length",
                 "min_length", "character_set", "stack")
_SUBSPACES = ("spaces", "feature_space", "node_space", "edge_space")
_KNOWN_SPACE_MODULES = ("gymnasium.spaces.", "gym.spaces.")


def type_name(t: type) -> str:
    """``"module.QualName"`` of a type (``"int"`` for builtins)."""
    module = getattr(t, "__module__", "?")
    qual = getattr(t, "__qualname__", getattr(t, "__name__", "?"))
    return qual if module == "builtins" else f"{module}.{qual}"


def _digest(arr: np.ndarray) -> tuple[Any, ...]:
    sha = hashlib.sha256()
    sha.update(arr.dtype.str.encode())
    sha.update(repr(arr.shape).encode())
    if arr.dtype.hasobject:
        for item in arr.ravel():
            sha.update(repr(plain(item)).encode("utf-8", "backslashreplace"))
    else:
        sha.update(np.ascontiguousarray(arr).tobytes())
    return ("<array>", arr.dtype.str, tuple(arr.shape), sha.hexdigest())


def _repr(value: Any) -> str:
    return _ADDRESS.sub("", short(value, 200))


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as typed-JSON-able data for comparison; never raises.

    Parameters
    ----------
    value
        An observation, action, reward, flag or spec field.
    depth
        Nesting level (containers deeper than 40 become a stand-in).

    Returns
    -------
    Any
        The value itself when typed JSON carries it exactly and it is small; a digest tuple
        ``("<array>", dtype, shape, sha256)`` for a large array; a stand-in tuple
        ``("<TypeName>", content)`` for other objects.
    """
    try:
        return _plain(value, depth)
    except Exception as e:  # noqa: BLE001 - a value we cannot look at is described by type
        return (f"<{type_name(type(value))}>", f"unreadable ({one_line(e, 120)})")


def _plain(value: Any, depth: int) -> Any:
    t = type(value)
    if t in _SCALARS:
        return value
    if depth > _MAX_DEPTH:
        return (f"<{type_name(t)}>", "nested too deeply")
    d = depth + 1
    if t is np.ndarray:
        if value.size > SMALL or value.dtype.hasobject or value.dtype.kind in "OV":
            return _digest(value)
        return value.copy()
    if isinstance(value, np.generic):
        if isinstance(value, (np.void, np.object_)):
            return _digest(np.asarray(value))
        return value
    if t is list:
        return [_plain(v, d) for v in value]
    if t is tuple:
        return tuple(_plain(v, d) for v in value)
    if t is set or t is frozenset:
        return t(_plain(v, d) for v in value)
    if t is dict:
        return {_plain(k, d): _plain(v, d) for k, v in value.items()}
    name = f"<{type_name(t)}>"
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return (name, {str(f): _plain(v, d) for f, v in zip(value._fields, value)})
    if isinstance(value, Mapping):
        return (name, {_plain(k, d): _plain(v, d) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return (name, [_plain(v, d) for v in value])
    if isinstance(value, int):  # subclasses: IntEnum, ...
        return (name, int(value))
    if isinstance(value, float):
        return (name, float(value))
    if isinstance(value, str):
        return (name, str(value))
    if isinstance(value, bytes):
        return (name, bytes(value))
    return (name, _repr(value))


def describe_space(space: Any, depth: int = 0) -> dict[str, Any]:
    """A structural, typed-JSON-able description of a gymnasium/gym space; never raises.

    Parameters
    ----------
    space
        Any space object (custom ones too).
    depth
        Nesting level of sub-spaces.

    Returns
    -------
    dict
        ``{"type": "gymnasium.spaces.box.Box", "shape": ..., "dtype": "<f4", "low": ...,
        "high": ...}`` and so on; ``"spaces"`` holds sub-space descriptions (a list of
        ``[key, description]`` pairs for a Dict, a list for a Tuple); a space that is not one
        of gymnasium's or gym's also gets its ``"repr"`` (memory addresses removed).
    """
    cls = type(space)
    out: dict[str, Any] = {"type": type_name(cls)}
    if depth > _MAX_DEPTH:
        out["error"] = "nested too deeply"
        return out
    try:
        for name in _SPACE_FIELDS:
            if hasattr(space, name):
                value = getattr(space, name)
                out[name] = value.str if isinstance(value, np.dtype) else plain(value)
        for name in _SUBSPACES:
            sub = getattr(space, name, None)
            if sub is None:
                continue
            if isinstance(sub, Mapping):
                out[name] = [[plain(k), describe_space(v, depth + 1)] for k, v in sub.items()]
            elif isinstance(sub, (list, tuple)):
                out[name] = [describe_space(v, depth + 1) for v in sub]
            else:
                out[name] = describe_space(sub, depth + 1)
        if not type_name(cls).startswith(_KNOWN_SPACE_MODULES):
            out["repr"] = _repr(space)
    except Exception as e:  # noqa: BLE001 - a broken space is described by its failure
        out["error"] = one_line(e, 200)
    return out
