"""The jobs workers run for a comparison: plan the actions, record traces. Each takes
``pickle.dumps(pack)`` and returns typed-JSON-able data: the parent never unpickles a child's."""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._core._backends import get_backend
from ..._core._exact.describe import describe_space, plain
from ..._core._typedjson import canonical_json, encode
from .generators import Watch, first_unseeded
from .trace import plan_actions, record, writable

__all__ = ["PLAN_HERE_JOB", "PLAN_JOB", "RUN_JOB", "STASH", "carried_exactly", "digest",
           "multi_agent", "plan", "run_trace"]

PLAN_JOB = f"{__name__}:plan"
PLAN_HERE_JOB = f"{__name__}:plan_here"
RUN_JOB = f"{__name__}:run_trace"

_EXACT = (type(None), bool, int, float, complex, str, bytes)

#: Packs being verified, by token: a fork of this process pickles its copy (pickling a pack's
#: recorded spaces runs the env's code, which verify's parent never runs).
STASH: dict[str, Any] = {}


def carried_exactly(value: Any, depth: int = 0) -> bool:
    """Whether typed JSON brings ``value`` back as an equal object of the same types."""
    t = type(value)
    if t in _EXACT:
        return True
    if depth > 100:
        return False
    if t is np.ndarray:
        return not value.dtype.hasobject
    if isinstance(value, np.generic):
        return not isinstance(value, (np.object_, np.void))
    if t in (list, tuple, set, frozenset):
        return all(carried_exactly(v, depth + 1) for v in value)
    if t is dict:
        return all(carried_exactly(k, depth + 1) and carried_exactly(v, depth + 1)
                   for k, v in value.items())
    return False


def _make(obj: Any) -> Any:
    return obj.make() if hasattr(obj, "make") else obj()


def _close(env: Any) -> None:
    with contextlib.suppress(Exception):
        env.close()


def multi_agent(env: Any) -> Any:
    """The multi-agent recorder for a PettingZoo env (per-agent spaces and actions), or None."""
    # A gymnasium (or gym) env is told first: gymnasium 0.29's Wrapper.__getattr__ warns on
    # every lookup of an attribute a wrapper lacks.
    for name in ("gymnasium", "gym"):
        base = getattr(sys.modules.get(name), "Env", None)
        if isinstance(base, type) and isinstance(env, base):
            return None
    if not hasattr(env, "possible_agents") or not callable(getattr(env, "action_space", None)):
        return None
    backend: Any = get_backend("pettingzoo")  # an edge backend, named by the core
    return backend.tracer


def plan(payload: bytes, *, steps: int, seed: int) -> dict[str, Any]:
    """Build the env once and plan ``steps`` actions from its fresh action space; ``actions``
    is ``None`` (with a ``"why"``) when typed JSON cannot carry them: each side plans its own."""
    obj = pickle.loads(payload)
    # The recorded spaces are described in the child: a space's __repr__ is the env's code.
    recorded = getattr(obj, "surface", None)
    names = ("observation_space", "action_space")
    surface = (None if recorded is None
               else {name: describe_space(getattr(recorded, name)) for name in names})
    env = _make(obj)
    try:
        multi = multi_agent(env)
        if multi is not None:
            described = {"agents": list(env.possible_agents)}
            actions = multi.plan_actions(env, steps, seed)
        else:
            space = env.action_space
            described = describe_space(space)
            actions = plan_actions(space, steps, seed)
    finally:
        _close(env)
    out = {"actions": actions, "action_space": described, "surface": surface}
    if not carried_exactly(actions):
        kinds = sorted({type(a).__qualname__ for a in actions if not carried_exactly(a)})
        out.update(actions=None, why=f"the actions ({', '.join(kinds)}) do not cross processes "
                   "exactly")
    return out


def plan_here(payload: bytes, *, token: str, steps: int, seed: int) -> dict[str, Any]:
    """:func:`plan` for the pack stashed under ``token`` (in a fork), with ``"payload"``: its
    pickle, for the other sides (``payload`` itself is unused)."""
    data = pickle.dumps(STASH[token], protocol=pickle.HIGHEST_PROTOCOL)
    return {**plan(data, steps=steps, seed=seed), "payload": data}


def run_trace(payload: bytes, *, steps: int, seed: int, repeat: int = 1,
              actions: list[Any] | None = None,
              ignore_info: Sequence[str] = (), watch: bool = False) -> dict[str, Any]:
    """Build the env ``repeat`` times, one after the other, and record each rollout.

    ``actions`` are :func:`plan`'s (``None``: plan from each fresh env). Returns ``{"traces",
    "digests"}`` and, with ``watch``, ``"unseeded"``: :func:`~.generators.first_unseeded` of the
    first two builds' touches of the global generators.
    """
    traces = []
    touches: list[list[Any]] = []
    for _ in range(repeat):
        w = Watch() if watch else None
        try:
            env = _make(pickle.loads(payload))
        finally:
            if w is not None:
                w.after("make", 0)
                touches.append(w.touches)
        try:
            multi = multi_agent(env)
            if actions is None:
                todo = (multi.plan_actions(env, steps, seed) if multi is not None
                        else plan_actions(env.action_space, steps, seed))
            else:
                todo = writable(list(actions[:steps]))
            if multi is not None:
                try:
                    traces.append(multi.record(env, todo, seed, describe=describe_space,
                                               plain=plain))
                finally:
                    if w is not None:
                        w.after("rollout", 0)
            else:
                traces.append(record(env, todo, seed, watch=w, ignore_info=ignore_info).to_dict())
        finally:
            _close(env)
    out: dict[str, Any] = {"traces": traces, "digests": [digest(t) for t in traces]}
    if watch:
        found = first_unseeded(*touches[:2]) if len(touches) >= 2 else None
        out["unseeded"] = None if found is None else list(found)
    return out


def digest(trace: Any) -> str | None:
    """The sha256 of trace data's canonical typed-JSON encoding (``None`` if it has none):
    computed in the child, it spares the parent comparing two equal traces."""
    try:
        text = canonical_json(encode(trace))
    except Exception:  # noqa: BLE001 - compared value by value instead
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
