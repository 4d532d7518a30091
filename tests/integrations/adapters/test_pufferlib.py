"""``specpack.adapters.pufferlib.env_creator``: PufferLib 3.0's Serial and Multiprocessing
backends, under fork, spawn and forkserver, give a single-process ``pack.make()``'s rollouts for
an env registered at run time in the main guard; the control (a creator making the env by id)
fails with ``NameNotFound`` in every spawn worker while the parent waits (bounded here).

Collected only with SPECPACK_VECLIB_TESTS=1 (tests/integrations/adapters/conftest.py): CI's
veclib venv, with PufferLib's pure-Python package from its sdist (no C extensions built).
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pufferlib.vector
import pytest
from pufferlib.emulation import GymnasiumPufferEnv
from veclib_run import run_bounded

import specpack
from specpack.adapters.pufferlib import PufferEnvCreator, env_creator


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("pufferlib")
    outcome = run_bounded("run_pufferlib.py", "pack", cwd=tmp, timeout=600)
    assert outcome.returncode == 0, outcome.tails()
    result: dict = json.loads(outcome.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.integration
@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
@pytest.mark.parametrize("backend", ["Serial", "Multiprocessing"])
def test_pufferlib_backends_give_pack_make_rollouts_under_every_start_method(
    run: dict, backend: str, method: str
) -> None:
    assert run[f"{backend}_{method}"] == run["reference"]


@pytest.mark.integration
def test_pufferlib_creator_gives_the_emulation_env_and_pickles_plainly(run: dict) -> None:
    assert run["creator_here"] == ["GymnasiumPufferEnv", "Walk", "PufferEnvCreator(Walk-v0)"]
    assert run["unpickled"] == "PufferEnvCreator(Walk-v0)"


@pytest.mark.integration
def test_pufferlib_control_id_creator_fails_in_spawn_workers_and_the_parent_waits(
    tmp_path: Path,
) -> None:
    outcome = run_bounded("run_pufferlib.py", "control", cwd=tmp_path, timeout=300,
                          until="NameNotFound", grace=5.0)
    assert "NameNotFound: Environment `Walk` doesn't exist" in outcome.stderr, outcome.tails()
    assert "_worker_process" in outcome.stderr  # in PufferLib's worker, not the parent
    assert outcome.still_waiting, outcome.tails()  # recv() spins for ever: killed by us


def test_pufferlib_env_creator_merges_env_kwargs_and_takes_buf_and_seed() -> None:
    pack = specpack.capture("Pendulum-v1")
    creator = env_creator(pack, g=5.0)
    assert isinstance(creator, PufferEnvCreator)
    env = pickle.loads(pickle.dumps(creator))(buf=None, seed=5)
    assert isinstance(env, GymnasiumPufferEnv)
    assert env.env.unwrapped.g == 5.0
    obs, _ = env.reset(seed=2)  # one agent's row in PufferLib's buffer
    assert obs.tolist() == [pack.make(g=5.0).reset(seed=2)[0].tolist()]


def test_pufferlib_env_creator_refuses_env_arguments_given_through_pufferlib() -> None:
    creator = env_creator(specpack.capture("Pendulum-v1"))
    with pytest.raises(specpack.SpecPackError, match=r"takes only buf= and seed= \(got "
                       r"g\); give env arguments to specpack"):
        pufferlib.vector.make(creator, env_kwargs={"g": 5.0},
                              backend=pufferlib.vector.Serial, num_envs=1)
    with pytest.raises(specpack.SpecPackError, match=r"got 3\)"):
        creator(3)


def test_pufferlib_env_creator_refuses_what_is_not_a_pack() -> None:
    with pytest.raises(specpack.SpecPackError, match=r"pufferlib\.env_creator takes a SpecPack"):
        env_creator("CartPole-v1")  # type: ignore[arg-type]
