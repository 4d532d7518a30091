"""What an audit found: :class:`AuditReport` and its JSON; the statuses and :class:`Finding`
(defined in :mod:`.findings`) are handed on here, the table is drawn by :mod:`.table`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .findings import (
    CAPTURE_ERROR,
    EZPICKLE_GAP,
    FAILING,
    IDENTICAL,
    MISSING_DEPENDENCY,
    NEEDS_ARGUMENTS,
    NOT_COMPARED,
    NOT_IDENTICAL,
    NOT_REPRODUCIBLE,
    REBUILD_ERROR,
    ROLLOUT_ERROR,
    SKIPPED,
    STATUSES,
    TIMEOUT,
    UNSEEDED,
    Finding,
    clip,
)
from .table import summary

__all__ = [
    "CAPTURE_ERROR", "EZPICKLE_GAP", "FAILING", "IDENTICAL", "MISSING_DEPENDENCY",
    "NEEDS_ARGUMENTS", "NOT_COMPARED", "NOT_IDENTICAL", "NOT_REPRODUCIBLE", "REBUILD_ERROR",
    "ROLLOUT_ERROR", "SCHEMA", "SKIPPED", "STATUSES", "TIMEOUT", "UNSEEDED", "AuditReport",
    "Finding", "clip",
]

#: The ``schema`` of ``--json`` (2: ``not_reproducible``/``needs_arguments`` and ``step``;
#: 3: ``not_compared`` and ``rollout_error``; 4: ``output``, per finding and of the report;
#: 5: ``ezpickle_gap`` and the hash-order status, :data:`.findings.UNSEEDED`).
SCHEMA = "specpack.audit/5"


@dataclass
class AuditReport:
    """What :func:`specpack.audit` found: truthy iff no finding fails (see :data:`FAILING`).

    ``envs`` and ``wrappers`` keep the order of selection; ``counts()`` gives the number per
    status, ``to_json()`` the machine-readable report, ``str(report)`` the summary table.
    ``output`` is what the audit's own process printed outside any env (importing, selecting),
    in the form of :attr:`Finding.output`.
    """

    envs: list[Finding]
    wrappers: list[Finding]
    elapsed: float
    where: str
    steps: int
    seed: int
    jobs: int
    timeout: float
    versions: dict[str, str] = field(default_factory=dict)
    output: str = ""

    @property
    def findings(self) -> list[Finding]:
        """Every finding, envs first."""
        return [*self.envs, *self.wrappers]

    @property
    def failures(self) -> list[Finding]:
        """The findings that fail the audit."""
        return [f for f in self.findings if not f.portable]

    @property
    def portable(self) -> bool:
        """True iff nothing failed (see :data:`FAILING` for what does not fail)."""
        return not self.failures

    def __bool__(self) -> bool:
        return self.portable

    def counts(self, kind: str = "env") -> dict[str, int]:
        """The number of findings per status (every status listed, zeros included)."""
        items = self.envs if kind == "env" else self.wrappers
        out = dict.fromkeys(STATUSES if kind == "wrapper" else STATUSES[:-1], 0)
        for f in items:
            out[f.status] = out.get(f.status, 0) + 1
        return out

    def __getitem__(self, name: str) -> Finding:
        for f in self.findings:
            if f.name == name:
                return f
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``specpack audit --json`` (schema :data:`SCHEMA`)."""
        return {
            "schema": SCHEMA, "portable": self.portable, "elapsed": round(self.elapsed, 3),
            "where": self.where, "steps": self.steps, "seed": self.seed, "jobs": self.jobs,
            "timeout": self.timeout, "versions": dict(self.versions), "output": self.output,
            "counts": {"envs": self.counts("env"), "wrappers": self.counts("wrapper")},
            "envs": [f.to_dict() for f in self.envs],
            "wrappers": [f.to_dict() for f in self.wrappers],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def summary(self, *, verbose: bool = False, width: int | None = None) -> str:
        """The summary table (``str(report)``), wrapped within ``width`` columns (default: the
        terminal's); ``verbose``: with what each env printed, under it."""
        return summary(self, verbose=verbose, width=width)

    def __str__(self) -> str:
        return self.summary()
