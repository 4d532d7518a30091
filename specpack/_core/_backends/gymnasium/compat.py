"""What differs between gymnasium 1.x releases where specpack reads or rebuilds a wrapper.

Measured between gymnasium 1.0.0 and 1.4.0 (``EnvSpec`` fields, ``make``'s wrapper order and
the wrapper module paths are the same in both):

- ``RecordConstructorArgs`` records of 1.0 are incomplete or wrong for three wrappers:
  ``RecordEpisodeStatistics`` records nothing (``buffer_length``, ``stats_key`` are lost),
  ``RecordVideo`` leaves out ``fps``, and ``AddRenderObservation`` records
  ``pixels_only``/``pixels_key`` for its parameters ``render_only``/``render_key``. Capture
  repairs each from where the wrapper keeps the value, so a rebuild (under any 1.x) is
  faithful.
- Later releases added wrapper parameters: ``StickyAction(repeat_action_duration=1)`` and
  ``RecordVideo(gc_trigger=<default lambda>)``. A pack from a newer release rebuilt under an
  older one drops such a kwarg when it holds the value that means "the old behaviour", and
  otherwise raises a :class:`~specpack.BuildError` that names the wrapper, the kwarg
  and both versions. A kwarg that is the very default object of the signature (the
  ``gc_trigger`` lambda) is not recorded at all: it is what the rebuild gets by default, and
  carrying gymnasium's own lambda by value would tie the pack to this Python for nothing.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from types import ModuleType
from typing import Any

import gymnasium

from ..._errors import BuildError

__all__ = ["GYMNASIUM_VERSION", "LINE", "adapt_layer_kwargs", "cross_line", "line_of", "repair_record",
           "vector_api"]

GYMNASIUM_VERSION: str = gymnasium.__version__


def line_of(version: str | None) -> str | None:
    """The gymnasium line of a release: ``"0"`` (0.28, 0.29) or ``"1"`` (1.x); None if unknown."""
    if not version:
        return None
    major = version.partition(".")[0]
    return major if major.isdigit() else None


#: The line of the gymnasium imported here.
LINE: str | None = line_of(gymnasium.__version__)


def vector_api() -> ModuleType:
    """The module of gymnasium's 1.x vector API here: ``gymnasium.vector`` in 1.x,
    ``gymnasium.experimental.vector`` in 0.28/0.29 (whose ``gymnasium.vector`` is the older,
    autoresetting API that ``gymnasium.make_vec`` of 0.29 does not return)."""
    return importlib.import_module(
        "gymnasium.experimental.vector" if LINE == "0" else "gymnasium.vector"
    )


def cross_line(captured_under: str | None) -> bool:
    """Whether a pack captured under gymnasium ``captured_under`` is from the other line."""
    captured = line_of(captured_under)
    return captured is not None and LINE is not None and captured != LINE

#: Parameters added after 1.0, with the value that reproduces the older behaviour.
_ADDED_LATER: dict[str, dict[str, Any]] = {
    "gymnasium.wrappers.stateful_action:StickyAction": {"repeat_action_duration": 1},
}

_RENAMED_1_0 = {"pixels_only": "render_only", "pixels_key": "render_key"}


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


@functools.lru_cache(maxsize=256)
def _signature(cls: type) -> inspect.Signature | None:
    try:
        return inspect.signature(cls)
    except (TypeError, ValueError):
        return None


def repair_record(node: Any, cls: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` (what ``RecordConstructorArgs`` recorded) completed and corrected.

    Only gymnasium's own wrappers are touched, and only where a release records less than the
    constructor took; values come from where the wrapper stores them.
    """
    if not cls.__module__.startswith("gymnasium."):
        return kwargs
    sig = _signature(cls)
    d = vars(node)
    name = _name(cls)
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
        params = sig.parameters if sig is not None else {}
        for old, new in _RENAMED_1_0.items():
            if old in out and old not in params and new in params:
                out[new] = out.pop(old)
    if sig is not None:
        for k in list(out):
            p = sig.parameters.get(k)
            if p is not None and callable(p.default) and out[k] is p.default:
                del out[k]  # the signature's own default function (RecordVideo.gc_trigger)
    return out


def adapt_layer_kwargs(
    cls: type, kwargs: dict[str, Any], captured_under: str | None, label: str
) -> dict[str, Any]:
    """The kwargs of a gymnasium wrapper from a pack of another 1.x release, fitted to this one.

    A kwarg this release's constructor does not take is dropped when it holds the value of
    the older behaviour (see ``_ADDED_LATER``); otherwise the rebuild would differ, so this
    raises :class:`~specpack.BuildError` naming the wrapper, the kwarg and the versions.
    """
    if not cls.__module__.startswith("gymnasium."):
        return kwargs
    sig = _signature(cls)
    if sig is None or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return kwargs
    unknown = [k for k in kwargs if k not in sig.parameters]
    if not unknown:
        return kwargs
    neutral = _ADDED_LATER.get(_name(cls), {})
    lost = [k for k in unknown if not (k in neutral and _equal(kwargs[k], neutral[k]))]
    if lost:
        raise BuildError(
            f"pack {label}: the wrapper {cls.__qualname__} was captured under gymnasium "
            f"{captured_under or 'unknown'} with {', '.join(f'{k}={kwargs[k]!r}' for k in lost)}"
            f", which gymnasium {GYMNASIUM_VERSION} here does not take; upgrade gymnasium here "
            f"to {captured_under or 'that release'}, or capture the env under "
            f"gymnasium {GYMNASIUM_VERSION}"
        )
    return {k: v for k, v in kwargs.items() if k not in unknown}


def _equal(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable means different
        return False
