"""The core stands alone: a worker that unpickles a pack and builds it loads only the core.

A fresh interpreter runs ``pickle.loads(blob).make()`` (a pack by reference, and a pack whose
env class was defined in a ``__main__`` and travels by value) and reports which ``specpack``
modules it then holds, how many ``atexit`` hooks and how many threads: none of the worker
protocol, the file format, the typed-JSON codec, the verifier, the audit, the CLI, the adapters
or the vector envs; no hook and no thread beyond what ``import gymnasium`` leaves (and, for
the by-value pack, ``import cloudpickle``: its payloads are cloudpickles, which name
cloudpickle's functions, and cloudpickle imports :mod:`logging`, which registers its own hook).
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest
from _helpers import run_python

import specpack

#: What make() never needs (each loads on first use of what it serves).
HEAVY = ("specpack._tools", "specpack._integrations", "specpack.adapters", "specpack.vector",
         "specpack.ray", "specpack.files", "specpack._core._process", "specpack._core._fileformat",
         "specpack._core._typedjson")

WORKER = """
import atexit, importlib, json, pickle, sys, threading
import gymnasium
for name in sys.argv[2:]:  # what the pickle itself names (not specpack's)
    importlib.import_module(name)
hooks = atexit._ncallbacks()
env = pickle.loads(open(sys.argv[1], "rb").read()).make()
env.reset(seed=0)
env.step(env.action_space.sample())
env.close()

print(json.dumps({
    "modules": sorted(m for m in sys.modules if m.split(".")[0] == "specpack"),
    "hooks_before": hooks, "hooks_after": atexit._ncallbacks(),
    "threads": threading.active_count(),
}))
"""

#: Run as ``__main__``: its env class cannot be imported by name elsewhere, so it is carried.
BY_VALUE = """
import pickle, sys
import gymnasium
import numpy as np
import specpack

class Drift(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.full(2, 0.5, np.float32), 1.0, False, False, {}

pack = specpack.capture(Drift())
assert pack.entry_point.by_value, pack
open(sys.argv[1], "wb").write(pickle.dumps(pack))
"""


def _by_value_blob(tmp_path: Path) -> Path:
    path = tmp_path / "by_value.pkl"
    proc = run_python(["-c", BY_VALUE, str(path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return path


def _by_reference_blob(tmp_path: Path) -> Path:
    path = tmp_path / "by_reference.pkl"
    path.write_bytes(pickle.dumps(specpack.capture("CartPole-v1")))
    return path


@pytest.mark.parametrize("kind", ["by_reference", "by_value"])
def test_worker_that_unpickles_and_builds_loads_only_the_core(tmp_path: Path, kind: str) -> None:
    blob = _by_value_blob(tmp_path) if kind == "by_value" else _by_reference_blob(tmp_path)
    baseline = ["cloudpickle"] if kind == "by_value" else []
    proc = run_python(["-c", WORKER, str(blob), *baseline], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.splitlines()[-1])
    heavy = [m for m in seen["modules"] if m.startswith(tuple(p + "." for p in HEAVY))
             or m in HEAVY]
    assert heavy == [], f"make() loaded {len(heavy)} modules it never uses: {heavy}"
    assert "specpack._core._pack" in seen["modules"]
    assert seen["hooks_after"] == seen["hooks_before"], "make() registered an atexit hook"
    assert seen["threads"] == 1, "make() started a thread"


def test_import_specpack_loads_only_its_errors_version_and_pickle_names(tmp_path: Path) -> None:
    # specpack._pickled imports nothing when it loads: it is there so that whatever pickles a
    # specpack value (cloudpickle too) finds the module its rebuilders name.
    code = ("import sys, specpack; "
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'specpack')))")
    proc = run_python(["-c", code], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert set(proc.stdout.split()) == {"specpack", "specpack._pickled", "specpack._core",
                                        "specpack._core._restorer", "specpack._core._version",
                                        "specpack._core._errors"}


def test_import_specpack_leaves_the_cyclic_gc_as_it_found_it(tmp_path: Path) -> None:
    # the GC pauses while specpack's imports run, and only then
    code = ("import gc, sys; on = sys.argv[1] == 'on'; (gc.enable if on else gc.disable)(); "
            "import specpack; print(gc.isenabled())")
    for state, expected in (("on", "True"), ("off", "False")):
        proc = run_python(["-c", code, state], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == [expected], state


def test_public_names_still_load_on_first_use() -> None:
    for name in specpack.__all__:
        assert getattr(specpack, name) is not None, name
    assert specpack.SpecPack.__module__ == "specpack"  # where users import it
    assert sys.modules["specpack._core._pack"].SpecPack is specpack.SpecPack


#: A fresh interpreter: unpickle, build, step; then the specpack modules it holds.
MODULES = """
import json, pickle, sys
env = pickle.loads(open(sys.argv[1], "rb").read()).make()
env.reset(seed=0)
env.step(env.action_space.sample())
env.close()
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "specpack")))
"""


def test_a_sealed_packs_worker_loads_the_plain_packs_modules_and_the_seal_value(
        tmp_path: Path) -> None:
    """The seal travels inside the pack, so unpickling it loads the Seal value: only that, not
    the sealing machinery (worker harness, verifier, typed JSON). (Before, the Seal class lived
    beside ``make_seal``, which imports the harness: a sealed pack's worker loaded 66 specpack
    modules, the plain pack's 26, and this failed.)"""
    plain = specpack.capture("CartPole-v1", max_episode_steps=20)
    sealed = specpack.seal(plain, steps=3, seed=0, timeout=120)
    assert isinstance(sealed.sealed, specpack.Seal)
    seen = {}
    for kind, pack in (("plain", plain), ("sealed", sealed)):
        blob = tmp_path / f"{kind}.pkl"
        blob.write_bytes(pickle.dumps(pack))
        proc = run_python(["-c", MODULES, str(blob)], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        seen[kind] = set(json.loads(proc.stdout.splitlines()[-1]))
    tools = sorted(m for m in seen["sealed"] if m.startswith(
        ("specpack._core._process", "specpack._tools._verify", "specpack._core._typedjson", "specpack._tools._seal.")))
    assert tools == [] and "specpack._tools._seal" not in seen["sealed"], tools
    assert seen["sealed"] - seen["plain"] == {"specpack._core._sealed"}
    assert seen["plain"] <= seen["sealed"]
