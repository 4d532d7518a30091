"""Proving a rebuild is identical: the one comparison engine (verify, diff, the audit).

Interface for every comparison (``verify`` in :mod:`.engine`, the audit):
:func:`plan_actions` (the same actions for both sides), :func:`record` (an env's
:class:`Trace`), :func:`compare` (the differences of two traces), :func:`run_trace` (the job a
worker runs), and :class:`VerifyReport` with its statuses, ``unseeded``
(:data:`~.report.UNSEEDED`) among them (``verify`` runs its sides and judges them in
:mod:`.judge`).
"""

from __future__ import annotations

from ..._core._exact.describe import describe_space, plain
from .compare import compare, same, show
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
