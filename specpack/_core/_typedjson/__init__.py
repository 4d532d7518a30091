"""Typed JSON: the value grammar of pack manifests, defined once (:mod:`.tags`).

:func:`encode` turns a lowered value into JSON-able data, :func:`decode` turns it back without
importing or unpickling anything; :mod:`.walk` finds references and payloads in encoded data.
"""

from __future__ import annotations

from .decode import decode
from .encode import canonical_json, encode

__all__ = ["canonical_json", "decode", "encode"]
