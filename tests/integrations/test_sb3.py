"""Stable-Baselines3: SubprocVecEnv (forkserver) and DummyVecEnv of ``pack.make``.

The envs are registered in a script's main guard (tests/scripts/vec_sb3.py, run in a fresh
interpreter); the control is SB3's own ``make_vec_env(id, vec_env_cls=SubprocVecEnv)``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from _helpers import SCRIPTS

TESTS = SCRIPTS

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def sb3(tmp_path_factory: pytest.TempPathFactory) -> Any:
    proc = subprocess.run(
        [sys.executable, str(TESTS / "vec_sb3.py")], cwd=tmp_path_factory.mktemp("sb3"),
        capture_output=True, text=True, timeout=240, env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("env_id", ["Sb3Main-v0", "Sb3File-v0"])
def test_control_sb3_make_vec_env_by_id_fails_in_forkserver_workers(sb3: Any, env_id: str) -> None:
    control = sb3[env_id]["control"]
    assert control["outcome"] != "ok"
    assert control["type"] in {"ConnectionResetError", "EOFError", "BrokenPipeError"}


@pytest.mark.parametrize("env_id", ["Sb3Main-v0", "Sb3File-v0"])
def test_sb3_subproc_forkserver_equals_dummy_vec_env_of_pack(sb3: Any, env_id: str) -> None:
    res = sb3[env_id]
    assert res["subproc_forkserver"] == res["dummy"]
    assert len(res["dummy"]) == 9
    assert any(any(step[2]) for step in res["dummy"][1:])  # max_episode_steps=5 ended episodes


@pytest.mark.parametrize("env_id", ["Sb3Main-v0", "Sb3File-v0"])
def test_sb3_seed_s_seeds_env_i_with_s_plus_i(sb3: Any, env_id: str) -> None:
    res = sb3[env_id]
    assert res["dummy"][0] == res["single"]
    assert res["make_vec_env_dummy"][0] == res["single"]


@pytest.mark.parametrize("env_id", ["Sb3Main-v0", "Sb3File-v0"])
def test_sb3_make_vec_env_takes_pack_make_as_the_env_factory(sb3: Any, env_id: str) -> None:
    res = sb3[env_id]
    assert res["make_vec_env_subproc"] == res["make_vec_env_dummy"]
