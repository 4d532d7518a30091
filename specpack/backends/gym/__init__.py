"""The legacy ``gym`` (0.26.x) backend: resolution (:mod:`.resolve`), building (:mod:`.build`),
live-stack arguments (:mod:`.wrappers`) and numpy-2 diagnosis (:mod:`.numpy2`), behind the
:class:`~specpack.backends.Backend` interface."""

from __future__ import annotations

from typing import Any

import gym as _gym
from gym.envs.registration import EnvSpec as GymSpec

from ..library import LibraryBackend
from . import build, resolve
from .numpy2 import numpy2_problem

#: gym's partial type hints do not help here: treat the package as untyped.
gym: Any = _gym

__all__ = ["BACKEND", "numpy2_problem"]


def _registry() -> Any:
    from gym.envs.registration import registry

    return registry


BACKEND = LibraryBackend(
    name="gym",
    library_prefixes=("gym.",),
    owned=(gym.Env, GymSpec),
    resolve=resolve,
    build=build,
    registry=_registry,
    register=gym.register,
    # string entry points only (also skips unversioned ids: gym.make resolves and warns)
    memo_strings_only=True,
)
