"""A near miss of a capture option (``self_containd``) is refused at capture even when the env
takes ``**kwargs`` (every MuJoCo env does), where it used to be stored as an env kwarg and fail
only at ``make()``; ``env_kwargs=`` passes such a kwarg to the env on purpose."""

from __future__ import annotations

import re

import gymnasium
import pytest
import strictenvs  # registers StrictKwAnt-v0 and StrictNamed-v0

import specpack

TYPOS = [("self_containd", "self_contained"), ("record_space", "record_spaces"),
         ("max_episode_step", "max_episode_steps"), ("disable_env_checkr", "disable_env_checker"),
         ("env_kwarg", "env_kwargs"), ("asset", "assets"), ("max_asset_byte", "max_asset_bytes"),
         ("by_valu", "by_value"), ("backends", "backend"), ("SelfContained", "self_contained")]


@pytest.mark.parametrize(("typo", "option"), TYPOS)
def test_a_near_miss_of_an_option_is_refused_for_an_env_taking_var_kwargs(typo, option):
    with pytest.raises(specpack.UnexpectedKwargError) as info:
        specpack.capture("StrictKwAnt-v0", **{typo: True})
    msg = str(info.value)
    assert f"{typo!r}, a near miss of the capture option {option!r}" in msg
    assert "'StrictKwAnt-v0' (strictenvs:KwAnt) takes **kwargs" in msg
    assert f"env_kwargs={{{typo!r}: ...}}" in msg
    assert isinstance(info.value, TypeError) and isinstance(info.value, specpack.SpecPackError)


def test_the_same_typo_on_a_class_target_is_refused_too():
    with pytest.raises(specpack.UnexpectedKwargError, match="near miss of the capture option "
                       "'self_contained'"):
        specpack.capture(strictenvs.KwAnt, self_containd=True)


def test_a_live_env_is_told_it_takes_no_kwargs_and_which_option_was_meant():
    env = gymnasium.make("CartPole-v1")
    with pytest.raises(specpack.UnexpectedKwargError, match=re.escape(
            "'self_containd', a near miss of the capture option 'self_contained'; a live env")):
        specpack.capture(env, self_containd=True)
    env.close()


def test_env_kwargs_passes_such_a_kwarg_on_purpose_and_the_memo_does_not_let_the_typo_through():
    pack = specpack.capture("StrictKwAnt-v0", env_kwargs={"frame_skip": 2})
    assert pack.make().unwrapped.frame_skip == 2
    on_purpose = specpack.capture(strictenvs.Named, env_kwargs={"record_space": 3})
    assert on_purpose.kwargs == {"record_space": 3}
    # an identical capture through env_kwargs is memoised; the typo is still refused after it
    specpack.capture("StrictKwAnt-v0", env_kwargs={"self_containd": 1})
    with pytest.raises(specpack.UnexpectedKwargError):
        specpack.capture("StrictKwAnt-v0", self_containd=1)


def test_a_parameter_the_env_names_itself_is_its_kwarg_not_a_typo():
    pack = specpack.capture("StrictNamed-v0", record_space=3)
    assert pack.kwargs == {"record_space": 3}
    assert pack.make().unwrapped.record_space == 3


def test_an_env_kwarg_that_is_only_somewhat_like_an_option_is_taken():
    # minigrid's max_steps is 0.69 like max_episode_steps: an env's own kwarg, not a typo
    pack = specpack.capture("StrictKwAnt-v0", max_steps=5, episode_length=9)
    assert pack.kwargs == {"max_steps": 5, "episode_length": 9}


def test_an_env_without_var_kwargs_still_gets_the_did_you_mean():
    with pytest.raises(specpack.UnexpectedKwargError,
                       match="did you mean the capture option 'self_contained'"):
        specpack.capture("CartPole-v1", self_containd=True)
