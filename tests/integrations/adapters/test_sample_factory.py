"""``specpack.adapters.sample_factory.register``: Sample Factory 2.1.1's ``run_rl`` trains on a
pack registered at run time in the main guard (spawn workers, CPU), its rollout workers' env path
gives ``pack.make()``'s rollouts, and the control (Sample Factory's own recipe for a gymnasium id)
fails with ``NameNotFound`` in the spawn child while the parent waits (bounded here).

Collected only with SPECPACK_VECLIB_TESTS=1 (tests/integrations/adapters/conftest.py): CI's
veclib venv.
"""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from sample_factory.algo.utils.context import global_env_registry
from veclib_run import run_bounded

import specpack
from specpack.adapters import sample_factory
from specpack.adapters.sample_factory import SampleFactoryEnvFn


class NoRenderMode(gym.Env):
    """Its constructor takes no render_mode: a creator passing render_mode=None would fail."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale

    def reset(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        super().reset(seed=seed)
        return (self.np_random.random(2, dtype=np.float32) * self.scale), {}


@pytest.mark.integration
def test_sample_factory_run_rl_trains_on_a_pack_registered_in_the_main_guard(
    tmp_path: Path,
) -> None:
    run = run_bounded("run_sample_factory.py", "pack", str(tmp_path / "train"), cwd=tmp_path,
                      timeout=600)
    assert run.returncode == 0, run.tails()
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["status"] == 0 and result["name"] == "Walk-v0"
    frames = re.findall(r"Collected \{0: (\d+)\}", run.stderr)
    assert frames and int(frames[-1]) >= 300, run.tails()
    # Built by the registered creator in spawn children only: the env-info process and the
    # rollout worker (the parent's one build is capture's, recording the spaces).
    builders = result["builders"]
    assert builders.pop(result["parent"]) == 1
    assert len(builders) >= 2 and sum(builders.values()) >= 3, builders
    # Through Sample Factory's rollout-worker path (make_env_func_batched, env.seed(SEED + i)).
    assert result["rollouts"] == result["reference"]


@pytest.mark.integration
def test_sample_factory_control_gymnasium_id_fails_in_the_spawn_child_and_the_parent_waits(
    tmp_path: Path,
) -> None:
    run = run_bounded("run_sample_factory.py", "control", str(tmp_path / "train"),
                      cwd=tmp_path, timeout=300, until="NameNotFound", grace=5.0)
    assert "NameNotFound: Environment `Walk` doesn't exist" in run.stderr, run.tails()
    assert "spawn_tmp_env_and_get_info" in run.stderr  # the env-info child, not the parent
    assert run.still_waiting, run.tails()  # q.get() with no timeout: killed by run_bounded


def test_sample_factory_register_stores_a_picklable_creator_under_the_packs_id() -> None:
    pack = specpack.capture("CartPole-v1")
    assert sample_factory.register(pack) == "CartPole-v1"
    creator = global_env_registry()["CartPole-v1"]
    assert isinstance(creator, SampleFactoryEnvFn) and repr(creator) == \
        "SampleFactoryEnvFn(CartPole-v1)"
    again = pickle.loads(pickle.dumps(creator))
    built, rebuilt = creator("CartPole-v1", None, None), again("CartPole-v1", None, None, None)
    assert built.reset(seed=3)[0].tolist() == rebuilt.reset(seed=3)[0].tolist()
    assert built.render_mode is None
    assert creator("CartPole-v1", None, None, "rgb_array").render_mode == "rgb_array"


def test_sample_factory_creator_passes_render_mode_only_when_set_and_merges_env_kwargs() -> None:
    pack = specpack.capture(NoRenderMode)
    name = sample_factory.register(pack, "no-render", env_kwargs={"scale": 0.5})
    assert name == "no-render"
    env = global_env_registry()["no-render"]("no-render", None, None, None)
    assert env.unwrapped.scale == 0.5
    assert pack.make(scale=0.5).reset(seed=1)[0].tolist() == env.reset(seed=1)[0].tolist()


@pytest.mark.parametrize("name", ["", 7, b"Walk"])
def test_sample_factory_register_refuses_a_name_that_is_not_a_nonempty_string(name: object) -> None:
    with pytest.raises(specpack.SpecPackError, match="must be a non-empty string"):
        sample_factory.register(specpack.capture("CartPole-v1"), name)  # type: ignore[arg-type]


def test_sample_factory_register_refuses_what_is_not_a_pack() -> None:
    with pytest.raises(specpack.SpecPackError, match=r"sample_factory\.register takes a SpecPack, got str"):
        sample_factory.register("CartPole-v1")  # type: ignore[arg-type]


def test_a_gymnasium_class_is_captured_while_an_unsupported_gym_is_imported() -> None:
    # PufferLib pulls in the legacy gym 0.23 beside gymnasium; specpack's gym backend supports
    # gym 0.26 only. A gymnasium class must still be captured by the gymnasium backend, and
    # asking for the gym backend names the installed version and the fix.
    import gym

    assert not gym.__version__.startswith("0.26.")
    pack = specpack.capture(NoRenderMode)
    assert pack.backend == "gymnasium"
    with pytest.raises(specpack.BackendUnavailableError, match=f"gym {gym.__version__} is installed"):
        specpack.capture("CartPole-v1", backend="gym")
