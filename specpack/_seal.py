# stand-in: replaced at merge by helper S's module
"""A pack's reference rollout digest (stand-in with the contract's names, for the wiring)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckReport", "Seal", "check_seal", "make_seal"]


@dataclass(frozen=True)
class Seal:
    """Per-step digests of a reference rollout."""

    steps: int
    seed: int
    fields: tuple[str, ...]
    digests: tuple[tuple[str, ...], ...]
    layers: tuple[str, ...]
    spaces: str
    made_with: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckReport:
    """The result of comparing a rebuild with a seal."""

    status: str
    differences: tuple[str, ...] = ()
    step: int | None = None
    field: str | None = None

    def __bool__(self) -> bool:
        return self.status == "identical"


def _rollout(pack: Any, steps: int, seed: int) -> tuple[tuple[str, ...], ...]:
    env = pack.make()
    try:
        env.action_space.seed(seed)
        obs, _ = env.reset(seed=seed)
        out = []
        for _ in range(steps):
            a = env.action_space.sample()
            obs, r, term, trunc, _ = env.step(a)
            out.append(tuple(hashlib.sha256(repr(x).encode()).hexdigest()
                             for x in (a, obs, r, term, trunc)))
            if term or trunc:
                obs, _ = env.reset()
        return tuple(out)
    finally:
        env.close()


def make_seal(pack: Any, *, steps: int = 100, seed: int = 0, timeout: float = 120.0) -> Seal:
    """Roll out here (stand-in) and digest each step."""
    return Seal(steps, seed, ("action", "observation", "reward", "terminated", "truncated"),
                _rollout(pack, steps, seed), tuple(layer.name for layer in pack.layers), "",
                dict(pack.requires))


def check_seal(pack: Any, seal: Seal, *, where: str = "here",
               timeout: float = 120.0) -> CheckReport:
    """Rebuild and compare with ``seal``."""
    got = _rollout(pack, seal.steps, seal.seed)
    for i, (a, b) in enumerate(zip(got, seal.digests)):
        if a != b:
            j = next(k for k in range(len(a)) if a[k] != b[k])
            return CheckReport("not_identical", (f"step {i}",), i, seal.fields[j])
    return CheckReport("identical")
