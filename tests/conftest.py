"""Shared test plumbing: running scripts in fresh interpreters, and CI's no-skip rule."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from _helpers import run_python

TESTS = Path(__file__).resolve().parent

# tests/gym/ needs the legacy gym package with numpy<2: CI runs it in its own venv with
# SPECPACK_GYM_TESTS=1 (see .ci/run); the main suite leaves it out.
collect_ignore = [] if os.environ.get("SPECPACK_GYM_TESTS") == "1" else ["gym"]


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
