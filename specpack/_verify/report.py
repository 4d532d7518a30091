"""The outcome of ``verify``: :class:`VerifyReport` and its verdict statuses."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "IDENTICAL",
    "NOT_IDENTICAL",
    "NOT_REPRODUCIBLE",
    "REBUILD_ERROR",
    "ROLLOUT_ERROR",
    "STATUSES",
    "TIMEOUT",
    "Status",
    "VerifyReport",
]

Status = Literal["identical", "not_identical", "not_reproducible", "rollout_error",
                 "rebuild_error", "timeout"]
#: The rebuild matches the build here.
IDENTICAL: Status = "identical"
#: Reproducible here (two builds in this process agree), different across the boundary.
NOT_IDENTICAL: Status = "not_identical"
#: Two builds in this process already differ: nothing to compare the rebuild with.
NOT_REPRODUCIBLE: Status = "not_reproducible"
#: The rollout raised (on one side or both).
ROLLOUT_ERROR: Status = "rollout_error"
#: Building (or running) the env failed or its process died, here or in the worker.
REBUILD_ERROR: Status = "rebuild_error"
#: The deadline passed; the worker was killed.
TIMEOUT: Status = "timeout"
STATUSES: tuple[Status, ...] = (IDENTICAL, NOT_IDENTICAL, NOT_REPRODUCIBLE, ROLLOUT_ERROR,
                                REBUILD_ERROR, TIMEOUT)

_HEADLINES = {
    IDENTICAL: "identical",
    NOT_IDENTICAL: "NOT identical",
    NOT_REPRODUCIBLE: "NOT reproducible here",
    ROLLOUT_ERROR: "rollout error",
    REBUILD_ERROR: "rebuild error",
    TIMEOUT: "timeout",
}


@dataclass
class VerifyReport:
    """The outcome of :func:`specpack.verify`: truthy iff ``status == "identical"``.

    Attributes
    ----------
    status
        One of :data:`STATUSES`.
    identical
        ``status == "identical"``.
    differences
        One line per finding (a rebuild error carries the worker's traceback text).
    where
        The worker's start method (``"subprocess"``, ``"spawn"``, ``"forkserver"``).
    steps, seed
        The rollout compared.
    rollout_compared
        False when the spec says ``nondeterministic=True`` (only the structure is compared).
    elapsed
        Seconds the whole call took.
    notes
        Remarks that do not make the report falsy.
    stdout, stderr
        What the env wrote in the worker (bounded).
    """

    status: Status
    identical: bool
    differences: list[str]
    where: str
    steps: int
    seed: int
    rollout_compared: bool
    elapsed: float
    notes: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown verify status {self.status!r}")
        if self.identical != (self.status == IDENTICAL):
            raise ValueError(f"identical={self.identical} contradicts status={self.status!r}")

    def __bool__(self) -> bool:
        return self.status == IDENTICAL

    def __str__(self) -> str:
        place = "fresh interpreter" if self.where == "subprocess" else f"{self.where} child"
        head = _HEADLINES[self.status]
        if self.differences and self.status != IDENTICAL:
            head += f" ({len(self.differences)} finding{'s' if len(self.differences) > 1 else ''})"
        lines = [f"verify ({place}, {self.steps} steps, seed {self.seed}, "
                 f"{self.elapsed:.2f} s): {head}"]
        for d in self.differences:
            first, *rest = d.splitlines() or [""]
            lines.append(f"  - {first}")
            lines += [f"    {line}" for line in rest]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data (``specpack verify --json``)."""
        return asdict(self)
