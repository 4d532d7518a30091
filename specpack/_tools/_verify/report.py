"""The outcome of ``verify``: :class:`VerifyReport` and its verdict statuses."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..._core._process.launch import label

__all__ = ["GLOBAL_GENERATOR", "HASH_ORDER", "IDENTICAL", "NOT_COMPARED", "NOT_IDENTICAL",
           "NOT_REPRODUCIBLE", "REBUILD_ERROR", "ROLLOUT_ERROR", "STATUSES", "TIMEOUT", "UNSEEDED",
           "UNSEEDED_CAUSES", "Status", "VerifyReport", "seeds_text"]

Status = Literal["identical", "not_identical", "not_reproducible", "unseeded", "not_compared",
                 "rollout_error", "rebuild_error", "timeout"]
#: Both rollouts completed, were compared value by value, and match (the only truthy status).
IDENTICAL: Status = "identical"
#: Reproducible here (two builds in this process agree), different across the boundary.
NOT_IDENTICAL: Status = "not_identical"
#: Two builds here (or two rebuilds under one hash seed) already differ: nothing stable to
#: compare the rebuild with.
NOT_REPRODUCIBLE: Status = "not_reproducible"
#: The rollout depends on state ``reset(seed=...)`` does not seed: a global generator or hash
#: order (``cause`` says which, the first finding names it with the fix). Never chance.
UNSEEDED: Status = "unseeded"
#: ``cause`` of an ``unseeded`` report: a global generator was drawn from.
GLOBAL_GENERATOR = "global_generator"
#: ``cause`` of an ``unseeded`` report: the rollout follows hash order (``PYTHONHASHSEED``).
HASH_ORDER = "hash_order"
#: Every ``cause`` an ``unseeded`` report can have.
UNSEEDED_CAUSES = (GLOBAL_GENERATOR, HASH_ORDER)
#: The rollout was not compared (``nondeterministic=True``, or a value has no exact encoding).
NOT_COMPARED: Status = "not_compared"
#: The rollout raised (on one side or both).
ROLLOUT_ERROR: Status = "rollout_error"
#: Building (or running) the env failed or its process died, here or in the worker.
REBUILD_ERROR: Status = "rebuild_error"
#: The deadline passed; the worker was killed.
TIMEOUT: Status = "timeout"
STATUSES: tuple[Status, ...] = (IDENTICAL, NOT_IDENTICAL, NOT_REPRODUCIBLE, UNSEEDED,
                                NOT_COMPARED, ROLLOUT_ERROR, REBUILD_ERROR, TIMEOUT)

_HEADLINES = {
    IDENTICAL: "identical",
    NOT_IDENTICAL: "NOT identical",
    NOT_REPRODUCIBLE: "NOT reproducible",
    UNSEEDED: "NOT reproducible: depends on state reset(seed=) does not seed",
    NOT_COMPARED: "rollout NOT compared",
    ROLLOUT_ERROR: "rollout error",
    REBUILD_ERROR: "rebuild error",
    TIMEOUT: "timeout",
}


@dataclass
class VerifyReport:
    """The outcome of :func:`specpack.verify`: truthy iff ``status == "identical"``.

    ``identical``: both rollouts completed, were compared and matched, and the rebuild agreed
    with the build here on everything else compared. Every other status is falsy.

    Attributes
    ----------
    status
        One of :data:`STATUSES`.
    identical
        ``status == "identical"``.
    differences
        One line per finding (a rebuild error carries the worker's traceback text).
    where
        The worker's start method (``"subprocess"``, ``"bare"``, ``"spawn"``, ``"forkserver"``).
    steps, seed
        The rollout compared.
    rollout_compared
        True when the two rollouts were compared value by value.
    elapsed
        Seconds the whole call took.
    notes
        Remarks that do not make the report falsy.
    stdout, stderr
        What the env wrote in the worker (bounded).
    ignore_info
        The ``info`` keys left out of the comparison (``verify(ignore_info=...)``).
    hash_seeds
        The ``PYTHONHASHSEED`` of ``"here"``, ``"rebuild"`` and ``"control"`` (the hash-order
        control); ``None`` where it is random or not set by specpack.
    cause
        For ``unseeded``: ``"global_generator"`` or ``"hash_order"``; else ``None``.
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
    ignore_info: list[str] = field(default_factory=list)
    hash_seeds: dict[str, int | None] = field(default_factory=dict)
    cause: str | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown verify status {self.status!r}")
        if (self.status == UNSEEDED) != (self.cause is not None) or (
                self.cause is not None and self.cause not in UNSEEDED_CAUSES):
            raise ValueError(f"cause={self.cause!r} contradicts status={self.status!r}")
        if self.identical != (self.status == IDENTICAL):
            raise ValueError(f"identical={self.identical} contradicts status={self.status!r}")
        if self.identical and not self.rollout_compared:
            raise ValueError("an identical report compared the rollouts (rollout_compared=True)")

    def __bool__(self) -> bool:
        return self.status == IDENTICAL

    def __str__(self) -> str:
        place = label(self.where)
        head = _HEADLINES[self.status]
        if self.differences and self.status != IDENTICAL:
            head += f" ({len(self.differences)} finding{'s' if len(self.differences) > 1 else ''})"
        lines = [f"verify ({place}, {self.steps} steps, seed {self.seed}, "
                 f"{self.elapsed:.2f} s): {head}"]
        for d in self.differences:
            first, *rest = d.splitlines() or [""]
            lines.append(f"  - {first}")
            lines += [f"    {line}" for line in rest]
        if self.cause is not None:
            lines.append(f"  cause: {self.cause}")
        lines += [f"  note: {n}" for n in self.notes]
        if self.ignore_info:
            lines.append(f"  info keys left out: {', '.join(map(repr, self.ignore_info))}")
        if self.hash_seeds:
            lines.append(f"  hash seeds: {seeds_text(self.hash_seeds)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data (``specpack verify --json``)."""
        return asdict(self)


def seeds_text(seeds: dict[str, int | None]) -> str:
    """``"here random, rebuild 1, control 2"``: the PYTHONHASHSEED of each process."""
    return ", ".join(f"{side} {'random' if s is None else s}" for side, s in seeds.items())
