"""Running jobs in other processes: the one worker protocol (verify, audit, CLI).

A :class:`Worker` is a child process of a start method (:data:`Where`) that runs jobs
``"package.module:function"`` with a payload of bytes and typed-JSON params, one at a time;
its answer comes back as an :class:`Outcome` over a pipe the job cannot write to by accident,
as typed JSON (never pickle), with what the job printed captured from file descriptors 1 and 2.
:func:`run_one` runs one job under a deadline. A ``"bare"`` worker is a fresh interpreter that
sees only what an installed node would have (:mod:`.bare`).
"""

from __future__ import annotations

from . import bare
from .launch import BOUNDARIES, WHERE, Boundary, Where, fork_available, wait_stopped
from .protocol import Outcome, replay
from .thread import ThreadWorker
from .worker import Worker, label, run_one

__all__ = [
    "BOUNDARIES",
    "WHERE",
    "Boundary",
    "Outcome",
    "ThreadWorker",
    "Where",
    "Worker",
    "bare",
    "fork_available",
    "label",
    "replay",
    "run_one",
    "wait_stopped",
]
