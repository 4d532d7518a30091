"""Helpers for tests that run real processes (imported as ``from _helpers import ...``).

Kept out of conftest.py: pytest imports every ``conftest.py`` as the module ``conftest``, so a
nested one (tests/gym/conftest.py) would shadow these names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
SCRIPTS = TESTS / "scripts"


def run_python(
    args: list[str], cwd: Path, timeout: float = 180, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``sys.executable`` with ``args`` in ``cwd`` (a real, fresh interpreter)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env=full_env,
    )


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
