"""Carrying code and values across a process boundary.

- :mod:`.importable`: could a fresh interpreter import this module by name?
- :mod:`.code`: :class:`CodeRef`, a class or function by reference or by value.
- :mod:`.values`: kwargs trees lowered at capture (deep-copied, code carried, objects pickled)
  and materialised per build; :class:`Blob` and :class:`EnumRef`.

``CodeRef``, ``Blob`` and ``EnumRef`` are the public, read-only types a pack exposes
(``pack.entry_point``, ``layer.cls``, ``pack.carried()``).
"""

from __future__ import annotations

from .code import CodeRef
from .values import Blob, EnumRef

__all__ = ["Blob", "CodeRef", "EnumRef"]
