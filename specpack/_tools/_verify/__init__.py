"""Proving a rebuild is identical: the one comparison engine (verify, diff, the audit).

What every comparison uses: :func:`plan_actions`, :func:`record` (an env's :class:`Trace`),
:func:`compare` and :func:`run_trace` (the worker's job); verdicts are :mod:`.report`'s.
"""

from __future__ import annotations

from ..._core._exact.describe import describe_space, plain
from .compare import compare, same
from .jobs import RUN_JOB, plan, run_trace
from .trace import Trace, plan_actions, record, writable

__all__ = ["RUN_JOB", "Trace", "compare", "describe_space", "plain", "plan", "plan_actions",
           "record", "run_trace", "same", "writable"]
