"""Self-check of the ``truthpkg`` fixtures: each behaves as its docstring says, with plain
gymnasium (no specpack), so an audit test built on them tests the audit and not the fixture."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import truthpkg  # noqa: E402
from truthpkg import EPISODE_STEPS, FLAKY_STEP  # noqa: E402

STEPS = 30


def up_front_actions(env: Any, steps: int = STEPS, seed: int = 0) -> list[Any]:
    """The new protocol's action list: a seeded deepcopy of the fresh env's action space."""
    space = copy.deepcopy(env.action_space)
    space.seed(seed)
    return [space.sample() for _ in range(steps)]


def rollout(env: Any, actions: list[Any], seed: int = 0) -> list[tuple[Any, ...]]:
    """reset(seed), the given actions, auto-reset without a seed; obs/reward/flags per step."""
    events: list[tuple[Any, ...]] = [("reset", 0, env.reset(seed=seed)[0])]
    for i, a in enumerate(actions, 1):
        obs, reward, terminated, truncated, _ = env.step(a)
        events.append(("step", i, obs, float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            events.append(("reset", i, env.reset()[0]))
    return events


def old_rollout(env: Any, steps: int = STEPS, seed: int = 0) -> list[tuple[Any, ...]]:
    """specpack.verify.trace's protocol at issue #16: seed the action space after reset."""
    events: list[tuple[Any, ...]] = [("reset", 0, env.reset(seed=seed)[0])]
    env.action_space.seed(seed)
    for i in range(1, steps + 1):
        a = env.action_space.sample()
        obs, reward, terminated, truncated, _ = env.step(a)
        events.append(("step", i, a, obs, float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            events.append(("reset", i, env.reset()[0]))
    return events


def first_difference(
    ea: list[tuple[Any, ...]], eb: list[tuple[Any, ...]]
) -> tuple[int, int] | None:
    """(step, index of the differing item in the event) of the first difference, or None."""
    for x, y in zip(ea, eb, strict=True):
        for k, (u, v) in enumerate(zip(x, y, strict=True)):
            if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
                same = np.array_equal(np.asarray(u), np.asarray(v), equal_nan=True)
            else:
                same = u == v
            if not same:
                return x[1], k
    return None


def test_every_id_is_registered() -> None:
    for env_id in truthpkg.IDS:
        assert env_id in gymnasium.registry, env_id
    assert {k for k in gymnasium.registry if k.startswith("truthpkg/")} == set(truthpkg.IDS)


def test_new_action_space_replaces_its_space_on_reset() -> None:
    env = gymnasium.make("truthpkg/NewActionSpace-v0")
    before = env.action_space
    env.reset(seed=0)
    after = env.action_space
    assert after is not before
    assert after == before
    env.reset()
    assert env.action_space is not after


def test_new_action_space_is_identical_under_the_new_protocol() -> None:
    a = gymnasium.make("truthpkg/NewActionSpace-v0")
    b = gymnasium.make("truthpkg/NewActionSpace-v0")
    acts = up_front_actions(a)
    assert (
        first_difference(
            [("a", i, x) for i, x in enumerate(acts)],
            [("a", i, x) for i, x in enumerate(up_front_actions(b))],
        )
        is None
    )
    ea, eb = rollout(a, acts), rollout(b, acts)
    assert any(e[0] == "reset" and e[1] == EPISODE_STEPS for e in ea)  # it does auto-reset
    assert first_difference(ea, eb) is None


def test_new_action_space_differs_under_the_old_protocol() -> None:
    a = gymnasium.make("truthpkg/NewActionSpace-v0")
    b = gymnasium.make("truthpkg/NewActionSpace-v0")
    # the step after the first auto-reset, item 2 = the action
    assert first_difference(old_rollout(a), old_rollout(b)) == (EPISODE_STEPS + 1, 2)


def test_flaky_differs_between_two_builds_in_one_process() -> None:
    a = gymnasium.make("truthpkg/Flaky-v0")
    acts = up_front_actions(a)
    ea = rollout(a, acts)
    b = gymnasium.make("truthpkg/Flaky-v0")
    eb = rollout(b, acts)
    assert first_difference(ea, eb) == (FLAKY_STEP, 3)  # item 3 = the reward
    assert all(np.array_equal(x[2], y[2]) for x, y in zip(ea, eb))  # observations agree


def _step_one_reward(env: Any) -> float:
    env.reset(seed=0)
    space = copy.deepcopy(env.action_space)
    space.seed(0)
    return float(env.step(space.sample())[1])


@pytest.mark.parametrize(
    ("env_id", "sparse"), [("truthpkg/GapDefault-v0", False), ("truthpkg/GapSparse-v0", True)]
)
def test_gap_envs_record_nothing_in_ezpickle(env_id: str, sparse: bool) -> None:
    env = gymnasium.make(env_id)
    base = env.unwrapped
    assert base._ezpickle_args == ()
    assert base._ezpickle_kwargs == {}
    assert env.spec is not None and env.spec.kwargs == {"sparse": sparse}
    assert base.sparse_reward is sparse


def test_gap_default_round_trip_changes_nothing() -> None:
    base = gymnasium.make("truthpkg/GapDefault-v0").unwrapped
    clone = pickle.loads(pickle.dumps(base))
    assert clone.sparse_reward is False
    assert _step_one_reward(base) == _step_one_reward(clone)


def test_gap_sparse_round_trip_changes_the_reward_at_step_1() -> None:
    base = gymnasium.make("truthpkg/GapSparse-v0").unwrapped
    clone = pickle.loads(pickle.dumps(base))
    assert base.sparse_reward is True and clone.sparse_reward is False
    original, round_tripped = _step_one_reward(base), _step_one_reward(clone)
    assert original == -0.1
    assert round_tripped != original and round_tripped < 0


def test_lambda_entry_point_is_local_and_cannot_travel_by_value() -> None:
    import cloudpickle

    ep = gymnasium.spec("truthpkg/Lambda-v0").entry_point
    assert callable(ep)
    assert ep.__module__ == "truthpkg.lambdas"
    assert ep.__qualname__ == "register_truth_envs.<locals>.<lambda>"
    with pytest.raises(TypeError, match="RLock"):
        cloudpickle.dumps(ep)
    a, b = gymnasium.make("truthpkg/Lambda-v0"), gymnasium.make("truthpkg/Lambda-v0")
    acts = up_front_actions(a)
    assert first_difference(rollout(a, acts), rollout(b, acts)) is None


def test_lambda_ids_are_registered_again_by_a_fresh_import(tmp_path: Path) -> None:
    code = (
        "import gymnasium, truthpkg.lambdas\n"
        "env = gymnasium.make('truthpkg/Lambda-v0')\n"
        "print(env.spec.entry_point.__qualname__, env.unwrapped.task, env.reset(seed=0)[0].tolist())\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    here = gymnasium.make("truthpkg/Lambda-v0").reset(seed=0)[0].tolist()
    assert proc.stdout.split()[:2] == ["register_truth_envs.<locals>.<lambda>", "a"]
    assert proc.stdout.strip().endswith(str(here))


def test_lambda_needs_arg_cannot_be_made_without_its_argument() -> None:
    with pytest.raises(TypeError, match="task"):
        gymnasium.make("truthpkg/LambdaNeedsArg-v0")
    env = gymnasium.make("truthpkg/LambdaNeedsArg-v0", task="b")
    assert env.unwrapped.task == "b"


def test_vec_only_builds_through_make_vec_only() -> None:
    spec = gymnasium.spec("truthpkg/VecOnly-v0")
    assert spec.entry_point is None
    assert spec.vector_entry_point == "truthpkg.vector:make_vec_env"
    with pytest.raises(gymnasium.error.Error, match="entry_point is not specified"):
        gymnasium.make("truthpkg/VecOnly-v0")
    venv = gymnasium.make_vec(
        "truthpkg/VecOnly-v0", num_envs=2, vectorization_mode="vector_entry_point"
    )
    assert isinstance(venv, gymnasium.vector.SyncVectorEnv)
    assert venv.num_envs == 2
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (2, 2)
    assert venv.spec is not None
    assert venv.spec.kwargs == {
        "task": "c",
        "max_episode_steps": 40,
        "num_envs": 2,
        "vectorization_mode": "vector_entry_point",
    }
    # vectorization_mode=None picks the vector entry point by itself
    again = gymnasium.make_vec("truthpkg/VecOnly-v0", num_envs=2)
    assert np.array_equal(again.reset(seed=0)[0], obs)
    venv.close()
    again.close()


CLASS_STATE_CODE = """
import copy, sys
import gymnasium, numpy as np, truthpkg

def roll(env_id):
    env = gymnasium.make(env_id)
    space = copy.deepcopy(env.action_space)
    space.seed(0)
    acts = [space.sample() for _ in range(5)]
    obs = [env.reset(seed=0)[0]] + [env.step(a)[0] for a in acts]
    return obs

def first(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if not np.array_equal(x, y)), None)

clean = roll("truthpkg/ClassStateReader-v0")
again = roll("truthpkg/ClassStateReader-v0")
w1 = roll("truthpkg/ClassStateWriter-v0")
after = roll("truthpkg/ClassStateReader-v0")
w2 = roll("truthpkg/ClassStateWriter-v0")
print(first(clean, again), first(clean, after), first(w1, w2))
"""


def test_class_state_writer_changes_the_reader_in_the_same_process(tmp_path: Path) -> None:
    # a fresh interpreter: this test process may have run the writer already
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.run(
        [sys.executable, "-c", CLASS_STATE_CODE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    # reader reproducible when clean; differs from step 1 after the writer; writer reproducible
    assert proc.stdout.split() == ["None", "1", "None"]


MUJOCO_PY_MESSAGE = (
    "No module named 'mujoco_py'. (HINT: you need to install mujoco_py, and also perform the "
    "setup instructions here: https://github.com/openai/mujoco-py/.)"
)


def test_needs_dep_raises_like_gymnasium_robotics() -> None:
    with pytest.raises(gymnasium.error.DependencyNotInstalled) as info:
        gymnasium.make("truthpkg/NeedsDep-v0")
    e = info.value
    assert e.args == (MUJOCO_PY_MESSAGE,)
    assert str(e) == MUJOCO_PY_MESSAGE
    assert "pip install" not in str(e)
    assert e.__cause__ is None


def test_needs_dep_args_raises_like_gymnasium_mujoco_py_env() -> None:
    with pytest.raises(gymnasium.error.DependencyNotInstalled) as info:
        gymnasium.make("truthpkg/NeedsDepArgs-v0")
    e = info.value
    assert len(e.args) == 2
    assert e.args[0].startswith("No module named 'mujoco_py'. Could not import mujoco_py")
    assert str(e).startswith("(\"No module named 'mujoco_py'.")


def test_reset_raises_on_every_build_here_and_in_a_fresh_interpreter() -> None:
    for _ in range(2):
        env = gymnasium.make("truthpkg/ResetRaises-v0")  # it builds
        with pytest.raises(RuntimeError, match=truthpkg.RESET_MESSAGE):
            env.reset(seed=0)
    code = ("import gymnasium, truthpkg\n"
            "env = gymnasium.make('truthpkg/ResetRaises-v0')\n"
            "try:\n    env.reset(seed=0)\nexcept RuntimeError as e:\n    print('raised', e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(FIXTURES)}, timeout=120)
    assert proc.stdout.strip() == f"raised {truthpkg.RESET_MESSAGE}", proc.stderr[-2000:]


def test_step_raises_at_the_first_step_of_every_build() -> None:
    for _ in range(2):
        env = gymnasium.make("truthpkg/StepRaises-v0")
        env.reset(seed=0)
        with pytest.raises(ValueError, match=truthpkg.STEP_MESSAGE):
            env.step(env.action_space.sample())


def test_rollout_needs_dep_builds_then_raises_dependency_not_installed_at_reset() -> None:
    env = gymnasium.make("truthpkg/RolloutNeedsDep-v0")  # the constructor needs nothing
    with pytest.raises(gymnasium.error.DependencyNotInstalled,
                       match=r'pip install "truthpkg\[maps\]"'):
        env.reset(seed=0)


def test_nondeterministic_is_registered_so_and_otherwise_a_plain_walk() -> None:
    assert gymnasium.spec("truthpkg/Nondeterministic-v0").nondeterministic is True
    env = gymnasium.make("truthpkg/Nondeterministic-v0")
    assert env.spec is not None and env.spec.nondeterministic is True
    actions = up_front_actions(env)
    again = gymnasium.make("truthpkg/Nondeterministic-v0")
    assert first_difference(rollout(env, actions), rollout(again, actions)) is None
