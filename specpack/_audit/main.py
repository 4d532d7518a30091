"""``specpack audit ARGS``: the command-line face of :func:`specpack.audit`.

What a command line needs is here once: :func:`add_arguments` (the options, for any
``argparse`` parser), :func:`run` (parsed options to exit code), :class:`Progress` (the bar on a
terminal) and :func:`audit_main` (``argv`` to exit code). Exit codes: 0 when no finding fails the
audit (``not_reproducible``, ``needs_arguments``, ``missing_dependency`` and ``skipped`` do not
fail it), 1 when one does, 2 on bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import Any, Literal

from ..errors import SpecPackError
from .api import DEFAULT_TIMEOUT, REFERENCES, WHERE, audit
from .report import Finding, clip, summary

__all__ = ["Progress", "add_arguments", "audit_main", "run"]


class Progress:
    """A one-line progress bar on a terminal's stderr (``progress=`` of :func:`audit`)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.start = time.perf_counter()
        self.last = 0.0
        self.bad = 0

    def __call__(self, finding: Finding, done: int, total: int) -> None:
        if not finding.portable:
            self.bad += 1
        now = time.perf_counter()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        width = 30
        filled = int(width * done / max(total, 1))
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(
            f"\r[{bar}] {done}/{total}  {self.bad} not portable  "
            f"{now - self.start:5.1f} s  {clip(finding.name, 40):<40}"
        )
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the audit's arguments and options to ``p``."""
    p.add_argument(
        "targets",
        nargs="*",
        metavar="TARGET",
        help="env id, namespace ('ALE/'), or entry-point module prefix ('minigrid'); "
        "none: the whole registry",
    )
    p.add_argument(
        "--import",
        dest="imports",
        nargs="+",
        default=[],
        metavar="MODULE",
        action="extend",
        help="import these modules first (they register envs)",
    )
    p.add_argument(
        "--wrappers",
        action="store_true",
        help="also audit every wrapper class of gymnasium.wrappers and the imports",
    )
    p.add_argument("--wrappers-only", action="store_true", help="audit the wrappers alone")
    p.add_argument(
        "--where", choices=WHERE, default="subprocess",
        help="kind of worker process (default: a fresh python)",
    )
    p.add_argument("--steps", type=int, default=50, help="rollout length (default 50)")
    p.add_argument("--seed", type=int, default=0, help="rollout seed (default 0)")
    p.add_argument(
        "--jobs", type=int, default=None,
        help="worker processes per side (default: the CPU count)",
    )
    p.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT,
        help=f"seconds per env before its worker is killed (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument(
        "--reference", choices=REFERENCES, default=None,
        help="where the reference is built: in fork workers of this process (the default on "
        "Linux) or here, one at a time",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send anything the envs print here (also from C) to stderr, so stdout stays the report."""
    try:
        sys.stdout.flush()
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        with contextlib.redirect_stdout(sys.stderr):
            yield
        return
    saved = os.dup(fd)
    os.dup2(sys.stderr.fileno(), fd)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os.dup2(saved, fd)
        os.close(saved)


def run(args: argparse.Namespace) -> int:
    """Run the audit the parsed options describe; print the report; return the exit code."""
    wrappers: bool | Literal["only"] = "only" if args.wrappers_only else bool(args.wrappers)
    if wrappers == "only" and args.targets:
        print("specpack audit: error: --wrappers-only takes no TARGET", file=sys.stderr)
        return 2
    show = Progress(sys.stderr) if sys.stderr.isatty() and not args.json else None
    try:
        with stdout_to_stderr():
            report = audit(
                args.targets,
                imports=args.imports,
                wrappers=wrappers,
                where=args.where,
                steps=args.steps,
                seed=args.seed,
                jobs=args.jobs,
                timeout=args.timeout,
                reference=args.reference,
                progress=show,
            )
    except SpecPackError as e:
        print(f"specpack audit: error: {e}", file=sys.stderr)
        return 2
    print(report.to_json() if args.json else summary(report))
    sys.stdout.flush()
    return 0 if report.portable else 1


def audit_main(argv: list[str]) -> int:
    """``specpack audit ...``: 0 when no finding fails the audit, 1 when one does, 2 on bad
    input."""
    parser = argparse.ArgumentParser(
        prog="specpack audit",
        description="Find every env (and wrapper) that does not survive a process boundary: "
        "capture here, rebuild in fresh workers, compare.",
    )
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    return run(args)
