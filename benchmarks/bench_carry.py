"""By-value packs as the carried code grows: pickle size and first-load time, 1/10/100 classes.

For each N a module with N helper classes and an env that uses all of them is generated in a
temporary directory. A fresh interpreter loads it by file path and captures the env twice:
by value (what happens to a file-loaded module) and by reference (forced, as if the module
were installed). Then, in fresh interpreters that have already imported gymnasium and
specpack, ``pickle.loads(blob).make()`` is timed once per process: by value it unpickles the
code, by reference it imports the module from ``PYTHONPATH``. Each figure is a by-value /
by-reference ratio; the rounds interleave every cell and the median is reported.

Usage: ``python benchmarks/bench_carry.py [--quick] [--json]``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from _bench import median_round, part_main, row, run_python, size, us

SIZES = (1, 10, 100)

_PART = '''
class Part{i}:
    """Helper {i}: a little state and arithmetic, like real env code."""

    scale = {i} + 1.0

    def __init__(self, offset=0.0):
        self.offset = offset
        self.history = []

    def apply(self, x):
        y = x * self.scale + self.offset
        self.history.append(y)
        return y

    def reset(self):
        self.history.clear()
        return self.offset
'''

_ENV = '''
import gymnasium
import numpy as np

{parts}

PARTS = ({names},)


class GrowEnv(gymnasium.Env):
    def __init__(self):
        self.parts = [cls(0.1) for cls in PARTS]
        self.observation_space = gymnasium.spaces.Box(-1e9, 1e9, (2,), np.float64)
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([sum(p.reset() for p in self.parts), 0.0]), {{}}

    def step(self, action):
        v = sum(p.apply(float(action)) for p in self.parts)
        return np.array([v, 1.0]), 1.0, False, False, {{}}
'''

_CAPTURE = r'''
import importlib.util, pickle, sys
import specpack
path, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
spec = importlib.util.spec_from_file_location(name, path)
mod = importlib.util.module_from_spec(spec)
sys.modules[name] = mod
spec.loader.exec_module(mod)
by_value = specpack.capture(mod.GrowEnv)
assert by_value.entry_point.by_value
by_ref = specpack.capture(mod.GrowEnv, by_value=False)
assert not by_ref.entry_point.by_value
with open(out + ".value", "wb") as fh:
    pickle.dump(by_value, fh)
with open(out + ".ref", "wb") as fh:
    pickle.dump(by_ref, fh)
'''

_LOAD = r'''
import pickle, sys, time
import gymnasium, numpy, specpack, specpack._core._backends.gymnasium  # the fixed cost, not timed
blob = open(sys.argv[1], "rb").read()
t0 = time.perf_counter()
env = pickle.loads(blob).make()
t1 = time.perf_counter()
env.reset(seed=0)
print(t1 - t0)
'''


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Size and first-load ratios (by value / by reference) for 1, 10 and 100 classes."""
    rounds = 3 if quick else 7
    tmp = Path(tempfile.mkdtemp(prefix="specpack-bench-carry-"))
    try:
        mods = tmp / "mods"
        mods.mkdir()
        blobs: dict[int, dict[str, Path]] = {}
        for n in SIZES:
            name = f"grow_{n}"
            parts = "\n".join(_PART.format(i=i) for i in range(n))
            names = ", ".join(f"Part{i}" for i in range(n))
            (mods / f"{name}.py").write_text(_ENV.format(parts=parts, names=names))
            out = tmp / name
            run_python(_CAPTURE, str(mods / f"{name}.py"), name, str(out))
            blobs[n] = {"value": Path(str(out) + ".value"), "ref": Path(str(out) + ".ref")}
        env = {"PYTHONPATH": os.pathsep.join(
            p for p in (str(mods), os.environ.get("PYTHONPATH", "")) if p)}
        # Compile the module once so the by-reference side imports from __pycache__, as an
        # installed package would.
        run_python("import grow_1, grow_10, grow_100", env=env, cwd=str(tmp))
        samples: dict[tuple[int, str], list[float]] = {}
        for r in range(rounds):
            for n in SIZES:
                modes = ("value", "ref") if r % 2 == 0 else ("ref", "value")
                for mode in modes:
                    t = float(run_python(_LOAD, str(blobs[n][mode]), env=env, cwd=str(tmp)))
                    samples.setdefault((n, mode), []).append(t)
        rows = []
        for n in SIZES:
            v_size = blobs[n]["value"].stat().st_size
            r_size = blobs[n]["ref"].stat().st_size
            label = f"{n} class{'es' if n > 1 else ''}"
            rows.append(row("carry", f"by value, {label}: pickle size vs by reference",
                            size(v_size), f"by reference {size(r_size)}", v_size / r_size))
            v, ref, ratio = median_round(samples[(n, "value")], samples[(n, "ref")])
            rows.append(row("carry", f"by value, {label}: first loads+make vs import",
                            us(v), f"by reference {us(ref)}", ratio))
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    return part_main(run, "by-value pack size and load time", argv)


if __name__ == "__main__":
    sys.exit(main())
