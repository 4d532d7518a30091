"""Capture a live env with its exact wrapper stack, never silently dropping an
argument, and rebuild it identically here, after pickling and in spawn children."""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest
from _helpers import FLOAT_WRAPPER, GYMNASIUM_0X, run_script_json
from gymnasium.utils import EzPickle, RecordConstructorArgs
from gymnasium.wrappers import (
    NormalizeObservation,
    OrderEnforcing,
    PassiveEnvChecker,
    TimeLimit,
    TransformObservation,
)

import specpack


def classes(env):
    out = []
    while isinstance(env, gymnasium.Wrapper):
        out.append(type(env))
        env = env.env
    return [*out, type(env)]


# gymnasium 0.28/0.29 has no ClipReward (FLOAT_WRAPPER is NormalizeReward there), and its
# TransformObservation takes no observation_space.
WRAPPER, LOW, HIGH = FLOAT_WRAPPER


def transform_observation(env, f):
    return TransformObservation(env, f) if GYMNASIUM_0X else TransformObservation(env, f, None)


def order_example():
    env = getattr(gymnasium.wrappers, WRAPPER)(gymnasium.make("CartPole-v1"), **{LOW: 0.0, HIGH: 0.5})
    env = TimeLimit(env, 20)
    return NormalizeObservation(env)


class Toy(gymnasium.Env, EzPickle):
    """EzPickle.__init__ forgets ``goal`` (the Atari ``frameskip`` bug, in small)."""

    observation_space = gymnasium.spaces.Box(-10, 10, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, gravity=9.8, goal=1.0):
        EzPickle.__init__(self, gravity=gravity)
        self.gravity = gravity
        self.goal = goal

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([self.goal], np.float32), {}

    def step(self, action):
        return np.array([self.goal], np.float32), self.gravity, False, False, {}


class Bonus(gymnasium.RewardWrapper):
    """A plain wrapper with a constructor argument and no recorded args."""

    def __init__(self, env, bonus=1.0):
        super().__init__(env)
        self.bonus = bonus

    def reward(self, reward):
        return reward + self.bonus


class NoArgs(gymnasium.Wrapper):
    pass


class Quiet(TimeLimit):
    """Records its parent's argument but forgets its own."""

    def __init__(self, env, max_episode_steps, volume=1.0):
        super().__init__(env, max_episode_steps)
        self.volume = volume


def test_wrapper_order_is_kept_where_envspec_normalises_it():
    env = order_example()
    rebuilt_by_gymnasium = gymnasium.make(env.spec)
    assert classes(rebuilt_by_gymnasium) != classes(env)  # the control: gymnasium reorders
    pack = specpack.capture(env)
    assert [layer.name for layer in pack.layers] == [
        "NormalizeObservation", "TimeLimit", WRAPPER, "TimeLimit", "OrderEnforcing",
        "PassiveEnvChecker",
    ]
    rebuilt = pickle.loads(pickle.dumps(pack)).make()
    assert classes(rebuilt) == classes(env)
    assert specpack.diff(rebuilt, order_example(), steps=60, seed=1) == []
    assert any("TimeLimit is not innermost" in n for n in pack.notes)


def test_repeated_time_limits_are_both_kept():
    env = TimeLimit(TimeLimit(gymnasium.make("CartPole-v1"), 30), 10)
    assert classes(gymnasium.make(env.spec)).count(TimeLimit) == 1  # the control
    rebuilt = specpack.capture(env).make()
    assert classes(rebuilt).count(TimeLimit) == 3
    assert rebuilt.env._max_episode_steps == 30 and rebuilt._max_episode_steps == 10


def test_make_wrappers_are_recorded_at_their_real_positions():
    env = PassiveEnvChecker(OrderEnforcing(gymnasium.make("CartPole-v1", disable_env_checker=True,
                                                          max_episode_steps=-1)))
    assert classes(specpack.capture(env).make()) == classes(env)


def test_transform_observation_with_a_lambda_rebuilds_after_pickle():
    env = transform_observation(gymnasium.make("CartPole-v1"), lambda o: o * 2.0)
    pack = specpack.capture(env)
    assert any("lambda" in n for n in pack.notes)
    rebuilt = pickle.loads(pickle.dumps(pack)).make()
    ref = transform_observation(gymnasium.make("CartPole-v1"), lambda o: o * 2.0)
    assert specpack.diff(rebuilt, ref, steps=30) == []


def test_plain_wrapper_with_unrecorded_argument_is_refused_naming_class_and_fix():
    with pytest.raises(specpack.UnrecordedArgumentsError) as info:
        specpack.capture(Bonus(gymnasium.make("CartPole-v1"), bonus=2.0))
    msg = str(info.value)
    assert "Bonus" in msg and "bonus" in msg and "RecordConstructorArgs" in msg


def test_plain_wrapper_without_arguments_rebuilds_faithfully():
    env = NoArgs(gymnasium.make("CartPole-v1"))
    assert classes(specpack.capture(env).make()) == classes(env)


def test_subclass_that_does_not_record_its_own_argument_is_refused():
    with pytest.raises(specpack.UnrecordedArgumentsError, match=r"volume=0\.5"):
        specpack.capture(Quiet(gymnasium.make("CartPole-v1"), 10, volume=0.5))
    # at its default the rebuild is faithful
    specpack.capture(Quiet(gymnasium.make("CartPole-v1"), 10))


def test_ezpickle_gap_control_pickle_silently_loses_the_argument():
    toy = Toy(gravity=3.0, goal=5.0)
    assert pickle.loads(pickle.dumps(toy)).goal == 1.0  # what EzPickle does today


def test_ezpickle_gap_is_refused_for_an_env_built_directly():
    with pytest.raises(specpack.UnrecordedArgumentsError) as info:
        specpack.capture(Toy(gravity=3.0, goal=5.0))
    msg = str(info.value)
    assert "goal=5.0" in msg and "default goal=1.0" in msg and "EzPickle.__init__" in msg


def test_ezpickle_env_at_defaults_for_unrecorded_args_rebuilds():
    pack = specpack.capture(Toy(gravity=3.0))
    assert pack.make().unwrapped.gravity == 3.0


def test_ezpickle_env_made_via_make_keeps_every_argument():
    gymnasium.register("LiveToy-v0", entry_point=Toy)
    try:
        env = gymnasium.make("LiveToy-v0", gravity=3.0, goal=5.0)
        rebuilt = pickle.loads(pickle.dumps(specpack.capture(env))).make()
        assert rebuilt.unwrapped.goal == 5.0 and rebuilt.unwrapped.gravity == 3.0
        assert classes(rebuilt) == classes(env)
        assert rebuilt.spec == env.spec
    finally:
        gymnasium.registry.pop("LiveToy-v0")


def test_env_built_without_make_has_no_spec_and_still_rebuilds():
    from gymnasium.envs.classic_control import CartPoleEnv

    env = TimeLimit(CartPoleEnv(render_mode="rgb_array"), 50)
    assert env.unwrapped.spec is None
    rebuilt = specpack.capture(env).make()
    assert rebuilt.unwrapped.spec is None and rebuilt.render_mode == "rgb_array"
    assert specpack.diff(rebuilt, TimeLimit(CartPoleEnv(render_mode="rgb_array"), 50)) == []


def test_recordconstructorargs_base_env_is_captured_from_its_record():
    class Recorded(gymnasium.Env, RecordConstructorArgs):
        observation_space = gymnasium.spaces.Discrete(3)
        action_space = gymnasium.spaces.Discrete(2)

        def __init__(self, size=2):
            RecordConstructorArgs.__init__(self, size=size)
            self.size = size

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            return self.size, {}

        def step(self, action):
            return self.size, 0.0, False, False, {}

    rebuilt = pickle.loads(pickle.dumps(specpack.capture(Recorded(size=1)))).make()
    assert rebuilt.unwrapped.size == 1


def test_runtime_state_is_not_captured_and_repr_says_so():
    env = order_example()
    env.reset(seed=0)
    for _ in range(5):
        env.step(env.action_space.sample())
    pack = specpack.capture(env)
    fresh = pack.make()
    assert fresh.obs_rms.count != env.obs_rms.count  # running statistics start over
    assert "no run-time state" in repr(pack)


@pytest.fixture(scope="module")
def spawned(tmp_path_factory):
    return run_script_json("live_spawn.py", tmp_path_factory.mktemp("live"), timeout=300)


@pytest.mark.integration
@pytest.mark.parametrize("case", ["order", "file_wrapper", "lambda", "nested", "direct_toy"])
def test_spawn_child_rebuilds_live_stack_exactly(spawned, case):
    result = spawned[case]
    assert result["parent"]["layers"] == result["original_layers"]
    assert result["spawn"] == result["parent"]


@pytest.mark.integration
def test_envspec_route_fails_or_reorders_for_the_same_live_envs(spawned):
    assert spawned["order"]["envspec_rebuild"] != spawned["order"]["original_layers"]
    nested = spawned["nested"]["envspec_rebuild"]
    assert isinstance(nested, str) and "Error" in nested  # qualname-less entry point


@pytest.mark.integration
def test_multiprocessing_process_subclass_builds_pack_in_run(spawned):
    assert spawned["agent"]["goal"] == 5.0
    assert spawned["agent"]["layers"] == spawned["agent_parent"]["layers"]
    assert spawned["agent"]["rollout"] == spawned["agent_parent"]["rollout"]


def test_ezpickle_gap_at_default_value_is_kept_as_a_portability_note():
    class Quiet(Toy):
        def __init__(self, gravity=9.8, goal=1.0):
            EzPickle.__init__(self, gravity=gravity)
            self.gravity = gravity  # goal is not stored anywhere: no evidence either way

        def reset(self, seed=None, options=None):
            return np.zeros(1, np.float32), {}

    pack = specpack.capture(Quiet(gravity=2.0))
    assert any(n.startswith("EzPickle gap: Quiet does not pass goal=1.0") for n in pack.notes)


class Levels(gymnasium.Env):
    """A base env whose own constructor parameter is named ``env`` (a level name)."""

    observation_space = gymnasium.spaces.Discrete(3)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, env: str = "level-1") -> None:
        self.env = env

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {"level": self.env}

    def step(self, action):
        return 0, 0.0, False, False, {}


class LevelsEz(Levels, EzPickle):
    def __init__(self, env: str = "level-1") -> None:
        Levels.__init__(self, env)
        EzPickle.__init__(self, env=env)


class LevelsRecorded(Levels, RecordConstructorArgs):
    def __init__(self, env: str = "level-1") -> None:
        RecordConstructorArgs.__init__(self, env=env)
        Levels.__init__(self, env)


@pytest.mark.parametrize("cls", [Levels, LevelsEz, LevelsRecorded])
def test_a_base_env_keeps_its_own_parameter_named_env_at_capture(cls):
    pack = specpack.capture(cls(env="level-3"))
    assert pack.kwargs == {"env": "level-3"}
    rebuilt = pickle.loads(pickle.dumps(pack)).make()
    assert rebuilt.unwrapped.env == "level-3"
    rebuilt.close()
