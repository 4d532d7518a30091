"""verify() rebuilds in a fresh interpreter (or a spawn/forkserver child) and
compares with a local rebuild; per-process behaviour comes out as not identical."""

from __future__ import annotations

import os

import gymnasium
import numpy as np
import pytest
from _helpers import FIXTURES, GYMNASIUM_0X

import specpack

ENVMODS = str(FIXTURES / "envmods")
pytestmark = pytest.mark.integration


class HashDependent(gymnasium.Env):
    """Observations depend on hash(str), which differs per process under hash randomisation."""

    observation_space = gymnasium.spaces.Box(0, 1000, (1,), np.float64)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([hash("specpack-verify") % 1000], np.float64), {}

    def step(self, action):
        return np.array([hash(f"step{action}") % 1000], np.float64), 0.0, False, False, {}


@pytest.fixture
def runtime_mod(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([ENVMODS, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(ENVMODS)
    from specpack._core._carry import importable

    importable._installation_paths.cache_clear()
    importable._fresh_importable_cached.cache_clear()
    import runtime_mod

    yield runtime_mod
    runtime_mod.SCALE = 1.0
    runtime_mod.READY = False
    importable._installation_paths.cache_clear()
    importable._fresh_importable_cached.cache_clear()


@pytest.mark.parametrize("where", ["subprocess", "spawn", "forkserver"])
def test_verify_is_true_for_a_deterministic_registered_env(where):
    report = specpack.verify(specpack.capture("CartPole-v1", max_episode_steps=40), steps=100, where=where)
    assert report, report.differences
    assert report.differences == [] and report.rollout_compared


def test_verify_is_true_for_a_live_wrapped_env_with_a_lambda():
    if GYMNASIUM_0X:  # 0.28/0.29: no ClipReward, TransformObservation(env, f)
        env = gymnasium.wrappers.TransformObservation(
            gymnasium.wrappers.TransformReward(gymnasium.make("Pendulum-v1"),
                                               lambda r: min(max(r, -1.0), 0.0)),
            lambda o: o * 3.0,
        )
    else:
        env = gymnasium.wrappers.TransformObservation(
            gymnasium.wrappers.ClipReward(gymnasium.make("Pendulum-v1"), -1.0, 0.0),
            lambda o: o * 3.0, None,
        )
    assert specpack.verify(specpack.capture(env), steps=60)


def test_verify_of_hash_dependent_behaviour_is_unseeded_naming_both_hash_seeds():
    assert os.environ.get("PYTHONHASHSEED") in (None, "random")
    report = specpack.verify(specpack.capture(HashDependent), steps=10)
    # reproducible here, but two fresh interpreters under different hash seeds already differ
    assert not report and report.status == "unseeded", str(report)
    assert report.cause == "hash_order", str(report)
    assert "hash randomisation" in report.differences[0]
    assert "PYTHONHASHSEED=1" in report.differences[0]
    assert "PYTHONHASHSEED=2" in report.differences[0]
    assert "reset observation differs" in report.differences[0], report.differences
    assert report.hash_seeds == {"here": None, "rebuild": 1, "control": 2}
    with pytest.raises(specpack.NotIdenticalError) as info:
        specpack.verify(specpack.capture(HashDependent), steps=10, check=True)
    assert info.value.differences


def test_verify_is_false_for_a_module_global_set_at_run_time(runtime_mod):
    pack = specpack.capture(runtime_mod.Scaled)
    assert not pack.entry_point.by_value  # importable from PYTHONPATH: by reference
    assert specpack.verify(pack, steps=5)  # same state on both sides
    runtime_mod.SCALE = 3.0
    report = specpack.verify(pack, steps=5)
    assert not report and "observation differs" in report.differences[0]


def test_constructor_failing_only_in_the_fresh_interpreter_reports_the_child_traceback(runtime_mod):
    runtime_mod.READY = True
    pack = specpack.capture(runtime_mod.NeedsParent)
    pack.make()  # works here
    report = specpack.verify(pack, steps=5)
    assert not report and report.status == "rebuild_error"
    text = report.differences[0]
    assert "rebuild failed in the fresh interpreter" in text
    assert "Traceback" in text and "runtime_mod.READY is False" in text
    with pytest.raises(specpack.NotIdenticalError, match="READY is False"):
        specpack.verify(pack, steps=5, check=True)


def test_nondeterministic_env_skips_the_rollout_and_is_falsy_not_compared():
    gymnasium.register("NonDet-v0", entry_point=HashDependent, nondeterministic=True)
    try:
        report = specpack.verify(specpack.capture("NonDet-v0"), steps=10)
    finally:
        gymnasium.registry.pop("NonDet-v0")
    # issue 20: a report is truthy only when both rollouts were compared and matched
    assert not report and report.status == "not_compared" and not report.rollout_compared
    assert "nondeterministic=True" in report.notes[0]
    assert report.differences == []
    assert "control" not in report.hash_seeds  # nothing to control: the rollout is skipped


def test_diff_reports_first_divergence_with_step_number():
    a = gymnasium.make("CartPole-v1", max_episode_steps=5)
    b = gymnasium.make("CartPole-v1", max_episode_steps=6)
    found = specpack.diff(a, b, steps=20)
    assert "spec.max_episode_steps differs" in found[0]
    assert any(d.startswith("step 5: truncated differs") for d in found)


def test_diff_of_equal_envs_is_empty_and_of_different_spaces_names_them():
    assert specpack.diff(gymnasium.make("CartPole-v1"), gymnasium.make("CartPole-v1")) == []
    found = specpack.diff(gymnasium.make("CartPole-v1"), gymnasium.make("Acrobot-v1"), steps=3)
    assert any(d.startswith("observation_space differs") for d in found)


def test_verify_rejects_bad_arguments_clearly():
    pack = specpack.capture("CartPole-v1")
    with pytest.raises(specpack.SpecPackError, match="where="):
        specpack.verify(pack, where="thread")
    with pytest.raises(specpack.SpecPackError, match="steps="):
        specpack.verify(pack, steps=-1)
