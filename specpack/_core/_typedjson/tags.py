"""The typed-JSON grammar, defined once: plain JSON values are themselves, anything else is an
object whose one ``$`` key is its tag (:data:`TAGS`). A tag of a new kind also needs that
kind's handler in :mod:`.encode`, :mod:`.decode` and :mod:`.render`; and here, the limits, and
:func:`read_json`, what plain JSON text may say."""

from __future__ import annotations

import functools
import json
import re
import sys
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .._carry.carried import Blob, EnumRef
from .._carry.ref import CodeRef
from .._carry.tree import MAX_INT_BITS

__all__ = ["MAX_DEPTH", "TAGS", "Tag", "read_json"]


@dataclass(frozen=True)
class Tag:
    """One tag of the grammar."""

    name: str  # the key, "$tuple"
    kind: str  # what the encoder, decoder and walkers dispatch on ($set, $frozenset: "members")
    body: type | None  # the JSON type of the body (None: checked by the kind's handler)
    python: tuple[type, ...] = ()  # the exact Python types written; the decoder builds the first
    siblings: frozenset[str] = frozenset()  # keys allowed beside the tag
    children: Literal["leaf", "items", "pairs"] = "leaf"  # what the walkers find in the body
    valued: frozenset[str] = frozenset()  # the siblings that hold typed values


#: Every tag of the grammar, by name.
TAGS: dict[str, Tag] = {t.name: t for t in (
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
)}
#: The kinds whose tags name code by reference (what ``allow`` checks).
REFERENCE_KINDS = frozenset({"ref", "enum"})
#: The payload-table ``kind`` of each payload tag.
PAYLOAD_KIND = {"$code": "code", "$object": "object"}

#: Ints within this bound are plain JSON numbers, larger ones ``$int`` (a ``$int`` within it is
#: refused: one spelling per value).
SAFE_INT = 2**53
#: The most digits of a decimal ``$int`` (Python's default str limit); hexadecimal beyond.
MAX_DECIMAL_DIGITS = 4300
#: The most digits of a hexadecimal ``$int``: the largest int a pack carries.
MAX_HEX_DIGITS = MAX_INT_BITS // 4
#: The longest ``$int`` string: a sign, ``0x`` and the digits.
MAX_INT_CHARS = MAX_HEX_DIGITS + 3
INT_PATTERN = re.compile(r"[+-]?(0x[0-9a-f]+|[0-9]+)")
#: Deepest value nesting: what ``capture`` accepts, plus the containers around a pack's kwargs.
MAX_DEPTH = 200 + 8
#: Deepest JSON nesting of a whole manifest (a ``$dict`` level takes three JSON levels).
MAX_JSON_DEPTH = 3 * MAX_DEPTH + 16
MAX_ARRAY_ITEMS = 50_000_000
MAX_ARRAY_BYTES = 2**31
#: Members of a set or keys of a ``$dict`` that may share one hash value; more is a
#: hash-collision flood (quadratic to insert), refused.
MAX_SAME_HASH = 32
#: numpy dtype kinds written as a list of numbers (others as base64).
VALUE_KINDS = frozenset("biuf")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
FLOAT_WORDS = ("nan", "inf", "-inf")
#: Decimal digits converted at a time under an int/str limit below the grammar's (Python's
#: smallest allowed limit is 640).
_CHUNK_DIGITS = 600
_CHUNK = 10**_CHUNK_DIGITS


def tag_of(node: dict[str, Any]) -> str | None:
    """The one ``$`` key of a JSON object, None for a plain object; ValueError for several."""
    if len(node) == 1:
        for k in node:
            return k if type(k) is str and k[:1] == "$" else None
    tags = [k for k in node if type(k) is str and k[:1] == "$"]
    if len(tags) > 1:
        raise ValueError(f"more than one type tag ({', '.join(tags[:5])})")
    return tags[0] if tags else None


@functools.lru_cache(maxsize=4096)
def _dotted(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def dotted_name(name: str) -> bool:
    """Whether ``name`` is a dotted Python name (cached up to 200 characters: a file names the
    same modules many times)."""
    return _dotted(name) if len(name) <= 200 else _dotted.__wrapped__(name)


def _str_limit() -> int:
    get = getattr(sys, "get_int_max_str_digits", None)
    return int(get()) if get is not None else 0


def decimal_text(x: int) -> str:
    """``str(x)``, also under a ``sys.set_int_max_str_digits`` below the grammar's 4,300: the
    encoder's spelling must not depend on the interpreter (the fingerprint hashes it)."""
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
    """``int(text)`` of a decimal of at most 4,300 digits, under any int/str limit."""
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


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"duplicate key {k[:80]!r} in a JSON object")
            seen.add(k)
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name} (write {{\"$float\": \"nan\"}} etc.)")


def _exact_number(text: str) -> float:
    """A JSON number with a fraction or exponent; refused when a float cannot hold it."""
    f = float(text)
    if f - f != 0.0:
        raise ValueError(f"the number {text[:40]} is too large for a float (a float that "
                         "large is written {\"$float\": \"inf\"})")
    if f == 0.0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        raise ValueError(f"the number {text[:40]} is too small for a float: it would read "
                         "as 0.0")
    return f


def _int_literal(text: str) -> int:
    if len(text) - (text[0] == "-") > MAX_DECIMAL_DIGITS:
        raise ValueError(f"an integer literal of {len(text)} digits; ints beyond 2**53 are "
                         "written {\"$int\": \"...\"} (hexadecimal beyond 4300 digits)")
    return read_decimal(text)


def read_json(text: str) -> Any:
    """Parse JSON text as the grammar reads it; ValueError for duplicate keys, ``NaN`` literals,
    numbers a float cannot hold (``1e999999``, ``1e-999999``) and integers of more than 4,300
    digits (whatever ``sys.set_int_max_str_digits`` says); RecursionError on deep nesting."""
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates,
                      parse_float=_exact_number, parse_int=_int_literal)
