"""The gymnasium (1.x) backend: resolution (:mod:`.resolve`), building (:mod:`.build`) and the
differences between 1.x releases (:mod:`.compat`), behind the :class:`~specpack.backends.Backend`
interface."""

from __future__ import annotations

import gymnasium

from ..library import LibraryBackend
from . import build

__all__ = ["BACKEND"]

#: Resolution is capture-side: its module (and the modules it imports) loads on first use, never
#: in a worker that only builds.
BACKEND = LibraryBackend(gymnasium, resolve=f"{__name__}.resolve", build=build,
                         memo_strings_only=False)
