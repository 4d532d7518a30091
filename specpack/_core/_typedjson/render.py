"""Typed JSON as Python-like text, for ``specpack inspect``, decoding nothing; the walk stops
once the text passes its limit, so its cost is bounded by the limit, not by the node."""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from collections.abc import Mapping
from typing import Any

from .._text import size_text
from .tags import PAYLOAD_KIND, TAGS, Tag

__all__ = ["render", "render_code", "render_items"]


class _Full(Exception):
    """The text reached its limit."""


class _Text:
    """Python-like text of a typed-JSON node, built until it passes ``limit`` characters."""

    __slots__ = ("limit", "parts", "payloads", "size")

    def __init__(self, payloads: Any, limit: int) -> None:
        self.payloads = payloads if isinstance(payloads, Mapping) else {}
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0

    def put(self, s: str) -> None:
        room = self.limit + 1 - self.size
        if len(s) > room:
            self.parts.append(s[:room])
            self.size += room
            raise _Full
        self.parts.append(s)
        self.size += len(s)

    def join(self, opening: str, items: Any, d: int, closing: str) -> None:
        self.put(opening)
        for i, v in enumerate(items):
            if i:
                self.put(", ")
            self.value(v, d)
        self.put(closing)

    def value(self, node: Any, depth: int) -> None:
        put, d = self.put, depth + 1
        if depth > 20:
            put("...")
        elif isinstance(node, list):
            self.join("[", node, d, "]")
        elif not isinstance(node, dict):  # None, bool, int, float, str (or anything else)
            put(repr(node))
        elif (name := next((k for k in node if isinstance(k, str) and k[:1] == "$"), None)) is None:
            put("{")
            for i, (k, v) in enumerate(node.items()):
                put(f"{', ' if i else ''}{k!r}: ")
                self.value(v, d)
            put("}")
        elif (tag := TAGS.get(name)) is None or not self.tagged(tag, node[name], node, d):
            try:
                text = json.dumps(node, default=str)
            except (ValueError, TypeError, RecursionError):
                text = f"<{name} node>"
            put(text)

    def tagged(self, tag: Tag, body: Any, node: dict[str, Any], d: int) -> bool:
        """Render one tag node; False when its body has the wrong shape (shown as JSON)."""
        put, kind = self.put, tag.kind
        if kind in ("bigint", "float"):
            put(str(body))
        elif kind == "bytes":
            try:
                raw = base64.b64decode(str(body).encode("ascii"), validate=True)
            except (binascii.Error, ValueError, UnicodeEncodeError):
                put("<bytes: invalid base64>")
                return True
            put(repr(raw) if len(raw) <= 40 else f"<{len(raw)} bytes>")
        elif kind == "complex":
            if not (isinstance(body, list) and len(body) == 2):
                return False
            self.join("complex(", body, d, ")")
        elif kind in ("sequence", "members"):
            if not isinstance(body, list):
                return False
            if kind == "sequence":
                opening, closing = "(", (",)" if len(body) == 1 else ")")
            elif tag.name == "$set":
                opening, closing = ("{", "}") if body else ("set(", ")")
            else:
                opening, closing = ("frozenset({", "})") if body else ("frozenset(", ")")
            self.join(opening, body, d, closing)
        elif kind == "pairs":
            if not isinstance(body, list):
                return False
            put("{")
            for i, pair in enumerate(p for p in body if isinstance(p, list) and len(p) == 2):
                put(", " if i else "")
                self.value(pair[0], d)
                put(": ")
                self.value(pair[1], d)
            put("}")
        elif kind in ("array", "scalar"):
            if not isinstance(body, dict):
                return False
            self.array(kind, body, d)
        elif kind == "enum":
            put(f"{body}.{node.get('name')}")
        elif kind == "ref":
            put(f"<{body}>")
        elif kind == "payload":
            p = self.payloads.get(body) if isinstance(body, str) else None
            what = PAYLOAD_KIND[tag.name]
            if isinstance(p, dict):
                put(f"<{what} {p.get('name')} by value, {size_text(p.get('size'))}>")
            else:
                put(f"<{what} by value {body}>")
        else:  # pragma: no cover - a kind without a renderer
            return False
        return True

    def array(self, kind: str, body: dict[str, Any], d: int) -> None:
        put = self.put
        dtype = body.get("dtype")
        if kind == "scalar":
            put(f"numpy {dtype} scalar ")
            self.value(body.get("value", "?"), d)
            return
        raw_shape = body.get("shape") or ()
        try:
            shape: Any = tuple(raw_shape)
        except TypeError:
            shape = raw_shape
        put(f"array(dtype {dtype}, shape {shape}")
        values = body.get("values")
        if isinstance(values, list):
            self.join(", [", values[:6], d, f"{', ...' if len(values) > 6 else ''}]")
        put(")")


def render(node: Any, payloads: Any = None, limit: int = 200) -> str:
    """Python-like text of a typed-JSON node (``payloads``: the manifest's payload table):
    ``{"$tuple": [1, 2]}`` reads ``(1, 2)``, ``{"$ref": "m:f"}`` ``<m:f>``, a payload ``<code m:f
    by value, 312 bytes>``, nesting beyond 20 levels ``...``; text longer than ``limit`` is cut
    to ``limit`` characters ending in ``...``. Strings are shown raw (``repr``): escape the
    result before printing it to a terminal."""
    out = _Text(payloads, limit)
    with contextlib.suppress(_Full):
        out.value(node, 0)
    text = "".join(out.parts)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render_items(node: Any, payloads: Any = None, limit: int = 200) -> list[tuple[str, Any]]:
    """``(key text, value node)`` of an object or a ``$dict`` node (keys rendered), else []."""
    if not isinstance(node, dict):
        return []
    if set(node) == {"$dict"} and isinstance(node["$dict"], list):
        return [(render(p[0], payloads, limit), p[1]) for p in node["$dict"]
                if isinstance(p, list) and len(p) == 2]
    return [(str(k), v) for k, v in node.items()]


def render_code(node: Any, payloads: Any = None, *, full: bool = False) -> tuple[str, str]:
    """``(name, how it travels)`` of an entry point or wrapper class node: ``{"$ref":
    "pkg.mod:Env"}`` gives ``("Env", "pkg.mod, by reference")`` (with ``full``: ``("pkg.mod:Env",
    "by reference")``), a ``$code`` node the payload's name and ``"by value: <size> of
    cloudpickle for Python <version>, <digest>"``."""
    table = payloads if isinstance(payloads, Mapping) else {}
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        mod, _, qual = str(node["$ref"]).rpartition(":")
        name = node["$ref"] if full else qual
        if "args" in node or "keywords" in node:  # a functools.partial of the function
            args = node.get("args")
            bound = [render(a, table) for a in (args if isinstance(args, list) else [])]
            bound += [f"{k}={render(v, table)}" for k, v in render_items(node.get("keywords"),
                                                                         table)]
            name = f"partial({', '.join([name, *bound])})"
        return (name, "by reference") if full else (name, f"{mod}, by reference")
    if isinstance(node, dict) and isinstance(node.get("$code"), str):
        digest = node["$code"]
        p = table.get(digest)
        if isinstance(p, dict):
            name = str(p.get("name"))
            if not full:
                name = name.rpartition(":")[2]
            return name, (f"by value: {size_text(p.get('size'))} of cloudpickle for "
                          f"Python {p.get('python')}, {digest}")
        return "?", f"by value: {digest}, payload missing from the file"
    return render(node, table), "?"
