"""``json.loads`` with the typed-JSON grammar's rules for what plain JSON may say."""

from __future__ import annotations

import json
from typing import Any

from .tags import MAX_DECIMAL_DIGITS, read_decimal

__all__ = ["read_json"]


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
