"""The gymnasium backend (0.28.1 through 1.x): resolution (:mod:`.resolve`), building
(:mod:`.build`), release differences (:mod:`.compat`, :mod:`.lines`)."""

from __future__ import annotations

import gymnasium

from ..library import LibraryBackend
from . import build

__all__ = ["BACKEND"]

#: Resolution is capture-side: loaded on first use, never in a worker that only builds.
BACKEND = LibraryBackend(gymnasium, resolve=f"{__name__}.resolve", build=build,
                         memo_strings_only=False)
