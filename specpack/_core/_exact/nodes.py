"""Reading exact encodings (:mod:`.exact`), or trace data made of them: :func:`equal`,
:func:`children` (a node's parts, named ``[3]``, ``['key']``, ``.attr`` as a difference line
names them) and :func:`markers` (every value that has no exact encoding).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

__all__ = ["DIGEST", "MAX_DEPTH", "NOT_COMPARABLE", "children", "equal", "first_marker",
           "markers"]

#: The kind of a value that has no exact encoding: ``[NOT_COMPARABLE, type, why]``.
NOT_COMPARABLE = "<not comparable>"
#: The kind of a large value's digest: ``[DIGEST, type, what, sha256]``.
DIGEST = "<digest>"
#: Nesting (levels of the encoding) beyond which a value is not comparable.
MAX_DEPTH = 120


def first_marker(node: Any, depth: int = 0) -> list[Any] | None:
    """The first not-comparable marker in ``node``, or None."""
    if type(node) is list and node and node[0] == NOT_COMPARABLE and len(node) == 3:
        return node
    if type(node) in (list, dict) and depth < 2 * MAX_DEPTH:
        for item in node.values() if type(node) is dict else node:
            found = first_marker(item, depth + 1)
            if found is not None:
                return found
    return None


def markers(node: Any, path: str = "") -> Iterator[tuple[str, str, str]]:
    """Every not-comparable marker in ``node``: ``(path, type, why)``, ``path`` as
    :func:`children` names places. A node without one (nearly all) is told apart first by
    :func:`_holds_marker`: naming every place of a 100-step trace cost more than comparing it.
    """
    if not _holds_marker(node):
        return
    stack: list[tuple[Any, str, int]] = [(node, path, 0)]
    while stack:
        n, p, depth = stack.pop()
        if depth > 4 * MAX_DEPTH:
            continue
        if type(n) is dict:
            stack += [(v, f"{p}.{k}", depth + 1) for k, v in reversed(list(n.items()))]
        elif type(n) is list and n:
            if n[0] == NOT_COMPARABLE and len(n) == 3:
                yield p, str(n[1]), str(n[2])
            else:
                stack += [(c, p + place, depth + 1) for place, c in reversed(children(n))]


def _holds_marker(node: Any) -> bool:
    """Whether a not-comparable marker is anywhere in ``node`` (a superset of what
    :func:`markers` walks)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is dict:
            stack.extend(n.values())
        elif type(n) is list and n:
            if n[0] == NOT_COMPARABLE and len(n) == 3:
                return True
            stack.extend(n)
    return False


def _pairs(node: list[Any]) -> list[tuple[Any, Any]]:
    """The ``[key, value]`` pairs of a dict-like node (malformed ones left out)."""
    if len(node) != 3 or type(node[2]) is not list:
        return []
    return [(p[0], p[1]) for p in node[2] if type(p) is list and len(p) == 2]


def _place(key: Any, attribute: bool) -> str:
    if attribute and type(key) is str and key.isidentifier():
        return f".{key}"
    return f"[{key!r}]" if type(key) in (str, int) else "[<key>]"


def children(node: list[Any]) -> list[tuple[str, Any]]:
    """The parts of a node, each with how a path names it (``[i]``, ``['key']``, ``.attr``)."""
    kind = node[0]
    if kind in ("list", "tuple", "set", "frozenset") and len(node) == 3 and type(node[2]) is list:
        return [(f"[{i}]", v) for i, v in enumerate(node[2])]
    if kind in ("dict", "mapping", "namedtuple"):
        return [(_place(k, kind == "namedtuple"), v) for k, v in _pairs(node)]
    if kind == "object" and len(node) == 7:
        state = node[4]
        named = [("(state)", state)]
        if type(state) is list and state and state[0] == "dict":
            named = [(_place(k, True), v) for k, v in _pairs(state)]
        return [("(args)", node[3]), *named, ("(items)", node[5]), ("(pairs)", node[6])]
    if kind == "array" and len(node) == 6:
        return [("", node[4]), (".state", node[5])]
    if kind == "enum" and len(node) == 4:
        return [(".value", node[3])]
    return [(f"[{i}]", v) for i, v in enumerate(node) if type(v) in (list, dict)]


def equal(a: Any, b: Any) -> bool:
    """Whether two encodings (or trace data made of them) are identical: types and all
    (``1``, ``1.0``, ``True`` differ), floats by their bits (``-0.0`` is not ``0.0``; NaNs of the
    same bits are equal), in order; a not-comparable marker equals nothing, itself included.
    """
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        t = type(x)
        if t is not type(y):
            return False
        if t is float:
            if x.hex() != y.hex() or (x != x and struct.pack("<d", x) != struct.pack("<d", y)):
                return False
        elif t is list or t is tuple:
            if len(x) != len(y) or (t is list and x and x[0] == NOT_COMPARABLE and len(x) == 3):
                return False
            stack += zip(x, y)
        elif t is dict:
            if list(x) != list(y):
                return False
            stack += zip(x.values(), y.values())
        elif t in (type(None), bool, int, str, bytes):
            if x != y:
                return False
        else:
            return False
    return True
