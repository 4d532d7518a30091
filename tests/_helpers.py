"""Helpers for tests that run real processes (imported as ``from _helpers import ...``).

Kept out of conftest.py: pytest imports every ``conftest.py`` as the module ``conftest``, so a
nested one (tests/core/backends/gym/conftest.py) would shadow these names.
"""

from __future__ import annotations

import collections.abc
import enum
import json
import math
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from _hang import ProcessHang as ProcessHang
from _hang import run_process as run_process

import specpack
from specpack import Blob, CodeRef, EnumRef
from specpack._core import _typedjson as typedjson

TESTS = Path(__file__).resolve().parent
SCRIPTS = TESTS / "scripts"
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"
ROOT = TESTS.parent
#: The suite runs under gymnasium 0.28/0.29 (CI's 0.29.1 venv): where that line's make, wrappers
#: or envs differ from 1.x, a test states the expectation of each line.
GYMNASIUM_0X = gymnasium.__version__.startswith("0.")
#: How a pack of the running line names TimeLimit (1.x moved it to gymnasium.wrappers.common).
TIME_LIMIT_REF = f"{gymnasium.wrappers.TimeLimit.__module__}:TimeLimit"
#: A gymnasium wrapper of the running line taking two float kwargs, and their names (0.28/0.29
#: has no ClipReward).
FLOAT_WRAPPER = (("NormalizeReward", "gamma", "epsilon") if GYMNASIUM_0X
                 else ("ClipReward", "min_reward", "max_reward"))


def run_python(
    args: list[str], cwd: Path, timeout: float = 180, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``sys.executable`` with ``args`` in ``cwd`` (a real, fresh interpreter).

    Through :func:`run_process`: a hang fails with every process's stacks.
    """
    return run_process([sys.executable, *args], cwd=cwd, timeout=timeout, env=env)


def run_script_json(name: str, tmp_path: Path, *args: str, timeout: float = 240) -> Any:
    """Run ``tests/scripts/<name>`` as ``__main__`` in ``tmp_path``; parse its last JSON line."""
    proc = run_python([str(SCRIPTS / name), *args], cwd=tmp_path, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(
            f"{name} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"{name} printed no JSON\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return json.loads(lines[-1])


def assert_same(a: Any, b: Any, path: str = "value") -> None:
    """``a`` and ``b`` are equal in value and in type, all the way down."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    t = type(a)
    if t is float:
        assert _float_same(a, b), f"{path}: {a!r} != {b!r}"
    elif t is complex:
        assert _float_same(a.real, b.real) and _float_same(a.imag, b.imag), f"{path}"
    elif t in (list, tuple):
        assert len(a) == len(b), f"{path}: lengths {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif t in (set, frozenset):
        assert len(a) == len(b), f"{path}: sizes differ"
        unmatched = list(b)
        for x in a:
            for j, y in enumerate(unmatched):
                try:
                    assert_same(x, y)
                except AssertionError:
                    continue
                del unmatched[j]
                break
            else:
                raise AssertionError(f"{path}: {x!r} has no counterpart in {b!r}")
    elif t is dict or isinstance(a, collections.abc.Mapping):
        assert len(a) == len(b), f"{path}: sizes differ"
        for (ka, va), (kb, vb) in zip(a.items(), b.items()):
            assert_same(ka, kb, f"{path} key")
            assert_same(va, vb, f"{path}[{ka!r}]")
    elif t is np.ndarray:
        assert a.dtype == b.dtype and a.dtype.str == b.dtype.str, f"{path}: dtype"
        assert a.shape == b.shape, f"{path}: shape {a.shape} != {b.shape}"
        assert typedjson.encode(a) == typedjson.encode(b), f"{path}: values differ"
    elif isinstance(a, np.generic):
        assert typedjson.encode(a) == typedjson.encode(b), f"{path}: {a!r} != {b!r}"
    elif t in (CodeRef, Blob, EnumRef) or isinstance(a, (enum.Enum, type)) or callable(a):
        assert a == b, f"{path}: {a!r} != {b!r}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def _float_same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def refused_under_0x(pack: specpack.SpecPack) -> bool:
    """Under gymnasium 0.28/0.29, whether ``pack`` (captured under 1.x) must be refused: its
    CartPole takes sutton_barto_reward, which came in gymnasium 1.0, or it holds a gymnasium
    wrapper that ``make`` does not add itself (1.0 renamed, re-signed or changed those). Checks
    the refusal names the kwarg or wrapper and both releases."""
    if not GYMNASIUM_0X or pack.versions.get("gymnasium", "").startswith("0."):
        return False
    from specpack._core._backends.gymnasium.lines import SAME_IN_BOTH

    wrappers = [layer.name for layer in pack.layers
                if layer.cls.module.startswith("gymnasium.") and layer.name not in SAME_IN_BOTH]
    if "sutton_barto_reward" not in pack.kwargs and not wrappers:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", specpack.VersionSkewWarning)
        with pytest.raises(specpack.BuildError) as info:
            pack.make()
    message = str(info.value)
    assert (wrappers[0] if wrappers else "sutton_barto_reward") in message, message
    assert f"captured under gymnasium {pack.versions['gymnasium']}" in message, message
    assert re.search(rf"gymnasium {re.escape(gymnasium.__version__)} (runs )?here", message), message
    return True


def run_venv_script(python: str, mode: str, folder: Path, script: Path) -> dict[str, Any]:
    """Run ``python script mode folder`` with that venv's own specpack (its editable install:
    no ``PYTHONPATH``) and return the last JSON object it printed; the cross-version tests'
    worker (one venv dumps a pack, another loads it)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [python, str(script), mode, str(folder)], cwd=folder, env=env, capture_output=True,
        text=True, timeout=240,
    )
    assert proc.returncode == 0, f"{python} {mode} failed:\n{proc.stdout}\n{proc.stderr}"
    result: dict[str, Any] = json.loads(
        [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1])
    return result
