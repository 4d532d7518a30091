"""Shared test plumbing: running scripts in fresh interpreters, and CI's no-skip rule."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# tests/fixtures holds env packages the tests use as if installed: it is on PYTHONPATH for the
# whole session (fresh interpreters inherit it), set before specpack reads the search path.
_FIXTURES = str(Path(__file__).resolve().parent / "fixtures")
if _FIXTURES not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [_FIXTURES, os.environ.get("PYTHONPATH")]))
if _FIXTURES not in sys.path:
    sys.path.insert(0, _FIXTURES)
from typing import Any  # noqa: E402

import pytest  # noqa: E402
from _helpers import SCRIPTS, run_python  # noqa: E402 - after the PYTHONPATH set above

# Helper modules of the process tests (vec_envs, ...) import each other by name.
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

TESTS = Path(__file__).resolve().parent

# tests/gym/ needs the legacy gym package with numpy<2: CI runs it in its own venv with
# SPECPACK_GYM_TESTS=1 (see .ci/run); the main suite leaves it out.
collect_ignore = [] if os.environ.get("SPECPACK_GYM_TESTS") == "1" else ["gym"]
# tests/backends/test_gym_messages.py needs gym 0.26.2 under numpy 2 (the real np.bool8
# failures): CI runs it in its own venv with SPECPACK_GYM_NUMPY2_TESTS=1; the main venv has no
# gym (the [test] extra leaves it out, so SB3's workers print no gym banner).
if os.environ.get("SPECPACK_GYM_NUMPY2_TESTS") != "1":
    collect_ignore.append("backends/test_gym_messages.py")


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


#: Test files that start Ray (its heads use fixed default ports, e.g. the dashboard agent's):
#: under pytest-xdist (``-n 3 --dist loadgroup``, for a developer's run; CI runs serially) they
#: run in one worker, one at a time.
_RAY_FILES = frozenset({"test_ray.py", "test_ray_cluster.py", "test_need_table.py",
                        "test_docs_blocks.py", "test_no_escape.py"})


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    for item in items:
        if item.path.name in _RAY_FILES:
            item.add_marker(pytest.mark.xdist_group("ray"))
