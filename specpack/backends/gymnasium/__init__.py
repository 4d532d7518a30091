"""The gymnasium (1.x) backend: resolution (:mod:`.resolve`), building (:mod:`.build`) and the
differences between 1.x releases (:mod:`.compat`), behind the :class:`~specpack.backends.Backend`
interface."""

from __future__ import annotations

import gymnasium

from ..library import LibraryBackend
from . import build, resolve

__all__ = ["BACKEND"]

BACKEND = LibraryBackend(gymnasium, resolve=resolve, build=build, memo_strings_only=False)
