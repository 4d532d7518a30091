"""The comparison engine in one process: strict equality, structural space descriptions,
traces that survive typed JSON, the action plan, and difference lines that name the field."""

from __future__ import annotations

import collections
import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
import verifyenvs

import specpack
from specpack._core._exact.describe import describe_space, plain
from specpack._core._typedjson import decode, encode
from specpack._tools._verify.compare import compare, same
from specpack._tools._verify.jobs import plan, run_trace
from specpack._tools._verify.trace import Trace, plan_actions, record


@pytest.mark.parametrize("a, b", [
    (0.0, -0.0), (1, 1.0), (1, True), (np.float32(1.0), 1.0),
    (np.zeros(3, np.float32), np.zeros(3, np.float64)), ((1, 2), [1, 2]),
    (np.array([0.0]), np.array([-0.0])),
])
def test_equal_but_not_identical_values_are_different(a, b):
    assert not same(a, b)


def test_nan_equals_nan_and_equal_arrays_are_same():
    assert same(float("nan"), float("nan"))
    assert same(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert same({"a": (1, np.int64(2))}, {"a": (1, np.int64(2))})


def test_large_arrays_become_digests_that_still_tell_values_apart():
    img = np.zeros((84, 84, 3), np.uint8)
    d = plain(img)
    assert d[:3] == ["<digest>", "numpy.ndarray", "uint8 array of shape (84, 84, 3)"]
    other = img.copy()
    other[5, 5, 1] = 1
    assert same(plain(img), plain(img.copy())) and not same(plain(img), plain(other))
    small = plain(np.arange(64))
    assert small[0] == "array"


class Opaque:
    pass


def test_objects_are_encoded_exactly_without_memory_addresses():
    Point = collections.namedtuple("Point", "x y")
    assert plain(Point(1, 2)) == ["namedtuple", f"{__name__}.Point", [["x", 1], ["y", 2]]]
    a, b = plain(Opaque()), plain(Opaque())
    assert "0x" not in repr(a) and same(a, b)
    ordered = plain(collections.OrderedDict(k=1))
    assert ordered[:2] == ["object", "collections.OrderedDict"]
    assert ordered[-1] == ["dict", "dict", [["k", 1]]]


def test_space_descriptions_are_structural():
    space = gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,), np.float32),
                             "mode": gym.spaces.Discrete(3, start=1),
                             "parts": gym.spaces.Tuple([gym.spaces.MultiBinary(4),
                                                        gym.spaces.MultiDiscrete([2, 5])])})
    d = describe_space(space)
    assert d["type"] == "gymnasium.spaces.dict.Dict"
    keys = [k for k, _ in d["spaces"]]
    assert keys == sorted(keys)  # gymnasium sorts Dict keys
    mode = dict((k, v) for k, v in d["spaces"])["mode"]
    assert same(mode["n"], plain(np.int64(3))) and same(mode["start"], plain(np.int64(1)))
    assert same(describe_space(space), describe_space(copy.deepcopy(space)))
    assert not same(describe_space(gym.spaces.Box(-1, 1, (2,))),
                    describe_space(gym.spaces.Box(-1, 2, (2,))))
    assert "repr" not in d
    described = decode(encode(d))
    assert same(described, d)


def test_box_spaces_differing_in_high_name_the_field():
    a = gym.make("CartPole-v1")
    b = gym.make("CartPole-v1")
    b.unwrapped.observation_space = gym.spaces.Box(-1, 1, (4,), np.float32)
    found = specpack.diff(a, b, steps=2)
    assert found[0].startswith("observation_space differs at low: a [")


def test_plan_actions_does_not_touch_the_env_space_and_repeats():
    env = gym.make("CartPole-v1")
    state = copy.deepcopy(env.action_space.np_random.bit_generator.state)
    first = plan_actions(env.action_space, 20, seed=3)
    assert env.action_space.np_random.bit_generator.state == state
    assert same(first, plan_actions(env.action_space, 20, seed=3))
    assert not same(first, plan_actions(env.action_space, 20, seed=4))


def test_trace_survives_typed_json_and_compares_equal():
    env = gym.make("CartPole-v1", max_episode_steps=10)
    t = record(env, plan_actions(env.action_space, 25, 0), 0)
    assert [e[0] for e in t.events].count("reset") == 3  # two truncations
    back = Trace.from_dict(decode(encode(t.to_dict())))
    assert compare(t, back) == []


def test_rollout_error_is_recorded_with_method_and_step():
    env = verifyenvs.CrashesAtStep5()
    t = record(env, [0] * 10, 0)
    assert t.error == {"method": "step", "step": 5, "type": "ZeroDivisionError",
                       "message": "division by zero"}
    assert len(t.events) == 5  # reset + 4 steps
    other = record(verifyenvs.Base(), [0] * 10, 0)
    lines = compare(t, other, labels=("here", "there"))
    assert lines[0] == ("the rollout raised ZeroDivisionError: division by zero in step() at "
                        "step 5 on here only (there did not)")


def test_first_divergence_names_step_and_field():
    t = record(verifyenvs.Base(), [0, 1, 0], 0)
    u = record(verifyenvs.Base(), [0, 1, 1], 0)
    assert compare(t, u, labels=("x", "y")) == ["step 3: action differs: x 0 vs y 1"]


def test_run_trace_repeats_builds_in_one_process():
    payload = pickle.dumps(specpack.capture(verifyenvs.Counted))
    out = run_trace(payload, steps=4, seed=0, repeat=2)
    a, b = (Trace.from_dict(d) for d in out["traces"])
    assert compare(a, b)[0].startswith("step 3: observation differs")


def test_diff_of_envs_raising_alike_is_empty_while_compare_lists_the_shared_failure():
    assert specpack.diff(verifyenvs.CrashesAtStep5(), verifyenvs.CrashesAtStep5(), steps=9) == []
    a = record(verifyenvs.CrashesAtStep5(), [0] * 9, 0)
    b = record(verifyenvs.CrashesAtStep5(), [0] * 9, 0)
    assert compare(a, b) == ["the rollout raised the same on both sides: ZeroDivisionError: "
                             "division by zero in step() at step 5"]
    assert compare(a, b, shared=False) == []


def test_actions_typed_json_cannot_carry_are_planned_on_each_side():
    payload = pickle.dumps(specpack.capture(verifyenvs.GraphActions))
    planned = plan(payload, steps=3, seed=0)
    assert planned["actions"] is None and "GraphInstance" in planned["why"]
