"""The audit's checks of what an env records about its own arguments, run where it is
registered: every kind of EzPickle gap, with its consequence, and the live-capture check.

The checks are called as the reference side calls them (on an env built from its pack, with
the planned actions); one case also goes through ``audit_one`` for the verdict a user sees.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils import EzPickle

import specpack
from specpack._tools._audit.api import audit_one
from specpack._tools._audit.checks import ezpickle_gaps, first_step, live_capture, same_recipe
from specpack._tools._verify.trace import plan_actions

NS = "specpack_checks_test"


class Walk(gymnasium.Env):  # type: ignore[type-arg]
    """A 1-d walk whose step size is ``speed``: a changed ``speed`` shows in the rollout."""

    observation_space = gymnasium.spaces.Box(-1e9, 1e9, (1,), np.float64)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, speed: float = 1.0) -> None:
        self.speed = speed
        self.pos = 0.0

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.pos = 0.0
        return np.array([self.pos]), {}

    def step(self, action: Any) -> Any:
        self.pos += self.speed * (1 if int(action) else -1)
        return np.array([self.pos]), self.pos, False, False, {}


class RecordsAnotherValue(Walk, EzPickle):
    """Records ``speed`` rounded: a rebuild from the record walks at another speed."""

    def __init__(self, speed: float = 1.0) -> None:
        EzPickle.__init__(self, speed=round(speed))
        Walk.__init__(self, speed)


class Faithful(Walk, EzPickle):
    def __init__(self, speed: float = 1.0) -> None:
        EzPickle.__init__(self, speed=speed)
        Walk.__init__(self, speed)


class ForgetsRequired(Walk, EzPickle):
    """``speed`` has no default and is not recorded: the round trip cannot even rebuild it."""

    def __init__(self, speed: float) -> None:
        EzPickle.__init__(self)
        Walk.__init__(self, speed)


class ForgetsHarmless(Walk, EzPickle):
    """Forgets ``label``, which changes nothing a rollout shows; closing a copy raises."""

    def __init__(self, speed: float = 1.0, label: str = "walk") -> None:
        EzPickle.__init__(self, speed=speed)
        Walk.__init__(self, speed)
        self.label = label

    def close(self) -> None:
        if self.label != "walk":
            raise RuntimeError("cannot close")


class ForgetsAtDefault(Walk, EzPickle):
    """Forgets ``speed``; harmless while the spec passes the default."""

    def __init__(self, speed: float = 1.0) -> None:
        EzPickle.__init__(self)
        Walk.__init__(self, speed)


class MisRecorded(Walk, EzPickle):
    """Its EzPickle record has more positional arguments than its constructor takes."""

    def __init__(self, speed: float = 1.0) -> None:
        EzPickle.__init__(self, speed, "extra", "more")
        Walk.__init__(self, speed)


class StoresUnrecorded(Walk, EzPickle):
    """Records nothing, but stores the ``speed`` it was built with."""

    def __init__(self, speed: float = 1.0) -> None:
        EzPickle.__init__(self)
        Walk.__init__(self, speed)


def fast_unrecorded() -> StoresUnrecorded:
    """A factory entry point: the spec's kwargs say nothing about what it passes."""
    return StoresUnrecorded(speed=5.0)


REGISTRATIONS = {
    "Another-v0": (RecordsAnotherValue, {"speed": 1.4}),
    "Required-v0": (ForgetsRequired, {"speed": 2.0}),
    "Harmless-v0": (ForgetsHarmless, {"label": "run"}),
    "AtDefault-v0": (ForgetsAtDefault, {"speed": 1.0}),
    "MisRecorded-v0": (MisRecorded, {}),
    "Factory-v0": (fast_unrecorded, {}),
    "Recorded-v0": (Faithful, {"speed": 2.0}),
    "Rounded-v0": (RecordsAnotherValue, {"speed": 2.0}),
}


@pytest.fixture(scope="module", autouse=True)
def registered() -> Iterator[None]:
    for name, (entry, kwargs) in REGISTRATIONS.items():
        gymnasium.register(f"{NS}/{name}", entry_point=entry, kwargs=kwargs,
                           disable_env_checker=True)
    yield
    for name in REGISTRATIONS:
        gymnasium.registry.pop(f"{NS}/{name}", None)


def gaps(name: str, steps: int = 8) -> dict[str, Any]:
    pack = specpack.capture(f"{NS}/{name}")
    env = pack.make()
    try:
        return ezpickle_gaps(env, pack, plan_actions(env.action_space, steps, 0), seed=0)
    finally:
        with contextlib.suppress(RuntimeError):  # ForgetsHarmless's close raises
            env.close()


def test_a_recorded_value_other_than_the_one_built_with_fails_at_the_step_it_shows() -> None:
    out = gaps("Another-v0")
    failure, = out["failures"]
    assert failure.startswith(
        f"EzPickle gap: {__name__}.RecordsAnotherValue was built with speed=1.4 but EzPickle "
        "recorded speed=1;")
    assert "a rollout of the round-tripped env differs: step 1:" in failure
    assert failure.endswith(
        "pass every argument to EzPickle.__init__ in RecordsAnotherValue.__init__")
    assert out["step"] == 1 and out["notes"] == []


def test_a_faithful_record_has_no_gap() -> None:
    assert gaps("Recorded-v0") == {"failures": [], "notes": [], "step": None}


def test_a_record_equal_in_value_but_not_in_type_is_a_gap() -> None:
    # 2 == 2.0, but the round trip would rebuild the env with an int where it had a float
    failure, = gaps("Rounded-v0")["failures"]
    assert "was built with speed=2.0 but EzPickle recorded speed=2;" in failure


def test_an_unrecorded_required_argument_means_the_round_trip_itself_fails() -> None:
    failure, = gaps("Required-v0")["failures"]
    assert "was built with speed=2.0 but EzPickle did not record it, and it has no default " \
           "(the round trip raises TypeError)" in failure
    assert "pickle.loads(pickle.dumps(env.unwrapped)) itself fails: TypeError" in failure


def test_an_unrecorded_argument_the_rollout_does_not_show_still_fails() -> None:
    out = gaps("Harmless-v0")
    failure, = out["failures"]
    assert "was built with label='run' but EzPickle did not record it, so pickle.loads(" \
           "pickle.dumps(env)) rebuilds it with label='walk'" in failure
    assert "a 8-step rollout of the round-tripped env does not differ (the value may matter " \
           "elsewhere)" in failure
    assert out["step"] is None


def test_an_unrecorded_argument_at_its_default_is_a_note() -> None:
    out = gaps("AtDefault-v0")
    assert out["failures"] == [] and out["step"] is None
    note, = out["notes"]
    assert note.startswith(f"EzPickle gap at the default: {__name__}.ForgetsAtDefault does not "
                           "record speed; the spec passes speed=1.0, its default")


def test_a_record_that_does_not_match_the_constructor_is_a_gap() -> None:
    failure, = gaps("MisRecorded-v0")["failures"]
    assert failure.startswith(f"EzPickle gap: {__name__}.MisRecorded's EzPickle record (")
    assert "does not match its constructor" in failure
    assert "capture(EnvClass" not in failure  # a fix that cannot make an audit of an id pass


def test_a_factory_built_env_storing_an_unrecorded_value_is_a_gap() -> None:
    failure, = gaps("Factory-v0")["failures"]
    assert f"{__name__}.StoresUnrecorded was built with speed=5.0 but EzPickle did not record " \
           "it, so a rebuild would silently use the default speed=1.0" in failure


def test_audit_one_reports_the_gap_as_ezpickle_gap_naming_the_step_and_a_fix_for_the_id() -> None:
    finding = audit_one(f"{NS}/Another-v0", steps=8)
    assert finding.status == "ezpickle_gap" and finding.portable  # a warning, not a failure
    assert finding.step == 1
    assert "EzPickle recorded speed=1" in " ".join(finding.differences)
    assert f"pickle a pack instead of the env: specpack.capture('{NS}/Another-v0')" in \
        finding.reason


def test_the_live_capture_check_notes_what_cannot_be_captured_and_never_fails_the_id() -> None:
    pack = specpack.capture("CartPole-v1")
    out = live_capture(object(), pack)
    assert out["pack"] is None and out["differences"] == [] and out["failed"] is None
    note, = out["notes"]
    assert note.startswith(
        "capture(env) of a live instance is not possible (CaptureError: cannot capture object")
    assert "the pack of the id carries the registration itself" in note


def test_the_live_capture_of_a_factory_env_is_another_recipe_to_rebuild() -> None:
    env = gymnasium.make(f"{NS}/Factory-v0")
    try:
        out = live_capture(env, specpack.capture(f"{NS}/Factory-v0"))
    finally:
        env.close()
    # capture(env) of the live instance refuses: its speed was not recorded anywhere
    assert out["pack"] is None and out["failed"] is None and out["differences"] == []
    difference, = out["ezpickle"]  # what it refuses for is the env's EzPickle record
    assert difference.startswith("capture(env) of a live instance refuses:")
    env = gymnasium.make("CartPole-v1")
    try:
        assert live_capture(env, specpack.capture("CartPole-v1"))["pack"] is None
        assert live_capture(env, specpack.capture("CartPole-v1", max_episode_steps=7))["pack"]
    finally:
        env.close()


def test_same_recipe_is_false_when_unsure() -> None:
    a = specpack.capture("CartPole-v1")
    assert same_recipe(a, specpack.capture("CartPole-v1"))
    assert not same_recipe(a, specpack.capture("CartPole-v1", max_episode_steps=7))
    assert not same_recipe(a, object())


def test_first_step_reads_the_step_of_the_first_difference_only() -> None:
    assert first_step(["step 7: reward differs", "step 2: obs differs"]) == 7
    assert first_step(["action space differs", "step 2: obs differs"]) is None
    assert first_step([]) is None
