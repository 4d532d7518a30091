"""What an audit finds: the statuses (verify's verdicts plus the audit's own), :class:`Finding`
of one env or wrapper, :class:`AuditReport` with its JSON, and the summary table
(``str(report)``, what ``specpack audit`` prints: nothing is cut, a reason, a difference or a
note wraps within ``width`` columns, indented under its row); :data:`FAILING` says which make
``specpack audit`` exit 1."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from ..._core._text import printable
from .._verify.report import (
    IDENTICAL,
    NOT_COMPARED,
    NOT_IDENTICAL,
    NOT_REPRODUCIBLE,
    REBUILD_ERROR,
    ROLLOUT_ERROR,
    TIMEOUT,
    UNSEEDED,
)

__all__ = [
    "CAPTURE_ERROR",
    "EZPICKLE_GAP",
    "FAILING",
    "IDENTICAL",
    "MIN_WIDTH",
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
    "UNSEEDED",
    "AuditReport",
    "Finding",
    "clip",
    "summary",
]

#: The registration cannot be built without arguments.
NEEDS_ARGUMENTS = "needs_arguments"
#: Capturing the env in the auditing process failed.
CAPTURE_ERROR = "capture_error"
#: A module the env needs is not installed here.
MISSING_DEPENDENCY = "missing_dependency"
#: Not checked (a wrapper that could not be built around any env).
SKIPPED = "skipped"
#: The pack rebuilt the env identically, but the env's own EzPickle record (what
#: ``pickle.dumps(env)`` rebuilds it from) does not: a warning about pickling the env itself.
EZPICKLE_GAP = "ezpickle_gap"
# UNSEEDED is verify's: the rollout depends on state ``reset(seed=)`` does not seed (a global
# generator, or hash order: ``Finding.cause`` says which). It fails the audit.

#: Every status a finding can have, in the order the tables list them (``skipped`` is for
#: wrappers only, so it is last and left out of the env counts).
STATUSES = (IDENTICAL, NOT_IDENTICAL, NOT_REPRODUCIBLE, UNSEEDED, NOT_COMPARED, EZPICKLE_GAP,
            NEEDS_ARGUMENTS, ROLLOUT_ERROR, CAPTURE_ERROR, REBUILD_ERROR, MISSING_DEPENDENCY,
            TIMEOUT, SKIPPED)
#: The statuses that make an audit fail (``specpack audit`` exits 1): portability failures, or
#: an env the audit could not finish checking because of the env.
FAILING = frozenset({NOT_IDENTICAL, UNSEEDED, ROLLOUT_ERROR, CAPTURE_ERROR, REBUILD_ERROR,
                     TIMEOUT})
#: The ``schema`` of ``--json`` (2: ``not_reproducible``/``needs_arguments`` and ``step``;
#: 3: ``not_compared`` and ``rollout_error``; 4: ``output``, per finding and of the report;
#: 5: ``ezpickle_gap`` and the hash-order status, :data:`UNSEEDED`).
SCHEMA = "specpack.audit/5"


@dataclass(frozen=True)
class Finding:
    """The audit's verdict on one env (``kind="env"``) or wrapper class (``kind="wrapper"``).

    ``reason`` is one line: the first difference, the error, or the missing package;
    ``differences`` lists everything that differed, ``detail`` holds a traceback where there is
    one. ``step`` is the first rollout step where the compared runs differ or where the rollout
    raised, else None. ``output`` is what the env's code printed wherever it ran (a
    ``[source, stream]`` line before each part, each cut to :data:`.output.OUTPUT_LIMIT`
    characters), ``""`` when it printed nothing. ``cause`` says why an ``unseeded`` env does not
    follow its seed: ``"global_generator"`` (two builds here drew different values from a global
    generator) or ``"hash_order"`` (the hash control); None for every other status.
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
    output: str = ""
    cause: str | None = None

    @property
    def portable(self) -> bool:
        """False iff the status makes the audit fail (see :data:`FAILING`)."""
        return self.status not in FAILING

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``envs``/``wrappers`` entries of ``--json``)."""
        out: dict[str, Any] = {
            "kind": self.kind, "name": self.name, "status": self.status, "reason": self.reason,
            "differences": list(self.differences), "step": self.step, "package": self.package,
            "detail": self.detail, "notes": list(self.notes), "elapsed": round(self.elapsed, 4),
            "output": self.output, "cause": self.cause,
        }
        if self.kind == "wrapper":
            out.update(base_env=self.base_env, args=dict(self.args),
                       defaulted=dict(self.defaulted))
        return out

    def __str__(self) -> str:
        head = f"{self.name}: {self.status}"
        return f"{head}: {self.reason}" if self.reason else head


def clip(text: str, width: int) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``width`` characters."""
    return printable(" ".join(text.split()), limit=max(width - 3, 1))


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

#: The narrowest width the table wraps at (a narrower terminal wraps the lines again).
MIN_WIDTH = 50
#: The least room a reason gets beside its row; with less it starts on the line below.
_ROOM = 30
#: How :func:`summary` points at the full output when it does not show it.
PYTHON_HINT = "report.summary(verbose=True), or each finding's .output"
#: The blocks of findings that do not fail the audit but need a word, in order.
_NOT_FAILING = (
    (NOT_REPRODUCIBLE,
     "not reproducible in one process (a property of the env, not a failure of the audit)"),
    (NOT_COMPARED,
     "rollout not compared: the spec says nondeterministic=True (not a failure of the audit)"),
    (EZPICKLE_GAP, "the env's own EzPickle record is wrong: pickle.dumps(env) does not rebuild "
     "it, a pack does (not a failure of the audit)"),
    (NEEDS_ARGUMENTS, "need arguments to be built (not a failure of the audit)"),
)
#: A ``[source, stream]`` line of an output text (see :func:`.output.sections`).
_HEADER = re.compile(r"\[[^\n]*, std(out|err)\]")


def _wrap(head: str, text: str, width: int, indent: int) -> list[str]:
    """``head`` then ``text`` wrapped within ``width``, continuation lines indented by
    ``indent``; ``text`` starts below when it does not fit and ``head`` leaves < ``_ROOM``."""
    body = " ".join(text.split())  # on one line, controls escaped, never cut
    body = printable(body, limit=len(body))
    pad = " " * indent
    heads = [head.rstrip()]
    if len(heads[0]) > width:  # a long name: the status goes below it, a name too long is split
        heads = textwrap.wrap(heads[0], width, subsequent_indent=pad, break_on_hyphens=False)
    if not body:
        return heads
    if len(heads) > 1 or (len(head) + len(body) > width and len(head) + _ROOM > width):
        return [*heads, *textwrap.wrap(body, width, initial_indent=pad, subsequent_indent=pad,
                                       break_on_hyphens=False)]
    return textwrap.wrap(body, width, initial_indent=head, subsequent_indent=pad,
                         break_on_hyphens=False)


def _more(f: Finding, width: int) -> list[str]:
    """The differences after the first (the reason), under its row, at most five."""
    rest = f.differences[1:]
    out = [line for d in rest[:5] for line in _wrap("      - ", d, width, 8)]
    if len(rest) > 5:
        out.append(f"        ... and {len(rest) - 5} more (see --json)")
    return out


def _listing(title: str, findings: list[Finding], text: Callable[[Finding], str],
             width: int) -> list[str]:
    """A titled block: one row per finding, ``text(f)`` after its name and status."""
    if not findings:
        return []
    names = [printable(f.name) for f in findings]
    name_width = max(map(len, names))
    lines = ["", *_wrap("", f"{title} ({len(findings)}):", width, 2)]
    for f, name in zip(findings, names):
        lines += _wrap(f"  {name:<{name_width}}  {f.status:<18} ", text(f), width, 6)
        if not f.portable:
            lines += _more(f, width)
    return lines


def _env_lines(report: AuditReport, width: int) -> list[str]:
    lines = ["", f"  {'status':<20} {'envs':>5}"]
    lines += [f"  {status:<20} {count:>5}" for status, count in report.counts("env").items()]
    envs = report.envs
    reason = attrgetter("reason")
    lines += _listing("not portable", [f for f in envs if not f.portable], reason, width)
    for status, title in _NOT_FAILING:
        lines += _listing(title, [f for f in envs if f.status == status], reason, width)
    noted = [f for f in envs if f.status == IDENTICAL and f.notes]
    lines += _listing("identical, with notes", noted[:10], lambda f: f.notes[0], width)
    if len(noted) > 10:
        lines.append(f"  ... and {len(noted) - 10} more (see --json)")
    missing: dict[str, list[str]] = {}
    for f in envs:
        if f.status == MISSING_DEPENDENCY:
            missing.setdefault(f.package or "unknown", []).append(f.name)
    if missing:
        lines.append("")
        lines += _wrap("", f"missing dependencies (skipped, {sum(map(len, missing.values()))} "
                       "envs):", width, 2)
        for pkg, names in sorted(missing.items()):
            more = f", ... ({len(names)} envs)" if len(names) > 4 else ""
            lines += _wrap(f"  {printable(pkg)}: ", ", ".join(names[:4]) + more, width, 4)
    return lines


def _wrapper_lines(report: AuditReport, width: int) -> list[str]:
    lines = ["", *_wrap("", "wrappers (arguments given; '*' marks a wrapper that records them "
                        "faithfully):", width, 2)]
    names = [printable(f.name) for f in report.wrappers]
    name_width = max(map(len, names))
    for f, name in zip(report.wrappers, names):
        mark = "*" if f.status == IDENTICAL else " "
        args = ", ".join(f"{k}={v}" for k, v in f.args.items()) or "-"
        lines += _wrap(f" {mark}{name:<{name_width}}  {f.status:<18} ", args, width, 6)
        if f.status != IDENTICAL:
            lines += _wrap("      - ", f.reason, width, 8)
            lines += _more(f, width)
    counts = ", ".join(f"{k} {v}" for k, v in report.counts("wrapper").items() if v)
    lines.append(f"  ({counts})")
    return lines


def _printed(text: str, indent: int, width: int) -> list[str]:
    """An output text (see :func:`.output.sections`) as lines: ``[source, stream]`` lines at
    ``indent``, what was printed two further in, controls escaped, long lines split."""
    out = []
    for line in text.splitlines():
        header = _HEADER.fullmatch(line)
        if not header:
            line = line.expandtabs().rstrip()
        line = printable(line, limit=len(line))
        pad = indent if header else indent + 2
        room = max(width - pad, 1)  # split by length, not by words: a printed line keeps spaces
        out += [" " * pad + line[i:i + room] for i in range(0, len(line), room)] or [""]
    return out


def _output_lines(report: AuditReport, verbose: bool, hint: str, width: int) -> list[str]:
    printed = [f for f in report.findings if f.output]
    if not verbose:
        if not (printed or report.output):
            return []
        kinds = "envs and wrappers" if report.wrappers else "envs"
        what = f"{len(printed)} of the {len(report.findings)} {kinds} printed something"
        if report.output:
            what += ", and so did the audit's process outside them"
        return ["", *_wrap("", f"({what}: see {hint})", width, 1)]
    lines: list[str] = []
    if report.output:
        lines += ["", *_wrap("", "printed in the audit's process outside any env (imports, "
                             "selection):", width, 2),
                  *_printed(report.output, 2, width)]
    if printed:
        lines += ["", *_wrap("", f"printed by the envs ({len(printed)} of "
                             f"{len(report.findings)}):", width, 2)]
        for f in printed:
            lines.append(f"  {printable(f.name)} ({f.status}):")
            lines += _printed(f.output, 4, width)
    return lines


def summary(report: AuditReport, *, verbose: bool = False, width: int | None = None,
            hint: str = PYTHON_HINT) -> str:
    """The human summary, wrapped within ``width`` columns (default: the terminal's), with
    ``verbose`` what each env printed (else ``hint`` says where it is); the last line says
    whether the audit passed."""
    width = max(width or shutil.get_terminal_size().columns, MIN_WIDTH)
    n = len(report.envs)
    head = (f"{report.jobs} {report.where} worker{'s' if report.jobs != 1 else ''}, "
            f"{report.steps} steps, seed {report.seed}")
    lines = _wrap("", f"specpack audit: {n} env{'s' if n != 1 else ''}"
                  + (f" and {len(report.wrappers)} wrappers" if report.wrappers else "")
                  + f" in {report.elapsed:.1f} s ({head})", width, 2)
    if report.envs:
        lines += _env_lines(report, width)
    if report.wrappers:
        lines += _wrapper_lines(report, width)
    lines += _output_lines(report, verbose, hint, width)
    failed = f"NOT portable: {len(report.failures)} finding(s) fail the audit"
    lines += ["", "portable" if report.portable else failed]
    return "\n".join(lines)
