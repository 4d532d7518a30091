"""The gymnasium backend (0.28.1 through 1.x): resolution (:mod:`.resolve`), building
(:mod:`.build`), the differences between 1.x releases (:mod:`.compat`) and between the 0.28/0.29
and 1.x lines (:mod:`.lines`), behind the :class:`~specpack._core._backends.Backend` interface."""

from __future__ import annotations

import gymnasium

from ..library import LibraryBackend
from . import build

__all__ = ["BACKEND"]

#: Resolution is capture-side: its module (and the modules it imports) loads on first use, never
#: in a worker that only builds.
BACKEND = LibraryBackend(gymnasium, resolve=f"{__name__}.resolve", build=build,
                         memo_strings_only=False)
