"""``specpack audit``: :func:`specpack.audit` of a registry, and its report. Meanwhile fds 1
and 2 are captured into the report's ``output``: only the progress bar (on a copy of the
terminal's stderr) reaches the screen."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from ..._core._errors import SpecPackError
from ..._core._text import printable
from .._audit.api import audit
from .._audit.output import Capture, sections
from .._audit.report import summary
from .._audit.select import matches, registry
from .output import EXIT_NOT_IDENTICAL, EXIT_OK, AuditProgress
from .packfile import run_imports

__all__ = ["command"]

def _terminal() -> IO[str] | None:
    """The progress bar's stream: a copy of stderr's fd if it is a terminal, else None."""
    try:
        if not sys.stderr.isatty():
            return None
        fd = os.dup(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        return None
    return open(fd, "w", encoding=getattr(sys.stderr, "encoding", None) or "utf-8",
                errors="backslashreplace", closefd=True)


def _check_numbers(ns: argparse.Namespace) -> None:
    """Refuse an out-of-range ``--steps``/``--jobs``/``--timeout`` naming the flag."""
    if ns.steps is not None and ns.steps < 0:
        raise SpecPackError(f"--steps {ns.steps}: must be 0 or more")
    if ns.jobs is not None and ns.jobs < 1:
        raise SpecPackError(f"--jobs {ns.jobs}: must be 1 or more (leave it out for the CPU "
                            "count)")
    if ns.timeout is not None and not ns.timeout > 0:  # NaN too
        raise SpecPackError(f"--timeout {ns.timeout}: must be a positive number of seconds")


def _after_import(argv: Sequence[str]) -> list[tuple[str, str]]:
    """Each ``(value, name)`` where a bare ``name`` comes right after ``--import value`` (or
    ``--import=value``) on the audit's command line, before any ``--``."""
    tokens = list(argv)
    if "audit" in tokens:
        tokens = tokens[tokens.index("audit") + 1:]
    if "--" in tokens:
        tokens = tokens[:tokens.index("--")]
    out: list[tuple[str, str]] = []
    for i, token in enumerate(tokens):
        if token == "--import" and i + 2 < len(tokens):
            value, name = tokens[i + 1], tokens[i + 2]
        elif token.startswith("--import=") and i + 1 < len(tokens):
            value, name = token.partition("=")[2], tokens[i + 1]
        else:
            continue
        if not name.startswith("-"):
            out.append((value, name))
    return out


def _importable(name: str) -> bool:
    """Whether ``--import`` would find a module ``name``, without importing it."""
    if not name or not all(part.isidentifier() for part in name.split(".")):
        return False
    with contextlib.suppress(ImportError, ValueError):
        if importlib.util.find_spec(name) is not None:
            return True
    head = Path(*name.split("."))
    return head.with_suffix(".py").is_file() or (head / "__init__.py").is_file()


def check_old_import_form(ns: argparse.Namespace) -> None:
    """Refuse the 0.2 form ``--import a b`` when ``b``, now a TARGET, is a module that
    registers no env yet (once the ``--import`` modules ran: they may register it)."""
    targets = set(ns.targets or ())
    for value, name in _after_import(getattr(ns, "argv", None) or ()):
        if name not in targets or not _importable(name):
            continue
        reg = registry()
        if name in reg or any(matches(name, spec) for spec in reg.values()):
            continue
        shown, after = printable(name, 80), printable(value, 80)
        raise SpecPackError(
            f"{shown!r} right after --import {after} is read as a TARGET (since 0.3 --import "
            f"takes one module and is repeated for more), and {shown} is a module that "
            "registers no env yet, so the audit would import it and audit every env it "
            f"registers: to import both, write --import {after} --import {shown}; to audit "
            f"the envs {shown} registers, write it before the options (specpack audit {shown} "
            f"--import {after})"
        )


def command(ns: argparse.Namespace) -> int:
    """Run the audit the options describe; print its summary or ``report.to_json()``."""
    wrappers: Any = "only" if ns.wrappers_only else bool(ns.wrappers)
    if wrappers == "only" and ns.targets:
        raise SpecPackError(
            f"--wrappers-only takes no TARGET (got {', '.join(map(repr, ns.targets))}); drop "
            "them, or use --wrappers to audit both"
        )
    _check_numbers(ns)
    if ns.backend == "pettingzoo" and wrappers:
        raise SpecPackError(
            f"{'--wrappers-only' if wrappers == 'only' else '--wrappers'} audits gymnasium "
            "wrapper classes; drop it with --backend pettingzoo")
    given = {name: getattr(ns, name) for name in ("steps", "seed", "jobs", "timeout", "reference")
             if getattr(ns, name) is not None}
    terminal = None if ns.json else _terminal()
    imports, elsewhere = Capture(), Capture()
    with terminal or contextlib.nullcontext():
        with imports:
            modules = run_imports(ns)
        check_old_import_form(ns)
        with elsewhere:
            report = audit(ns.targets, imports=modules, wrappers=wrappers, where=ns.where,
                           progress=None if terminal is None else AuditProgress(terminal),
                           backend=ns.backend, **given)
    output = (sections([("importing the --import modules (here)", imports.stdout,
                         imports.stderr)])
              + report.output
              + sections([("the audit's process, outside any env", elsewhere.stdout,
                           elsewhere.stderr)]))
    report = replace(report, output=output)
    hint = "--verbose, or each finding's \"output\" in --json"  # for the output not shown
    print(report.to_json() if ns.json else summary(report, verbose=ns.verbose, hint=hint))
    sys.stdout.flush()
    return EXIT_OK if report else EXIT_NOT_IDENTICAL
