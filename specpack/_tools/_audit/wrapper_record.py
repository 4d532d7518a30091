"""What a wrapper shows of its arguments: its record against what it was given, and what the
original and its rebuild show for each argument (for the wrappers audit, :mod:`.wrapper_job`).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from ..._core._backends.recorders import recorder_for
from ..._core._text import one_line, short
from .._verify import plain, same

__all__ = ["probe", "probe_differences", "record_check"]

_ABSENT = "<absent>"


def probe(env: Any, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """What the outermost wrapper shows for each argument name: attribute, recorded value."""
    d = getattr(env, "__dict__", {})
    saved = getattr(env, "_saved_kwargs", None)
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        attr: Any = _ABSENT
        for key in (name, f"_{name}"):
            if key in d:
                attr = plain(d[key])
                break
        rec = plain(saved[name]) if isinstance(saved, dict) and name in saved else _ABSENT
        out[name] = {"attribute": attr, "recorded": rec}
    return out


def record_check(name: str, cls: type, live: Any, given: dict[str, Any],
                 defaulted: Any) -> list[str]:
    """The wrapper's record against the arguments it was given: its own (``_saved_kwargs``),
    else what a registered recorder reads from the instance (capture uses the same one)."""
    saved = getattr(live, "_saved_kwargs", None)
    if saved is None:
        recorder = recorder_for(cls)
        if recorder is not None:
            try:
                saved = dict(recorder(live))
            except Exception as e:  # noqa: BLE001 - a broken recorder is this wrapper's finding
                return [f"the recorder registered for {name} failed on an instance: "
                        f"{one_line(e)}"]
    if saved is None and not (given or defaulted):
        return []
    if saved is None:
        return [f"{name} does not inherit gymnasium.utils.RecordConstructorArgs: its arguments "
                "are not recorded, so env.spec cannot rebuild it"]
    out = []
    try:
        sig = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        sig = None  # type: ignore[assignment]
    for key, value in given.items():
        if key not in saved:
            param = sig.get(key) if sig is not None else None
            default = "?" if param is None or param.default is param.empty else short(param.default)
            out.append(f"{name} does not record {key} (given {short(value)}): a rebuild from "
                       f"its record uses the default {default}")
        elif not same(plain(saved[key]), plain(value)):
            out.append(f"{name} records {key}={short(saved[key])} but was given "
                       f"{key}={short(value)}")
    if sig is not None and not any(p.kind is p.VAR_KEYWORD for p in sig.values()):
        for key in saved:
            if key not in sig and key != "env":
                out.append(f"{name} records {key!r}, which its constructor does not take: a "
                           "rebuild from its record raises TypeError")
    return out


def probe_differences(here: dict[str, dict[str, Any]],
                      there: dict[str, dict[str, Any]]) -> list[str]:
    """An attribute or recorded value (:func:`probe`) the original shows and the rebuild not."""
    diffs = []
    for key, shown_here in here.items():
        seen_there = there.get(key, {})
        for what, verb in (("attribute", "has"), ("recorded", "records")):
            seen = seen_there.get(what, _ABSENT)
            shown = shown_here[what]
            absent = isinstance(shown, str) and shown == _ABSENT
            if not absent and not same(shown, seen):
                diffs.append(f"the rebuilt wrapper {verb} {key}={short(seen)} but the original "
                             f"{verb} {key}={short(shown)}")
    return diffs
