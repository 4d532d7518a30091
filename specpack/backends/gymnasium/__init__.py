"""The gymnasium (1.x) backend: resolution (:mod:`.resolve`), building (:mod:`.build`) and the
differences between 1.x releases (:mod:`.compat`), behind the :class:`~specpack.backends.Backend`
interface."""

from __future__ import annotations

from typing import Any

import gymnasium
from gymnasium.envs.registration import EnvSpec

from ..library import LibraryBackend
from . import build, resolve

__all__ = ["BACKEND"]


def _registry() -> Any:
    from gymnasium.envs.registration import registry

    return registry


BACKEND = LibraryBackend(
    name="gymnasium",
    library_prefixes=("gymnasium.",),
    owned=(gymnasium.Env, EnvSpec),
    resolve=resolve,
    build=build,
    registry=_registry,
    register=gymnasium.register,
    memo_strings_only=False,
)
