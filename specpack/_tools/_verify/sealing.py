"""A rollout as digests (the sha256 of each field of each event, the layers, one of the
spaces): the job that checks a pack (:mod:`.seal_job` seals), and where two of them part."""

from __future__ import annotations

import pickle
import platform
from collections.abc import Sequence
from typing import Any

from ..._core._backends import DEFAULT_BACKEND
from ..._core._versions import _dist_version, current_versions
from .compare import FIELDS, RESET_FIELDS, not_comparable
from .jobs import STASH, digest, run_trace
from .trace import Trace

__all__ = ["FIELDS", "NO_DIGEST", "PICKLE_JOB", "RESET_FIELDS", "event_fields",
           "first_divergence", "pickled", "rollout_digests"]

PICKLE_JOB = "specpack._tools._verify.sealing:pickled"
#: A field whose value has no digest (its encoding cannot be written): never equal.
NO_DIGEST = "<no digest>"


def event_fields(head: str) -> tuple[str, ...]:
    """The fields of an event named ``head`` (``"reset 0"``, ``"step 17"``)."""
    return RESET_FIELDS if head.startswith("reset") else FIELDS


def pickled(payload: bytes, *, token: str) -> dict[str, Any]:
    """The pickle of the pack stashed under ``token``, made in a fork (it runs the env's code)."""
    return {"payload": pickle.dumps(STASH[token], protocol=pickle.HIGHEST_PROTOCOL)}


def rollout_digests(payload: bytes, *, steps: int, seed: int, ignore_info: Sequence[str] = (),
                    backend: str = DEFAULT_BACKEND, names: Sequence[str] = ()) -> dict[str, Any]:
    """Build the pack in ``payload``, roll it out as verify does, and return what a seal holds
    (``events``: ``[head, digest, ...]`` per event), with the versions of the backend and of
    ``names`` (the pack's ``requires``)."""
    trace = run_trace(payload, steps=steps, seed=seed, ignore_info=ignore_info)["traces"][0]
    t = Trace.from_dict(trace)
    events = [[f"{event[0]} {event[1]}", *(digest(v) or NO_DIGEST for v in event[2:])]
              for event in t.events]
    versions = {**current_versions(backend, None), "python": platform.python_version()}
    for name in names:
        if name not in versions:
            versions[name] = _dist_version(name) or "not installed"
    spaces = {"observation_space": t.observation_space, "action_space": t.action_space,
              "action_space_after_reset": t.action_space_after_reset}
    return {
        "events": events,
        "layers": list(t.layers),
        "spaces": digest(spaces) or NO_DIGEST,
        "error": t.error,
        "nondeterministic": t.nondeterministic,
        "not_comparable": not_comparable(t),
        "ignored_info": list(t.ignored_info),
        "versions": versions,
    }


def first_divergence(sealed: Sequence[Sequence[str]],
                     rebuilt: Sequence[Sequence[str]]) -> tuple[int, str, str] | None:
    """Where two rollouts' digests first part: ``(step, field, line)``, or None. ``field`` is
    one of :data:`FIELDS` (``"reset info"``...), ``"event"`` (a reset against a step) or
    ``"length"`` (one is a prefix of the other)."""
    for x, y in zip(sealed, rebuilt):
        step = _step(x[0])
        if x[0] != y[0]:
            return (step, "event", f"step {step}: the seal did {x[0].split()[0]} but the "
                                   f"rebuild did {y[0].split()[0]}")
        prefix = "reset " if x[0].startswith("reset") else ""
        for name, u, v in zip(event_fields(x[0]), x[1:], y[1:]):
            if u != v or u == NO_DIGEST:
                return step, f"{prefix}{name}", f"step {step}: {prefix}{name} differs from the seal"
    if len(sealed) != len(rebuilt):
        shorter = min(len(sealed), len(rebuilt))
        step = _step(sealed[shorter - 1][0]) if shorter else 0
        return (step, "length", f"rollout length differs: the seal has {len(sealed)} events, "
                                f"the rebuild {len(rebuilt)}")
    return None


def _step(head: str) -> int:
    text = head.rpartition(" ")[2]
    return int(text) if text.isdigit() else 0
