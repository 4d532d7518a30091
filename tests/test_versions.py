"""The version record: gymnasium, numpy and cloudpickle read their own ``__version__``."""

from __future__ import annotations

import json
from pathlib import Path

from _helpers import run_python

FIRST_CAPTURE = """
import json, specpack
from specpack import _versions as versions
pack = specpack.capture("CartPole-v1")
print(json.dumps({"scanned": versions._packages_distributions.cache_info().currsize,
                  "versions": dict(pack.versions)}))
"""


def test_first_capture_of_a_gymnasium_env_names_gymnasium_without_scanning_every_distribution(
    tmp_path: Path,
) -> None:
    # importlib.metadata.packages_distributions() reads every installed distribution's file
    # list (about 0.4 s in a large venv); gymnasium's module is gymnasium's distribution.
    proc = run_python(["-c", FIRST_CAPTURE], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    import gymnasium

    assert out["versions"]["gymnasium"] == gymnasium.__version__
    assert out["scanned"] == 0
