"""The version record: which distribution the env's code comes from is its file's owner."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from _helpers import run_python

CAPTURES = """
import importlib.metadata, json, sys
def guess(*args, **kwargs):
    raise AssertionError("packages_distributions: a guess from top-level names")
importlib.metadata.packages_distributions = guess
sys.path.insert(0, ".")
import gymnasium, specpack
gymnasium.register("Mine-v0", entry_point="numpy_envs:Mine")
print(json.dumps({"cartpole": dict(specpack.capture("CartPole-v1").versions),
                  "mine": dict(specpack.capture("Mine-v0").versions)}))
"""

#: The user's own file, whose name starts like an installed distribution's (numpy).
NUMPY_ENVS = """
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
class Mine(CartPoleEnv):
    pass
"""


def test_the_env_distribution_is_the_owner_of_the_entry_points_file(tmp_path: Path) -> None:
    (tmp_path / "numpy_envs.py").write_text(NUMPY_ENVS)
    proc = run_python(["-c", CAPTURES], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    import gymnasium
    import numpy

    # gymnasium's own env: its distribution is the backend, recorded once
    assert out["cartpole"]["gymnasium"] == gymnasium.__version__
    assert "env_distribution" not in out["cartpole"]
    # the user's file belongs to no distribution: nothing to compare on another machine
    assert "env_distribution" not in out["mine"], out["mine"]
    assert out["mine"]["numpy"] == numpy.__version__


INSTALLED = """
import json
import gymnasium, specpack
gymnasium.register("Theirs-v0", entry_point="their_envs.cart:Theirs")
print(json.dumps(dict(specpack.capture("Theirs-v0").versions)))
"""


def test_an_env_of_an_installed_distribution_records_it_by_its_metadata(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "their_envs").mkdir(parents=True)
    (site / "their_envs" / "__init__.py").write_text("")
    (site / "their_envs" / "cart.py").write_text(NUMPY_ENVS.replace("Mine", "Theirs"))
    info = site / "Their_Envs-2.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: Their_Envs\nVersion: 2.0.1\n")
    (info / "RECORD").write_text("their_envs/__init__.py,,\ntheir_envs/cart.py,,\n"
                                 "Their_Envs-2.0.1.dist-info/METADATA,,\n")
    # installed where every interpreter of this machine finds it: referenced, not carried
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    proc = run_python(["-c", INSTALLED], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    versions = json.loads(proc.stdout.splitlines()[-1])
    assert (versions["env_distribution"], versions["env_version"]) == ("Their_Envs", "2.0.1")
