"""The one comparison engine (verify, diff, seal and check, the audit): :func:`plan_actions`,
:func:`record` (an env's :class:`Trace`), :func:`compare`, :func:`run_trace` (a worker's job)."""

from __future__ import annotations

from ..._core._exact.describe import describe_space, plain
from .compare import compare, same
from .jobs import RUN_JOB, plan, run_trace
from .trace import Trace, plan_actions, record, writable

__all__ = ["RUN_JOB", "Trace", "compare", "describe_space", "plain", "plan", "plan_actions",
           "record", "run_trace", "same", "writable"]
