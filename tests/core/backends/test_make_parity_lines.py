"""What ``gymnasium.make`` of 0.28/0.29 does and 1.x does not, and how a pack follows it.

gymnasium 0.28/0.29's ``EnvSpec`` has ``autoreset`` (make adds ``AutoResetWrapper`` over the
TimeLimit) and ``apply_api_compatibility`` (make builds an old-API env inside
``EnvCompatibility``); gymnasium 1.0 removed both fields. Each test states what each line does.
``make_vec`` builds on each line's 1.x-style vector API (``gymnasium.experimental.vector`` in
0.28/0.29).
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from _helpers import GYMNASIUM_0X
from _make_parity import raised, registered, wrapper_types
from gymnasium.envs.classic_control import CartPoleEnv
from gymnasium.envs.registration import EnvSpec

import specpack
from specpack._core._backends.gymnasium.compat import vector_api


def _rollout(env: Any, steps: int = 24, seed: int = 3) -> list[Any]:
    """Observations, rewards and flags of ``steps`` seeded steps, never resetting by hand."""
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    out = [np.asarray(obs).tolist()]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        out.append([np.asarray(obs).tolist(), float(reward), bool(terminated), bool(truncated)])
    return out


def test_a_spec_registered_with_autoreset_gets_the_autoreset_wrapper_of_0x_make() -> None:
    if not GYMNASIUM_0X:  # gymnasium 1.0 removed the field (and make's autoreset)
        assert "autoreset" not in EnvSpec.__dataclass_fields__
        assert isinstance(raised(lambda: EnvSpec("A-v0", CartPoleEnv, autoreset=True)), TypeError)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 0.29 warns that register(autoreset=True) is deprecated
        with registered("AutoPole-v0", entry_point=CartPoleEnv, max_episode_steps=5,
                        autoreset=True) as env_id:
            theirs = gymnasium.make(env_id)
            pack = specpack.capture(env_id)
    assert wrapper_types(pack.make()) == wrapper_types(theirs)
    assert [layer.name for layer in pack.layers][:2] == ["AutoResetWrapper", "TimeLimit"]
    truncations = [t for t in _rollout(theirs)[1:] if t[3]]
    assert len(truncations) >= 4  # the env kept going past each 5-step episode
    assert _rollout(pack.make()) == _rollout(theirs)


def test_a_spec_with_apply_api_compatibility_is_refused_naming_the_release_and_the_way_out(
) -> None:
    if not GYMNASIUM_0X:
        assert "apply_api_compatibility" not in EnvSpec.__dataclass_fields__
        return
    with registered("OldApi-v0", entry_point=CartPoleEnv,
                    apply_api_compatibility=True) as env_id:
        with pytest.raises(specpack.CaptureError) as info:
            specpack.capture(env_id)
    message = str(info.value)
    assert f"gymnasium {gymnasium.__version__}'s make would build" in message
    assert "EnvCompatibility" in message and "backend='gym'" in message


def test_the_capture_options_autoreset_and_apply_api_compatibility_follow_this_lines_make(
) -> None:
    if not GYMNASIUM_0X:  # gymnasium 1.0's make takes neither: refused, naming backend='gym'
        for option in ({"autoreset": True}, {"apply_api_compatibility": False}):
            with pytest.raises(specpack.UnexpectedKwargError,
                               match=r"backend='gym'\); gymnasium 1\.x's make has none"):
                specpack.capture("CartPole-v1", **option)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 0.29 warns that make(autoreset=True) is deprecated
        theirs = gymnasium.make("CartPole-v1", max_episode_steps=5, autoreset=True)
    pack = specpack.capture("CartPole-v1", max_episode_steps=5, autoreset=True)
    assert wrapper_types(pack.make()) == wrapper_types(theirs)
    assert [layer.name for layer in pack.layers][:2] == ["AutoResetWrapper", "TimeLimit"]
    assert len([t for t in _rollout(theirs)[1:] if t[3]]) >= 4  # it went on past each episode
    assert _rollout(pack.make()) == _rollout(theirs)
    # The call's value decides over the spec's, as in that make.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with registered("AutoPole-v1", entry_point=CartPoleEnv, max_episode_steps=5,
                        autoreset=True, apply_api_compatibility=True) as env_id:
            plain = gymnasium.make(env_id, autoreset=False, apply_api_compatibility=False)
            off = specpack.capture(env_id, autoreset=False, apply_api_compatibility=False)
    assert wrapper_types(off.make()) == wrapper_types(plain)
    assert "AutoResetWrapper" not in [layer.name for layer in off.layers]
    assert _rollout(off.make()) == _rollout(plain)
    with pytest.raises(specpack.CaptureError, match=r"EnvCompatibility.*backend='gym'"):
        specpack.capture("CartPole-v1", apply_api_compatibility=True)
    # make tests `is True`: autoreset=1 would silently add no wrapper there; refused here.
    with pytest.raises(specpack.ArgumentTypeError, match="autoreset must be a bool"):
        specpack.capture("CartPole-v1", autoreset=1)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_builds_this_lines_vector_api_with_the_rollout_of_pack_make(mode: str) -> None:
    pack = specpack.capture("CartPole-v1", max_episode_steps=9)
    kwargs = {"context": "spawn"} if mode == "async" else {}
    envs = specpack.make_vec(pack, 2, vectorization_mode=mode, seed=4, **kwargs)
    try:
        assert isinstance(envs, vector_api().VectorEnv)
        obs, _ = envs.reset()
        single = pack.make()
        for i in range(2):
            first, _ = single.reset(seed=4 + i)
            assert np.array_equal(obs[i], first)
        actions = np.array([1, 0])
        stepped = envs.step(actions)[0]
        for i in range(2):
            single.reset(seed=4 + i)
            assert np.array_equal(stepped[i], single.step(int(actions[i]))[0])
    finally:
        envs.close()
