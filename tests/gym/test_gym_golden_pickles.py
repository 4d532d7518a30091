"""Golden pickles of gym-backend packs keep unpickling and rebuilding the same legacy-gym env.

``tests/golden/pickles/py<XY>/<folder>/gym_cartpole.pkl`` was made by
``tests/golden/make_pickles_gym.py`` (never regenerated); here, in the gym 0.26 venv, each one
unpickles to its recorded fingerprint and rebuilds the recorded wrapper stack and seeded
rollout (``tests/files/test_golden_pickles.py`` unpickles them in the main venv only).
"""

from __future__ import annotations

import json
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from _helpers import GOLDEN

import specpack

sys.path.insert(0, str(GOLDEN))
from make_pickles_gym import record

PY = f"py{sys.version_info[0]}{sys.version_info[1]}"
CASES = sorted(p for p in (GOLDEN / "pickles" / PY).glob("*/gym_cartpole.pkl"))


def test_there_are_gym_golden_pickles() -> None:
    assert {p.parent.name for p in CASES} >= {"0.3.0.dev0", "0.3.0.dev0-main-5e9747d"}


@pytest.mark.parametrize("path", CASES, ids=[p.parent.name for p in CASES])
def test_gym_golden_pickle_rebuilds_the_recorded_env(path: Path) -> None:
    expected = json.loads((path.parent / "expected.json").read_text())[path.name]
    pack = pickle.loads(path.read_bytes())
    assert pack.backend == "gym" and pack.fingerprint == expected["fingerprint"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", specpack.VersionSkewWarning)
        got = record(pack)
    assert got["stack"] == expected["stack"]
    want, run = expected["rollout"], got["rollout"]
    assert (run["steps"], run["terminated"], run["truncated"]) == (
        want["steps"], want["terminated"], want["truncated"])
    np.testing.assert_allclose(run["obs"], want["obs"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(run["rewards"], want["rewards"], rtol=1e-6, atol=1e-7)
