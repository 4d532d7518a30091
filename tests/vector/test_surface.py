"""Spaces recorded in the pack: make_vec builds no env in the parent; per-worker variants."""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.classic_control import CartPoleEnv

import specpack


class Counted(CartPoleEnv):
    """Counts its constructions in this process (a worker has its own count)."""

    built = 0

    def __init__(self, render_mode: str | None = None, length: float = 0.5) -> None:
        type(self).built += 1
        super().__init__(render_mode=render_mode)
        self.length = length


def test_record_spaces_puts_the_env_surface_in_the_pack_outside_its_fingerprint() -> None:
    plain = specpack.capture(Counted)
    pack = specpack.capture(Counted, record_spaces=True)
    env = gymnasium.make("CartPole-v1")
    assert plain.observation_space is None and plain.action_space is None
    assert pack.observation_space == env.observation_space
    assert pack.action_space == env.action_space
    assert pack.metadata is not None and pack.metadata["render_fps"] == 50
    assert pack.render_mode is None
    assert pack == plain and pack.fingerprint == plain.fingerprint
    again = pickle.loads(pickle.dumps(pack))
    assert again.action_space == pack.action_space and again.surface == pack.surface


def test_live_env_capture_records_its_surface() -> None:
    env = gymnasium.make("CartPole-v1", render_mode="rgb_array")
    pack = specpack.capture(env)
    assert pack.render_mode == "rgb_array" and pack.observation_space == env.observation_space


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
def test_make_vec_of_a_pack_with_spaces_builds_no_env_in_the_parent(context: str) -> None:
    pack = specpack.capture(Counted, record_spaces=True)
    before = Counted.built
    venv = specpack.make_vec(pack, 2, context=context)
    try:
        assert Counted.built == before, "make_vec built an env in the parent"
        obs, _ = venv.reset(seed=3)
        assert obs.shape == (2, 4)
        assert venv.single_observation_space == pack.observation_space
    finally:
        venv.close()
    control = specpack.make_vec(specpack.capture(Counted), 2, context=context)
    control.close()
    assert Counted.built == before + 1  # the control: gymnasium's throwaway env, built here


def test_make_vec_env_kwargs_per_worker_from_a_function_or_a_list() -> None:
    pack = specpack.capture(Counted)
    by_fn = specpack.make_vec(pack, 3, vectorization_mode="sync",
                              env_kwargs=lambda i: {"length": 0.5 + i})
    by_list = specpack.make_vec(pack, 3, vectorization_mode="sync",
                                env_kwargs=[{"length": 0.5}, {"length": 1.5}, {"length": 2.5}])
    assert [e.unwrapped.length for e in by_fn.envs] == [0.5, 1.5, 2.5]
    assert [e.unwrapped.length for e in by_list.envs] == [0.5, 1.5, 2.5]
    with pytest.raises(specpack.SpecPackError, match="2 entries for num_envs=3"):
        specpack.make_vec(pack, 3, env_kwargs=[{}, {}])


def test_async_workers_get_their_own_variant() -> None:
    pack = specpack.capture(Counted, record_spaces=True)
    venv = specpack.make_vec(pack, 2, context="spawn", env_kwargs=lambda i: {"length": 1.0 + i})
    try:
        assert venv.get_attr("length") == (1.0, 2.0)
        obs, _ = venv.reset(seed=0)
        assert np.isfinite(obs).all()
    finally:
        venv.close()
