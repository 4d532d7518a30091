"""Reading a live gym stack's constructor arguments.

gym has no ``RecordConstructorArgs``. A live stack's constructor arguments are read from the
attributes where gym's own wrappers store them (a table, checked against their sources), from a
``_saved_kwargs`` record (a gym wrapper may inherit ``gymnasium.utils.RecordConstructorArgs``),
from EzPickle, or from an ``__init__`` that takes only ``env``; anything else is refused.
"""

from __future__ import annotations

from typing import Any

from ...errors import UnrecordedArgumentsError
from .._args import check_coverage, evidence_kwargs, ezpickle_kwargs, init_params, read_recorder
from ..recorders import Recorder, attrs, register_recorder, same
from .numpy2 import COMPAT, TIME_LIMIT

__all__ = ["base_kwargs", "wrapper_kwargs"]


def _record_stats(node: Any) -> dict[str, Any]:
    return {"deque_size": vars(node)["return_queue"].maxlen}


#: Where gym 0.26.2's own wrappers keep each constructor argument (read from their __init__;
#: a stored value passed back yields the same wrapper). Wrappers whose __init__ takes only env
#: need no entry.
_GYM_WRAPPERS: dict[str, Recorder] = {
    TIME_LIMIT: attrs(max_episode_steps="_max_episode_steps"),
    "gym.wrappers.order_enforcing:OrderEnforcing": attrs(
        disable_render_order_enforcing="_disable_render_order_enforcing"
    ),
    COMPAT: same("render_mode"),
    "gym.wrappers.render_collection:RenderCollection": same("pop_frames", "reset_clean"),
    "gym.wrappers.step_api_compatibility:StepAPICompatibility": same("output_truncation_bool"),
    "gym.wrappers.atari_preprocessing:AtariPreprocessing": same(
        "noop_max", "frame_skip", "screen_size", "terminal_on_life_loss", "grayscale_obs",
        "grayscale_newaxis", "scale_obs",
    ),
    "gym.wrappers.filter_observation:FilterObservation": attrs(filter_keys="_filter_keys"),
    "gym.wrappers.frame_stack:FrameStack": same("num_stack", "lz4_compress"),
    "gym.wrappers.gray_scale_observation:GrayScaleObservation": same("keep_dim"),
    "gym.wrappers.normalize:NormalizeObservation": same("epsilon"),
    "gym.wrappers.normalize:NormalizeReward": same("gamma", "epsilon"),
    "gym.wrappers.record_episode_statistics:RecordEpisodeStatistics": _record_stats,
    "gym.wrappers.record_video:RecordVideo": same(
        "video_folder", "episode_trigger", "step_trigger", "video_length", "name_prefix"
    ),
    "gym.wrappers.rescale_action:RescaleAction": same("min_action", "max_action"),
    "gym.wrappers.resize_observation:ResizeObservation": same("shape"),
    "gym.wrappers.transform_observation:TransformObservation": same("f"),
    "gym.wrappers.transform_reward:TransformReward": same("f"),
    "gym.wrappers.pixel_observation:PixelObservationWrapper": attrs(
        pixels_only="_pixels_only", render_kwargs="_render_kwargs", pixel_keys="_pixel_keys"
    ),
}


for _name, _recorder in _GYM_WRAPPERS.items():
    register_recorder(_name, _recorder)


def wrapper_kwargs(node: Any, cls: type) -> dict[str, Any]:
    """The constructor kwargs of one gym wrapper, known faithfully, or a clear refusal."""
    name = f"{cls.__module__}.{cls.__qualname__}"
    fix = (
        f"make {cls.__qualname__} inherit gymnasium.utils.RecordConstructorArgs (it works for "
        f"gym wrappers too) and call RecordConstructorArgs.__init__(self, <arg>=<arg>, ...) in "
        "its __init__, or capture the env below it and re-apply the wrapper in the worker"
    )
    recorded = read_recorder(node, cls, fix)
    if recorded is not None:
        return recorded
    saved = vars(node).get("_saved_kwargs")
    if isinstance(saved, dict):
        kwargs = {k: v for k, v in saved.items() if k != "env"}
        check_coverage(node, cls, kwargs, "RecordConstructorArgs", fix)
        return kwargs
    recorded = ezpickle_kwargs(node, cls)
    if recorded is not None:
        recorded.pop("env", None)
        check_coverage(node, cls, recorded, "EzPickle", fix)
        return recorded
    params = init_params(cls)
    if params is not None and not params:
        return {}
    taken = ", ".join(p.name for p in params or ())
    raise UnrecordedArgumentsError(
        f"the gym wrapper {name} takes constructor arguments ({taken or 'unknown'}) that gym "
        f"does not record (gym has no RecordConstructorArgs), so it cannot be rebuilt "
        f"faithfully; {fix}"
    )


def base_kwargs(base: Any, cls: type, notes: list[str]) -> dict[str, Any]:
    """Constructor kwargs of a base gym env that ``gym.make`` did not build."""
    name = f"{cls.__module__}.{cls.__qualname__}"
    fix = (
        f"capture the class with its arguments, specpack.capture({cls.__qualname__}, "
        "backend='gym', ...), or build the env with gym.make so its spec records them"
    )
    saved = getattr(base, "__dict__", {}).get("_saved_kwargs")
    if isinstance(saved, dict):
        kwargs = dict(saved)
        check_coverage(base, cls, kwargs, "RecordConstructorArgs", fix)
        return kwargs
    recorded = ezpickle_kwargs(base, cls)
    if recorded is not None:
        check_coverage(
            base, cls, recorded, "EzPickle",
            f"pass every argument to EzPickle.__init__ in {cls.__qualname__}.__init__, or {fix}",
        )
        return recorded
    params = init_params(cls)
    if params is not None and not params:
        return {}
    if params is not None:
        recovered = evidence_kwargs(base, params)
        if recovered is not None:
            if recovered and [p.name for p in params] != ["render_mode"]:
                notes.append(
                    f"{cls.__qualname__} was built directly: its constructor arguments "
                    f"({', '.join(recovered)}) were read back from same-named attributes; "
                    "pack.verify() proves the rebuild"
                )
            return recovered
    taken = ", ".join(p.name for p in params or ())
    raise UnrecordedArgumentsError(
        f"the gym env {name} was built directly with constructor arguments "
        f"({taken or 'unknown'}) that nothing recorded (no spec from gym.make, no EzPickle, "
        f"no RecordConstructorArgs); {fix}"
    )
