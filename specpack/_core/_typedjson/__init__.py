"""Typed JSON, the value grammar of pack manifests (:mod:`.tags`): :func:`encode`, and
:func:`decode` which imports and unpickles nothing; :mod:`.walk` reads encoded data."""

from __future__ import annotations

from .decode import decode
from .encode import canonical_json, encode

__all__ = ["canonical_json", "decode", "encode"]
