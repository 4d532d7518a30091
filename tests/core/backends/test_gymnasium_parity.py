"""``pack.make()`` equals ``gymnasium.make(id, **same_options)`` for every classic-control and
toy-text env: same wrapper stack (names and order), spaces, env.spec and seeded rollout."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from _helpers import GYMNASIUM_0X

import specpack

IDS = sorted(
    env_id
    for env_id, spec in gymnasium.registry.items()
    if isinstance(spec.entry_point, str)
    and spec.entry_point.startswith(
        ("gymnasium.envs.classic_control", "gymnasium.envs.toy_text")
    )
)

OPTIONS = [
    {},
    {"max_episode_steps": 13},
    {"disable_env_checker": True},
    {"max_episode_steps": -1},
    {"render_mode": "rgb_array"},
    {"render_mode": "rgb_array_list"},
]


def stack(env):
    names = []
    while isinstance(env, gymnasium.Wrapper):
        names.append(type(env))
        env = env.env
    return [*names, type(env)]


def test_registry_holds_the_expected_envs():
    assert "CartPole-v1" in IDS and "FrozenLake-v1" in IDS and len(IDS) >= 11


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
@pytest.mark.parametrize("env_id", IDS)
def test_pack_make_matches_gymnasium_make(env_id, options):
    reference = gymnasium.make(env_id, **options)
    if GYMNASIUM_0X and options.get("max_episode_steps") == -1:
        # 0.28/0.29's make wraps TimeLimit(env, -1) (truncating every step) where specpack and
        # 1.x mean "no TimeLimit": capture refuses, naming the release and the way out
        assert reference.spec.max_episode_steps == -1
        with pytest.raises(specpack.CaptureError, match=f"gymnasium {gymnasium.__version__}'s"):
            specpack.capture(env_id, **options)
        return
    rebuilt = specpack.capture(env_id, **options).make()
    assert stack(rebuilt) == stack(reference)
    assert rebuilt.observation_space == reference.observation_space
    assert rebuilt.action_space == reference.action_space
    assert rebuilt.spec == reference.spec
    assert rebuilt.render_mode == reference.render_mode
    assert specpack.diff(rebuilt, reference, steps=30, seed=7) == []


@pytest.mark.parametrize("env_id", ["CartPole-v1", "FrozenLake-v1", "Pendulum-v1"])
def test_make_overrides_merge_over_captured_kwargs_like_gymnasium_make(env_id):
    pack = specpack.capture(env_id, max_episode_steps=9)
    reference = gymnasium.make(env_id, max_episode_steps=9, render_mode="rgb_array")
    rebuilt = pack.make(render_mode="rgb_array")
    assert stack(rebuilt) == stack(reference)
    assert rebuilt.spec == reference.spec
    assert specpack.diff(rebuilt, reference, steps=30) == []


def test_capture_kwargs_reach_the_constructor_as_in_make():
    pack = specpack.capture("FrozenLake-v1", is_slippery=False, map_name="8x8")
    ref = gymnasium.make("FrozenLake-v1", is_slippery=False, map_name="8x8")
    env = pack.make()
    assert env.unwrapped.desc.shape == ref.unwrapped.desc.shape == (8, 8)
    assert dict(pack.kwargs) == {"map_name": "8x8", "is_slippery": False}
    assert specpack.diff(env, ref, steps=40) == []


class FramesOnly(gymnasium.Env):  # type: ignore[type-arg]
    """Renders rgb_array only: make(render_mode="human") must add HumanRendering."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}
    observation_space = gymnasium.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = render_mode

    def render(self) -> np.ndarray:
        return np.zeros((4, 4, 3), np.uint8)


def test_human_render_mode_applies_human_rendering_wrapper_like_make():
    gymnasium.register("FramesOnly-v0", entry_point=FramesOnly)
    try:
        with pytest.warns(UserWarning, match="HumanRendering wrapper is being applied"):
            ref = gymnasium.make("FramesOnly-v0", render_mode="human")
        with pytest.warns(UserWarning, match="HumanRendering wrapper is being applied"):
            env = specpack.capture("FramesOnly-v0").make(render_mode="human")
        assert gymnasium.wrappers.HumanRendering in stack(env)  # the case this test is about
        assert stack(env) == stack(ref)
        assert env.spec == ref.spec and env.unwrapped.render_mode == "rgb_array"
    finally:
        gymnasium.registry.pop("FramesOnly-v0")
