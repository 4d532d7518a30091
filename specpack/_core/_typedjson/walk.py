"""Walking encoded typed JSON without decoding it: references, payload uses and rendering.

The walkers read the grammar from :mod:`.tags` (which tags hold values, and how), so they see
exactly the values the decoder would build. They are iterative (any nesting is safe) and build
no path text while walking: a place is a chain of ``(parent, key)`` pairs (:data:`Path`),
turned into text only when reported (:func:`path_text`), so a file whose keys are 100,000
characters long costs no more to walk than to read.

- :func:`references`: every ``$ref`` and ``$enum`` (what ``allow`` checks and ``inspect``
  lists);
- :func:`payload_uses`: where each ``$code``/``$object`` payload is used;
- :func:`render`, :func:`render_code`, :func:`render_items`: the Python-like text
  ``specpack inspect`` prints, bounded in length and cost (defined in :mod:`.render`, the
  walk over values for text, and importable from here).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeAlias

from .._text import printable
from .render import render, render_code, render_items, size_text
from .tags import REFERENCE_KINDS, TAGS, Tag, tag_of

__all__ = ["Found", "Path", "path_text", "payload_uses", "references", "render",
           "render_code", "render_items", "size_text"]

#: A place in a JSON tree: a root label, or ``(parent, key)`` with a str key (object member)
#: or an int key (list item, tag body item, ``[key, value]`` pair slot).
Path: TypeAlias = "str | tuple[Path, str | int]"

_KEY_LIMIT = 80
#: The sibling a reference's ``member`` comes from: an ``$enum``'s ``name``, a registry
#: ``$ref``'s ``registered`` id.
_MEMBER = {"enum": "name", "ref": "registered"}


def path_text(at: Path, *, escape: bool = True, limit: int = 300) -> str:
    """The text of a place: ``kwargs.cfg[2].name``.

    Each key is cut to 80 characters and the whole to ``limit`` (its middle is cut), so the
    text is bounded whatever the file holds. ``escape=True`` escapes non-printable characters
    (:func:`specpack._core._text.printable`), for messages; ``False`` keeps them raw, for JSON
    reports whose writer escapes.
    """
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


class Found:
    """One tagged node found by a walk: where it is and what it names.

    ``body`` is the tag's string (``"module:qualname"``, or a payload digest); ``module`` and
    ``qualname`` split a reference; ``member`` is an ``$enum``'s ``name`` or a registry
    ``$ref``'s ``registered`` id (the qualname is then only a label: the callable is the one
    importing the module registers under that id).
    """

    __slots__ = ("at", "body", "member", "tag")

    def __init__(self, at: Path, tag: str, body: str, member: Any = None) -> None:
        self.at = at
        self.tag = tag
        self.body = body
        self.member = member

    @property
    def module(self) -> str:
        """The module part of a reference (``""`` when it has none)."""
        mod, sep, _ = self.body.partition(":")
        return mod if sep else self.body

    @property
    def qualname(self) -> str:
        """The qualified-name part of a reference."""
        return self.body.partition(":")[2]

    @property
    def where(self) -> str:
        """The place, raw (for JSON reports) and bounded."""
        return path_text(self.at, escape=False)

    def path(self, escape: bool = True) -> str:
        """The place as text (escaped for messages by default)."""
        return path_text(self.at, escape=escape)

    def __iter__(self) -> Iterator[str]:
        """``where, module, qualname = found`` (the walk interface's triple)."""
        return iter((self.where, self.module, self.qualname))

    def __repr__(self) -> str:
        return f"Found({self.tag} {self.body[:80]!r} at {self.path()})"


def _tagged(node: Any, root: Path, kinds: frozenset[str]) -> Iterator[tuple[Path, Tag, Any]]:
    """``(place, tag, node)`` of every tag node of ``kinds``, in document order.

    Follows the grammar: plain objects and lists are walked, a tag's body is walked only when
    its tag holds values (:attr:`Tag.children`). A node the decoder would refuse (unknown or
    several tags) is walked as a plain object, so nothing inside it is missed.
    """
    stack: list[tuple[Any, Path]] = [(node, root)]
    pop, push = stack.pop, stack.append
    while stack:
        node, at = pop()
        if type(node) is list:
            for i in range(len(node) - 1, -1, -1):
                v = node[i]
                if type(v) is dict or type(v) is list:  # scalars hold nothing to find
                    push((v, (at, i)))
            continue
        if type(node) is not dict:
            continue
        tag = _tag(node)
        if tag is None:
            items = list(node.items())
            for i in range(len(items) - 1, -1, -1):
                k, v = items[i]
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
        if type(body) is not list or tag.children == "leaf":
            continue
        if tag.children == "items":
            for i in range(len(body) - 1, -1, -1):
                v = body[i]
                if type(v) is dict or type(v) is list:
                    push((v, (at, i)))
        else:  # pairs
            for i in range(len(body) - 1, -1, -1):
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
    """Every ``$ref`` and ``$enum`` in ``node`` (encoded typed JSON), in document order.

    Parameters
    ----------
    node
        Parsed JSON, e.g. a manifest's ``kwargs``.
    root
        The label its paths start from (``"kwargs"``).

    Returns
    -------
    Iterator[Found]
        ``found.module``, ``found.qualname``, ``found.tag`` and the place (``found.at``; text
        with ``found.where`` or ``found.path()``, built only when asked). A node whose body
        is not a string is skipped (the decoder refuses it).
    """
    for at, tag, n in _tagged(node, root, REFERENCE_KINDS):
        body = n[tag.name]
        if type(body) is str:
            yield Found(at, tag.name, body, n.get(_MEMBER[tag.kind]))


def payload_uses(node: Any, root: Path = "value") -> dict[str, list[Found]]:
    """Payload digest -> every ``$code``/``$object`` node in ``node`` that uses it.

    Paths are built only when asked (``found.where``).
    """
    uses: dict[str, list[Found]] = {}
    for at, tag, n in _tagged(node, root, frozenset({"payload"})):
        body = n[tag.name]
        if type(body) is str:
            uses.setdefault(body, []).append(Found(at, tag.name, body))
    return uses
