"""Comparing two traces, one line per difference, up to the rollout's first divergence.

Values are compared by their exact encodings (type and bits: ``1`` is not ``1.0``, ``-0.0`` is
not ``0.0``); a value with no exact encoding equals nothing (:func:`not_comparable` lists them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._core._exact.describe import same
from ..._core._exact.nodes import DIGEST, NOT_COMPARABLE, children, equal, markers
from .render import detail, show
from .trace import Trace

__all__ = ["FIELDS", "RESET_FIELDS", "compare", "difference", "error_text", "not_comparable",
           "same", "show"]

#: The fields of a step event, in trace order (and the order a seal holds their digests).
FIELDS = ("action", "observation", "reward", "terminated", "truncated", "info")
#: The fields of a reset event.
RESET_FIELDS = ("observation", "info")
_MISSING = ["<missing>"]
_LEAVES = ("array", "scalar", "tensor", "bytes", "str", "int", "complex", "global", "nan", DIGEST,
           NOT_COMPARABLE)


def _places(node: Any) -> list[tuple[str, Any]] | None:
    """The parts a difference can be located in, or None for a value shown whole."""
    if type(node) is dict:
        return list(node.items())
    if type(node) is not list or not node or type(node[0]) is not str or node[0] in _LEAVES:
        return None
    if node[0] == "array" and type(node[4] if len(node) > 4 else None) is str:
        return [(".state", node[5])] if len(node) == 6 else None
    return children(node)


def difference(u: Any, v: Any) -> tuple[str, Any, Any] | None:
    """Where two encodings first differ: ``(path, part of u, part of v)``, or None if equal.
    The path descends while both sides are containers of one kind with the same places."""
    path = ""
    for _ in range(1000):
        if equal(u, v):
            return None
        pu, pv = _places(u), _places(v)
        if (pu is None or pv is None or type(u) is not type(v)
                or [p for p, _ in pu] != [p for p, _ in pv]
                or (type(u) is list and u[:2] != v[:2])):
            return path, u, v
        for (place, x), (_, y) in zip(pu, pv):
            if not equal(x, y):
                path += f".{place}" if type(u) is dict else place
                u, v = x, y
                break
        else:
            return path, u, v
    return path, u, v


def _line(what: str, u: Any, v: Any, la: str, lb: str, at: str = "") -> str:
    """``"<what><path> differs: la U vs lb V"`` (``"<what> differs at <at><path>: ..."``)."""
    found = difference(u, v)
    path, x, y = found if found is not None else ("", u, v)
    head = f"{what} differs at {at}{path}" if at else f"{what}{path} differs"
    for side, node in ((la, x), (lb, y)):
        if (first := next(markers(node), None)) is not None:
            where, kind, why = first
            place = f"{what} at {at}{path}{where}" if at else f"{what}{path}{where}"
            return f"{place} has no exact encoding ({side}): <{kind}> {why}"
    return f"{head}: {la} {show(x)} vs {lb} {show(y)}{detail(x, y)}"


def _space_difference(name: str, x: Any, y: Any, la: str, lb: str) -> str | None:
    found = _first(x, y)
    return None if found is None else _line(name, *found[1:], la, lb, at=found[0].lstrip("."))


def _first(x: Any, y: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place two space descriptions differ: (path, x's value, y's value)."""
    if type(x) is dict and type(y) is dict:
        for k in list(x) + [k for k in y if k not in x]:
            if found := _first(x.get(k, _MISSING), y.get(k, _MISSING), f"{path}.{k}"):
                return found
        return None
    if (type(x) is list and type(y) is list and len(x) == len(y)
            and all(type(i) is dict or (type(i) is list and len(i) == 2 and type(i[1]) is dict)
                    for i in x + y)):  # a list of sub-space descriptions
        for i, (u, v) in enumerate(zip(x, y)):
            if found := _first(u, v, f"{path}[{i}]"):
                return found
        return None
    return None if same(x, y) else (path, x, y)


def error_text(e: Mapping[str, Any]) -> str:
    """A rollout error as one phrase: ``"ValueError: bad in step() at step 3"``."""
    message = f": {e.get('message')}" if e.get("message") else ""
    return f"{e.get('type')}{message} in {e.get('method')}() at step {e.get('step')}"


def _errors(a: Trace, b: Trace, la: str, lb: str, shared: bool) -> list[str]:
    ea, eb = a.error, b.error
    if ea is not None and eb is not None:
        if same(ea, eb):
            return [f"the rollout raised the same on both sides: {error_text(ea)}"] * shared
        return [f"the rollout raised differently: {la} {error_text(ea)}; "
                f"{lb} {error_text(eb)}"]
    return [f"the rollout raised {error_text(e)} on {side} only ({other} did not)"
            for e, side, other in ((ea, la, lb), (eb, lb, la)) if e is not None]


def _replanned(t: Trace) -> str | None:
    """How ``t``'s action space after reset differs from the one before (the plan's)."""
    return None if t.action_space_after_reset is None else _space_difference(
        "action_space", t.action_space, t.action_space_after_reset, "before reset", "after")


def compare(a: Trace, b: Trace, labels: tuple[str, str] = ("a", "b"), *,
            shared: bool = True) -> list[str]:
    """What differs between two traces, one line each; ``[]`` means identical.

    ``labels`` name the two sides; ``shared`` also lists findings both traces share (the same
    rollout error or action space change on reset). The rollout is not compared when either
    spec says ``nondeterministic=True``.
    """
    la, lb = labels
    out = _errors(a, b, la, lb, shared)
    if a.layers != b.layers:
        out.append(f"layers differ: {la} {a.layers} vs {lb} {b.layers}")
    for name in ("observation_space", "action_space"):
        if found := _space_difference(name, getattr(a, name), getattr(b, name), la, lb):
            out.append(found)
    ra, rb = _replanned(a), _replanned(b)
    why = "the action space after reset is not the one the actions were planned from"
    if ra and ra == rb:
        out += [f"{why} (on both sides): {ra}"] * shared
    else:
        out += [f"{why} ({side}): {r}" for side, r in ((la, ra), (lb, rb)) if r]
    if not same(a.render_mode, b.render_mode):
        out.append(_line("render_mode", a.render_mode, b.render_mode, la, lb))
    for key in sorted(set(a.spec) | set(b.spec)):
        va, vb = a.spec.get(key, _MISSING), b.spec.get(key, _MISSING)
        if not same(va, vb):
            out.append(_line(f"spec.{key}", va, vb, la, lb))
    if a.ignored_info != b.ignored_info and (a.ignored_info or b.ignored_info):
        out.append(f"the ignored info keys returned differ: {la} {a.ignored_info} vs {lb} "
                   f"{b.ignored_info}")
    if a.nondeterministic or b.nondeterministic:
        return out
    out.extend(_events(a, b, la, lb))
    return out


def _events(a: Trace, b: Trace, la: str, lb: str) -> list[str]:
    for x, y in zip(a.events, b.events):
        if x[0] != y[0]:
            return [f"step {x[1]}: {la} did {x[0]} but {lb} did {y[0]}"]
        fields = RESET_FIELDS if x[0] == "reset" else FIELDS
        prefix = "reset " if x[0] == "reset" else ""
        for name, u, v in zip(fields, x[2:], y[2:]):
            if not equal(u, v):
                return [f"step {x[1]}: " + _line(f"{prefix}{name}", u, v, la, lb)]
    if len(a.events) != len(b.events) and a.error is None and b.error is None:
        return [f"rollout length differs: {la} {len(a.events)} events vs {lb} "
                f"{len(b.events)}"]
    return []


def not_comparable(trace: Trace) -> list[str]:
    """Where ``trace`` holds a value with no exact encoding, one line per kind and place
    (``"step 3 observation: <mymod.Obs> cannot be pickled: ... (and at 99 later steps)"``)."""
    seen: dict[tuple[str, str, str], list[Any]] = {}  # -> [line, later occurrences]
    places: list[tuple[str, str, Any]] = [  # (event named as a line says it, field, value)
        ("", "observation_space", trace.observation_space),
        ("", "action_space", trace.action_space),
        ("", "action_space after reset", trace.action_space_after_reset),
        ("", "render_mode", trace.render_mode), ("", "spec", trace.spec)]
    for event in trace.events:
        reset = event[0] == "reset"
        where = f"step {event[1]} " + ("reset " if reset else "")
        places += [(where, name, node)
                   for name, node in zip(RESET_FIELDS if reset else FIELDS, event[2:])]
    for where, name, node in places:
        for path, kind, why in markers(node):
            key = (f"{name}{path}", kind, why)
            seen.setdefault(key, [f"{where}{name}{path}: <{kind}> {why}", -1])[1] += 1
    return [text + (f" (and at {n} later steps)" if n else "") for text, n in seen.values()]
