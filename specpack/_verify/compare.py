"""Comparing two traces: what differs, the rollout up to its first divergence.

Values are equal when their typed-JSON encodings are: type and value, so ``1`` is not
``1.0`` nor ``True``, ``-0.0`` is not ``0.0``, a float32 array is not a float64 one, and NaN
equals NaN. Each difference is one line naming the field (and for the rollout, the step) and
both values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._text import short
from ..typedjson import canonical_json, encode
from .trace import Trace

__all__ = ["compare", "same", "show"]

_STEP_FIELDS = ("action", "observation", "reward", "terminated", "truncated", "info keys")
_RESET_FIELDS = ("observation", "info keys")
_MISSING = ("<missing>",)


def same(a: Any, b: Any) -> bool:
    """Whether two trace values are identical (same typed-JSON encoding)."""
    try:
        return canonical_json(encode(a)) == canonical_json(encode(b))
    except Exception:  # noqa: BLE001 - not encodable: compare what can be seen
        return type(a) is type(b) and repr(a) == repr(b)


def show(v: Any) -> str:
    """A bounded, readable rendering of a trace value for a difference line."""
    if isinstance(v, np.ndarray):
        text = np.array2string(v, precision=8, threshold=12, separator=", ",
                               max_line_width=1 << 20)
        return f"{text} ({v.dtype})"
    if type(v) is tuple and len(v) == 4 and v[0] == "<array>":
        return f"<{v[1]} array {tuple(v[2])}, sha256 {str(v[3])[:12]}>"
    return short(v, 160)


def _first(x: Any, y: Any, path: str) -> tuple[str, Any, Any] | None:
    """The first place two space descriptions differ: (path, x's value, y's value)."""
    if type(x) is dict and type(y) is dict:
        for k in list(x) + [k for k in y if k not in x]:
            found = _first(x.get(k, _MISSING), y.get(k, _MISSING), f"{path}.{k}")
            if found:
                return found
        return None
    if type(x) is list and type(y) is list and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            found = _first(u, v, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if same(x, y) else (path, x, y)


def _space_difference(name: str, x: Any, y: Any, la: str, lb: str) -> str | None:
    found = _first(x, y, "")
    if found is None:
        return None
    path, u, v = found
    where = f" at {path.lstrip('.')}" if path.lstrip(".") else ""
    return f"{name} differs{where}: {la} {show(u)} vs {lb} {show(v)}"


def _error_text(e: dict[str, Any]) -> str:
    message = f": {e.get('message')}" if e.get("message") else ""
    return f"{e.get('type')}{message} in {e.get('method')}() at step {e.get('step')}"


def _errors(a: Trace, b: Trace, la: str, lb: str, shared: bool) -> list[str]:
    ea, eb = a.error, b.error
    if ea is None and eb is None:
        return []
    if ea is not None and eb is not None:
        if same(ea, eb):
            return [f"the rollout raised the same on both sides: {_error_text(ea)}"] * shared
        return [f"the rollout raised differently: {la} {_error_text(ea)}; "
                f"{lb} {_error_text(eb)}"]
    if ea is not None:
        return [f"the rollout raised {_error_text(ea)} on {la} only ({lb} did not)"]
    assert eb is not None
    return [f"the rollout raised {_error_text(eb)} on {lb} only ({la} did not)"]


def _replanned(t: Trace) -> str | None:
    """How ``t``'s action space after reset differs from the one before (the plan's)."""
    if t.action_space_after_reset is None:
        return None
    return _space_difference("action_space", t.action_space, t.action_space_after_reset,
                             "before reset", "after")


def compare(a: Trace, b: Trace, labels: tuple[str, str] = ("a", "b"), *,
            shared: bool = True) -> list[str]:
    """What differs between two traces, one line each; ``[]`` means identical.

    Parameters
    ----------
    a, b
        The traces (from :func:`~specpack._verify.trace.record`).
    labels
        How the lines name the two sides (e.g. ``("here", "fresh interpreter")``).
    shared
        Also list findings both traces share (a rollout that raised the same on both sides,
        an action space that changed on reset alike); ``False`` lists only what differs.

    Returns
    -------
    list of str
        Rollout errors first, then layers, spaces, ``render_mode``, spec fields, and the
        rollout's first divergence (``"step 5: observation differs: ..."``). The rollout is
        not compared when either spec says ``nondeterministic=True``.
    """
    la, lb = labels
    out = _errors(a, b, la, lb, shared)
    if a.layers != b.layers:
        out.append(f"layers differ: {la} {a.layers} vs {lb} {b.layers}")
    for name in ("observation_space", "action_space"):
        found = _space_difference(name, getattr(a, name), getattr(b, name), la, lb)
        if found:
            out.append(found)
    ra, rb = _replanned(a), _replanned(b)
    why = "the action space after reset is not the one the actions were planned from"
    if ra and ra == rb:
        out += [f"{why} (on both sides): {ra}"] * shared
    else:
        out += [f"{why} ({side}): {r}" for side, r in ((la, ra), (lb, rb)) if r]
    if not same(a.render_mode, b.render_mode):
        out.append(f"render_mode differs: {la} {show(a.render_mode)} vs {lb} "
                   f"{show(b.render_mode)}")
    for key in sorted(set(a.spec) | set(b.spec)):
        va, vb = a.spec.get(key, _MISSING), b.spec.get(key, _MISSING)
        if not same(va, vb):
            out.append(f"spec.{key} differs: {la} {show(va)} vs {lb} {show(vb)}")
    if a.nondeterministic or b.nondeterministic:
        return out
    out.extend(_events(a, b, la, lb))
    return out


def _events(a: Trace, b: Trace, la: str, lb: str) -> list[str]:
    for x, y in zip(a.events, b.events):
        if x[0] != y[0]:
            return [f"step {x[1]}: {la} did {x[0]} but {lb} did {y[0]}"]
        fields = _RESET_FIELDS if x[0] == "reset" else _STEP_FIELDS
        prefix = "reset " if x[0] == "reset" else ""
        for name, u, v in zip(fields, x[2:], y[2:]):
            if not same(u, v):
                return [f"step {x[1]}: {prefix}{name} differs: {la} {show(u)} vs {lb} "
                        f"{show(v)}"]
    if len(a.events) != len(b.events) and a.error is None and b.error is None:
        return [f"rollout length differs: {la} {len(a.events)} events vs {lb} "
                f"{len(b.events)}"]
    return []
