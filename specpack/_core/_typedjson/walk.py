"""Walking encoded typed JSON without decoding it, as the decoder reads it: references and
payload uses (and :func:`render` and friends, from :mod:`.render`). Iterative, and a place
becomes text only when reported, so a file of huge keys costs no more to walk than to read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

from .._text import printable
from .render import render, render_code, render_items
from .tags import REFERENCE_KINDS, TAGS, Tag, tag_of

__all__ = ["Found", "Path", "path_text", "payload_uses", "references", "render",
           "render_code", "render_items"]

#: A place in a JSON tree: a root label, or ``(parent, key)`` with a str key (object member)
#: or an int key (list item, tag body item, ``[key, value]`` pair slot).
Path: TypeAlias = "str | tuple[Path, str | int]"

_KEY_LIMIT = 80
#: What a walk looks inside (scalars hold nothing to find).
_NESTED = (dict, list)
#: The sibling a reference's ``member`` comes from.
_MEMBER = {"enum": "name", "ref": "registered"}


def path_text(at: Path, *, escape: bool = True, limit: int = 300) -> str:
    """The text of a place, ``kwargs.cfg[2].name``: keys cut to 80 characters, the whole to
    ``limit``; ``escape`` (for messages, not JSON reports) escapes non-printable characters."""
    parts: list[str] = []  # innermost first
    node = at
    while type(node) is tuple:
        node, key = node
        k = str(key)
        parts.append(f"[{k}]" if type(key) is int else
                     "." + (k if len(k) <= _KEY_LIMIT else k[:_KEY_LIMIT] + "..."))
    text = str(node) + "".join(reversed(parts))
    if len(text) > limit:
        head = limit // 3
        text = text[:head] + "..." + text[len(text) - (limit - head - 3):]
    return printable(text, limit + 1) if escape else text


@dataclass(slots=True, eq=False)
class Found:
    """One tagged node found by a walk: its place, tag and string body (``"module:qualname"``
    or a digest); ``member`` is an ``$enum``'s name or a registry ``$ref``'s id."""

    at: Path
    tag: str
    body: str
    member: Any = None

    @property
    def module(self) -> str:
        """The module part of a reference (the whole body when it has no ``:``)."""
        mod, sep, _ = self.body.partition(":")
        return mod if sep else self.body

    @property
    def qualname(self) -> str:
        return self.body.partition(":")[2]

    @property
    def where(self) -> str:
        """The place, raw (for JSON reports) and bounded."""
        return path_text(self.at, escape=False)

    def path(self) -> str:
        """The place, escaped for messages."""
        return path_text(self.at)

    def __iter__(self) -> Iterator[str]:
        """``where, module, qualname = found``."""
        return iter((self.where, self.module, self.qualname))

    def __repr__(self) -> str:
        return f"Found({self.tag} {self.body[:80]!r} at {self.path()})"


def _found(node: Any, root: Path, kinds: frozenset[str]) -> Iterator[Found]:
    """Every tag node of ``kinds`` with a string body, in document order; a node the decoder
    would refuse is walked as a plain object, so nothing inside it is missed."""
    stack: list[tuple[Any, Path]] = [(node, root)]
    while stack:
        node, at = stack.pop()
        kids: list[tuple[Path, str | int, Any]]  # (parent place, key, value)
        if type(node) is list:
            kids = [(at, i, v) for i, v in enumerate(node) if type(v) in _NESTED]
        elif type(node) is not dict:
            continue
        elif (tag := _tag(node)) is None:
            kids = [(at, k, v) for k, v in node.items() if type(v) in _NESTED]
        else:
            body = node[tag.name]
            if tag.kind in kinds and type(body) is str:
                member = _MEMBER.get(tag.kind)
                yield Found(at, tag.name, body, None if member is None else node.get(member))
            kids = [(at, k, node[k]) for k in sorted(tag.valued & node.keys())]  # a partial's
            if type(body) is list and tag.children == "items":  # at the tag's place
                kids += [(at, i, v) for i, v in enumerate(body) if type(v) in _NESTED]
            elif type(body) is list and tag.children == "pairs":
                kids += [((at, i), j, p[j]) for i, p in enumerate(body)
                         if type(p) is list and len(p) == 2 for j in (0, 1)]
        # pushed in reverse, so popped in document order
        stack += [(v, (parent, key)) for parent, key, v in reversed(kids) if type(v) in _NESTED]


def _tag(node: dict[Any, Any]) -> Tag | None:
    """The grammar's tag of an object; None for a plain object or one the decoder refuses."""
    try:
        name = tag_of(node)
    except ValueError:
        return None
    return None if name is None else TAGS.get(name)


def references(node: Any, root: Path = "value") -> Iterator[Found]:
    """Every ``$ref`` and ``$enum`` with a string body in ``node`` (parsed JSON, e.g. a
    manifest's ``kwargs``; ``root`` labels its places), in document order."""
    return _found(node, root, REFERENCE_KINDS)


def payload_uses(node: Any, root: Path = "value") -> dict[str, list[Found]]:
    """Payload digest -> every ``$code``/``$object`` node in ``node`` that uses it."""
    uses: dict[str, list[Found]] = {}
    for found in _found(node, root, frozenset({"payload"})):
        uses.setdefault(found.body, []).append(found)
    return uses
