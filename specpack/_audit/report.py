"""What an audit found: the statuses, one :class:`Finding` per env or wrapper, the report.

The statuses are verify's verdicts (:mod:`specpack._verify.report`, defined there once) and
the audit's own additions, defined here; :data:`FAILING` says which of them
make ``specpack audit`` exit 1. ``not_reproducible`` and ``needs_arguments`` are properties of
the env as registered (two builds in the auditing process differ; the registration cannot be
built without arguments), not of the process boundary, so they are reported in rows of their
own and do not fail the audit; ``missing_dependency`` and ``skipped`` are what could not be
checked here. ``not_compared`` (the spec says ``nondeterministic=True``: everything but the rollout
was compared and matched) does not fail it either; ``rollout_error`` (the rollout raised, the same
on both sides, so nothing after the exception was compared) does: an env that cannot run a rollout
where it is registered is not known to be portable. Neither is ever counted as ``identical``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._text import printable
from .._verify.report import (
    IDENTICAL,
    NOT_COMPARED,
    NOT_IDENTICAL,
    NOT_REPRODUCIBLE,
    REBUILD_ERROR,
    ROLLOUT_ERROR,
    TIMEOUT,
)

__all__ = [
    "CAPTURE_ERROR",
    "FAILING",
    "IDENTICAL",
    "MISSING_DEPENDENCY",
    "NEEDS_ARGUMENTS",
    "NOT_COMPARED",
    "NOT_IDENTICAL",
    "NOT_REPRODUCIBLE",
    "REBUILD_ERROR",
    "ROLLOUT_ERROR",
    "SCHEMA",
    "SKIPPED",
    "STATUSES",
    "TIMEOUT",
    "AuditReport",
    "Finding",
    "clip",
    "summary",
]

# The verdicts verify also gives (identical ... timeout) are verify's, imported above; these
# are the audit's own: what happened before or instead of a comparison.
#: The registration cannot be built without arguments.
NEEDS_ARGUMENTS = "needs_arguments"
#: Capturing the env in the auditing process failed.
CAPTURE_ERROR = "capture_error"
#: A module the env needs is not installed here.
MISSING_DEPENDENCY = "missing_dependency"
#: Not checked (a wrapper that could not be built around any env).
SKIPPED = "skipped"

#: Every status a finding can have, in the order the tables list them (``skipped`` is for
#: wrappers that could not be built, so it is last and only in the wrapper counts).
STATUSES = (
    IDENTICAL,
    NOT_IDENTICAL,
    NOT_REPRODUCIBLE,
    NOT_COMPARED,
    NEEDS_ARGUMENTS,
    ROLLOUT_ERROR,
    CAPTURE_ERROR,
    REBUILD_ERROR,
    MISSING_DEPENDENCY,
    TIMEOUT,
    SKIPPED,
)
#: The statuses that make an audit fail (``specpack audit`` exits 1): real portability
#: failures, or an env the audit could not finish checking because of the env (a rollout that
#: raises where it is registered included).
FAILING = frozenset({NOT_IDENTICAL, ROLLOUT_ERROR, CAPTURE_ERROR, REBUILD_ERROR, TIMEOUT})

#: The ``schema`` of ``--json`` (2: ``not_reproducible``/``needs_arguments`` and ``step``;
#: 3: ``not_compared`` and ``rollout_error``).
SCHEMA = "specpack.audit/3"


@dataclass(frozen=True)
class Finding:
    """The audit's verdict on one env (``kind="env"``) or wrapper class (``kind="wrapper"``).

    ``reason`` is one line: the first difference, the error, or the missing package;
    ``differences`` lists everything that differed, ``detail`` holds a traceback where there is
    one (the worker's own for a rebuild error). ``step`` is the first rollout step where the
    compared runs differ (``not_identical``, ``not_reproducible``, an EzPickle gap that changes
    the rollout) or where the rollout raised (``rollout_error``, ``missing_dependency`` found by
    the rollout), else None.
    """

    kind: str
    name: str
    status: str
    reason: str = ""
    differences: tuple[str, ...] = ()
    package: str | None = None
    detail: str = ""
    notes: tuple[str, ...] = ()
    elapsed: float = 0.0
    step: int | None = None
    base_env: str | None = None
    args: Mapping[str, str] = field(default_factory=dict)
    defaulted: Mapping[str, str] = field(default_factory=dict)

    @property
    def portable(self) -> bool:
        """False iff the status makes the audit fail (see :data:`FAILING`)."""
        return self.status not in FAILING

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``envs``/``wrappers`` entries of ``--json``)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "reason": self.reason,
            "differences": list(self.differences),
            "step": self.step,
            "package": self.package,
            "detail": self.detail,
            "notes": list(self.notes),
            "elapsed": round(self.elapsed, 4),
        }
        if self.kind == "wrapper":
            out["base_env"] = self.base_env
            out["args"] = dict(self.args)
            out["defaulted"] = dict(self.defaulted)
        return out

    def __str__(self) -> str:
        head = f"{self.name}: {self.status}"
        return f"{head}: {self.reason}" if self.reason else head


@dataclass
class AuditReport:
    """What :func:`specpack.audit` found: truthy iff no finding fails (see :data:`FAILING`).

    ``envs`` and ``wrappers`` keep the order of selection; ``counts()`` gives the number per
    status, ``to_json()`` the machine-readable report, ``str(report)`` the summary table.
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
            "schema": SCHEMA,
            "portable": self.portable,
            "elapsed": round(self.elapsed, 3),
            "where": self.where,
            "steps": self.steps,
            "seed": self.seed,
            "jobs": self.jobs,
            "timeout": self.timeout,
            "versions": dict(self.versions),
            "counts": {"envs": self.counts("env"), "wrappers": self.counts("wrapper")},
            "envs": [f.to_dict() for f in self.envs],
            "wrappers": [f.to_dict() for f in self.wrappers],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def __str__(self) -> str:
        return summary(self)


# -- the summary table ------------------------------------------------------------------------


def clip(text: str, width: int) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``width`` characters."""
    return printable(" ".join(text.split()), limit=max(width - 3, 1))


def _more(f: Finding, indent: int, limit: int = 5) -> list[str]:
    """The differences after the first (the reason), indented, at most ``limit``."""
    rest = list(f.differences[1:])
    out = [f"{' ' * indent}- {clip(d, 160)}" for d in rest[:limit]]
    if len(rest) > limit:
        out.append(f"{' ' * indent}  ... and {len(rest) - limit} more (see --json)")
    return out


def _listing(title: str, findings: list[Finding], text: Any) -> list[str]:
    """A titled block: one line per finding, ``text(f)`` after its name and status."""
    if not findings:
        return []
    names = [printable(f.name) for f in findings]
    width = max(map(len, names))
    lines = ["", f"{title} ({len(findings)}):"]
    for f, name in zip(findings, names):
        lines.append(f"  {name:<{width}}  {f.status:<18} {clip(text(f), 160)}")
        if not f.portable:
            lines += _more(f, 6)
    return lines


def _env_lines(report: AuditReport) -> list[str]:
    lines = ["", f"  {'status':<20} {'envs':>5}"]
    for status, count in report.counts("env").items():
        lines.append(f"  {status:<20} {count:>5}")
    envs = report.envs
    lines += _listing("not portable", [f for f in envs if not f.portable], lambda f: f.reason)
    lines += _listing(
        "not reproducible in one process (a property of the env, not a failure of the audit)",
        [f for f in envs if f.status == NOT_REPRODUCIBLE],
        lambda f: f.reason,
    )
    lines += _listing(
        "rollout not compared: the spec says nondeterministic=True (not a failure of the audit)",
        [f for f in envs if f.status == NOT_COMPARED],
        lambda f: f.reason,
    )
    lines += _listing(
        "need arguments to be built (not a failure of the audit)",
        [f for f in envs if f.status == NEEDS_ARGUMENTS],
        lambda f: f.reason,
    )
    noted = [f for f in envs if f.status == IDENTICAL and f.notes]
    shown = _listing("identical, with notes", noted[:10], lambda f: f.notes[0])
    if len(noted) > 10:
        shown.append(f"  ... and {len(noted) - 10} more (see --json)")
    lines += shown
    missing: dict[str, list[str]] = {}
    for f in envs:
        if f.status == MISSING_DEPENDENCY:
            missing.setdefault(f.package or "unknown", []).append(f.name)
    if missing:
        lines.append("")
        lines.append(f"missing dependencies (skipped, {sum(map(len, missing.values()))} envs):")
        for pkg, names in sorted(missing.items()):
            shown_names = ", ".join(names[:4]) + (
                f", ... ({len(names)} envs)" if len(names) > 4 else ""
            )
            lines.append(f"  {printable(pkg)}: {printable(shown_names, 400)}")
    return lines


def _wrapper_lines(report: AuditReport) -> list[str]:
    lines = ["", "wrappers (arguments given; '*' marks a wrapper that records them faithfully):"]
    names = [printable(f.name) for f in report.wrappers]
    width = max(map(len, names))
    for f, name in zip(report.wrappers, names):
        mark = "*" if f.status == IDENTICAL else " "
        args = ", ".join(f"{k}={v}" for k, v in f.args.items()) or "-"
        lines.append(f" {mark}{name:<{width}}  {f.status:<18} {clip(args, 80)}")
        if f.status != IDENTICAL:
            lines.append(f"      - {clip(f.reason, 160)}")
            lines += _more(f, 6)
    counts = ", ".join(f"{k} {v}" for k, v in report.counts("wrapper").items() if v)
    lines.append(f"  ({counts})")
    return lines


def summary(report: AuditReport) -> str:
    """The human summary: counts per status, what fails, what is not reproducible, notes,
    missing packages, and the wrapper table; the last line says whether the audit passed."""
    n = len(report.envs)
    head = (
        f"{report.jobs} {report.where} worker{'s' if report.jobs != 1 else ''}, "
        f"{report.steps} steps, seed {report.seed}"
    )
    lines = [
        f"specpack audit: {n} env{'s' if n != 1 else ''}"
        + (f" and {len(report.wrappers)} wrappers" if report.wrappers else "")
        + f" in {report.elapsed:.1f} s ({head})"
    ]
    if report.envs:
        lines += _env_lines(report)
    if report.wrappers:
        lines += _wrapper_lines(report)
    lines.append("")
    lines.append(
        "portable"
        if report.portable
        else f"NOT portable: {len(report.failures)} finding(s) fail the audit"
    )
    return "\n".join(lines)
