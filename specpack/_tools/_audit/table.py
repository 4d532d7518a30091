"""The audit's summary table: ``str(report)``, what ``specpack audit`` prints.

Counts per status, the findings that need a word (what fails, what is not reproducible, not
compared, needs arguments, identical with notes, missing packages), the wrapper table, and,
with ``verbose``, what the envs printed (:attr:`.findings.Finding.output`), each under its env.

Nothing is cut: a reason, a difference, a note wraps within ``width`` columns (by default
the terminal's, :func:`columns`), its continuation lines indented under its row.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Callable
from typing import Protocol

from ..._core._text import printable
from .findings import (
    EZPICKLE_GAP,
    IDENTICAL,
    MISSING_DEPENDENCY,
    NEEDS_ARGUMENTS,
    NOT_COMPARED,
    NOT_REPRODUCIBLE,
    Finding,
)

__all__ = ["MIN_WIDTH", "columns", "summary"]

#: The narrowest width the table wraps at (a narrower terminal wraps the lines again).
MIN_WIDTH = 50
#: The least room a reason gets beside its row; with less it starts on the line below.
_ROOM = 30
#: How :func:`summary` points at the full output when it does not show it.
PYTHON_HINT = "report.summary(verbose=True), or each finding's .output"
#: A ``[source, stream]`` line of an output text (see :func:`.output.sections`).
_HEADER = re.compile(r"\[[^\n]*, std(out|err)\]")


class AuditReport(Protocol):
    """What the table reads of a :class:`.report.AuditReport` (which imports this module to
    draw ``str(report)``: the table stays below it)."""

    envs: list[Finding]
    wrappers: list[Finding]
    elapsed: float
    where: str
    steps: int
    seed: int
    jobs: int
    output: str

    @property
    def findings(self) -> list[Finding]: ...

    @property
    def failures(self) -> list[Finding]: ...

    @property
    def portable(self) -> bool: ...

    def counts(self, kind: str = "env") -> dict[str, int]: ...


def columns() -> int:
    """The width to wrap at: ``COLUMNS``, else the terminal's, else 80
    (``shutil.get_terminal_size``), at least :data:`MIN_WIDTH`."""
    return max(shutil.get_terminal_size().columns, MIN_WIDTH)


def _flat(text: str) -> str:
    """``text`` on one line (whitespace runs collapsed, controls escaped), never cut."""
    line = " ".join(text.split())
    return printable(line, limit=len(line))


def _wrap(head: str, text: str, width: int, indent: int) -> list[str]:
    """``head`` then ``text`` wrapped within ``width``, continuation lines indented by
    ``indent``; ``text`` starts on the line below when it does not fit beside ``head`` and
    ``head`` leaves less than ``_ROOM`` columns."""
    body = _flat(text)
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


def _more(f: Finding, indent: int, width: int, limit: int = 5) -> list[str]:
    """The differences after the first (the reason), indented, at most ``limit``."""
    rest = list(f.differences[1:])
    out: list[str] = []
    for d in rest[:limit]:
        out += _wrap(f"{' ' * indent}- ", d, width, indent + 2)
    if len(rest) > limit:
        out.append(f"{' ' * indent}  ... and {len(rest) - limit} more (see --json)")
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
            lines += _more(f, 6, width)
    return lines


def _env_lines(report: AuditReport, width: int) -> list[str]:
    lines = ["", f"  {'status':<20} {'envs':>5}"]
    for status, count in report.counts("env").items():
        lines.append(f"  {status:<20} {count:>5}")
    envs = report.envs

    def reason(f: Finding) -> str:
        return f.reason

    lines += _listing("not portable", [f for f in envs if not f.portable], reason, width)
    lines += _listing(
        "not reproducible in one process (a property of the env, not a failure of the audit)",
        [f for f in envs if f.status == NOT_REPRODUCIBLE], reason, width)
    lines += _listing(
        "rollout not compared: the spec says nondeterministic=True (not a failure of the audit)",
        [f for f in envs if f.status == NOT_COMPARED], reason, width)
    lines += _listing(
        "the env's own EzPickle record is wrong: pickle.dumps(env) does not rebuild it, a pack "
        "does (not a failure of the audit)",
        [f for f in envs if f.status == EZPICKLE_GAP], reason, width)
    lines += _listing("need arguments to be built (not a failure of the audit)",
                      [f for f in envs if f.status == NEEDS_ARGUMENTS], reason, width)
    noted = [f for f in envs if f.status == IDENTICAL and f.notes]
    shown = _listing("identical, with notes", noted[:10], lambda f: f.notes[0], width)
    if len(noted) > 10:
        shown.append(f"  ... and {len(noted) - 10} more (see --json)")
    lines += shown
    missing: dict[str, list[str]] = {}
    for f in envs:
        if f.status == MISSING_DEPENDENCY:
            missing.setdefault(f.package or "unknown", []).append(f.name)
    if missing:
        lines.append("")
        lines += _wrap("", f"missing dependencies (skipped, {sum(map(len, missing.values()))} "
                       "envs):", width, 2)
        for pkg, names in sorted(missing.items()):
            shown_names = ", ".join(names[:4]) + (
                f", ... ({len(names)} envs)" if len(names) > 4 else ""
            )
            lines += _wrap(f"  {printable(pkg)}: ", shown_names, width, 4)
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
            lines += _more(f, 6, width)
    counts = ", ".join(f"{k} {v}" for k, v in report.counts("wrapper").items() if v)
    lines.append(f"  ({counts})")
    return lines


def _printed(text: str, indent: int, width: int) -> list[str]:
    """An output text (see :func:`.output.sections`) as lines: ``[source, stream]`` lines at
    ``indent``, what was printed two further in, controls escaped, a line longer than
    ``width`` split across lines, nothing cut."""
    out = []
    for line in text.splitlines():
        if _HEADER.fullmatch(line):
            out += _chunks(printable(line, limit=len(line)), indent, width)
        else:
            line = line.expandtabs().rstrip()
            out += _chunks(printable(line, limit=len(line)), indent + 2, width)
    return out


def _chunks(line: str, indent: int, width: int) -> list[str]:
    """``line`` indented, split into pieces that fit ``width`` (a printed line keeps its
    spaces, so it is split by length, not wrapped by words)."""
    room = max(width - indent, 1)
    pad = " " * indent
    return [pad + line[i:i + room] for i in range(0, len(line), room)] or [""]


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
    """The human summary: counts per status, what fails, what is not reproducible, notes,
    missing packages, and the wrapper table; the last line says whether the audit passed.

    Parameters
    ----------
    report
        The audit's report.
    verbose
        Also show what each env printed, under its name (else one line says how many did).
    width
        The columns to wrap within (default: :func:`columns`); a row's reason, a title, a
        difference and a printed line are never cut, only wrapped.
    hint
        Where the full output is, in the reader's terms (the CLI names ``--verbose``).
    """
    width = max(width or columns(), MIN_WIDTH)
    n = len(report.envs)
    head = (
        f"{report.jobs} {report.where} worker{'s' if report.jobs != 1 else ''}, "
        f"{report.steps} steps, seed {report.seed}"
    )
    lines = _wrap("", f"specpack audit: {n} env{'s' if n != 1 else ''}"
                  + (f" and {len(report.wrappers)} wrappers" if report.wrappers else "")
                  + f" in {report.elapsed:.1f} s ({head})", width, 2)
    if report.envs:
        lines += _env_lines(report, width)
    if report.wrappers:
        lines += _wrapper_lines(report, width)
    lines += _output_lines(report, verbose, hint, width)
    lines.append("")
    lines.append(
        "portable"
        if report.portable
        else f"NOT portable: {len(report.failures)} finding(s) fail the audit"
    )
    return "\n".join(lines)
