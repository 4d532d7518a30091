"""The audit's summary table (``str(report)``, what ``specpack audit`` prints): nothing is cut,
a reason, a difference or a note wraps within ``width`` columns, indented under its row."""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # report imports this module to draw str(report)
    from .report import AuditReport

__all__ = ["MIN_WIDTH", "summary"]

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
    lines += [f"  {status:<20} {count:>5}" for status, count in report.counts("env").items()]
    envs = report.envs
    reason = attrgetter("reason")
    lines += _listing("not portable", [f for f in envs if not f.portable], reason, width)
    for status, title in _NOT_FAILING:
        lines += _listing(title, [f for f in envs if f.status == status], reason, width)
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
            lines += _more(f, 6, width)
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
