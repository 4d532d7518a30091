"""Running jobs in other processes: the one worker protocol (verify, audit, CLI).

A :class:`Worker` runs ``"package.module:function"`` jobs one at a time in a child of a start
method (:data:`Where`); answers come back as typed JSON (never pickle) in an :class:`Outcome`.
"""

from __future__ import annotations

from . import bare
from .launch import BOUNDARIES, WHERE, Boundary, Where, fork_available, wait_stopped
from .protocol import Outcome, replay
from .thread import ThreadWorker
from .worker import Worker, label, run_one

__all__ = ["BOUNDARIES", "WHERE", "Boundary", "Outcome", "ThreadWorker", "Where", "Worker", "bare",
           "fork_available", "label", "replay", "run_one", "wait_stopped"]
