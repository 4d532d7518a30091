"""Typed-manifest JSON as Python-like text, for ``specpack inspect``: nothing imported or
unpickled.

ADAPTER, to be deleted: the one walker over the typed-JSON grammar is
``specpack.typedjson.walk.render(node, payloads)`` (interface 4, owned by the typedjson
package). Until it lands this module stands in with the same signature, so switching is one
import in :mod:`specpack.cli.describe`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from .output import size_text

__all__ = ["render"]

_MAX_DEPTH = 20


def render(node: Any, payloads: Mapping[str, Any]) -> str:
    """``node`` (a typed-JSON value of a manifest) as Python-like text.

    Parameters
    ----------
    node
        A value as the manifest holds it (``{"$tuple": [...]}``, ``{"$ref": "m:q"}``...).
    payloads
        The manifest's payload table (digest -> kind, name, size...), to name by-value code.

    Returns
    -------
    str
        E.g. ``(2.0, 1.0)``, ``array(dtype <f4, shape (3,), [...])``, ``<code m:f by value,
        2,109 bytes>``; unbounded (the caller clips it).
    """
    return _value(node, payloads, 0)


def _value(node: Any, payloads: Mapping[str, Any], depth: int) -> str:
    if depth > _MAX_DEPTH:
        return "..."

    def sub(v: Any) -> str:
        return _value(v, payloads, depth + 1)

    if node is None or isinstance(node, (bool, int, float, str)):
        return repr(node)
    if isinstance(node, list):
        return "[" + ", ".join(sub(v) for v in node) + "]"
    if not isinstance(node, dict):
        return repr(node)
    tags = [k for k in node if isinstance(k, str) and k.startswith("$")]
    if not tags:
        return "{" + ", ".join(f"{k!r}: {sub(v)}" for k, v in node.items()) + "}"
    tag, body = tags[0], node[tags[0]]
    if tag in ("$int", "$float"):
        return str(body)
    if tag == "$bytes":
        try:
            raw = base64.b64decode(str(body).encode("ascii"), validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            return "<bytes: invalid base64>"
        return repr(raw) if len(raw) <= 40 else f"<{len(raw)} bytes>"
    if tag == "$complex" and isinstance(body, list) and len(body) == 2:
        return f"complex({sub(body[0])}, {sub(body[1])})"
    if tag == "$tuple" and isinstance(body, list):
        inner = ", ".join(sub(v) for v in body)
        return f"({inner},)" if len(body) == 1 else f"({inner})"
    if tag in ("$set", "$frozenset") and isinstance(body, list):
        inner = ", ".join(sub(v) for v in body)
        if tag == "$set":
            return "{" + inner + "}" if body else "set()"
        return f"frozenset({{{inner}}})" if body else "frozenset()"
    if tag == "$dict" and isinstance(body, list):
        return "{" + ", ".join(
            f"{sub(p[0])}: {sub(p[1])}" for p in body if isinstance(p, list) and len(p) == 2
        ) + "}"
    if tag in ("$ndarray", "$npscalar") and isinstance(body, dict):
        dtype = body.get("dtype")
        if tag == "$npscalar":
            return f"numpy {dtype} scalar {sub(body.get('value', '?'))}"
        shape = tuple(body.get("shape") or ())
        values = body.get("values")
        shown = ""
        if isinstance(values, list):
            head = ", ".join(sub(v) for v in values[:6])
            shown = f", [{head}{', ...' if len(values) > 6 else ''}]"
        return f"array(dtype {dtype}, shape {shape}{shown})"
    if tag == "$enum":
        return f"{body}.{node.get('name')}"
    if tag == "$ref":
        return f"<{body}>"
    if tag in ("$code", "$object"):
        p = payloads.get(body) if isinstance(body, str) else None
        kind = "code" if tag == "$code" else "object"
        if isinstance(p, dict):
            size = p.get("size")
            n = size if isinstance(size, int) and not isinstance(size, bool) else 0
            return f"<{kind} {p.get('name')} by value, {size_text(n)}>"
        return f"<{kind} by value {body}>"
    return json.dumps(node, default=str)
