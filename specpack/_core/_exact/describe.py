"""What a trace holds: values and spaces as typed-JSON-able data, alike on every side.

:func:`plain` is the exact encoding of :mod:`.exact` (every value by type and bits; large
values digested; a value with no exact encoding marked *not comparable*): observations,
actions, rewards, flags, info values and spec fields all go through it.

:func:`same` says whether two values are identical (equal exact encodings).

:func:`describe_space` describes a space by its structure (type, shape, dtype, low/high, n,
start, nvec, sub-spaces, each field encoded exactly) rather than by the object, so the
description crosses processes and two equal spaces describe alike even if they are different
objects.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._text import one_line, short
from .exact import SMALL, encode, type_name
from .nodes import equal, markers

__all__ = ["SMALL", "describe_space", "plain", "same", "type_name"]

#: Sub-spaces nested deeper than this are not described (an exact field adds its own levels).
_MAX_DEPTH = 20
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_SPACE_FIELDS = ("shape", "dtype", "n", "start", "nvec", "low", "high", "max_length",
                 "min_length", "character_set", "stack")
_SUBSPACES = ("spaces", "feature_space", "node_space", "edge_space")
_KNOWN_SPACE_MODULES = ("gymnasium.spaces.", "gym.spaces.")


def _repr(value: Any) -> str:
    return _ADDRESS.sub("", short(value, 200))


def plain(value: Any) -> Any:
    """``value``'s exact, typed-JSON-able encoding (:func:`.exact.encode`); never raises.

    Parameters
    ----------
    value
        An observation, action, reward, flag, info value or spec field.

    Example::

        >>> plain(1), plain(1.0), plain(True)
        (1, 1.0, True)
    """
    return encode(value)


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
        of gymnasium's or gym's also gets its ``"repr"`` (memory addresses removed), which only
        identifies it: its fields are what is compared.
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


def same(a: Any, b: Any) -> bool:
    """Whether two values (or trace data) are identical: equal exact encodings, neither
    holding a value that has none."""
    if _has_marker(a) or _has_marker(b):
        return False
    return bool(equal(encode(a), encode(b)))


def _has_marker(node: Any) -> bool:
    return next(markers(node), None) is not None
