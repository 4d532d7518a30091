"""What env code prints during an audit: captured where it runs, kept per env, never on screen.

Env code runs in three kinds of place, and what it writes to file descriptors 1 and 2 (Python
prints, C-level writes, the processes it starts) is captured in each:

- reference forks and remote workers: workers of :mod:`specpack._core._process`, which capture each
  task's fds 1 and 2 in files and send the text back in the task's
  :class:`~specpack._core._process.Outcome`;
- the audit's own process: capturing each env (``specpack.capture(id)`` may import its entry
  point), references built here (``reference="here"``), and importing the ``imports`` modules
  and selecting the targets: :class:`Capture`, the workers' own mechanism
  (:func:`specpack._core._process.child.captured`) around a block of this process.

A job keeps its parts by source (``"capture (here)"``, ``"reference (here)"``,
``"rebuild (fresh interpreter)"``...); :func:`sections` makes them the one text a finding
carries as ``output``, each stream under a ``[source, stream]`` header line and cut to
:data:`OUTPUT_LIMIT` characters (its head and tail, around a line saying how much was cut).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from types import TracebackType

from ..._core._process.child import captured
from ..._core._process.protocol import CAPTURE_LIMIT, read_capture

__all__ = ["OUTPUT_HEAD", "OUTPUT_LIMIT", "Capture", "cut", "sections"]

#: Characters of one stream of one source a finding keeps (a longer one keeps its first
#: :data:`OUTPUT_HEAD` and its last ``OUTPUT_LIMIT - OUTPUT_HEAD`` characters).
OUTPUT_LIMIT = 8192
#: Characters kept from the start of a stream that is cut.
OUTPUT_HEAD = 2048
#: The mark :func:`specpack._core._process.protocol.read_capture` leaves where it cut a capture file.
_WORKER_CUT = re.compile(r"\n\[\.\.\. (\d+) bytes cut \.\.\.\]\n")


def cut(text: str, limit: int = OUTPUT_LIMIT, head: int = OUTPUT_HEAD) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``head`` and last
    ``limit - head`` characters around a line saying how many were cut (counting what the
    worker already cut from its capture file, in bytes)."""
    if len(text) <= limit:
        return text
    tail = limit - head
    dropped = text[head:len(text) - tail]
    earlier = [int(m.group(1)) for m in _WORKER_CUT.finditer(dropped)]
    chars = len(_WORKER_CUT.sub("", dropped))
    more = f" and {sum(earlier)} bytes before that" if earlier else ""
    note = (f"[... {chars} characters cut{more}: the audit keeps the first {head} and the "
            f"last {tail} characters of each stream ...]")
    return f"{text[:head]}\n{note}\n{text[len(text) - tail:]}"


def sections(parts: Iterable[tuple[str, str, str]]) -> str:
    """The text of ``(source, stdout, stderr)`` parts: each non-empty stream under a
    ``[source, stdout]`` / ``[source, stderr]`` line, cut by :func:`cut`; ``""`` if none."""
    out: list[str] = []
    for source, stdout, stderr in parts:
        for stream, text in (("stdout", stdout), ("stderr", stderr)):
            if text:
                body = cut(text)
                end = "" if body.endswith("\n") else "\n"
                out.append(f"[{source}, {stream}]\n{body}{end}")
    return "".join(out)


class Capture:
    """Capture fds 1 and 2 of this process (and ``sys.stdout``/``sys.stderr``) while a block
    runs; afterwards :attr:`stdout` and :attr:`stderr` hold the text, bounded as a worker's
    (:data:`specpack._core._process.protocol.CAPTURE_LIMIT`).

    When the block raises, what it printed is written to ``sys.stderr`` once the fds are
    back, so the output that explains a failure is not lost. Without fds 1 and 2 (an embedding
    that closed them) only Python-level writes are captured. Example::

        with Capture() as printed:
            pack = specpack.capture(env_id)
        job_output = printed.stdout, printed.stderr
    """

    def __init__(self) -> None:
        self.stdout = ""
        self.stderr = ""
        self._folder = ""
        self._inner: contextlib.AbstractContextManager[object] | None = None
        self._buffers: tuple[io.StringIO, io.StringIO] | None = None

    def __enter__(self) -> Capture:
        self._folder = tempfile.mkdtemp(prefix="specpack-output-")
        out, err = self._paths()
        try:
            inner: contextlib.AbstractContextManager[object] = captured(out, err)
            inner.__enter__()
        except OSError:
            self._buffers = (io.StringIO(), io.StringIO())
            inner = _python_level(*self._buffers)
            inner.__enter__()
        self._inner = inner
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        inner, self._inner = self._inner, None
        try:
            if inner is not None:
                inner.__exit__(None, None, None)
        finally:
            if self._buffers is not None:
                self.stdout, self.stderr = (b.getvalue()[-CAPTURE_LIMIT:] for b in self._buffers)
            else:
                self.stdout, self.stderr = (read_capture(p) for p in self._paths())
            _remove(self._folder, self._paths())
        if kind is not None:
            for text in (self.stdout, self.stderr):
                with contextlib.suppress(Exception):
                    sys.stderr.write(text)
                    sys.stderr.flush()

    def _paths(self) -> tuple[str, str]:
        return os.path.join(self._folder, "stdout"), os.path.join(self._folder, "stderr")


@contextlib.contextmanager
def _python_level(out: io.StringIO, err: io.StringIO) -> Iterator[None]:
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield


def _remove(folder: str, paths: tuple[str, str]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.remove(path)
    with contextlib.suppress(OSError):
        os.rmdir(folder)
