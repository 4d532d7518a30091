"""No process specpack starts ever returns into the caller's code.

A fork child runs on its parent's stack: if its way out raises, it goes on running the caller's
program as a second copy. Each script here writes a marker after its verify calls and must write
it exactly once, from its own process, and end; it runs in a fresh interpreter under a timeout.
"""

from __future__ import annotations

import signal
import tempfile
import textwrap
import time

import pytest
from _helpers import run_python

from specpack._core._process.worker import run_one

pytestmark = pytest.mark.integration

_VERIFY_IN = """
import multiprocessing as mp
import os
import sys

import specpack


def verify_in(where):
    return specpack.verify(specpack.capture("CartPole-v1"), steps=3, where=where).status


def marker(me, result):
    # to a file: an escaped fork child's fds 1 and 2 may point elsewhere
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "markers"), "a") as fh:
        print("MARKER", "main" if os.getpid() == me else "escaped", result, file=fh)
"""

# coverage's patch = ["_exit"] replaces os._exit with a wrapper that saves its data first and
# lets anything but Exception through; here that save fails (KeyboardInterrupt) whenever a
# process ends from specpack's code.
_FAILING_EXIT = _VERIFY_IN + """
real_exit = os._exit


def exit_after_a_failing_save(code):
    if sys._getframe(1).f_globals.get("__name__", "").startswith("specpack"):
        raise KeyboardInterrupt("saving coverage data was interrupted")
    real_exit(code)


os._exit = exit_after_a_failing_save

if __name__ == "__main__":
    me = os.getpid()
    try:
        result = verify_in("subprocess")
    except BaseException as e:  # a user's catch-all around a call
        result = f"raised {type(e).__name__}"
    marker(me, result)
"""

# What a Python signal handler that raises (Ray leaves SIGTERM -> sys.exit) does when its signal
# lands as the child starts (a SIGTERM to the whole process group as it forks), or what a
# wrapper of os.fork that fails in the child does: the child raises before its first line.
_RAISING_AT_FORK = _VERIFY_IN + """
real_fork = os.fork


def fork_then_raise_in_the_child():
    pid = real_fork()
    if pid == 0:
        sys.exit(15)
    return pid


os.fork = fork_then_raise_in_the_child

if __name__ == "__main__":
    me = os.getpid()
    try:
        result = verify_in("subprocess")
    except BaseException as e:  # a user's catch-all around a call
        result = f"raised {type(e).__name__}"
    marker(me, "done")
"""


def _markers(script: str, tmp_path, timeout: float = 240) -> list[str]:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    proc = run_python([str(path)], cwd=tmp_path, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    time.sleep(2.0)  # an escaped child may still be on its way
    markers = tmp_path / "markers"
    return markers.read_text().splitlines() if markers.exists() else []


def test_a_fork_child_whose_os_exit_raises_still_ends_and_never_runs_the_callers_code(tmp_path):
    assert _markers(_FAILING_EXIT, tmp_path) == ["MARKER main identical"]


def test_a_fork_child_that_raises_as_it_starts_never_runs_the_callers_code(tmp_path):
    assert _markers(_RAISING_AT_FORK, tmp_path) == ["MARKER main done"]


def test_verify_from_a_fork_pool_worker_after_ray_and_a_forkserver_were_used(tmp_path):
    # Ray's driver leaves SIGTERM -> sys.exit behind after shutdown; the forkserver is started
    # and used; then a fork Pool worker (a daemonic process) runs verify. The pool is closed and
    # joined, not terminated: Pool.terminate() SIGTERMs its workers, and Ray's handler raising
    # SystemExit out of a worker's own exit (coverage's os._exit wrapper) makes *multiprocessing*
    # return that worker into this script (how a CI run once ran its test session twice).
    root = tempfile.mkdtemp(prefix="spray-")  # Ray's sockets need a short path
    script = _VERIFY_IN + f"""
import ray

if __name__ == "__main__":
    me = os.getpid()
    os.environ.update(HOME={root!r}, RAY_TMPDIR={root!r}, RAY_USAGE_STATS_ENABLED="0")
    ray.init(num_cpus=1, include_dashboard=False, _temp_dir={root!r}, log_to_driver=False,
             configure_logging=False)
    assert ray.get(ray.remote(lambda: 7).remote()) == 7
    ray.shutdown()
    with mp.get_context("forkserver").Pool(1) as pool:
        assert pool.map(abs, [-2]) == [2]
    pool = mp.get_context("fork").Pool(1)
    try:
        result = pool.map(verify_in, ["subprocess", "subprocess"])
    finally:
        pool.close()
        pool.join()
    marker(me, result)
"""
    assert _markers(script, tmp_path, timeout=280) == [
        "MARKER main ['identical', 'identical']"]


def test_a_fork_child_does_not_inherit_the_callers_python_signal_handlers():
    def ray_like(signum, frame):
        raise SystemExit(signum)

    old = signal.signal(signal.SIGTERM, ray_like)
    try:
        out = run_one("fork", "hostilejobs:handlers", b"", {}, deadline=time.monotonic() + 60)
    finally:
        signal.signal(signal.SIGTERM, old)
    assert out.status == "ok", out
    # Not the caller's handler. Under coverage (CI: patch = fork, sigterm = true) the worker,
    # a fork below its reaper, gets coverage's own SIGTERM handler from coverage's at-fork hook.
    assert out.value in ("SIG_DFL", "_on_sigterm"), out.value
