"""Which env ids does importing a module register, in a *fresh* interpreter?

Capture asks before it refers to a callable as "what importing this module registers under
this id": the answer must come from an interpreter that never ran this process's code. The
probe prints only a JSON list of ids on its last line; nothing from it is unpickled.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile

__all__ = ["registered_in_fresh_interpreter"]

_PROBE = (
    "import importlib, json, sys, gymnasium\n"
    "importlib.import_module(sys.argv[1])\n"
    "print('\\n' + json.dumps(sorted(gymnasium.registry)))\n"
)


@functools.lru_cache(maxsize=64)
def registered_in_fresh_interpreter(module: str, timeout: float = 120.0) -> frozenset[str]:
    """The ids gymnasium's registry holds after ``import module`` in a fresh ``python``.

    Empty when the import fails or takes longer than ``timeout`` seconds. ``PYTHONPATH``
    entries are made absolute, as the probe runs in a temporary directory.
    """
    env = dict(os.environ)
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(p) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    with tempfile.TemporaryDirectory(prefix="specpack-probe-") as cwd:
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _PROBE, module], cwd=cwd, env=env, timeout=timeout,
                capture_output=True, text=True, stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            return frozenset()
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return frozenset()
    try:
        ids = json.loads(lines[-1])
    except ValueError:
        return frozenset()
    return frozenset(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else frozenset()
