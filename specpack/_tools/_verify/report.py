"""The outcomes of ``verify`` and ``check``: :class:`VerifyReport`, :class:`CheckReport` and
their verdict statuses."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..._core._process.launch import label
from ..._core._text import printable

__all__ = ["GLOBAL_GENERATOR", "HASH_ORDER", "IDENTICAL", "NOT_COMPARED", "NOT_IDENTICAL",
           "NOT_REPRODUCIBLE", "REBUILD_ERROR", "ROLLOUT_ERROR", "STATUSES", "TIMEOUT", "UNSEEDED",
           "UNSEEDED_CAUSES", "CheckReport", "Status", "VerifyReport", "seeds_text",
           "versions_text"]

Status = Literal["identical", "not_identical", "not_reproducible", "unseeded", "not_compared",
                 "rollout_error", "rebuild_error", "timeout"]
#: Both rollouts completed, were compared value by value, and match (the only truthy status).
IDENTICAL: Status = "identical"
#: Reproducible here (two builds in this process agree), different across the boundary.
NOT_IDENTICAL: Status = "not_identical"
#: Two builds here (or two rebuilds under one hash seed) already differ: nothing to compare.
NOT_REPRODUCIBLE: Status = "not_reproducible"
#: The rollout depends on state ``reset(seed=...)`` does not seed (``cause`` says which).
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
    """The outcome of :func:`specpack.verify`: truthy iff ``status == "identical"`` (both
    rollouts completed, were compared and matched, and so did everything else compared).

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
        control); ``None`` where random or not set by specpack.
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


_LINES = 12  # of one finding (a rebuild's traceback) ``str(report)`` shows
_WIDTH = 2000  # characters of one line ``str(report)`` shows
#: The versions a report always names (the backend is whichever the seal has).
_BASE = ("python", "gymnasium", "gym", "numpy")
_HIDDEN = ("PYTHONHASHSEED",)


def versions_text(sealed: Mapping[str, str], checked: Mapping[str, str]) -> str:
    """``"sealed under gymnasium 1.4.0, ...; checked under gymnasium 1.0.0, ..."``: python,
    the backend and numpy, then every other entry that differs."""
    keys = [k for k in _BASE if k in sealed or k in checked]
    keys += [k for k in dict.fromkeys([*sealed, *checked])
             if k not in keys and sealed.get(k) != checked.get(k)
             and (k not in _HIDDEN or (k in sealed and k in checked))]

    def side(versions: Mapping[str, str]) -> str:
        return ", ".join(f"{k} {versions.get(k, 'absent')}" for k in keys)

    if all(sealed.get(k) == checked.get(k) for k in keys):
        return f"sealed and checked under {side(sealed)}"
    return f"sealed under {side(sealed)}; checked under {side(checked)}"


@dataclass
class CheckReport:
    """The outcome of :func:`specpack.check`: truthy iff ``status == "identical"``.

    Attributes
    ----------
    status
        In verify's vocabulary: ``identical``, ``not_identical`` (a layer, the spaces, or a
        rollout digest differs), ``not_compared`` (the spec says ``nondeterministic=True``, or
        a value has no exact encoding), ``rollout_error`` (the rollout raised where the seal's
        did not), ``rebuild_error``, ``timeout``.
    differences
        One line per finding; the first rollout difference names its step and field.
    where
        Where the rebuild ran (``"subprocess"``, ``"here"``, ...).
    steps, seed
        The seal's rollout.
    step, field
        The first step that differs and its field (``"observation"``, ``"reset info"``,
        ``"event"``, ``"length"``, ``"error"``), or None.
    rollout_compared
        True when the rollout's digests were compared.
    elapsed
        Seconds the check took.
    notes
        Remarks that do not make the report falsy.
    sealed_with, checked_with
        The versions the seal was made under and those of the rebuild.
    stdout, stderr
        What the env wrote in the worker (bounded).
    """

    status: Status
    differences: list[str]
    where: str
    steps: int
    seed: int
    step: int | None = None
    field: str | None = None  # (named as the contract says; dataclasses.field below)
    rollout_compared: bool = False
    elapsed: float = 0.0
    notes: list[str] = dataclasses.field(default_factory=list)
    sealed_with: dict[str, str] = dataclasses.field(default_factory=dict)
    checked_with: dict[str, str] = dataclasses.field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown check status {self.status!r}")

    def __bool__(self) -> bool:
        return self.status == IDENTICAL

    def __str__(self) -> str:
        place = {"subprocess": "fresh interpreter", "here": "this process"}.get(
            self.where, f"{self.where} child")
        n = len(self.differences)
        head = self.status.replace("_", " ")
        if n and self.status != IDENTICAL:
            head += f" ({n} finding{'s' if n > 1 else ''})"
        lines = [f"check against the seal ({place}, {self.steps} steps, seed {self.seed}, "
                 f"{self.elapsed:.2f} s): {head}"]
        # Each line escaped (the file and the env wrote them): none can pose as a report line.
        for d in self.differences:
            first, *rest = d.splitlines() or [""]
            lines.append(f"  - {printable(first, _WIDTH)}")
            lines += [f"    {printable(line, _WIDTH)}" for line in rest[:_LINES]]
            if len(rest) > _LINES:
                lines.append(f"    ... ({len(rest) - _LINES} more lines)")
        lines += [f"  note: {printable(str(n), _WIDTH)}" for n in self.notes]
        if self.checked_with:
            versions = versions_text(self.sealed_with, self.checked_with)
            lines.append(f"  {printable(versions, _WIDTH)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data (``specpack check --json``)."""
        return asdict(self)
