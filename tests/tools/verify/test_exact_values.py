"""Every value an env returns is compared exactly, across a real process boundary.

The envs here return what ``verifyenvs.TWEAK`` (an importable module's global, set at run time
by the test) says: the build here (a fork of this process) sees the tweak, the fresh
interpreter does not, so each case is a rebuild that behaves differently in a way the old,
cut-repr comparison missed (an info value, an ``np.matrix`` 1e-12 off, a ``bytearray`` byte, a
float deep inside a custom object, a torch tensor 1e-7 off). Values with no exact encoding are
listed by :func:`not_comparable`; a 20k-float list costs a digest, not the list.
"""

from __future__ import annotations

import math
import pickle
import threading
import time
import tracemalloc
from typing import Any

import gymnasium
import numpy as np
import pytest
import verifyenvs

import specpack
from specpack._core._typedjson import canonical_json, decode, encode
from specpack._tools._verify.compare import compare, not_comparable, same
from specpack._tools._verify.jobs import run_trace
from specpack._tools._verify.trace import Trace, plan_actions, record

pytestmark = pytest.mark.integration


def tweaked() -> bool:
    """Whether this process was told to behave differently (only the build here is)."""
    return bool(getattr(verifyenvs, "TWEAK", False))


class Inner:
    def __init__(self, values: list[Any]) -> None:
        self.values = values


class Outer:
    """A picklable custom observation whose difference lies deep inside."""

    def __init__(self, inner: Inner, label: str) -> None:
        self.inner = inner
        self.label = label


def observation(kind: str, t: int) -> Any:
    """The observation of kind ``kind`` at step ``t`` (tweaked in the build here)."""
    off = tweaked()
    if kind == "matrix":
        return np.matrix([[1.0, 2.0 + t]]) + (1e-12 if off else 0.0)
    if kind == "bytearray":
        data = bytearray(300)
        data[250] = 1 if off else 0
        return data
    if kind == "custom":
        return Outer(Inner([1.0, {"deep": (2.0, 3.0 + (1e-9 if off else 0.0))}]), "x")
    if kind == "big list":
        return [float(i) for i in range(20_000)]
    return 0.0


class Shows(gymnasium.Env):  # type: ignore[type-arg]
    """Returns ``observation(kind, t)``; its info holds ``verifyenvs.NOTE`` when set."""

    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float64)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, kind: str = "") -> None:
        self.kind = kind
        self.t = 0

    def reset(self, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.t = 0
        return observation(self.kind, 0), {}

    def step(self, action: Any) -> Any:
        self.t += 1
        info = {"note": getattr(verifyenvs, "NOTE", "unset"), "t": self.t}
        return observation(self.kind, self.t), 1.0, False, False, info


@pytest.fixture
def tweak(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the build here (and only it) behave differently."""
    monkeypatch.setattr(verifyenvs, "TWEAK", True, raising=False)


def test_verify_of_env_whose_info_value_comes_from_a_module_global_set_at_run_time_is_not_identical(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verifyenvs, "NOTE", "a", raising=False)
    report = specpack.verify(specpack.capture(Shows), steps=3)
    assert not report and report.status == "not_identical"
    assert report.differences[0] == (
        "step 1: info['note'] differs: here 'a' vs fresh interpreter 'unset'")


@pytest.mark.parametrize("kind, line", [
    ("matrix", "step 0: reset observation differs: here numpy.matrix([[1.000000000001, "
               "2.000000000001]] (float64)) vs fresh interpreter numpy.matrix([[1., 2.]] "
               "(float64)); first difference at [0, 0]: 1.000000000001 vs 1.0"),
    ("bytearray", "step 0: reset observation differs: here bytearray(b'\\x00"),
    ("custom", "step 0: reset observation.inner.values[1]['deep'][1] differs: here 3.000000001 vs "
               "fresh interpreter 3.0"),
])
def test_verify_of_observation_that_is_not_an_ndarray_and_differs_a_little_is_not_identical(
        tweak: None, kind: str, line: str) -> None:
    report = specpack.verify(specpack.capture(Shows, kind=kind), steps=2)
    assert not report and report.status == "not_identical", report.differences
    assert report.differences[0].startswith(line), report.differences[0]
    if kind == "bytearray":
        assert report.differences[0].endswith(
            "first difference at byte 250: b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00' vs "
            "b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'")


@pytest.mark.parametrize("kind", ["matrix", "bytearray", "custom"])
def test_verify_of_the_same_values_on_both_sides_is_identical(kind: str) -> None:
    report = specpack.verify(specpack.capture(Shows, kind=kind), steps=2)
    assert report, report.differences


class Locked:
    """An observation pickle refuses (it holds a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


class LockedEnv(Shows):
    def reset(self, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        return np.zeros(1), {}

    def step(self, action: Any) -> Any:
        return Locked(), 0.0, False, False, {"ok": 1}


def test_an_unpicklable_observation_is_listed_as_not_comparable_and_never_equal() -> None:
    a = record(LockedEnv(), [0, 1, 0], 0)
    b = record(LockedEnv(), [0, 1, 0], 0)
    assert not_comparable(a) == [
        "step 1 observation.lock: <_thread.lock> cannot be pickled: TypeError: cannot pickle "
        "'_thread.lock' object (and at 2 later steps)"]
    lines = compare(a, b, labels=("here", "there"))
    assert lines and lines[0].startswith("step 1: observation")
    assert "has no exact encoding" in lines[0]
    assert specpack.diff(LockedEnv(), LockedEnv(), steps=3) != []


def test_not_comparable_names_the_place_inside_the_value() -> None:
    class Holder(LockedEnv):
        def step(self, action: Any) -> Any:
            return np.zeros(1), 0.0, False, False, {"handle": Locked()}

    lines = not_comparable(record(Holder(), [0, 0], 0))
    assert len(lines) == 1 and lines[0].startswith("step 1 info['handle'].lock: <_thread.lock>")
    assert lines[0].endswith("(and at 1 later steps)")
    assert not_comparable(record(Shows(), [0, 0], 0)) == []


class Rewards(Shows):
    """Rewards ``value`` and puts it in its info too."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value

    def step(self, action: Any) -> Any:
        return np.zeros(1), self.value, False, False, {"value": self.value}


@pytest.mark.parametrize("x, y", [(1, 1.0), (1, True), (1.0, True), (0.0, -0.0)])
def test_equal_but_not_identical_rewards_and_info_values_differ(x: Any, y: Any) -> None:
    found = specpack.diff(Rewards(x), Rewards(y), steps=1)
    assert found == [f"step 1: reward differs: a {x!r} vs b {y!r}"]
    a, b = record(Rewards(x), [0], 0), record(Rewards(y), [0], 0)
    a.events[1][4] = b.events[1][4]  # the same reward: the info still differs
    assert compare(a, b) == [f"step 1: info['value'] differs: a {x!r} vs b {y!r}"]


def test_nan_rewards_and_info_values_are_equal() -> None:
    assert specpack.diff(Rewards(math.nan), Rewards(float("nan")), steps=2) == []
    assert not same(math.nan, 0.0)


class Clock(Shows):
    def step(self, action: Any) -> Any:
        return np.zeros(1), 0.0, False, False, {"elapsed": time.perf_counter(), "k": 1}


def test_ignore_info_leaves_the_named_keys_out_and_lists_those_seen() -> None:
    assert compare(record(Clock(), [0], 0), record(Clock(), [0], 0))[0].startswith(
        "step 1: info['elapsed'] differs")
    a = record(Clock(), [0, 0], 0, ignore_info=["elapsed", "never"])
    b = record(Clock(), [0, 0], 0, ignore_info=("elapsed",))
    assert compare(a, b) == [] and a.ignored_info == ["elapsed"] == b.ignored_info
    assert a.events[1][-1] == ["dict", "dict", [["k", 1]]]
    back = Trace.from_dict(decode(encode(a.to_dict())))
    assert back.ignored_info == ["elapsed"] and compare(a, back) == []


def test_a_20k_float_list_observation_crosses_as_a_digest() -> None:
    payload = pickle.dumps(specpack.capture(Shows, kind="big list"))
    out = run_trace(payload, steps=3, seed=0, actions=plan_actions(
        gymnasium.spaces.Discrete(2), 3, 0))
    sent = canonical_json(encode(out))
    assert len(sent) < 8_000  # four observations of 20,000 floats each: a digest each
    tracemalloc.start()
    try:
        trace = Trace.from_dict(decode(encode(out))["traces"][0])
        assert compare(trace, trace) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000
    assert trace.events[0][2][:3] == ["<digest>", "list", "list of 20000 items"]
    report = specpack.verify(specpack.capture(Shows, kind="big list"), steps=3)
    assert report, report.differences
