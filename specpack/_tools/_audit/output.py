"""What env code prints during an audit: captured where it runs (the workers capture their
tasks' fds 1 and 2; :class:`Capture` does it in the audit's own process), kept per env as a
finding's ``output`` (:func:`sections`), never on screen."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable
from types import TracebackType

from ..._core._process.child import captured
from ..._core._process.protocol import CAPTURE_LIMIT, read_capture

__all__ = ["OUTPUT_HEAD", "OUTPUT_LIMIT", "Capture", "cut", "sections"]

#: Characters of one stream of one source a finding keeps (a longer one keeps its first
#: :data:`OUTPUT_HEAD` and its last ``OUTPUT_LIMIT - OUTPUT_HEAD`` characters).
OUTPUT_LIMIT = 8192
#: Characters kept from the start of a stream that is cut.
OUTPUT_HEAD = 2048
#: The mark :func:`specpack._core._process.protocol.read_capture` leaves where it cut a capture.
_WORKER_CUT = re.compile(r"\n\[\.\.\. (\d+) bytes cut \.\.\.\]\n")


def cut(text: str) -> str:
    """``text``, or its head and tail (see :data:`OUTPUT_LIMIT`) around a line saying how many
    characters were cut (and how many bytes the worker had already cut from its capture)."""
    if len(text) <= OUTPUT_LIMIT:
        return text
    head, tail = OUTPUT_HEAD, OUTPUT_LIMIT - OUTPUT_HEAD
    dropped = text[head:len(text) - tail]
    earlier = [int(m.group(1)) for m in _WORKER_CUT.finditer(dropped)]
    more = f" and {sum(earlier)} bytes before that" if earlier else ""
    note = (f"[... {len(_WORKER_CUT.sub('', dropped))} characters cut{more}: the audit keeps "
            f"the first {head} and the last {tail} characters of each stream ...]")
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
    """Capture fds 1 and 2 (or, where they are closed, ``sys.stdout``/``sys.stderr``) while a
    block runs into :attr:`stdout` and :attr:`stderr`; when the block raises, what it printed
    goes to ``sys.stderr`` afterwards, so the output that explains a failure is not lost."""

    def __init__(self) -> None:
        self.stdout = ""
        self.stderr = ""
        self._folder = ""
        self._paths = ("", "")
        self._inner: contextlib.ExitStack | None = None
        self._buffers: tuple[io.StringIO, io.StringIO] | None = None

    def __enter__(self) -> Capture:
        self._folder = tempfile.mkdtemp(prefix="specpack-output-")
        self._paths = (os.path.join(self._folder, "stdout"), os.path.join(self._folder, "stderr"))
        self._inner = inner = contextlib.ExitStack()
        try:
            inner.enter_context(captured(*self._paths))
        except OSError:
            self._buffers = (io.StringIO(), io.StringIO())
            inner.enter_context(contextlib.redirect_stdout(self._buffers[0]))
            inner.enter_context(contextlib.redirect_stderr(self._buffers[1]))
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        inner, self._inner = self._inner, None
        try:
            if inner is not None:
                inner.close()
        finally:
            if self._buffers is not None:
                self.stdout, self.stderr = (b.getvalue()[-CAPTURE_LIMIT:] for b in self._buffers)
            else:
                self.stdout, self.stderr = (read_capture(p) for p in self._paths)
            shutil.rmtree(self._folder, ignore_errors=True)
        if kind is not None:
            for text in (self.stdout, self.stderr):
                with contextlib.suppress(Exception):
                    sys.stderr.write(text)
                    sys.stderr.flush()
