"""A live, wrapped gym env: capture records the whole stack in true order with the arguments
gym's wrappers really hold, rebuilds it (here, after pickle/JSON, in a spawn child, and in a
fresh interpreter via verify()), and refuses clearly what gym did not record."""

from __future__ import annotations

import multiprocessing as mp
import pickle

import gym
import numpy as np
import pytest
from gymnasium.utils import RecordConstructorArgs

import specpack

W = gym.wrappers


def stack(env):
    names = [type(env).__name__]
    while hasattr(env, "env"):
        env = env.env
        names.append(type(env).__name__)
    return names


def rollout(env, steps=40, seed=3):
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    out = [np.asarray(obs).round(12).tolist()]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        out.append([np.asarray(obs).round(12).tolist(), round(float(reward), 12), terminated,
                    truncated, sorted(info)])
        if terminated or truncated:
            out.append(np.asarray(env.reset()[0]).round(12).tolist())
    return out


class Doubler(gym.RewardWrapper):
    """Takes only env: nothing to record."""

    def reward(self, reward):
        return 2 * reward


class Shift(gym.ObservationWrapper, RecordConstructorArgs):
    """A gym wrapper that records its arguments with gymnasium's mixin."""

    def __init__(self, env, by=0.0):
        RecordConstructorArgs.__init__(self, by=by)
        super().__init__(env)
        self.by = by

    def observation(self, obs):
        return obs + self.by


class Scale(gym.ObservationWrapper):
    """Takes an argument and records nothing: must be refused, never rebuilt as default."""

    def __init__(self, env, k=1.0):
        super().__init__(env)
        self.k = k

    def observation(self, obs):
        return obs * self.k


def pendulum_stack():
    env = gym.make("Pendulum-v1", g=9.0)
    env = W.RescaleAction(env, -0.5, 0.5)
    env = W.ClipAction(env)
    env = W.TransformReward(env, lambda r: r / 10.0)
    env = W.TimeLimit(env, 25)  # a second TimeLimit, above the others
    env = Shift(env, by=0.5)
    env = W.NormalizeObservation(env, epsilon=1e-6)
    env = W.RecordEpisodeStatistics(env, deque_size=7)
    env = Doubler(env)
    return env


EXPECTED = [
    "Doubler", "RecordEpisodeStatistics", "NormalizeObservation", "Shift", "TimeLimit",
    "TransformReward", "ClipAction", "RescaleAction", "TimeLimit", "OrderEnforcing",
    "PassiveEnvChecker", "PendulumEnv",
]


def test_live_wrapped_gym_env_rebuilds_with_the_same_stack_and_rollout():
    live = pendulum_stack()
    pack = specpack.capture(live)
    assert pack.backend == "gym" and pack.id == "Pendulum-v1"
    assert [layer.name for layer in pack.layers] == EXPECTED[:-1]
    kw = {layer.name: dict(layer.kwargs) for layer in pack.layers}
    assert kw["RecordEpisodeStatistics"] == {"deque_size": 7}
    assert kw["NormalizeObservation"] == {"epsilon": 1e-6}
    assert kw["Shift"] == {"by": 0.5}
    assert pack.kwargs == {"g": 9.0}
    assert any("TimeLimit is not innermost" in n for n in pack.notes)
    ref = rollout(pendulum_stack())
    for rebuilt in (pack.make(), pickle.loads(pickle.dumps(pack)).make()):
        assert stack(rebuilt) == EXPECTED
        assert rebuilt.return_queue.maxlen == 7
        assert rebuilt.spec == live.spec  # TimeLimit(25) wrote into both specs
        assert rollout(rebuilt) == ref


def test_live_gym_stack_rebuilds_in_a_spawn_child():
    from _gym_live_workers import rebuild_and_roll

    pack = specpack.capture(pendulum_stack())
    with mp.get_context("spawn").Pool(1) as pool:
        got = pool.apply(rebuild_and_roll, (pickle.dumps(pack),))
    assert got["stack"] == EXPECTED
    assert got["rollout"] == rollout(pendulum_stack())


def test_verify_of_a_gym_pack_is_true_in_a_fresh_interpreter():
    report = specpack.verify(specpack.capture("CartPole-v1", backend="gym", max_episode_steps=30), steps=80)
    assert report, report.differences
    env = W.TimeLimit(W.ClipAction(gym.make("MountainCarContinuous-v0")), 15)
    assert specpack.verify(specpack.capture(env), steps=40, where="spawn")


def test_gym_make_options_of_a_live_env_are_kept():
    live = gym.make("CartPole-v1", autoreset=True, max_episode_steps=5, disable_env_checker=True)
    pack = specpack.capture(live)
    assert [layer.name for layer in pack.layers] == ["AutoResetWrapper", "TimeLimit",
                                                     "OrderEnforcing"]
    rebuilt = pack.make()
    assert stack(rebuilt) == stack(live) and rebuilt.spec == live.spec
    assert rollout(rebuilt) == rollout(gym.make("CartPole-v1", autoreset=True,
                                                max_episode_steps=5, disable_env_checker=True))


def test_a_base_gym_env_built_directly_is_captured_when_its_arguments_are_known():
    from gym.envs.classic_control import CartPoleEnv

    pack = specpack.capture(W.TimeLimit(CartPoleEnv(), 9))
    assert pack.id is None and pack.spec == {}
    assert stack(pack.make()) == ["TimeLimit", "CartPoleEnv"]
    assert rollout(pack.make()) == rollout(W.TimeLimit(CartPoleEnv(), 9))


def test_an_unrecorded_gym_wrapper_argument_is_refused_naming_the_class_and_the_fix():
    env = Scale(gym.make("CartPole-v1"), k=3.0)
    with pytest.raises(specpack.UnrecordedArgumentsError) as info:
        specpack.capture(env)
    msg = str(info.value)
    assert "test_gym_live.Scale" in msg and "(k)" in msg
    assert "RecordConstructorArgs" in msg and "re-apply the wrapper" in msg


def test_a_gym_env_built_directly_with_unrecorded_arguments_is_refused():
    from gym.envs.toy_text import FrozenLakeEnv

    with pytest.raises(specpack.UnrecordedArgumentsError, match="FrozenLakeEnv was built directly"):
        specpack.capture(FrozenLakeEnv(map_name="8x8"))


def test_gym_packs_go_through_pack_files_with_trust_and_allow_rules(tmp_path):
    plain = specpack.capture("CartPole-v1", backend="gym", max_episode_steps=6)
    specpack.dump(plain, tmp_path / "plain.specpack")
    with pytest.raises(specpack.UntrustedPackError, match=r"gym\.envs\.classic_control\.cartpole"):
        specpack.load(tmp_path / "plain.specpack", allow=["my_envs"])
    loaded = specpack.load(tmp_path / "plain.specpack", allow=["gym.envs"])  # + make's wrappers
    assert loaded == plain and loaded.backend == "gym"
    assert stack(loaded.make()) == stack(gym.make("CartPole-v1", max_episode_steps=6))
    live = specpack.capture(pendulum_stack())  # a lambda and two test classes by value
    specpack.dump(live, tmp_path / "live.specpack", key=b"k" * 32)
    with pytest.raises(specpack.UntrustedPackError):
        specpack.load(tmp_path / "live.specpack")
    again = specpack.load(tmp_path / "live.specpack", key=b"k" * 32)
    assert again.fingerprint == live.fingerprint
    assert rollout(again.make()) == rollout(pendulum_stack())


class Toy(gym.Env, gym.utils.EzPickle):
    """gym's EzPickle with the classic gap: ``goal`` is passed but not recorded."""

    def __init__(self, gravity=1.0, goal=1.0, record_goal=False):
        if record_goal:
            gym.utils.EzPickle.__init__(self, gravity=gravity, goal=goal, record_goal=True)
        else:
            gym.utils.EzPickle.__init__(self, gravity=gravity)
        self.gravity, self.goal = gravity, goal
        self.observation_space = gym.spaces.Box(-10, 10, (1,), np.float64)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([self.goal]), {}

    def step(self, action):
        return np.array([self.goal - self.gravity * action]), 0.0, False, False, {}


def test_gym_ezpickle_base_env_is_rebuilt_from_its_record_and_the_gap_is_refused():
    with pytest.raises(specpack.UnrecordedArgumentsError, match=r"goal=5\.0"):
        specpack.capture(Toy(gravity=3.0, goal=5.0))
    assert pickle.loads(pickle.dumps(Toy(gravity=3.0, goal=5.0))).goal == 1.0  # the control
    pack = specpack.capture(W.TimeLimit(Toy(gravity=3.0, goal=5.0, record_goal=True), 4))
    assert pack.kwargs == {"gravity": 3.0, "goal": 5.0, "record_goal": True}
    assert pack.make().unwrapped.goal == 5.0
    assert rollout(pack.make()) == rollout(W.TimeLimit(Toy(3.0, 5.0, True), 4))
