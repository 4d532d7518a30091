"""The gymnasium backend (0.28.1 through 1.x): resolution (:mod:`.resolve`), building
(:mod:`.build`), the differences between 1.x releases (:mod:`.compat`) and between the 0.28/0.29
and 1.x lines (:mod:`.lines`), behind the :class:`~specpack.backends.Backend` interface."""

from __future__ import annotations

import gymnasium

from ..library import LibraryBackend
from . import build, resolve

__all__ = ["BACKEND"]

BACKEND = LibraryBackend(gymnasium, resolve=resolve, build=build, memo_strings_only=False)
