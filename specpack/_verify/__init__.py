"""Proving a rebuild is identical: the one comparison engine (verify, diff, the audit).

Interface for every comparison (``verify`` in :mod:`.engine`, the audit):
:func:`plan_actions` (the same actions for both sides), :func:`record` (an env's
:class:`Trace`), :func:`compare` (the differences of two traces), :func:`run_trace` (the job a
worker runs), and :class:`VerifyReport` with its statuses, ``unseeded``
(:data:`~.report.UNSEEDED`) among them (``verify`` runs its sides and judges them in
:mod:`.judge`). Names load on first use: a worker that imports only :mod:`.jobs` does not load
the comparison.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .compare import compare, same, show
    from .describe import describe_space, plain
    from .jobs import PLAN_JOB, RUN_JOB, plan, run_trace
    from .report import (
        IDENTICAL,
        NOT_COMPARED,
        NOT_IDENTICAL,
        NOT_REPRODUCIBLE,
        REBUILD_ERROR,
        ROLLOUT_ERROR,
        STATUSES,
        TIMEOUT,
        UNSEEDED,
        VerifyReport,
    )
    from .trace import Trace, plan_actions, record, writable

#: Where each name lives: loaded on first use, so a worker that imports only
#: :mod:`.jobs` (a fresh interpreter rebuilding a pack) does not load the comparison, the
#: rendering or the report.
_NAMES = {
    **dict.fromkeys(("compare", "same", "show"), "compare"),
    **dict.fromkeys(("describe_space", "plain"), "describe"),
    **dict.fromkeys(("PLAN_JOB", "RUN_JOB", "plan", "run_trace"), "jobs"),
    **dict.fromkeys(("IDENTICAL", "NOT_COMPARED", "NOT_IDENTICAL", "NOT_REPRODUCIBLE",
                     "REBUILD_ERROR", "ROLLOUT_ERROR", "STATUSES", "TIMEOUT", "UNSEEDED",
                     "VerifyReport"), "report"),
    **dict.fromkeys(("Trace", "plan_actions", "record", "writable"), "trace"),
}

__all__ = [
    "IDENTICAL",
    "NOT_COMPARED",
    "NOT_IDENTICAL",
    "NOT_REPRODUCIBLE",
    "PLAN_JOB",
    "REBUILD_ERROR",
    "ROLLOUT_ERROR",
    "RUN_JOB",
    "STATUSES",
    "TIMEOUT",
    "UNSEEDED",
    "Trace",
    "VerifyReport",
    "compare",
    "describe_space",
    "plain",
    "plan",
    "plan_actions",
    "record",
    "run_trace",
    "same",
    "show",
    "writable",
]


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
