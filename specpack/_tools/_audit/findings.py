"""What an audit finds of one env or wrapper: the statuses (verify's verdicts plus the audit's
own) and :class:`Finding`; :data:`FAILING` says which make ``specpack audit`` exit 1."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._core._text import printable
from .._verify.report import (
    IDENTICAL,
    NOT_COMPARED,
    NOT_IDENTICAL,
    NOT_REPRODUCIBLE,
    REBUILD_ERROR,
    ROLLOUT_ERROR,
    TIMEOUT,
    UNSEEDED,
)

__all__ = [
    "CAPTURE_ERROR", "EZPICKLE_GAP", "FAILING", "IDENTICAL", "MISSING_DEPENDENCY",
    "NEEDS_ARGUMENTS", "NOT_COMPARED", "NOT_IDENTICAL", "NOT_REPRODUCIBLE", "REBUILD_ERROR",
    "ROLLOUT_ERROR", "SKIPPED", "STATUSES", "TIMEOUT", "UNSEEDED", "Finding", "clip",
]

#: The registration cannot be built without arguments.
NEEDS_ARGUMENTS = "needs_arguments"
#: Capturing the env in the auditing process failed.
CAPTURE_ERROR = "capture_error"
#: A module the env needs is not installed here.
MISSING_DEPENDENCY = "missing_dependency"
#: Not checked (a wrapper that could not be built around any env).
SKIPPED = "skipped"
#: The pack rebuilt the env identically, but the env's own EzPickle record (what
#: ``pickle.dumps(env)`` rebuilds it from) does not: a warning about pickling the env itself.
EZPICKLE_GAP = "ezpickle_gap"
# UNSEEDED is verify's: the rollout depends on state ``reset(seed=)`` does not seed (a global
# generator, or hash order: ``Finding.cause`` says which). It fails the audit.

#: Every status a finding can have, in the order the tables list them (``skipped`` is for
#: wrappers only, so it is last and left out of the env counts).
STATUSES = (IDENTICAL, NOT_IDENTICAL, NOT_REPRODUCIBLE, UNSEEDED, NOT_COMPARED, EZPICKLE_GAP,
            NEEDS_ARGUMENTS, ROLLOUT_ERROR, CAPTURE_ERROR, REBUILD_ERROR, MISSING_DEPENDENCY,
            TIMEOUT, SKIPPED)
#: The statuses that make an audit fail (``specpack audit`` exits 1): portability failures, or
#: an env the audit could not finish checking because of the env.
FAILING = frozenset({NOT_IDENTICAL, UNSEEDED, ROLLOUT_ERROR, CAPTURE_ERROR, REBUILD_ERROR,
                     TIMEOUT})


@dataclass(frozen=True)
class Finding:
    """The audit's verdict on one env (``kind="env"``) or wrapper class (``kind="wrapper"``).

    ``reason`` is one line: the first difference, the error, or the missing package;
    ``differences`` lists everything that differed, ``detail`` holds a traceback where there is
    one. ``step`` is the first rollout step where the compared runs differ or where the rollout
    raised, else None. ``output`` is what the env's code printed wherever it ran (a
    ``[source, stream]`` line before each part, each cut to :data:`.output.OUTPUT_LIMIT`
    characters), ``""`` when it printed nothing. ``cause`` says why an ``unseeded`` env does not
    follow its seed: ``"global_generator"`` (two builds here drew different values from a global
    generator) or ``"hash_order"`` (the hash control); None for every other status.
    """

    kind: str
    name: str
    status: str
    reason: str = ""
    differences: tuple[str, ...] = ()
    package: str | None = None
    detail: str = ""
    notes: tuple[str, ...] = ()
    elapsed: float = 0.0
    step: int | None = None
    base_env: str | None = None
    args: Mapping[str, str] = field(default_factory=dict)
    defaulted: Mapping[str, str] = field(default_factory=dict)
    output: str = ""
    cause: str | None = None

    @property
    def portable(self) -> bool:
        """False iff the status makes the audit fail (see :data:`FAILING`)."""
        return self.status not in FAILING

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``envs``/``wrappers`` entries of ``--json``)."""
        out: dict[str, Any] = {
            "kind": self.kind, "name": self.name, "status": self.status, "reason": self.reason,
            "differences": list(self.differences), "step": self.step, "package": self.package,
            "detail": self.detail, "notes": list(self.notes), "elapsed": round(self.elapsed, 4),
            "output": self.output, "cause": self.cause,
        }
        if self.kind == "wrapper":
            out["base_env"] = self.base_env
            out["args"] = dict(self.args)
            out["defaulted"] = dict(self.defaulted)
        return out

    def __str__(self) -> str:
        head = f"{self.name}: {self.status}"
        return f"{head}: {self.reason}" if self.reason else head


def clip(text: str, width: int) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``width`` characters."""
    return printable(" ".join(text.split()), limit=max(width - 3, 1))
