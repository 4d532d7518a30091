"""Carrying code and values across a process boundary: a stack of modules, each importing only
those below it (docs/how-it-works.md lists them bottom up). ``CodeRef``, ``Blob`` and ``EnumRef``
are the public, read-only types a pack exposes."""

from __future__ import annotations

from .carried import Blob, EnumRef
from .ref import CodeRef

__all__ = ["Blob", "CodeRef", "EnumRef"]
