"""Nothing a job starts outlives its worker: processes in a new session
(``start_new_session=True``) and double-forked daemons die with the worker, whether it ends by
itself (closed while idle), is killed at a deadline, or verify closes it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from test_worker_protocol import alive, wait_dead

import specpack
from specpack._core._process import tree
from specpack._core._process.launch import wait_stopped
from specpack._core._process.worker import STOP_GRACE, Worker

pytestmark = pytest.mark.integration
EVERY_WHERE = ["subprocess", "spawn", "forkserver", "fork"]


def _pids(path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


@pytest.mark.parametrize("where", EVERY_WHERE)
def test_new_sessions_and_double_forked_daemons_die_when_an_idle_worker_closes(where, tmp_path):
    pidfile = tmp_path / "pids"
    worker = Worker(where)
    worker.submit("hostilejobs:start_daemons", b"", {"pidfile": str(pidfile)})
    out = worker.collect(60)
    assert out.status == "ok", out
    pids = _pids(pidfile)
    assert out.value == pids and all(alive(p) for p in pids)
    worker.close()
    assert wait_stopped(STOP_GRACE + 5)
    assert wait_dead(pids, 2.0) == [], f"still running after the worker closed: {pids}"


@pytest.mark.parametrize("where", EVERY_WHERE)
def test_a_busy_worker_killed_at_its_deadline_takes_new_sessions_and_daemons_with_it(
        where, tmp_path):
    pidfile = tmp_path / "pids"
    with Worker(where) as worker:
        worker.submit("hostilejobs:start_daemons", b"", {"pidfile": str(pidfile), "hang": True})
        end = time.monotonic() + 60
        while not pidfile.exists() or len(pidfile.read_text().split()) < 2:
            assert time.monotonic() < end
            time.sleep(0.02)
        out = worker.collect(0.0)
        assert out.status == "timeout", out
        pids = _pids(pidfile)
        assert wait_dead(pids, 1.0) == [], f"still running after the deadline kill: {pids}"


@pytest.mark.parametrize("where", EVERY_WHERE)
def test_a_job_that_calls_os_exit_takes_its_new_sessions_and_daemons_with_it(where, tmp_path):
    pidfile = tmp_path / "pids"
    with Worker(where) as worker:
        worker.submit("hostilejobs:start_daemons", b"", {"pidfile": str(pidfile),
                                                         "exit_code": 3})
        out = worker.collect(60)
    assert out.status == "died" and "exited with code 3" in out.error, out
    pids = _pids(pidfile)
    assert wait_dead(pids, 1.0) == [], f"still running after the worker exited: {pids}"


def test_processes_an_env_starts_in_new_sessions_do_not_outlive_verify(tmp_path, monkeypatch):
    import forgingenvs  # noqa: F401 - registers Spawner-v0

    monkeypatch.setenv("SPECPACK_TEST_PIDDIR", str(tmp_path))
    report = specpack.verify(specpack.capture("Spawner-v0"), steps=2)
    assert report.status == "identical", report
    pids = [p for f in tmp_path.glob("*.pids") for p in _pids(f)]
    # a sleeper and a daemon per reset, on both sides
    assert len(pids) >= 4, pids
    assert wait_stopped(STOP_GRACE + 5)
    assert wait_dead(pids, 2.0) == [], f"still running after verify: {pids}"


def test_processes_an_env_starts_in_new_sessions_do_not_outlive_the_audit(tmp_path, monkeypatch):
    import forgingenvs  # noqa: F401 - registers Spawner-v0

    monkeypatch.setenv("SPECPACK_TEST_PIDDIR", str(tmp_path))
    report = specpack.audit("Spawner-v0", steps=2, jobs=1)
    assert len(report.findings) == 1, report
    pids = [p for f in tmp_path.glob("*.pids") for p in _pids(f)]
    assert len(pids) >= 4, pids
    assert wait_stopped(STOP_GRACE + 5)
    assert wait_dead(pids, 2.0) == [], f"still running after the audit: {pids}"


def test_one_reaper_thread_ends_every_worker_asked_to_stop():
    """Closing idle workers leaves them to this process's one reaper thread (no thread per
    close); wait_stopped returns once every one of them is gone, and a fork child, whose
    parent's workers they are, has none to wait for."""
    workers = [Worker("fork") for _ in range(3)]
    pids = [w.child.pid for w in workers if w.child is not None]
    for w in workers:
        w.close()
    reapers = [t for t in threading.enumerate() if t.name == "specpack-reaper"]
    assert len(reapers) == 1
    pid = os.fork()
    if pid == 0:  # the fork child: nothing of its own to wait for
        os._exit(0 if wait_stopped(0.0) else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert wait_stopped(STOP_GRACE + 5.0)
    assert not any(alive(p) for p in pids)


_TREE = r"""
import os, subprocess, sys, threading, time
# a child started from another thread (the kernel files it under that thread), one in a new
# session, and a grandchild below it; then the thread ends and the first child is a zombie
kids = []
def start():
    kids.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
t = threading.Thread(target=start); t.start(); t.join()
deep = subprocess.Popen([sys.executable, "-c",
    "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
    "'import time; time.sleep(60)']); time.sleep(60)"], start_new_session=True)
gone = os.fork()
if gone == 0:
    os._exit(0)
print(kids[0].pid, deep.pid, gone, flush=True)
time.sleep(60)
"""


def test_descendants_from_the_thread_children_files_match_a_scan_of_every_process():
    """The tree below a worker, read from each thread's ``children`` file, is the one a scan
    of every ``/proc/*/stat`` finds (the way kept for kernels without those files)."""
    proc = subprocess.Popen([sys.executable, "-c", _TREE], stdout=subprocess.PIPE, text=True)
    try:
        threaded, deep, zombie = map(int, proc.stdout.readline().split())
        end = time.monotonic() + 30
        # the grandchild is on its way, the forked child on its way out
        while (len(scan := tree._descendants_by_scan(proc.pid)) != 3 or zombie in scan):
            assert time.monotonic() < end
            time.sleep(0.02)
        assert tree._children_files()
        found = tree.descendants(proc.pid)
        assert found == tree._descendants_by_scan(proc.pid)
        assert {threaded, deep} < found and zombie not in found and len(found) == 3
    finally:
        tree.kill_tree(proc.pid)
        proc.wait()
