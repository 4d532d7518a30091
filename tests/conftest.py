"""Shared test plumbing: running scripts in fresh interpreters, and CI's no-skip rule."""

from __future__ import annotations

import os
import signal
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

from specpack._core._blas import BLAS_SPIN  # noqa: E402

# Every interpreter the suite starts (scripts, workers of every start method) inherits the
# setting the harness gives its own fresh interpreters: OpenBLAS's idle threads sleep at once
# instead of spinning for about 0.1 s of a core in each interpreter that imports numpy, with
# three test workers on two cores. Thread counts, and so results, are unchanged.
os.environ.setdefault(*BLAS_SPIN)

# Helper modules of the process tests (vec_envs, ...) import each other by name.
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

TESTS = Path(__file__).resolve().parent

# tests/core/backends/gym/ needs the legacy gym package with numpy<2: CI runs it in its own venv
# with SPECPACK_GYM_TESTS=1 (see .ci/run); the main suite leaves it out.
collect_ignore = [] if os.environ.get("SPECPACK_GYM_TESTS") == "1" else ["core/backends/gym"]
# tests/core/backends/test_gym_messages.py needs gym 0.26.2 under numpy 2 (the real np.bool8
# failures): CI runs it in its own venv with SPECPACK_GYM_NUMPY2_TESTS=1; the main venv has no
# gym (the [test] extra leaves it out, so SB3's workers print no gym banner).
if os.environ.get("SPECPACK_GYM_NUMPY2_TESTS") != "1":
    collect_ignore.append("core/backends/test_gym_messages.py")


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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Any:
    """A test leaves this process's SIGTERM handler as it found it.

    ``ray.init`` in this process (tests/integrations/test_ray.py's fixture) installs
    ``SIGTERM -> sys.exit`` and ``ray.shutdown`` leaves it there. Every later fork child of this
    process (multiprocessing's fork workers, e.g. gymnasium's AsyncVectorEnv under
    ``make_vec(context="fork")``) inherits it; under coverage (``patch = ["_exit"]``,
    ``sigterm = true``) such a child that is SIGTERMed while its ``os._exit`` saves coverage data
    raises SystemExit out of ``os._exit`` (coverage's wrapper suppresses only Exception), so
    multiprocessing returns it into this test session as a second copy, and its parent waits for
    it until pytest-timeout fails the test. That was the "coverage + xdist + fork hang"; it can
    happen serially too, in any process where ``ray.init`` ran.
    """
    before = signal.getsignal(signal.SIGTERM)
    yield
    if signal.getsignal(signal.SIGTERM) is not before and before is not None:
        signal.signal(signal.SIGTERM, before)


#: Test files that start Ray (its heads use fixed default ports, e.g. the dashboard agent's):
#: under pytest-xdist (``-n 3 --dist loadgroup``, the README's command) they run in one
#: worker, one at a time.
_RAY_FILES = frozenset({"test_ray.py", "test_ray_cluster.py", "test_docs_blocks.py"})
#: Files where only the tests whose name says Ray start it (the need table's "Ray" rows, the
#: fork-pool test after Ray): only those join the group, the others (SB3 rows with torch in
#: their workers, 25-35 s each) run in whichever worker is free.
_RAY_NAMED = frozenset({"test_need_table.py", "test_no_escape.py"})


# tryfirst: pytest-xdist's own hook reads the xdist_group marks (into the node ids) as it runs;
# a mark added after it does not group anything.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    for item in items:
        if item.path.name in _RAY_FILES or (
                item.path.name in _RAY_NAMED and "ray" in item.name.lower()):
            item.add_marker(pytest.mark.xdist_group("ray"))
