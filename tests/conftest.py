"""Shared test plumbing: running scripts in fresh interpreters, and CI's no-skip rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent

# tests/gym/ needs the legacy gym package with numpy<2: CI runs it in its own venv with
# SPECPACK_GYM_TESTS=1 (see .ci/run); the main suite leaves it out.
collect_ignore = [] if os.environ.get("SPECPACK_GYM_TESTS") == "1" else ["gym"]
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


@pytest.fixture
def fresh_python():
    """Run code in a fresh interpreter in another working directory."""
    return run_python


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """In CI a skipped test is a failure: integration tests must run there."""
    if os.environ.get("CI") != "true":
        return
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped:
        terminalreporter.write_line(
            f"CI=true: {len(skipped)} test(s) were skipped; in CI a skip is a failure",
            red=True,
        )


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if os.environ.get("CI") != "true":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and reporter.stats.get("skipped"):
        session.exitstatus = 1
