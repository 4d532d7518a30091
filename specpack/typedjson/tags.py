"""The typed-JSON value grammar: its tags and its limits, defined once.

Plain JSON carries ``null``, booleans, strings, lists, str-keyed objects, ints up to 2**53 and
finite floats as themselves. Everything else is a one-key object whose key starts with ``$``
(the *tag*). The encoder, the decoder and the walkers (references, payload uses, rendering) all
read this table, so a tag is added in one place.
"""

from __future__ import annotations

import re

__all__ = ["MAX_DEPTH", "TAGS"]

#: Ints within this bound are plain JSON numbers; larger ones are ``$int``.
SAFE_INT = 2**53
#: Deepest value nesting a manifest may hold: what ``capture`` accepts, plus the containers a
#: pack puts around its kwargs.
MAX_DEPTH = 200 + 8
#: Deepest JSON nesting of a whole manifest (a ``$dict`` level takes three JSON levels).
MAX_JSON_DEPTH = 3 * MAX_DEPTH + 16
MAX_INT_CHARS = 100_000
MAX_ARRAY_ITEMS = 50_000_000
MAX_ARRAY_BYTES = 2**31
#: numpy dtype kinds written as a list of numbers (others as base64).
VALUE_KINDS = frozenset("biuf")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")

#: Every tag of the grammar.
TAGS = ("$int", "$float", "$bytes", "$complex", "$tuple", "$set", "$frozenset", "$dict",
        "$ndarray", "$npscalar", "$enum", "$ref", "$code", "$object")
