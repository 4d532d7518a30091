"""``render_mode`` given to ``capture(...).make()`` does what it does in ``gymnasium.make``: the
env's own modes pass through, ``*_list`` adds RenderCollection over the base mode, ``human``
adds HumanRendering over an env that only draws frames, a mode the env does not declare is
passed on with gymnasium's warning; an env without a ``render_mode`` parameter is refused with
gymnasium's error types and wording (its own Error for ``human``, a TypeError otherwise)."""

from __future__ import annotations

import re
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from _make_parity import (
    FramesOnly,
    OldRenderApi,
    UndeclaredModes,
    ours,
    raised,
    registered,
    wrapper_types,
)
from gymnasium.wrappers import HumanRendering, RenderCollection

import specpack

_HUMAN_ADDED = ("You are trying to use 'human' rendering for an environment that doesn't "
                "natively support it. The HumanRendering wrapper is being applied to your "
                "environment.")


def _undeclared(mode: str, modes: list[str]) -> str:
    return (f"The environment is being initialised with render_mode={mode!r} that is not in "
            f"the possible render_modes ({modes}).")


@pytest.fixture(scope="module", autouse=True)
def render_envs() -> Any:
    """The three envs of this file, registered by string entry point as a package would."""
    with registered("parity/FramesOnly-v0", entry_point=f"{FramesOnly.__module__}:FramesOnly"), \
            registered("parity/OldRenderApi-v0", entry_point=f"{OldRenderApi.__module__}:OldRenderApi"), \
            registered("parity/UndeclaredModes-v0",
                       entry_point=f"{UndeclaredModes.__module__}:UndeclaredModes"):
        yield


# (id, render_mode, wrapper added over the stack, render_mode the env is built with, warning)
RENDER_MODES = [
    ("CartPole-v1", None, None, None, None),
    ("CartPole-v1", "rgb_array", None, "rgb_array", None),
    ("CartPole-v1", "human", None, "human", None),
    ("CartPole-v1", "rgb_array_list", RenderCollection, "rgb_array", None),
    ("CartPole-v1", "no-render-mode", None, "no-render-mode",
     _undeclared("no-render-mode", ["human", "rgb_array"])),
    ("parity/FramesOnly-v0", "human", HumanRendering, "rgb_array", _HUMAN_ADDED),
    ("parity/FramesOnly-v0", "rgb_array_list", RenderCollection, "rgb_array", None),
    ("parity/UndeclaredModes-v0", "rgb_array", None, "rgb_array", _undeclared("rgb_array", [])),
]


@pytest.mark.parametrize(("env_id", "mode", "added", "built_with", "warning"), RENDER_MODES)
def test_render_mode_builds_the_stack_gymnasium_make_builds(
    env_id: str, mode: str | None, added: type | None, built_with: str | None, warning: str | None
) -> None:
    with warnings.catch_warnings(record=True) as theirs_said:
        warnings.simplefilter("always")
        theirs = gymnasium.make(env_id, render_mode=mode)
    with warnings.catch_warnings(record=True) as ours_said:
        warnings.simplefilter("always")
        rebuilt = ours(env_id, render_mode=mode)
    assert [str(w.message) for w in ours_said] == [str(w.message) for w in theirs_said]
    assert any(warning in str(w.message) for w in ours_said) if warning else not ours_said
    assert wrapper_types(rebuilt) == wrapper_types(theirs)
    render_wrappers = [t for t in wrapper_types(rebuilt) if t in (HumanRendering, RenderCollection)]
    assert render_wrappers == ([added] if added else [])
    assert added is None or type(rebuilt) is added  # outermost, over make's other wrappers
    assert rebuilt.render_mode == theirs.render_mode == mode
    assert rebuilt.unwrapped.render_mode == theirs.unwrapped.render_mode == built_with
    assert rebuilt.spec == theirs.spec
    rebuilt.close()
    theirs.close()


def test_a_collected_render_returns_the_frames_as_gymnasium_make_does() -> None:
    rebuilt = ours("CartPole-v1", render_mode="rgb_array_list")
    theirs = gymnasium.make("CartPole-v1", render_mode="rgb_array_list")
    rebuilt.reset(seed=3)
    theirs.reset(seed=3)
    frames = rebuilt.render()
    assert isinstance(frames, list) and len(frames) == 1 and isinstance(frames[0], np.ndarray)
    assert np.array_equal(frames[0], theirs.render()[0])


def test_render_mode_for_an_env_that_takes_none_is_a_type_error_at_capture() -> None:
    theirs = raised(lambda: gymnasium.make("parity/OldRenderApi-v0", render_mode="rgb_array_list"))
    wording = "got an unexpected keyword argument 'render_mode'"
    assert type(theirs) is TypeError and wording in str(theirs)
    with pytest.raises(TypeError, match=re.escape(wording)) as caught:
        specpack.capture("parity/OldRenderApi-v0", render_mode="rgb_array_list")
    assert isinstance(caught.value, specpack.UnexpectedKwargError)
    assert not isinstance(caught.value, gymnasium.error.Error)


def test_human_on_the_old_render_api_raises_gymnasiums_error_with_its_message_first() -> None:
    theirs = raised(lambda: gymnasium.make("parity/OldRenderApi-v0", render_mode="human"))
    assert type(theirs) is gymnasium.error.Error
    assert str(theirs).startswith("You passed render_mode='human' although parity/OldRenderApi-v0 "
                                  "doesn't implement human-rendering natively.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the HumanRendering warning comes first, on both sides
        with pytest.raises(gymnasium.error.Error) as caught:
            specpack.capture("parity/OldRenderApi-v0", render_mode="human")
    assert isinstance(caught.value, specpack.UnexpectedKwargError)  # and so a TypeError too
    assert str(caught.value).startswith(str(theirs).rstrip("."))


def test_an_unknown_kwarg_next_to_render_is_a_plain_type_error_not_the_render_api_error() -> None:
    theirs = raised(lambda: gymnasium.make("CartPole-v1", render="human"))
    wording = "got an unexpected keyword argument 'render'"
    assert type(theirs) is TypeError and wording in str(theirs)
    error = raised(lambda: specpack.capture("CartPole-v1", render="human"))
    assert isinstance(error, specpack.UnexpectedKwargError) and wording in str(error)
    assert not isinstance(error, gymnasium.error.Error)
