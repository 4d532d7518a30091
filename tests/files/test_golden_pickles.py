"""Pickled packs from earlier releases keep unpickling and rebuilding the same env.

Ray, SB3 and multiprocessing store and ship *pickled* packs, so a pickle is a format too.
``tests/golden/pickles/py<XY>/<version>/`` holds pickles made by ``make_pickles.py`` under that
specpack release (never regenerated), with the fingerprint, wrapper stack and seeded rollout
each must still give.
"""

from __future__ import annotations

import json
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from _helpers import GOLDEN, refused_under_0x

import specpack

PY = f"py{sys.version_info[0]}{sys.version_info[1]}"
RELEASES = sorted(p for p in (GOLDEN / "pickles" / PY).glob("*") if p.is_dir())
CASES = [(d, name) for d in RELEASES for name in ("cartpole_options.pkl", "rich_kwargs.pkl")]


def _maker():  # the rollout helper of the golden files
    import importlib.util

    spec = importlib.util.spec_from_file_location("golden_maker", GOLDEN / "make_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_are_golden_pickles_for_this_python() -> None:
    assert RELEASES, f"no golden pickles under {GOLDEN / 'pickles' / PY}"


@pytest.mark.parametrize(("release", "name"), CASES, ids=[f"{d.name}-{n}" for d, n in CASES])
def test_golden_pickle_unpickles_and_rebuilds_the_recorded_env(release: Path, name: str) -> None:
    expected = json.loads((release / "expected.json").read_text())[name]
    pack = pickle.loads((release / name).read_bytes())
    assert isinstance(pack, specpack.SpecPack)
    assert pack.fingerprint == expected["fingerprint"]
    assert pickle.loads(pickle.dumps(pack)) == pack  # and re-pickles under today's names
    if refused_under_0x(pack):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", specpack.VersionSkewWarning)
        env = pack.make()
    node, stack = env, []
    while hasattr(node, "env") and node is not node.unwrapped:
        stack.append(type(node).__name__)
        node = node.env
    assert [*stack, type(node).__name__] == expected["stack"]
    want = expected["rollout"]
    got = _maker().rollout(env, want["policy"])
    assert (got["steps"], got["terminated"], got["truncated"]) == (
        want["steps"], want["terminated"], want["truncated"])
    np.testing.assert_allclose(got["obs"], want["obs"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got["rewards"], want["rewards"], rtol=1e-6, atol=1e-7)
