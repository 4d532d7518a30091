"""The legacy ``gym`` (0.26.x) backend: resolution (:mod:`.resolve`), building (:mod:`.build`),
the recorders of gym's own wrappers (:mod:`.wrappers`) and numpy-2 diagnosis (:mod:`.numpy2`)."""

from __future__ import annotations

import gym

from ..library import LibraryBackend
from . import build, resolve

__all__ = ["BACKEND"]

BACKEND = LibraryBackend(
    gym, resolve=resolve, build=build,
    # string entry points only (also skips unversioned ids: gym.make resolves and warns)
    memo_strings_only=True,
)
