"""``capture(id_or_spec, **options).make()`` builds the wrapper stack ``gymnasium.make`` builds:
TimeLimit from ``max_episode_steps`` (``-1`` for none), PassiveEnvChecker from
``disable_env_checker`` over the registered value, OrderEnforcing from ``order_enforce``, make
kwargs merged over the registered ones, and the wrappers a spec records (``additional_wrappers``,
at every level of a wrapped env, from a registration, or made by the entry point itself)."""

from __future__ import annotations

from typing import Any

import gymnasium
import pytest
from _helpers import GYMNASIUM_0X
from _make_parity import (
    ThreeArgs,
    Unrecorded,
    ours,
    raised,
    registered,
    same_transitions,
    spec_key,
    unrecorded_by_entry_point,
    wrapped_by_entry_point,
    wrapper_types,
)
from gymnasium.envs.classic_control import CartPoleEnv
from gymnasium.wrappers import (
    FlattenObservation,
    NormalizeReward,
    OrderEnforcing,
    PassiveEnvChecker,
    TimeAwareObservation,
    TimeLimit,
)

import specpack


def _by(as_spec: bool, env_id: str) -> Any:
    return gymnasium.spec(env_id) if as_spec else env_id


@pytest.fixture
def endless() -> Any:
    """A CartPole registered without max_episode_steps."""
    with registered("Endless-v0", entry_point=CartPoleEnv, max_episode_steps=None) as env_id:
        yield env_id


# (registered id, make's max_episode_steps or "absent", the TimeLimit gymnasium.make applies)
TIME_LIMITS = [
    ("CartPole-v1", "absent", 500),
    ("CartPole-v1", 100, 100),
    ("CartPole-v1", -1, None),
    ("Endless-v0", "absent", None),
    ("Endless-v0", 100, 100),
    ("Endless-v0", -1, None),
]


@pytest.mark.parametrize("as_spec", [False, True], ids=["id", "EnvSpec"])
@pytest.mark.parametrize(("env_id", "steps", "limit"), TIME_LIMITS)
def test_max_episode_steps_decides_the_time_limit_as_in_gymnasium_make(
    endless: str, env_id: str, steps: Any, limit: int | None, as_spec: bool
) -> None:
    options = {} if steps == "absent" else {"max_episode_steps": steps}
    theirs = gymnasium.make(_by(as_spec, env_id), **options)
    if GYMNASIUM_0X and steps == -1:
        # 0.28/0.29's make has no "-1: no TimeLimit": it wraps TimeLimit(env, -1), which
        # truncates every step; capture refuses rather than build another env
        assert theirs.spec is not None and theirs.spec.max_episode_steps == -1
        with pytest.raises(specpack.CaptureError, match=r"would wrap TimeLimit\(env, -1\)"):
            ours(_by(as_spec, env_id), **options)
        return
    rebuilt = ours(_by(as_spec, env_id), **options)
    assert wrapper_types(rebuilt) == wrapper_types(theirs)
    assert (TimeLimit in wrapper_types(rebuilt)) is (limit is not None)
    assert rebuilt.spec == theirs.spec and rebuilt.spec is not None
    assert rebuilt.spec.max_episode_steps == limit
    assert specpack.diff(rebuilt, theirs, steps=120, seed=2) == []


@pytest.mark.parametrize("as_spec", [False, True], ids=["id", "EnvSpec"])
@pytest.mark.parametrize("at_make", [None, False, True], ids=lambda v: f"make={v}")
@pytest.mark.parametrize("at_registration", [False, True], ids=lambda v: f"registered={v}")
def test_disable_env_checker_at_make_overrides_the_registered_value(
    at_registration: bool, at_make: bool | None, as_spec: bool
) -> None:
    disabled = at_registration if at_make is None else at_make
    with registered("Checked-v0", entry_point=CartPoleEnv,
                    disable_env_checker=at_registration) as env_id:
        theirs = gymnasium.make(_by(as_spec, env_id), disable_env_checker=at_make)
        rebuilt = ours(_by(as_spec, env_id), disable_env_checker=at_make)
    assert wrapper_types(rebuilt) == wrapper_types(theirs)
    assert (PassiveEnvChecker in wrapper_types(rebuilt)) is not disabled
    assert rebuilt.spec == theirs.spec


@pytest.mark.parametrize("as_spec", [False, True], ids=["id", "EnvSpec"])
@pytest.mark.parametrize("order_enforce", [True, False])
def test_order_enforce_of_the_spec_decides_order_enforcing(
    order_enforce: bool, as_spec: bool
) -> None:
    with registered("Ordered-v0", entry_point=CartPoleEnv, order_enforce=order_enforce) as env_id:
        theirs = gymnasium.make(_by(as_spec, env_id))
        rebuilt = ours(_by(as_spec, env_id))
    assert wrapper_types(rebuilt) == wrapper_types(theirs)
    assert (OrderEnforcing in wrapper_types(rebuilt)) is order_enforce
    assert rebuilt.spec == theirs.spec


def test_make_kwargs_override_and_extend_the_registered_kwargs() -> None:
    with registered("Argued-v0", entry_point=f"{ThreeArgs.__module__}:ThreeArgs",
                    kwargs={"first": "registered", "second": "registered"}) as env_id:
        theirs = gymnasium.make(env_id, second="given", third="given")
        rebuilt = ours(env_id, second="given", third="given")
    assert rebuilt.spec == theirs.spec and rebuilt.spec is not None
    assert rebuilt.spec.kwargs == {"first": "registered", "second": "given", "third": "given"}
    built = rebuilt.unwrapped
    assert isinstance(built, ThreeArgs)
    assert (built.first, built.second, built.third) == ("registered", "given", "given")


def _user_wrapped() -> gymnasium.Env:  # type: ignore[type-arg]
    """A CartPole made by gymnasium.make, then wrapped by hand three times."""
    made = gymnasium.make("CartPole-v1", render_mode="rgb_array")
    return NormalizeReward(TimeAwareObservation(FlattenObservation(made)), gamma=0.8)


def test_the_spec_of_each_level_of_a_wrapped_env_rebuilds_that_level() -> None:
    level = _user_wrapped()
    seen = []
    while level is not level.unwrapped:
        assert level.spec is not None
        rebuilt = ours(level.spec)
        assert wrapper_types(rebuilt) == wrapper_types(gymnasium.make(level.spec))
        assert wrapper_types(rebuilt) == wrapper_types(level)
        assert rebuilt.spec == level.spec
        seen.append(type(level))
        level = level.env
    assert seen == wrapper_types(_user_wrapped())[:-1]  # every wrapper, NormalizeReward first


def test_wrappers_recorded_in_a_spec_replay_the_rollout_of_the_original() -> None:
    original, again = _user_wrapped(), _user_wrapped()
    assert original.spec is not None
    rebuilt = ours(original.spec)
    assert isinstance(rebuilt, NormalizeReward) and rebuilt.gamma == 0.8
    assert rebuilt.render_mode == "rgb_array"
    assert specpack.diff(rebuilt, original, steps=60, seed=11) == []
    assert specpack.diff(gymnasium.make(again.spec), again, steps=60, seed=11) == []


# How the extra wrapper came to be, as a registration
REGISTRATIONS = {
    "additional_wrappers": {"entry_point": CartPoleEnv,
                            "additional_wrappers": (NormalizeReward.wrapper_spec(),)},
    "entry point wraps": {"entry_point": wrapped_by_entry_point},
    "entry point wraps unrecorded": {"entry_point": unrecorded_by_entry_point},
    "additional_wrappers unrecorded": {"entry_point": CartPoleEnv,
                                       "additional_wrappers": (Unrecorded.wrapper_spec(),)},
}


@pytest.mark.parametrize("as_spec", [False, True], ids=["id", "EnvSpec"])
@pytest.mark.parametrize("how", list(REGISTRATIONS))
def test_a_registration_that_adds_a_wrapper_builds_the_same_stack(how: str, as_spec: bool) -> None:
    spec = REGISTRATIONS[how]
    with registered("Extra-v0", disable_env_checker=True, order_enforce=False, **spec) as env_id:
        theirs = gymnasium.make(_by(as_spec, env_id))
        rebuilt = ours(_by(as_spec, env_id))
    assert wrapper_types(rebuilt) == wrapper_types(theirs)
    assert len(wrapper_types(rebuilt)) == 2 and type(rebuilt.unwrapped) is CartPoleEnv
    assert spec_key(rebuilt.spec) == spec_key(theirs.spec)
    assert specpack.diff(rebuilt, theirs, steps=40, seed=3) == []


def test_an_entry_point_that_makes_and_wraps_replays_the_original_rollout() -> None:
    def made_and_flattened() -> gymnasium.Env:  # type: ignore[type-arg]
        return FlattenObservation(gymnasium.make("CartPole-v1", render_mode="rgb_array"))

    with registered("MadeInside-v0", entry_point=made_and_flattened) as env_id:
        original = NormalizeReward(TimeAwareObservation(gymnasium.make(env_id)), gamma=0.8)
        assert original.spec is not None
        rebuilt = ours(original.spec)
        theirs = gymnasium.make(original.spec)
    # NormalizeReward keeps its statistics across resets: one rollout per env
    assert same_transitions(rebuilt, theirs, seed=42)
    assert same_transitions(ours(original.spec), original, seed=42)
    # The spec lists FlattenObservation, which the entry point applies itself: both skip it
    assert wrapper_types(rebuilt) == wrapper_types(theirs)


# 0.28/0.29 has no ClipReward: its NormalizeObservation(epsilon) is a wrapper with kwargs
@pytest.mark.parametrize("wrapper", ["NormalizeReward",
                                     "NormalizeObservation" if GYMNASIUM_0X else "ClipReward",
                                     "FlattenObservation"])
def test_a_wrapper_the_entry_point_applies_itself_is_not_applied_twice(wrapper: str) -> None:
    """A spec read from an env whose entry point wraps (``NormalizeReward(make(...))``) lists
    that wrapper; gymnasium.make counts the wrappers the entry point applied and skips them,
    and so does the pack (once it applied NormalizeReward twice: other rewards)."""
    import gymnasium.wrappers as gw

    args = {"NormalizeReward": {"gamma": 0.5}, "ClipReward": {"min_reward": 0.0,
            "max_reward": 0.5}, "FlattenObservation": {},
            "NormalizeObservation": {"epsilon": 1e-4}}[wrapper]

    def wrapped() -> gymnasium.Env:  # type: ignore[type-arg]
        return getattr(gw, wrapper)(gymnasium.make("CartPole-v1"), **args)

    with registered("SelfWrapped-v0", entry_point=wrapped) as env_id:
        spec = gymnasium.make(env_id).spec
        assert spec is not None and [w.name for w in spec.additional_wrappers] == [wrapper]
        theirs = gymnasium.make(spec)
        rebuilt = ours(spec)
        assert wrapper_types(rebuilt) == wrapper_types(theirs)
        assert [t.__name__ for t in wrapper_types(rebuilt)].count(wrapper) == 1
        assert same_transitions(rebuilt, theirs, seed=5)


def test_a_spec_wrapper_without_recorded_arguments_is_refused_with_gymnasiums_reason() -> None:
    spec = Unrecorded(gymnasium.make("CartPole-v1")).spec
    theirs = raised(lambda: gymnasium.make(spec))
    reason = ("Unrecorded wrapper does not inherit from `gymnasium.utils.RecordConstructorArgs`, "
              "therefore, the wrapper cannot be recreated.")
    assert type(theirs) is ValueError and str(theirs) == reason
    with pytest.raises(ValueError) as caught:
        specpack.capture(spec)  # refused at capture, before anything is built
    assert isinstance(caught.value, specpack.CaptureError)
    assert reason in str(caught.value)
    assert "inherit gymnasium.utils.RecordConstructorArgs" in str(caught.value)
