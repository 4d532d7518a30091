"""What the command line writes: exit codes, warnings, progress, and env output kept off stdout.

An env may print (from Python or from C) while it is built or stepped; when a command's stdout
is a JSON document (``--json``) or a table, those prints must not end up inside it. Commands
that run env code do so inside :func:`stdout_to_stderr` and write their own result after it
(``audit`` goes further: it captures them per env, see :mod:`specpack.audit`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

from .._text import printable

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_INTERRUPTED",
    "EXIT_NOT_IDENTICAL",
    "EXIT_OK",
    "PROG",
    "AuditProgress",
    "one_line_text",
    "spinner",
    "stdout_to_stderr",
    "warn",
]

PROG = "specpack"

EXIT_OK = 0
#: ``verify``: the rebuild is not identical; ``audit``: something is not portable.
EXIT_NOT_IDENTICAL = 1
#: Bad input (options, files, ids, imports) or a failed build here.
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def one_line_text(text: str, limit: int = 4000) -> str:
    """``text`` as one line: runs of spaces and tabs folded, the ends stripped, and every other
    non-printable character (a line break too) escaped by :func:`printable`, the one escaping
    of every string from a file or an env."""
    folded = " ".join(part for part in text.strip().replace("\t", " ").split(" ") if part)
    return printable(folded, limit=limit)


def warn(text: str) -> None:
    """One ``specpack: warning: ...`` line on stderr (spaces folded, line breaks and controls
    escaped)."""
    print(f"{PROG}: warning: {one_line_text(text, 2000)}", file=sys.stderr)


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send whatever is printed meanwhile (also by C code, to fd 1) to stderr.

    The command writes its own output (the JSON document, the table) after the block, to the
    real stdout, so an env that prints cannot corrupt it.
    """
    try:
        sys.stdout.flush()
        fd = sys.stdout.fileno()
        err = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        # No real file descriptors (e.g. stdout captured in-process): Python-level only.
        with contextlib.redirect_stdout(sys.stderr):
            yield
        return
    saved = os.dup(fd)
    os.dup2(err, fd)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os.dup2(saved, fd)
        os.close(saved)


@contextlib.contextmanager
def spinner(message: str, stream: IO[str] | None = None) -> Iterator[None]:
    """A spinner with the elapsed time on a terminal's stderr (nothing when redirected)."""
    out = stream if stream is not None else sys.stderr
    if not (hasattr(out, "isatty") and out.isatty()):
        yield
        return
    done = threading.Event()
    start = time.perf_counter()

    def spin() -> None:
        frames = "|/-\\"
        i = 0
        while not done.wait(0.1):
            out.write(f"\r{message} {frames[i % 4]} {time.perf_counter() - start:.1f} s")
            out.flush()
            i += 1

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        out.write("\r" + " " * (len(message) + 12) + "\r")
        out.flush()


def _columns(stream: IO[str]) -> int:
    """``COLUMNS`` (a positive int), else the width of the terminal ``stream`` is on, else 80."""
    with contextlib.suppress(ValueError):
        given = int(os.environ.get("COLUMNS", ""))
        if given > 0:
            return given
    try:
        size = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        size = 0
    return size or 80


class AuditProgress:
    """``specpack audit``'s one-line progress bar on a terminal (the ``progress=`` callback).

    The line fits the terminal's width (a narrower bar, the env's name shortened), so that
    ``\r`` redraws it in place instead of leaving a wrapped line behind each time.
    """

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.start = time.perf_counter()
        self.last = 0.0
        self.bad = 0
        self.columns = _columns(stream)

    def __call__(self, finding: Any, done: int, total: int) -> None:
        """Count ``finding`` and redraw at most ten times a second (and at the end)."""
        if not finding.portable:
            self.bad += 1
        now = time.perf_counter()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        width = min(30, max(10, self.columns - 50))  # room for the counts and a name
        filled = int(width * done / max(total, 1))
        bar = "#" * filled + "." * (width - filled)
        counts = f"[{bar}] {done}/{total}  {self.bad} not portable  {now - self.start:5.1f} s  "
        room = min(40, self.columns - 1 - len(counts))
        name = one_line_text(str(finding.name), limit=max(room - 3, 1))
        self.stream.write(f"\r{counts}{name:<{max(room, 0)}}"[:self.columns])
        if done == total:
            self.stream.write("\n")
        self.stream.flush()
