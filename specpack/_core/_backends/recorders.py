"""Recorders: functions ``wrapper -> {argument: value}`` that read the constructor arguments
of wrappers that do not inherit ``RecordConstructorArgs`` (SB3's ``Monitor``, minigrid's, gym
0.26's) back from an instance. Keyed by ``"module:qualname"``: registering imports nothing."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._errors import CaptureError
from ._shared import name_of

__all__ = ["Recorder", "attrs", "recorder_for", "register_recorder", "same"]

Recorder = Callable[[Any], Mapping[str, Any]]

_RECORDERS: dict[str, Recorder] = {}


def register_recorder(wrapper: type | str, recorder: Recorder) -> None:
    """Tell capture how to read ``wrapper``'s constructor arguments from an instance.

    Parameters
    ----------
    wrapper
        The wrapper class, or its ``"module:qualname"`` (registers without importing it).
    recorder
        ``recorder(instance)`` returns the keyword arguments that rebuild an equal wrapper
        (without ``env``). Subclasses that do not define their own ``__init__`` use it too.

    Raises
    ------
    CaptureError
        ``wrapper`` is neither a class nor a ``"module:qualname"`` string, or ``recorder`` is
        not callable.

    Example::

        specpack.register_recorder(MyWrapper, lambda w: {"scale": w.scale})
        pack = specpack.capture(MyWrapper(gymnasium.make("CartPole-v1"), scale=2.0))
    """
    if isinstance(wrapper, str):
        if ":" not in wrapper:
            raise CaptureError(f"register_recorder({wrapper!r}, ...): name the class as "
                               "'module:qualname', or pass the class itself")
        key = wrapper
    elif isinstance(wrapper, type):
        key = name_of(wrapper)
    else:
        raise CaptureError(f"register_recorder: {wrapper!r} is not a class")
    if not callable(recorder):
        raise CaptureError(f"register_recorder({key}, ...): the recorder must be callable")
    _RECORDERS[key] = recorder


def recorder_for(cls: type) -> Recorder | None:
    """The recorder of ``cls``, or of the class whose ``__init__`` it inherits; None if none."""
    for c in cls.__mro__:
        hit = _RECORDERS.get(name_of(c))
        if hit is not None or "__init__" in vars(c):
            return hit
    return None


def attrs(**params: str) -> Recorder:
    """A recorder reading each constructor argument from the named instance attribute."""

    def read(node: Any) -> dict[str, Any]:
        d = vars(node)
        return {p: d[a] for p, a in params.items()}

    return read


def same(*names: str) -> Recorder:
    """A recorder reading each constructor argument from the attribute of the same name."""
    return attrs(**{n: n for n in names})


def _monitor(node: Any) -> dict[str, Any]:
    """stable-baselines3's ``Monitor``: the log file from its writer, the rest as stored."""
    writer = vars(node).get("results_writer")
    handle = getattr(writer, "file_handler", None)
    out: dict[str, Any] = {
        "filename": getattr(handle, "name", None),
        "allow_early_resets": node.allow_early_resets,
        "reset_keywords": tuple(node.reset_keywords),
        "info_keywords": tuple(node.info_keywords),
    }
    if handle is not None:
        out["override_existing"] = "a" not in getattr(handle, "mode", "w")
    return out


_RECORDERS.update({
    "stable_baselines3.common.monitor:Monitor": _monitor,
    "minigrid.wrappers:DictObservationSpaceWrapper": same("max_words_in_mission", "word_dict"),
    "minigrid.wrappers:DirectionObsWrapper": same("type"),
    "minigrid.wrappers:FlatObsWrapper": same("maxStrLen"),
    "minigrid.wrappers:NoDeath": same("no_death_types", "death_cost"),
    "minigrid.wrappers:OneHotPartialObsWrapper": same("tile_size"),
    "minigrid.wrappers:PositionBonus": same("scale"),
    "minigrid.wrappers:RGBImgObsWrapper": same("tile_size"),
    "minigrid.wrappers:RGBImgPartialObsWrapper": same("tile_size"),
    "minigrid.wrappers:ReseedWrapper": same("seeds", "seed_idx"),
    "minigrid.wrappers:StochasticActionWrapper": same("prob", "random_action"),
    "minigrid.wrappers:ViewSizeWrapper": same("agent_view_size"),
})
