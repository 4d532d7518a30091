"""``Layer``: one wrapper of a pack's stack, immutable, compared by exact value, picklable."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.wrappers import ClipReward

import specpack
from specpack import Layer


def clip_layer(min_reward: Any, max_reward: Any = 2.0) -> Layer:
    """The outermost layer of a captured ``ClipReward(CartPole)``."""
    env = ClipReward(gymnasium.make("CartPole-v1"), min_reward=min_reward, max_reward=max_reward)
    try:
        return specpack.capture(env).layers[0]
    finally:
        env.close()


def test_a_layer_names_its_wrapper_class_and_gives_its_kwargs() -> None:
    layer = clip_layer(-1.0, 2.0)
    assert layer.name == "ClipReward"
    assert layer.cls.load() is ClipReward
    assert dict(layer.kwargs) == {"min_reward": -1.0, "max_reward": 2.0}
    assert repr(layer) == (
        "Layer(gymnasium.wrappers.transform_reward:ClipReward, min_reward=-1.0, max_reward=2.0)"
    )


def test_a_layer_without_kwargs_reprs_as_just_its_class() -> None:
    layers = specpack.capture("CartPole-v1").layers
    checker = [layer for layer in layers if layer.name == "PassiveEnvChecker"]
    assert len(checker) == 1 and dict(checker[0].kwargs) == {}
    assert repr(checker[0]).endswith(":PassiveEnvChecker)")


def test_a_layer_cannot_be_changed() -> None:
    layer = clip_layer(-1.0)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'cls'"):
        layer.cls = None  # type: ignore[misc]
    # a name that is not a field: no slot for it (Python 3.11's frozen slotted dataclass
    # raises TypeError there, 3.12+ AttributeError); either way nothing is set
    with pytest.raises((AttributeError, TypeError)):
        layer.extra = 1  # type: ignore[attr-defined]
    assert not hasattr(layer, "__dict__")
    with pytest.raises(TypeError):
        layer.kwargs["min_reward"] = 5.0  # type: ignore[index]
    assert layer.kwargs["min_reward"] == -1.0


def test_kwargs_are_fresh_values_each_time() -> None:
    layer = clip_layer(np.arange(3.0), 10.0)
    first = layer.kwargs["min_reward"]
    first[0] = 99.0
    again = layer.kwargs["min_reward"]
    assert again is not first
    np.testing.assert_array_equal(again, [0.0, 1.0, 2.0])


def test_layers_compare_by_exact_value_not_by_loose_equality() -> None:
    ints, floats, ints_again = clip_layer(-1), clip_layer(-1.0), clip_layer(-1)
    assert ints == ints_again and hash(ints) == hash(ints_again)
    assert ints != floats  # -1 == -1.0 in Python, but the rebuilt wrapper would differ
    assert len({ints, floats, ints_again}) == 2
    # Comparison with something that is not a Layer is left to the other operand.
    assert ints != "ClipReward" and ints.__eq__("ClipReward") is NotImplemented


def test_a_layer_pickles_to_an_equal_layer() -> None:
    layer = clip_layer(np.array([-1.0, 0.5]), 3)
    back = pickle.loads(pickle.dumps(layer))
    assert isinstance(back, Layer) and back == layer and back is not layer
    assert type(back.kwargs["max_reward"]) is int
    np.testing.assert_array_equal(back.kwargs["min_reward"], [-1.0, 0.5])


def test_a_long_kwarg_is_shortened_in_the_repr() -> None:
    text = repr(clip_layer(np.zeros(500), 10.0))
    assert text.startswith("Layer(gymnasium.wrappers.transform_reward:ClipReward, min_reward=")
    assert text.endswith(", max_reward=10.0)")
    assert len(text) < 200
