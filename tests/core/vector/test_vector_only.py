"""Vector-only specs (a ``vector_entry_point`` and no ``entry_point``, as Meta-World's MT10)."""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest
import veconly  # noqa: F401 - registers VecPoles-v0

import specpack


def test_vector_only_id_is_captured_and_built_by_make_vec_like_gymnasium() -> None:
    pack = specpack.capture("VecPoles-v0", gain=2.0)
    assert pack.vector and not pack.entry_point.by_value
    ours = specpack.make_vec(pack, 3)
    theirs = gymnasium.make_vec("VecPoles-v0", 3, gain=2.0)
    a, _ = ours.reset(seed=5)
    b, _ = theirs.reset(seed=5)
    np.testing.assert_array_equal(a, b)
    actions = np.array([1, 0, 1])
    for _ in range(40):
        ra = ours.step(actions)
        rb = theirs.step(actions)
        for x, y in zip(ra[:4], rb[:4]):
            np.testing.assert_array_equal(x, y)
    assert ours.unwrapped.spec.kwargs["max_episode_steps"] == 30
    assert ours.unwrapped.spec.kwargs == theirs.unwrapped.spec.kwargs


def test_make_of_a_vector_only_pack_says_to_use_make_vec() -> None:
    pack = specpack.capture("VecPoles-v0")
    with pytest.raises(specpack.SpecPackError, match="make_vec"):
        pack.make()
    with pytest.raises(specpack.SpecPackError, match="vector-only"):
        specpack.make_vec(pack, 2, vectorization_mode="async")


def test_vector_only_pack_survives_pickle_and_json_and_keeps_its_kind() -> None:
    pack = specpack.capture("VecPoles-v0", gain=0.5)
    again = pickle.loads(pickle.dumps(pack))
    text = specpack.SpecPack.from_json(pack.to_json())
    assert again == pack and text == pack and again.vector and text.vector
    assert pack.fingerprint != specpack.capture("VecPoles-v0", gain=0.25).fingerprint


def test_make_vec_seed_seeds_the_first_reset_of_a_vector_only_pack() -> None:
    pack = specpack.capture("VecPoles-v0")
    first, _ = specpack.make_vec(pack, 2, seed=11).reset()
    seeded, _ = specpack.make_vec(pack, 2).reset(seed=11)
    np.testing.assert_array_equal(first, seeded)
