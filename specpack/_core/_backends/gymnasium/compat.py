"""Gymnasium release differences: a release's line, 1.0's wrong ``RecordConstructorArgs`` records
(repaired at capture), wrapper parameters later 1.x added (fitted at build); 1.0.0 to 1.4.0."""

from __future__ import annotations

import functools
import importlib
import inspect
from types import ModuleType
from typing import Any

import gymnasium

from ..._errors import BuildError
from .._shared import name_of

__all__ = ["GYMNASIUM_VERSION", "LINE", "adapt_layer_kwargs", "cross_line", "line_of",
           "repair_record", "vector_api"]

GYMNASIUM_VERSION: str = gymnasium.__version__


def line_of(version: str | None) -> str | None:
    """The gymnasium line of a release: ``"0"`` (0.28, 0.29) or ``"1"`` (1.x); None if unknown."""
    major = (version or "").partition(".")[0]
    return major if major.isdigit() else None


#: The line of the gymnasium imported here.
LINE: str | None = line_of(gymnasium.__version__)


def vector_api() -> ModuleType:
    """The module of gymnasium's 1.x vector API here (in 0.28/0.29 the experimental one: its
    ``gymnasium.vector`` is the older API, which its ``make_vec`` does not return)."""
    return importlib.import_module("gymnasium.experimental.vector" if LINE == "0"
                                   else "gymnasium.vector")


def cross_line(captured_under: str | None) -> bool:
    """Whether a pack captured under gymnasium ``captured_under`` is from the other line."""
    captured = line_of(captured_under)
    return captured is not None and LINE is not None and captured != LINE


#: Parameters added after 1.0, with the value that reproduces the older behaviour.
_ADDED_LATER: dict[str, dict[str, Any]] = {
    "gymnasium.wrappers.stateful_action:StickyAction": {"repeat_action_duration": 1},
}

_RENAMED_1_0 = {"pixels_only": "render_only", "pixels_key": "render_key"}


@functools.lru_cache(maxsize=256)
def _signature(cls: type) -> inspect.Signature | None:
    try:
        return inspect.signature(cls)
    except (TypeError, ValueError):
        return None


def repair_record(node: Any, cls: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` (what ``RecordConstructorArgs`` recorded) completed from where gymnasium's
    wrappers store the values: in 1.0, ``RecordEpisodeStatistics`` records nothing, ``RecordVideo``
    leaves out ``fps``, ``AddRenderObservation`` records ``render_*`` as the old ``pixels_*``."""
    if not cls.__module__.startswith("gymnasium."):
        return kwargs
    sig = _signature(cls)
    params = sig.parameters if sig is not None else {}
    d = vars(node)
    name = name_of(cls)
    out = dict(kwargs)
    if name == "gymnasium.wrappers.common:RecordEpisodeStatistics":
        if "buffer_length" not in out and "return_queue" in d:
            out["buffer_length"] = d["return_queue"].maxlen
        if "stats_key" not in out and "_stats_key" in d:
            out["stats_key"] = d["_stats_key"]
    elif name == "gymnasium.wrappers.rendering:RecordVideo":
        if "fps" not in out and "frames_per_sec" in d:
            fps = d["frames_per_sec"]
            # fps=None means "the env's render_fps, else 30": keep None when that is what it was.
            out["fps"] = None if fps == node.metadata.get("render_fps", 30) else fps
    elif name == "gymnasium.wrappers.transform_observation:AddRenderObservation":
        for old, new in _RENAMED_1_0.items():
            if old in out and old not in params and new in params:
                out[new] = out.pop(old)
    # drop a kwarg that is its parameter's own callable default (RecordVideo's gc_trigger
    # lambda): the rebuild gets it anyway; carried by value, it would tie the pack to this Python
    return {k: v for k, v in out.items()
            if not (k in params and callable(params[k].default) and v is params[k].default)}


def adapt_layer_kwargs(cls: type, kwargs: dict[str, Any], captured_under: str | None,
                       label: str) -> dict[str, Any]:
    """A gymnasium wrapper's kwargs from another 1.x release, fitted here: a kwarg this release
    lacks is dropped if it holds the older behaviour (``_ADDED_LATER``), else refused."""
    if not cls.__module__.startswith("gymnasium."):
        return kwargs
    sig = _signature(cls)
    if sig is None or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return kwargs
    unknown = [k for k in kwargs if k not in sig.parameters]
    if not unknown:
        return kwargs
    neutral = _ADDED_LATER.get(name_of(cls), {})
    lost = [k for k in unknown if not (k in neutral and _equal(kwargs[k], neutral[k]))]
    if lost:
        raise BuildError(f"pack {label}: the wrapper {cls.__qualname__} was captured under "
                         f"gymnasium {captured_under or 'unknown'} with "
                         f"{', '.join(f'{k}={kwargs[k]!r}' for k in lost)}, which gymnasium "
                         f"{GYMNASIUM_VERSION} here does not take; upgrade gymnasium here to "
                         f"{captured_under or 'that release'}, or capture the env under gymnasium "
                         f"{GYMNASIUM_VERSION}")
    return {k: v for k, v in kwargs.items() if k not in unknown}


def _equal(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable means different
        return False
