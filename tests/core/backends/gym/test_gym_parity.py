"""Parity with gym 0.26's own make: for every classic-control and toy-text env in gym's registry,
``capture(id, backend="gym", **options).make()`` gives the same wrapper stack (classes and order),
the same ``env.spec``, the same spaces and the same seeded rollout as ``gym.make(id, **options)``."""

from __future__ import annotations

import pickle

import gym
import numpy as np
import pytest

import specpack

IDS = sorted(
    k for k, s in gym.envs.registry.items()
    if isinstance(s.entry_point, str)
    and s.entry_point.startswith(("gym.envs.classic_control", "gym.envs.toy_text"))
)
OPTIONS = {
    "defaults": {},
    "max_episode_steps=13": {"max_episode_steps": 13},
    "disable_env_checker=True": {"disable_env_checker": True},
    "autoreset=True": {"autoreset": True, "max_episode_steps": 9},
}


def stack(env):
    names = []
    while True:
        names.append(type(env).__name__)
        if not hasattr(env, "env"):
            return names
        env = env.env


def rollout(env, steps=30, seed=7):
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    out = [(np.asarray(obs).tolist(), sorted(info))]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        out.append((np.asarray(obs).tolist(), float(reward), terminated, truncated, sorted(info)))
        if terminated or truncated:
            obs, info = env.reset()
            out.append((np.asarray(obs).tolist(), sorted(info)))
    return out


def test_gym_registry_holds_the_expected_classic_and_toy_text_envs():
    assert {"CartPole-v1", "Acrobot-v1", "Pendulum-v1", "FrozenLake-v1", "Taxi-v3"} <= set(IDS)
    assert len(IDS) == 11


@pytest.mark.parametrize("options", list(OPTIONS.values()), ids=list(OPTIONS))
@pytest.mark.parametrize("env_id", IDS)
def test_pack_make_matches_gym_make(env_id, options):
    pack = specpack.capture(env_id, backend="gym", **options)
    assert pack.backend == "gym" and pack.versions["gym"] == gym.__version__
    ours = pickle.loads(pickle.dumps(pack)).make()
    ref = gym.make(env_id, **options)
    assert isinstance(ours, gym.Env)
    assert stack(ours) == stack(ref)
    assert ours.spec == ref.spec  # the whole gym EnvSpec, after TimeLimit wrote into it
    assert ours.unwrapped.spec == ref.unwrapped.spec
    assert ours.observation_space == ref.observation_space
    assert ours.action_space == ref.action_space
    assert rollout(ours) == rollout(ref)


def test_capture_of_an_id_and_of_its_gym_spec_agree():
    by_id = specpack.capture("CartPole-v1", backend="gym")
    by_spec = specpack.capture(gym.spec("CartPole-v1"))  # detected by type
    assert by_spec.backend == "gym"
    assert by_id.fingerprint == by_spec.fingerprint
    assert by_id.fingerprint != specpack.capture("CartPole-v1", backend="gym",
                                                 max_episode_steps=9).fingerprint
    assert specpack.SpecPack.from_json(by_id.to_json()).fingerprint == by_id.fingerprint


def test_overrides_at_make_merge_over_captured_kwargs_like_gym_make_kwargs():
    pack = specpack.capture("FrozenLake-v1", backend="gym", is_slippery=False)
    ours, ref = pack.make(map_name="8x8"), gym.make("FrozenLake-v1", is_slippery=False,
                                                     map_name="8x8")
    assert ours.spec == ref.spec and ours.spec.kwargs == {"map_name": "8x8", "is_slippery": False}
    assert rollout(ours) == rollout(ref)


def test_unversioned_id_resolves_to_the_latest_version_as_gym_make_does():
    with pytest.warns(UserWarning, match="latest versioned environment"):
        pack = specpack.capture("CartPole", backend="gym")
    assert pack.id == "CartPole-v1"
    assert pack.make().spec == gym.make("CartPole-v1").spec


class Frames(gym.Env):
    """Renders rgb arrays only (no pygame needed): exercises gym.make's render-mode logic."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, render_mode=None, size=3):
        self.render_mode = render_mode
        self.size = size
        self.observation_space = gym.spaces.Box(0, 1, (size,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.np_random.random(self.size).astype(np.float32), {}

    def step(self, action):
        obs = self.np_random.random(self.size).astype(np.float32)
        return obs, float(action), False, False, {}

    def render(self):
        return np.zeros((2, 2, 3), np.uint8)


@pytest.fixture
def frames_id():
    gym.register(id="SpecpackFrames-v0", entry_point=Frames, max_episode_steps=20)
    yield "SpecpackFrames-v0"
    gym.envs.registry.pop("SpecpackFrames-v0")


@pytest.mark.parametrize("mode", ["rgb_array", "rgb_array_list", "human"])
def test_render_mode_wrappers_follow_gym_make(frames_id, mode):
    pack = specpack.capture(frames_id, backend="gym")
    ours = pack.make(render_mode=mode)
    ref = gym.make(frames_id, render_mode=mode)
    assert stack(ours) == stack(ref)
    assert ours.render_mode == ref.render_mode
    assert ours.spec == ref.spec
    assert ours.spec.kwargs["render_mode"] == ref.spec.kwargs["render_mode"]
    if mode != "human":  # HumanRendering draws every step with pygame, not installed here
        assert rollout(ours, steps=5) == rollout(ref, steps=5)


class OldApi(gym.Env):
    """A pre-0.26 env (reset -> obs, step -> 4-tuple, seed()): what apply_api_compatibility is for."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, render_mode=None, drift=0.1):
        self.drift = drift
        self.got_render_mode = render_mode
        self.observation_space = gym.spaces.Box(-10, 10, (2,), np.float64)
        self.action_space = gym.spaces.Discrete(2)
        self.rng = np.random.default_rng()

    def seed(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.x = self.rng.normal(0, 1, 2)
        return self.x.copy()

    def step(self, action):
        self.x = self.x + self.drift * (2 * action - 1) + self.rng.normal(0, 0.01, 2)
        return self.x.copy(), float(self.x.sum()), bool(abs(self.x).max() > 3), {}

    def render(self, mode="rgb_array"):
        return np.zeros((2, 2, 3), np.uint8)


@pytest.fixture
def old_api_id():
    gym.register(id="SpecpackOldApi-v0", entry_point=OldApi, max_episode_steps=15,
                 apply_api_compatibility=True)
    yield "SpecpackOldApi-v0"
    gym.envs.registry.pop("SpecpackOldApi-v0")


@pytest.mark.parametrize("render_mode", [None, "rgb_array"])
def test_api_compatibility_wraps_an_old_api_env_and_takes_its_render_mode(old_api_id, render_mode):
    extra = {"render_mode": render_mode} if render_mode else {}
    ours = specpack.capture(old_api_id, backend="gym", drift=0.3).make(**extra)
    ref = gym.make(old_api_id, drift=0.3, **extra)
    assert stack(ours) == stack(ref) == [
        "TimeLimit", "OrderEnforcing", "PassiveEnvChecker", "EnvCompatibility", "OldApi"
    ]
    assert ours.render_mode == ref.render_mode == render_mode
    base = ours.unwrapped.env  # EnvCompatibility is an Env, so it is its own "unwrapped"
    assert type(base) is OldApi and base.got_render_mode is None  # kept from the constructor
    assert ours.spec == ref.spec and "render_mode" not in ours.spec.kwargs
    assert rollout(ours) == rollout(ref)
    live = specpack.capture(gym.make(old_api_id, drift=0.3, **extra))  # a live stack too
    assert dict(live.layers[-1].kwargs) == {"render_mode": render_mode}
    assert stack(live.make()) == stack(ref) and live.make().render_mode == render_mode
    assert rollout(live.make()) == rollout(gym.make(old_api_id, drift=0.3, **extra))
    off = specpack.capture(old_api_id, backend="gym", apply_api_compatibility=False).make()
    assert stack(off) == stack(gym.make(old_api_id, apply_api_compatibility=False))


def test_a_gym_env_class_is_captured_with_gym_make_semantics():
    pack = specpack.capture(Frames, size=4)  # detected as gym by its base class
    assert pack.backend == "gym" and pack.id is None
    env = pack.make()
    assert stack(env) == ["OrderEnforcing", "PassiveEnvChecker", "Frames"]
    assert env.observation_space.shape == (4,)
    assert pack.register("SpecpackFramesPack-v0") == "SpecpackFramesPack-v0"
    try:
        made = gym.make("SpecpackFramesPack-v0")
        assert rollout(made, steps=5) == rollout(pack.make(), steps=5)
    finally:
        gym.envs.registry.pop("SpecpackFramesPack-v0")


def test_bad_gym_input_raises_specpack_errors_naming_the_fix():
    with pytest.raises(specpack.UnknownEnvError, match="did you mean 'CartPole-v1'"):
        specpack.capture("CartPol-v1", backend="gym")
    with pytest.raises(specpack.CaptureError, match="-1 means 'no TimeLimit' only in gymnasium"):
        specpack.capture("CartPole-v1", backend="gym", max_episode_steps=-1)
    with pytest.raises(specpack.CaptureError, match=r"only the legacy gym\.make"):
        specpack.capture("CartPole-v1", autoreset=True)  # gymnasium backend
    with pytest.raises(specpack.ArgumentTypeError, match="autoreset must be a bool"):
        specpack.capture("CartPole-v1", backend="gym", autoreset=1)
    with pytest.raises(specpack.CaptureError, match="importing the module 'no_such_mod'"):
        specpack.capture("no_such_mod:Thing-v0", backend="gym")
