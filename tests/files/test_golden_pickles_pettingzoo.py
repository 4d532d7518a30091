"""Golden pickles of pettingzoo-backend packs keep unpickling and rebuilding the same game.

``tests/golden/pickles/py<XY>/<folder>/pettingzoo_tictactoe.pkl`` was made by
``tests/golden/make_pickles_pettingzoo.py`` (never regenerated); each unpickles to its recorded
fingerprint and rebuilds the recorded wrapper stack and seeded game. Runs in CI's pettingzoo
venv only (``SPECPACK_PETTINGZOO_TESTS=1``, see .ci/run); elsewhere the module collects no
tests (``__test__``), and with the variable set a venv without pettingzoo is an import error,
never a skip (``tests/files/test_golden_pickles.py`` unpickles them in the main venv).
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import warnings
from pathlib import Path

import pytest
from _helpers import GOLDEN

import specpack

ENABLED = os.environ.get("SPECPACK_PETTINGZOO_TESTS") == "1"
__test__ = ENABLED

PY = f"py{sys.version_info[0]}{sys.version_info[1]}"
CASES = sorted(p for p in (GOLDEN / "pickles" / PY).glob("*/pettingzoo_tictactoe.pkl"))

if ENABLED:
    import pettingzoo  # noqa: F401  (an import error here, never a skip)

    sys.path.insert(0, str(GOLDEN))
    from make_pickles_pettingzoo import game, stack_of


def test_there_are_pettingzoo_golden_pickles() -> None:
    assert {p.parent.name for p in CASES} >= {"0.3.0.dev0", "0.3.0.dev0-main-5e9747d"}


@pytest.mark.parametrize("path", CASES, ids=[p.parent.name for p in CASES])
def test_pettingzoo_golden_pickle_rebuilds_the_recorded_game(path: Path) -> None:
    expected = json.loads((path.parent / "expected.json").read_text())[path.name]
    pack = pickle.loads(path.read_bytes())
    assert pack.backend == "pettingzoo" and pack.fingerprint == expected["fingerprint"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", specpack.VersionSkewWarning)
        env = pack.make()
    assert stack_of(env) == expected["stack"]
    assert game(env) == expected["game"]
