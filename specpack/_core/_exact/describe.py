"""What a trace holds: values (:func:`plain`, the exact encoding of :mod:`.exact`) and spaces
(:func:`describe_space`, by their structure, so that equal spaces describe alike across
processes) as typed-JSON-able data; :func:`same` says whether two values are identical.
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


#: A value's exact, typed-JSON-able encoding (:func:`.exact.encode`); never raises.
plain = encode


def describe_space(space: Any, depth: int = 0) -> dict[str, Any]:
    """``{"type": "gymnasium.spaces.box.Box", "shape": ..., "dtype": "<f4", ...}``: a space by
    its structure (``"spaces"``: ``[key, description]`` pairs for a Dict, a list for a Tuple);
    one not of gymnasium or gym adds its ``"repr"`` (no addresses). Never raises."""
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
            out["repr"] = _ADDRESS.sub("", short(space, 200))
    except Exception as e:  # noqa: BLE001 - a broken space is described by its failure
        out["error"] = one_line(e, 200)
    return out


def same(a: Any, b: Any) -> bool:
    """Whether two values (or trace data) are identical: equal exact encodings, neither
    holding a value that has none."""
    if any(next(markers(x), None) is not None for x in (a, b)):
        return False
    return bool(equal(encode(a), encode(b)))
