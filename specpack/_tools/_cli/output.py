"""What the command line writes: exit codes, warnings, progress, and env output kept off stdout
(:func:`stdout_to_stderr`: an env's prints must never end up inside a ``--json`` document)."""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

from ..._core._text import printable

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_NOT_IDENTICAL", "EXIT_OK", "PROG",
           "AuditProgress", "one_line_text", "spinner", "stdout_to_stderr", "warn"]

PROG = "specpack"

EXIT_OK = 0
#: ``verify``: the rebuild is not identical; ``audit``: something is not portable.
EXIT_NOT_IDENTICAL = 1
#: Bad input (options, files, ids, imports) or a failed build here.
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def one_line_text(text: str, limit: int = 4000) -> str:
    """``text`` on one line: spaces and tabs folded, ends stripped, the rest :func:`printable`."""
    folded = " ".join(part for part in text.strip().replace("\t", " ").split(" ") if part)
    return printable(folded, limit=limit)


def warn(text: str) -> None:
    """One ``specpack: warning: ...`` line on stderr (see :func:`one_line_text`)."""
    print(f"{PROG}: warning: {one_line_text(text, 2000)}", file=sys.stderr)


#: The longest piece of an env's output shown whole (a longer one is cut, with "...").
_PIECE_LIMIT = 4000


def _show(text: str, fd: int) -> None:
    """Write one piece of an env's output to ``fd`` as one escaped line."""
    with contextlib.suppress(OSError):
        os.write(fd, (printable(text.removesuffix("\n"), _PIECE_LIMIT) + "\n").encode(
            "utf-8", "replace"))


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Show whatever the env prints meanwhile (Python or C code, on fd 1 or 2) on stderr,
    escaped, as it is read: the command's own output cannot be corrupted."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        fds = (sys.stdout.fileno(), sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        # No real file descriptors (e.g. output captured in-process): Python-level only.
        caught = io.StringIO()
        try:
            with contextlib.redirect_stdout(caught), contextlib.redirect_stderr(caught):
                yield
        finally:
            if caught.getvalue():
                print(printable(caught.getvalue().removesuffix("\n"), _PIECE_LIMIT),
                      file=sys.stderr)
        return
    saved = [os.dup(fd) for fd in fds]
    read, write = os.pipe()

    def pump() -> None:
        decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        with open(read, "rb", buffering=0) as source:
            while chunk := source.read(65536):
                if text := decode(chunk):
                    _show(text, saved[1])
        if rest := decode(b"", final=True):
            _show(rest, saved[1])

    reader = threading.Thread(target=pump, daemon=True, name="specpack-env-output")
    reader.start()
    for fd in fds:
        os.dup2(write, fd)
    os.close(write)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        for fd, old in zip(fds, saved):
            os.dup2(old, fd)
        # The pipe ends when no process holds its write end; one the env started and left
        # running may hold it: the lines read by then are shown, the rest is not waited for.
        reader.join(timeout=2.0)
        os.close(saved[0])
        if not reader.is_alive():
            os.close(saved[1])  # else the reader may still write to it: left open


@contextlib.contextmanager
def spinner(message: str, stream: IO[str] | None = None) -> Iterator[None]:
    """A spinner with the elapsed time on a terminal's stderr (nothing when redirected)."""
    out = stream if stream is not None else sys.stderr
    if not (hasattr(out, "isatty") and out.isatty()):
        yield
        return
    owned: IO[str] | None = None
    if stream is None:  # a terminal of its own: stdout_to_stderr may take fd 2 meanwhile
        with contextlib.suppress(OSError, ValueError):
            owned = out = open(os.dup(out.fileno()), "w", encoding=getattr(
                out, "encoding", None) or "utf-8", errors="replace")
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
        if owned is not None:
            owned.close()


def _columns(stream: IO[str]) -> int:
    """``COLUMNS`` (a positive int), else the width of the terminal ``stream`` is on, else 80."""
    with contextlib.suppress(ValueError):
        given = int(os.environ.get("COLUMNS", ""))
        if given > 0:
            return given
    with contextlib.suppress(AttributeError, OSError, ValueError):
        return os.get_terminal_size(stream.fileno()).columns or 80
    return 80


class AuditProgress:
    """``specpack audit``'s one-line progress bar (``progress=``), as wide as the terminal."""

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
