"""The recorders of gym 0.26's own wrappers (gym has no ``RecordConstructorArgs``): where each
keeps its constructor arguments."""

from __future__ import annotations

from typing import Any

from ..recorders import Recorder, attrs, register_recorder, same
from .numpy2 import COMPAT, TIME_LIMIT

__all__: list[str] = []


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
