"""The wire of the worker protocol: frames, request files, captured output, outcomes.

A frame is an 8-byte big-endian length and UTF-8 typed JSON (never pickle). Answer frames start
with the HMAC-SHA256 of their body under a per-worker key sent before any job runs, so env code
that writes to the answer pipe cannot forge an answer. Requests travel in a file, so a child
that died at start-up cannot block the parent on a pipe. See docs/security.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import signal
import struct
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .._errors import ProtocolError, SpecPackError
from .._typedjson import decode, encode

__all__ = ["CAPTURE_LIMIT", "MAX_FRAME", "FrameReader", "Outcome", "ProtocolError", "Status",
           "exit_text", "head_and_tail", "new_key", "pack_frame", "read_capture", "read_request",
           "write_request"]

#: Largest frame either side accepts (a bigger one is a protocol error, not an allocation).
MAX_FRAME = 1 << 30
#: How much of a task's stdout/stderr comes back in an :class:`Outcome`.
CAPTURE_LIMIT = 64 * 1024
#: How many lines of a dead child's stderr its outcome's detail quotes (first, last).
_HEAD_LINES, _TAIL_LINES = 6, 20
_HEADER = struct.Struct(">Q")
_TAG = hashlib.sha256().digest_size

Status = Literal["ok", "error", "died", "timeout"]


@dataclass(frozen=True)
class Outcome:
    """What came back from one task run in a worker."""

    #: ``"ok"`` (the job returned), ``"error"`` (it raised), ``"died"`` (the child exited or was
    #: killed before answering) or ``"timeout"`` (killed with its process tree at the deadline).
    status: Status
    value: Any  #: the job's return value (``None`` unless ok)
    error: str  #: one line ``"Type: message"`` (empty when ok)
    detail: str  #: the child's traceback, or its exit code / signal and its stderr's tail
    stdout: str  #: what the task wrote to fds 1 and 2 (bounded, decoded with 'replace')
    stderr: str
    elapsed: float  #: seconds from ``submit`` to the outcome


def new_key() -> bytes:
    """A fresh random key for one worker's answer channel."""
    return os.urandom(32)


def pack_frame(message: Mapping[str, Any], key: bytes | None = None) -> bytes:
    """One frame holding ``message`` (PackFormatError if not encodable), tagged under ``key``."""
    body = json.dumps(encode(dict(message)), separators=(",", ":"), allow_nan=False,
                      ensure_ascii=False).encode("utf-8")
    if key is not None:
        body = hmac.digest(key, body, "sha256") + body
    return _HEADER.pack(len(body)) + body


class FrameReader:
    """Reassembles frames from chunks read off a pipe; ``source`` is named in errors, and with
    ``key`` every frame must carry its tag (:func:`pack_frame`)."""

    def __init__(self, source: str, key: bytes | None = None) -> None:
        self.source = source
        self._key = key
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self._buf += data

    def next(self) -> dict[str, Any] | None:
        """The next complete message, or ``None`` until more bytes arrive (ProtocolError: an
        oversized frame, one without the channel's key, or not a typed-JSON object)."""
        if len(self._buf) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self._buf)
        if size > MAX_FRAME:
            raise ProtocolError(f"{self.source} sent a frame of {size} bytes (the limit is "
                                f"{MAX_FRAME})")
        end = _HEADER.size + size
        if len(self._buf) < end:
            return None
        body = bytes(self._buf[_HEADER.size:end])
        del self._buf[:end]
        if self._key is not None:
            tag, body = body[:_TAG], body[_TAG:]
            if not hmac.compare_digest(tag, hmac.digest(self._key, body, "sha256")):
                raise ProtocolError(
                    f"{self.source} sent a frame without this worker's key: something other "
                    "than specpack's harness (the env's code, or a process it started) wrote "
                    "to the answer channel")
        try:
            message = decode(json.loads(body.decode("utf-8")), source=self.source)
        except (ValueError, RecursionError, SpecPackError) as e:
            raise ProtocolError(f"unreadable message from {self.source}: {type(e).__name__}: "
                                f"{str(e)[:200]}") from None
        if type(message) is not dict:
            raise ProtocolError(f"unreadable message from {self.source}: not a JSON object")
        return message


def write_request(path: str, header: Mapping[str, Any], payload: bytes) -> None:
    """Write a task request file: one frame (job, params, capture paths), then the payload."""
    with open(path, "wb") as fh:
        fh.write(pack_frame(header))
        fh.write(payload)


def read_request(path: str) -> tuple[dict[str, Any], bytes]:
    """Read a request file written by :func:`write_request` (the child side)."""
    with open(path, "rb") as fh:
        data = fh.read()
    if len(data) < _HEADER.size:
        raise ProtocolError(f"truncated request file {path}")
    end = _HEADER.size + _HEADER.unpack_from(data)[0]
    reader = FrameReader("the parent's request")
    reader.feed(data[:end])
    header = reader.next()
    if header is None:
        raise ProtocolError(f"truncated request file {path}")
    return header, data[end:]


def read_capture(path: str | None, limit: int = CAPTURE_LIMIT) -> str:
    """The text a task wrote to ``path``: all of it, or its head and tail around a cut mark."""
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size <= limit:
                data = fh.read()
            else:
                head = fh.read(limit // 4)
                fh.seek(size - (limit - limit // 4))
                tail = fh.read()
                cut = size - len(head) - len(tail)
                data = head + f"\n[... {cut} bytes cut ...]\n".encode() + tail
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def head_and_tail(lines: list[str]) -> list[str]:
    """The first and last lines of a dead child's stderr (a faulthandler report starts, a
    traceback ends, with what matters), a cut mark between them."""
    if len(lines) <= _HEAD_LINES + _TAIL_LINES + 1:
        return lines
    cut = len(lines) - _HEAD_LINES - _TAIL_LINES
    return [*lines[:_HEAD_LINES], f"[... {cut} lines ...]", *lines[-_TAIL_LINES:]]


def exit_text(code: int | None) -> str:
    """``"exited with code 3"`` / ``"was killed by signal SIGSEGV"`` (negative: a signal)."""
    if code is None:
        return "did not exit"
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"was killed by signal {name}"


def replay(outcomes: list[Outcome]) -> None:
    """Write what children printed to this process's streams, as if it ran here (the side
    that stands for "here": its output is the user's own env talking, so it is not lost)."""
    for o in outcomes:
        for text, stream in ((o.stdout, sys.stdout), (o.stderr, sys.stderr)):
            if text:
                with contextlib.suppress(OSError, ValueError):  # a closed or broken stream
                    stream.write(text)
                    stream.flush()
