"""Spaces recorded in the pack: make_vec builds no env in the parent; per-worker variants."""

from __future__ import annotations

import dataclasses
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


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1", "FrozenLake-v1", "Blackjack-v1"])
def test_recorded_surface_survives_the_json_manifest(env_id: str) -> None:
    pack = specpack.capture(env_id, record_spaces=True)
    again = specpack.SpecPack.from_json(pack.to_json())
    assert again.surface == pack.surface and again == pack


def test_dict_and_tuple_spaces_survive_the_manifest() -> None:
    from specpack._core._surface import Surface

    s = gymnasium.spaces
    obs = s.Dict({"pos": s.Box(-1.0, 1.0, (2,), np.float32),
                  "ids": s.Tuple((s.Discrete(3, start=-1), s.MultiBinary(4))),
                  "grid": s.MultiDiscrete([2, 3])})
    pack = specpack.capture(Counted).evolve(surface=
        Surface(obs, s.Discrete(2), {"render_fps": 5}, None))
    assert specpack.SpecPack.from_json(pack.to_json(), trust=True).observation_space == obs


def test_a_malformed_surface_in_a_file_is_a_pack_format_error() -> None:
    import json

    data = json.loads(specpack.capture("CartPole-v1", record_spaces=True).to_json())
    data["surface"]["action_space"] = {"type": "Nope"}
    with pytest.raises(specpack.PackFormatError, match="surface"):
        specpack.SpecPack.from_json(json.dumps(data))


def test_verify_holds_the_recorded_spaces_against_the_rebuilt_env() -> None:
    from specpack._core._surface import Surface

    pack = specpack.capture("CartPole-v1", record_spaces=True)
    assert specpack.verify(pack, steps=5)
    wrong = pack.evolve(surface=Surface(pack.observation_space, gymnasium.spaces.Discrete(3),
                                      {}, None))
    report = specpack.verify(wrong, steps=5)
    assert not report and report.status == "not_identical"
    assert any("action_space recorded in the pack differs" in d for d in report.differences)


@pytest.mark.parametrize("context", ["spawn", "fork"])
def test_make_vec_worker_refuses_an_env_whose_spaces_differ_from_the_recorded_ones_by_a_hair(
    context: str,
) -> None:
    # gymnasium's own check (Box.__eq__, np.allclose) lets a bound 1e-6 away pass; the worker
    # factory make_vec shares with specpack.adapters compares the spaces exactly.
    pack = specpack.capture("CartPole-v1", record_spaces=True)
    assert pack.surface is not None
    shown = pack.surface.observation_space
    high = shown.high.copy()
    high[0] = np.nextafter(high[0], np.float32(np.inf))
    nudged = gymnasium.spaces.Box(shown.low, high, dtype=shown.dtype)
    assert nudged == shown  # gymnasium calls them equal
    tampered = pack.evolve(surface=dataclasses.replace(pack.surface, observation_space=nudged))
    with pytest.raises(specpack.WorkerError, match=r"(?s)worker \d+ could not build the env: "
                       r"SpecPackError: pack CartPole-v1: the env built in this worker does "
                       r"not match the spaces its parent was shown \(observation_space: "):
        specpack.make_vec(tampered, 2, context=context).close()
    with pytest.raises(specpack.SpecPackError, match="does not match the spaces its parent"):
        specpack.make_vec(tampered, 2, vectorization_mode="sync").close()
