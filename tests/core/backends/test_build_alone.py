"""A build loads no resolution: what only capture needs stays out of a worker that builds."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from _helpers import run_python

import specpack

#: Capture-side modules of the gymnasium backend (resolution, the fresh-interpreter probe,
#: recorded-arguments checks, registry memos).
CAPTURE_SIDE = ("specpack._core._backends.gymnasium.resolve",
                "specpack._core._backends._args", "specpack._core._backends.recorders",
                "specpack._core._backends._registry")

WORKER = """
import json, pickle, sys
env = pickle.loads(open(sys.argv[1], "rb").read()).make()
env.reset(seed=0)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("specpack."))))
"""


def test_loads_and_make_of_a_gymnasium_pack_load_no_resolution_module(tmp_path: Path) -> None:
    blob = tmp_path / "cartpole.pkl"
    blob.write_bytes(pickle.dumps(specpack.capture("CartPole-v1")))
    proc = run_python(["-c", WORKER, str(blob)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    modules = json.loads(proc.stdout.splitlines()[-1])
    assert "specpack._core._backends.gymnasium.build" in modules  # the control: it built here
    assert [m for m in modules if m in CAPTURE_SIDE] == []
    # ... and capture still finds them when it needs them.
    assert specpack.capture("CartPole-v1").make() is not None
