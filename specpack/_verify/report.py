"""The outcome of ``verify``: :class:`VerifyReport`."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["VerifyReport"]


@dataclass
class VerifyReport:
    """The outcome of :meth:`SpecPack.verify`: truthy iff the rebuild is identical."""

    identical: bool
    differences: list[str]
    where: str
    steps: int
    seed: int
    rollout_compared: bool
    elapsed: float
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.identical

    def __str__(self) -> str:
        head = "identical" if self.identical else f"NOT identical ({len(self.differences)})"
        lines = [f"verify ({self.where}, {self.steps} steps, seed {self.seed}): {head}"]
        lines += [f"  - {d}" for d in self.differences]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)
