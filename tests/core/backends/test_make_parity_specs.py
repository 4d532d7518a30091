"""The ``env.spec`` of an env rebuilt from a pack is the one ``gymnasium.make`` gives, and it
behaves like one: it survives ``to_json``/``from_json`` and pickle, prints the same with
``pprint``, and remakes the same wrapped env; the rebuilt stack itself pickles and replays.
Where capture differs on purpose (a kwarg that does not pickle), the difference is pinned."""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable
from typing import Any

import cloudpickle
import gymnasium
import pytest
from _helpers import GYMNASIUM_0X
from _make_parity import ThreeArgs, ours, registered, same_transitions
from gymnasium.envs.classic_control import CartPoleEnv
from gymnasium.envs.registration import EnvSpec
from gymnasium.wrappers import (
    FlattenObservation,
    NormalizeReward,
    TimeAwareObservation,
)

import specpack

Make = Callable[..., gymnasium.Env]  # type: ignore[type-arg]


def _wrapped(make: Make) -> gymnasium.Env:  # type: ignore[type-arg]
    """CartPole from ``make``, then three recording wrappers applied by hand."""
    env = make("CartPole-v1", render_mode="rgb_array")
    return NormalizeReward(TimeAwareObservation(FlattenObservation(env)), gamma=0.8)


# How a spec is obtained: from the registry's id via make, at each depth of the env
SPEC_SOURCES: dict[str, Callable[[Make], Any]] = {
    "unwrapped": lambda make: make("CartPole-v1").unwrapped.spec,
    "made": lambda make: make("CartPole-v1").spec,
    "make options": lambda make: make("Pendulum-v1", max_episode_steps=9,
                                      disable_env_checker=True, g=9.81).spec,
    "env kwargs": lambda make: make("FrozenLake-v1", map_name="8x8", is_slippery=False).spec,
    "wrapped by hand": lambda make: NormalizeReward(make("CartPole-v1")).spec,
    "three wrappers": lambda make: _wrapped(make).spec,
}


@pytest.mark.parametrize("source", list(SPEC_SOURCES))
def test_the_rebuilt_spec_equals_gymnasiums_and_survives_json_and_pickle(source: str) -> None:
    spec = SPEC_SOURCES[source](ours)
    assert isinstance(spec, EnvSpec)
    assert spec == SPEC_SOURCES[source](gymnasium.make)
    assert EnvSpec.from_json(spec.to_json()) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec


PPRINT_OPTIONS = [{}, {"include_entry_points": True}, {"print_all": True}]


@pytest.mark.parametrize("options", PPRINT_OPTIONS, ids=lambda o: ",".join(o) or "default")
@pytest.mark.parametrize("wrapped", [False, True], ids=["bare", "TimeAwareObservation"])
def test_pprint_of_the_rebuilt_spec_prints_what_gymnasiums_prints(
    wrapped: bool, options: dict[str, bool]
) -> None:
    def spec_of(make: Make) -> EnvSpec:
        env = make("CartPole-v1")
        spec = (TimeAwareObservation(env) if wrapped else env).spec
        assert spec is not None
        return spec

    printed = spec_of(ours).pprint(disable_print=True, **options)
    assert printed == spec_of(gymnasium.make).pprint(disable_print=True, **options)
    assert printed.startswith("id=CartPole-v1\n")
    assert ("name=TimeAwareObservation" in printed) is wrapped


def test_a_spec_through_json_remakes_the_wrapped_env_of_gymnasium_make() -> None:
    original = _wrapped(ours)
    spec = original.spec
    assert spec is not None and len(spec.additional_wrappers) == 3
    from_json = EnvSpec.from_json(spec.to_json())
    assert from_json == spec and from_json.additional_wrappers == spec.additional_wrappers
    rebuilt = ours(from_json)
    assert isinstance(rebuilt, NormalizeReward) and rebuilt.gamma == 0.8
    assert isinstance(rebuilt.env, TimeAwareObservation)
    assert isinstance(rebuilt.unwrapped, CartPoleEnv)
    assert rebuilt.render_mode == "rgb_array"
    assert rebuilt.spec == gymnasium.make(from_json).spec == spec
    assert same_transitions(rebuilt, original, seed=42)
    assert same_transitions(ours(from_json), gymnasium.make(from_json), seed=42)


def test_a_rebuilt_wrapper_stack_pickles_and_replays_as_the_original() -> None:
    # FlattenObservation holds a lambda: the stdlib pickle refuses the stack (gymnasium's
    # own test used dill), cloudpickle (a specpack dependency) copies it
    copy = pickle.loads(cloudpickle.dumps(_wrapped(ours)))
    assert copy.spec == _wrapped(gymnasium.make).spec
    assert same_transitions(copy, _wrapped(ours), seed=123)


class _NoPickle:
    def __getstate__(self) -> Any:
        raise RuntimeError("this object stays in its process")


def test_a_kwarg_that_does_not_pickle_is_built_by_make_but_refused_by_capture() -> None:
    with registered("Holds-v0", entry_point=ThreeArgs, kwargs={"first": 1, "second": 2}):
        env = gymnasium.make("Holds-v0", third=_NoPickle())
        if GYMNASIUM_0X:  # 0.28/0.29's Wrapper.spec deep-copies the spec, and lets it raise
            with pytest.raises(RuntimeError, match="this object stays in its process"):
                env.spec  # noqa: B018 - reading env.spec is what raises
        else:
            with pytest.warns(UserWarning, match=re.escape(
                    "An exception occurred (this object stays in its process) while copying "
                    "the environment spec=")):
                env.spec  # noqa: B018 - reading env.spec is what warns
        with pytest.raises(TypeError, match=r"kwargs\['third'\] = .* cannot be carried") as caught:
            specpack.capture("Holds-v0", third=_NoPickle())
    assert isinstance(caught.value, specpack.UncarriableValueError)
