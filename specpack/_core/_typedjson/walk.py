"""Walking encoded typed JSON without decoding it, as the decoder reads it: references and
payload uses (and :func:`render` and friends, from :mod:`.render`). Iterative, and a place
becomes text only when reported, so a file of huge keys costs no more to walk than to read.
"""

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
#: The sibling a reference's ``member`` comes from.
_MEMBER = {"enum": "name", "ref": "registered"}


def path_text(at: Path, *, escape: bool = True, limit: int = 300) -> str:
    """The text of a place, ``kwargs.cfg[2].name``: keys cut to 80 characters, the whole to
    ``limit``; ``escape`` (for messages, not JSON reports) escapes non-printable characters."""
    keys: list[str | int] = []
    node = at
    while type(node) is tuple:
        node, key = node
        keys.append(key)
    parts = [str(node)]
    for key in reversed(keys):
        if type(key) is int:
            parts.append(f"[{key}]")
        else:
            k = str(key)
            parts.append("." + (k if len(k) <= _KEY_LIMIT else k[:_KEY_LIMIT] + "..."))
    text = "".join(parts)
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


def _tagged(node: Any, root: Path, kinds: frozenset[str]) -> Iterator[tuple[Path, Tag, Any]]:
    """``(place, tag, node)`` of every tag node of ``kinds``, in document order; a node the
    decoder would refuse is walked as a plain object, so nothing inside it is missed."""
    stack: list[tuple[Any, Path]] = [(node, root)]
    pop, push = stack.pop, stack.append
    while stack:
        node, at = pop()
        if type(node) is list:
            for i in reversed(range(len(node))):
                v = node[i]
                if type(v) is dict or type(v) is list:  # scalars hold nothing to find
                    push((v, (at, i)))
            continue
        if type(node) is not dict:
            continue
        tag = _tag(node)
        if tag is None:
            for k, v in reversed(node.items()):
                if type(v) is dict or type(v) is list:
                    push((v, (at, k)))
            continue
        if tag.kind in kinds:
            yield at, tag, node
        for k in sorted(tag.valued & node.keys(), reverse=True):  # a partial's arguments
            v = node[k]
            if type(v) is dict or type(v) is list:
                push((v, (at, k)))
        body = node[tag.name]
        if type(body) is not list:
            continue
        if tag.children == "items":  # walked as a list at the tag's place
            push((body, at))
        elif tag.children == "pairs":
            for i in reversed(range(len(body))):
                pair = body[i]
                if type(pair) is list and len(pair) == 2:
                    push((pair[1], ((at, i), 1)))
                    push((pair[0], ((at, i), 0)))


def _tag(node: dict[Any, Any]) -> Tag | None:
    """The grammar's tag of an object; None for a plain object or one the decoder refuses."""
    if len(node) == 1:
        for k in node:
            return TAGS.get(k)
    try:
        name = tag_of(node)
    except ValueError:
        return None
    return TAGS.get(name) if name is not None else None


def references(node: Any, root: Path = "value") -> Iterator[Found]:
    """Every ``$ref`` and ``$enum`` with a string body in ``node`` (parsed JSON, e.g. a
    manifest's ``kwargs``; ``root`` labels its places), in document order."""
    for at, tag, n in _tagged(node, root, REFERENCE_KINDS):
        body = n[tag.name]
        if type(body) is str:
            yield Found(at, tag.name, body, n.get(_MEMBER[tag.kind]))


def payload_uses(node: Any, root: Path = "value") -> dict[str, list[Found]]:
    """Payload digest -> every ``$code``/``$object`` node in ``node`` that uses it."""
    uses: dict[str, list[Found]] = {}
    for at, tag, n in _tagged(node, root, frozenset({"payload"})):
        body = n[tag.name]
        if type(body) is str:
            uses.setdefault(body, []).append(Found(at, tag.name, body))
    return uses
