"""The typed-JSON value grammar: its tags and its limits, defined once.

Plain JSON carries ``null``, booleans, strings, lists, str-keyed objects, ints and finite
floats as themselves. Everything else is an object whose one ``$`` key is the *tag*; a few tags
allow named sibling keys (``$enum`` has ``name``). :data:`TAGS` holds one :class:`Tag` per tag:
its name, the Python types the encoder writes with it, the JSON type of its body, the sibling
keys it allows, how the walkers reach the values inside it (:attr:`Tag.children`) and the
*kind* the encoder, the decoder and the walkers dispatch on. A tag is added here, once; a tag of
a new kind also needs that kind's handler in :mod:`.encode`, :mod:`.decode` and :mod:`.walk`.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .._carry.carried import Blob, EnumRef
from .._carry.ref import CodeRef
from .._carry.tree import MAX_INT_BITS

__all__ = ["BY_TYPE", "MAX_DEPTH", "TAGS", "Tag"]

#: What a tag's body holds, for the walkers: nothing to walk (``"leaf"``), a list of values
#: (``"items"``) or a list of ``[key, value]`` pairs (``"pairs"``).
Children = Literal["leaf", "items", "pairs"]


@dataclass(frozen=True)
class Tag:
    """One tag of the grammar.

    Attributes
    ----------
    name
        The key, ``"$tuple"``.
    kind
        What the encoder, decoder and walkers dispatch on (several tags share a kind:
        ``$set``/``$frozenset`` are ``"members"``, ``$code``/``$object`` are ``"payload"``).
    body
        The JSON type the body must have (``str``, ``list`` or ``dict``; ``None``: checked by
        the kind's handler).
    python
        The exact Python types written with this tag (``type(value) is ...``); the first one
        is what the decoder builds for the container kinds.
    siblings
        Keys allowed next to the tag (``$enum``: ``name``; ``$ref``: ``registered``, the id
        under which importing the module registers the callable, for code with no importable
        name, or ``args`` and ``keywords``, the arguments a ``functools.partial`` of it binds).
    children
        How values nested inside are reached (see :data:`Children`).
    valued
        The siblings that hold typed values (a list of values, an object of values), which
        the decoder decodes and the walkers enter like any value.
    """

    name: str
    kind: str
    body: type | None
    python: tuple[type, ...] = ()
    siblings: frozenset[str] = frozenset()
    children: Children = "leaf"
    valued: frozenset[str] = frozenset()


_TAG_LIST = (
    Tag("$int", "bigint", str, (int,)),
    Tag("$float", "float", str, (float,)),
    Tag("$bytes", "bytes", str, (bytes,)),
    Tag("$complex", "complex", list, (complex,)),
    Tag("$tuple", "sequence", list, (tuple,), children="items"),
    Tag("$set", "members", list, (set,), children="items"),
    Tag("$frozenset", "members", list, (frozenset,), children="items"),
    Tag("$dict", "pairs", list, (dict,), children="pairs"),
    Tag("$ndarray", "array", dict, (np.ndarray,)),
    Tag("$npscalar", "scalar", dict, (np.generic,)),
    Tag("$enum", "enum", str, (EnumRef,), siblings=frozenset({"name"})),
    Tag("$ref", "ref", str, (CodeRef,), siblings=frozenset({"registered", "args", "keywords"}),
        valued=frozenset({"args", "keywords"})),
    Tag("$code", "payload", str, (CodeRef,)),
    Tag("$object", "payload", str, (Blob,)),
)

#: Every tag of the grammar, by name.
TAGS: dict[str, Tag] = {t.name: t for t in _TAG_LIST}
#: The tag the encoder writes for a value of exactly this type (containers and scalars whose
#: tag depends on the type alone; ints, floats, dicts, code and numpy values depend on the
#: value too and are chosen by the encoder).
BY_TYPE: dict[type, Tag] = {
    bytes: TAGS["$bytes"], complex: TAGS["$complex"], tuple: TAGS["$tuple"],
    set: TAGS["$set"], frozenset: TAGS["$frozenset"], np.ndarray: TAGS["$ndarray"],
}
#: The kinds whose tags name code by reference (what ``allow`` checks).
REFERENCE_KINDS = frozenset({"ref", "enum"})
#: The payload kind of each payload tag (the ``kind`` of its payload-table entry).
PAYLOAD_KIND = {"$code": "code", "$object": "object"}

#: Ints within this bound are plain JSON numbers; larger ones are ``$int`` (and a ``$int``
#: within it is refused: one spelling per value).
SAFE_INT = 2**53
#: ``$int`` decimal strings hold at most this many digits (Python's default str limit); the
#: encoder writes hexadecimal beyond it.
MAX_DECIMAL_DIGITS = 4300
#: ``$int`` hexadecimal strings hold at most this many digits: exactly the largest int a pack
#: carries (:data:`specpack._core._carry.tree.MAX_INT_BITS`).
MAX_HEX_DIGITS = MAX_INT_BITS // 4
#: The longest ``$int`` string: a sign, ``0x`` and the digits.
MAX_INT_CHARS = MAX_HEX_DIGITS + 3
#: The exact spelling of a ``$int`` body.
INT_PATTERN = re.compile(r"[+-]?(0x[0-9a-f]+|[0-9]+)")
#: Deepest value nesting a manifest may hold: what ``capture`` accepts, plus the containers a
#: pack puts around its kwargs.
MAX_DEPTH = 200 + 8
#: Deepest JSON nesting of a whole manifest (a ``$dict`` level takes three JSON levels).
MAX_JSON_DEPTH = 3 * MAX_DEPTH + 16
MAX_ARRAY_ITEMS = 50_000_000
MAX_ARRAY_BYTES = 2**31
#: Members of one ``$set``/``$frozenset`` or keys of one ``$dict`` that may share one hash
#: value; more is a hash-collision flood (quadratic to insert) and is refused.
MAX_SAME_HASH = 32
#: numpy dtype kinds written as a list of numbers (others as base64).
VALUE_KINDS = frozenset("biuf")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
#: The ``$float`` bodies.
FLOAT_WORDS = ("nan", "inf", "-inf")


def tag_of(node: dict[str, Any]) -> str | None:
    """The tag of a JSON object: its one ``$`` key, ``None`` for a plain object.

    Raises ``ValueError`` listing the tags when there is more than one.
    """
    if len(node) == 1:
        for k in node:
            return k if type(k) is str and k[:1] == "$" else None
    found = None
    for k in node:
        if type(k) is str and k[:1] == "$":
            if found is not None:
                tags = [t for t in node if type(t) is str and t[:1] == "$"]
                raise ValueError(f"more than one type tag ({', '.join(tags[:5])})")
            found = k
    return found


#: Decimal digits converted at a time when this interpreter's int/str limit is below the
#: grammar's (Python's smallest allowed limit is 640).
_CHUNK_DIGITS = 600
_CHUNK = 10**_CHUNK_DIGITS


def dotted_name(name: str) -> bool:
    """Whether ``name`` is a dotted Python name (``pkg.mod``, ``Outer.Inner``).

    Names up to 200 characters are remembered (a file names the same modules many times).
    """
    return _dotted_short(name) if len(name) <= 200 else _dotted(name)


def _dotted(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


_dotted_short = functools.lru_cache(maxsize=4096)(_dotted)


def _str_limit() -> int:
    get = getattr(sys, "get_int_max_str_digits", None)
    return int(get()) if get is not None else 0


def decimal_text(x: int) -> str:
    """``str(x)``, also where ``sys.set_int_max_str_digits`` is set below the grammar's 4,300.

    The encoder's spelling must not depend on the interpreter (the fingerprint hashes it).
    """
    limit = _str_limit()
    if limit == 0 or limit >= MAX_DECIMAL_DIGITS:
        try:
            return str(x)
        except ValueError:  # a few digits more than the limit: convert in chunks
            pass
    sign, x = ("-", -x) if x < 0 else ("", x)
    chunks = []
    while x >= _CHUNK:
        x, r = divmod(x, _CHUNK)
        chunks.append(f"{r:0{_CHUNK_DIGITS}d}")
    chunks.append(str(x))
    return sign + "".join(reversed(chunks))


def read_decimal(text: str) -> int:
    """``int(text)`` of a signed decimal of at most 4,300 digits, whatever the interpreter's
    ``sys.set_int_max_str_digits`` (the counterpart of :func:`decimal_text`)."""
    if len(text) <= 640:  # within every limit Python allows
        return int(text)
    limit = _str_limit()
    if limit == 0 or len(text) <= limit:
        return int(text)
    sign = text[:1] if text[:1] in "+-" else ""
    digits = text[len(sign):]
    value = 0
    for i in range(0, len(digits), _CHUNK_DIGITS):
        chunk = digits[i:i + _CHUNK_DIGITS]
        value = value * 10 ** len(chunk) + int(chunk)
    return -value if sign == "-" else value
