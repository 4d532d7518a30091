"""The outcome of checking a pack against its seal: :class:`CheckReport`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..._core._text import printable
from .report import IDENTICAL, STATUSES, Status

__all__ = ["CheckReport", "versions_text"]

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
