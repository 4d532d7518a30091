"""Nothing a job starts outlives its worker, not even a *sibling* of the worker: a process
started with ``clone(CLONE_PARENT)`` (then ``setsid``) is a child of the worker's parent, which
a subreaper worker never sees. On Linux that parent is the worker's reaper (specpack's, never
the caller's process), which ends them with the rest: when the worker is closed idle, killed at
a deadline, exits on its own or is killed by its own job, when the reaper is told to stop, when
the caller dies, after ``verify()`` in a script and after the audit; and the signals a job sends
its own process group do not take the reaper away.
"""

from __future__ import annotations

import json
import os
import signal
import textwrap
import time

import cloneparent
import pytest
from _helpers import run_python
from test_worker_protocol import alive, wait_dead

from specpack._core._process.launch import wait_stopped
from specpack._core._process.worker import STOP_GRACE, Worker

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not cloneparent.SUPPORTED,
                       reason="clone(CLONE_PARENT) here needs Linux on x86_64 or aarch64"),
]
EVERY_WHERE = ["subprocess", "spawn", "forkserver", "fork"]  # "bare" hides tests/fixtures
#: Seconds a process that should be gone gets to go (a bound, not a speed expectation).
GONE = 10.0


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])


@pytest.fixture
def piddir(tmp_path):
    """A folder for the siblings' pids; whatever is left of them is killed afterwards (the old
    code left them running, children of this process)."""
    folder = tmp_path / "pids"
    folder.mkdir()
    yield str(folder)
    for pid in cloneparent.recorded(str(folder)):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, os.WNOHANG)
        except OSError:
            pass


def _started(worker: Worker, piddir: str, **params) -> list[int]:
    worker.submit("cloneparent:start_siblings", b"", {"piddir": piddir, "count": 2, **params})
    out = worker.collect(60)
    assert out.status == "ok", out
    pids = cloneparent.recorded(piddir)
    assert sorted(out.value) == sorted(pids) and len(pids) == 2
    return pids


@pytest.mark.parametrize("where", EVERY_WHERE)
def test_siblings_of_an_idle_worker_end_when_it_closes(where, piddir):
    worker = Worker(where)
    pids = _started(worker, piddir)
    assert all(alive(p) for p in pids)
    parents = {_parent(p) for p in pids}
    worker.close()
    assert wait_stopped(STOP_GRACE + 5)
    assert wait_dead(pids, GONE) == [], f"still running after the worker closed: {pids}"
    # a sibling of the worker, not its child: its parent was specpack's reaper (the process
    # the start method started), not this process nor a forkserver
    assert parents == {worker.child.pid}


@pytest.mark.parametrize("where", ["subprocess", "fork"])
def test_siblings_of_a_busy_worker_end_when_it_is_killed_at_its_deadline(where, piddir):
    with Worker(where) as worker:
        worker.submit("cloneparent:start_siblings", b"",
                      {"piddir": piddir, "count": 2, "hang": True})
        for _ in range(3000):  # bounded: the job starts them right away
            if len(cloneparent.recorded(piddir)) == 2:
                break
            time.sleep(0.02)
        pids = cloneparent.recorded(piddir)
        assert len(pids) == 2
        out = worker.collect(0.0)
        assert out.status == "timeout", out
    assert wait_dead(pids, GONE) == [], f"still running after the deadline kill: {pids}"


@pytest.mark.parametrize("where", ["subprocess", "fork"])
def test_siblings_end_when_the_worker_exits_and_its_code_comes_through(where, piddir):
    with Worker(where) as worker:
        worker.submit("cloneparent:start_siblings", b"",
                      {"piddir": piddir, "count": 2, "exit_code": 3})
        out = worker.collect(60)
    assert out.status == "died" and "exited with code 3" in out.error, out
    pids = cloneparent.recorded(piddir)
    assert len(pids) == 2
    assert wait_dead(pids, GONE) == [], f"still running after the worker exited: {pids}"


def test_a_reaper_told_to_stop_ends_the_worker_and_its_siblings_then_itself(piddir):
    worker = Worker("subprocess")
    try:
        pids = _started(worker, piddir)
        os.kill(worker.child.pid, signal.SIGTERM)
        assert worker.child.wait(GONE) == -signal.SIGTERM
        assert wait_dead(pids, GONE) == [], f"still running after SIGTERM: {pids}"
    finally:
        worker.close()


_CALLER_DIES = """
import os, signal, sys
import cloneparent
from specpack._core._process.worker import Worker

worker = Worker("subprocess")
worker.submit("cloneparent:start_siblings", b"", {{"piddir": {piddir!r}, "count": 2}})
assert worker.collect(60).status == "ok"
print(worker.child.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_siblings_end_when_the_caller_dies_without_closing_its_worker(piddir, tmp_path):
    script = tmp_path / "dies.py"
    script.write_text(textwrap.dedent(_CALLER_DIES.format(piddir=piddir)))
    proc = run_python([str(script)], cwd=tmp_path, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    pids = cloneparent.recorded(piddir)
    assert len(pids) == 2
    reaper = int(proc.stdout.split()[0])
    assert wait_dead([reaper, *pids], GONE) == [], f"still running after the caller died: {pids}"


_VERIFY = """
import json, os, time
import cloneparent  # registers CloneParent-v0
import specpack
from specpack._core._process.launch import wait_stopped

os.environ["SPECPACK_TEST_PIDDIR"] = {piddir!r}
report = specpack.verify(specpack.capture("CloneParent-v0"), steps=2)
stopped = wait_stopped(10)
pids = cloneparent.recorded({piddir!r})
mine = []
for _ in range(200):  # bounded: they are ended as verify's workers end
    mine = [p for p in pids if os.path.exists(f"/proc/{{p}}") and
            open(f"/proc/{{p}}/stat").read().rsplit(")", 1)[1].split()[0] not in "ZX"]
    if not mine:
        break
    time.sleep(0.05)
print(json.dumps({{"status": report.status, "stopped": stopped, "pids": pids, "alive": mine}}))
"""


def test_siblings_an_env_starts_do_not_outlive_verify(piddir, tmp_path):
    script = tmp_path / "verify_siblings.py"
    script.write_text(textwrap.dedent(_VERIFY.format(piddir=piddir)))
    proc = run_python([str(script)], cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["status"] == "identical", seen
    # one per reset on each side: the build here, the rebuild, the hash control
    assert len(seen["pids"]) >= 3, seen
    assert seen["stopped"], seen
    assert seen["alive"] == [], f"alive in the verifying process after verify: {seen}"
    assert wait_dead(seen["pids"], GONE) == [], f"alive after the script ended: {seen}"


@pytest.mark.parametrize("where", ["subprocess", "fork"])
def test_signals_a_job_sends_its_own_process_group_do_not_end_the_reaper(where):
    names = ["SIGINT", "SIGUSR1", "SIGUSR2", "SIGALRM"]
    with Worker(where) as worker:
        worker.submit("cloneparent:signal_group", b"", {"names": names})
        out = worker.collect(60)
        assert out.status == "ok" and out.value == names, out
        assert worker.child.poll() is None  # the reaper is still there
        worker.submit("workerjobs:nap", b"", {"seconds": 0.0})
        assert worker.collect(60).status == "ok"


@pytest.mark.parametrize("where", ["subprocess", "fork"])
def test_what_a_worker_killed_by_its_own_job_leaves_is_ended_by_its_reaper(where, piddir):
    # a SIGKILL the env sends its worker: the worker cannot end its tree, the reaper does
    with Worker(where) as worker:
        worker.submit("cloneparent:die_killed", b"", {"piddir": piddir})
        out = worker.collect(60)
    assert out.status == "died" and "SIGKILL" in out.error, out
    pids = cloneparent.recorded(piddir)
    assert len(pids) == 3
    assert wait_dead(pids, GONE) == [], f"still running after the worker was killed: {pids}"


def test_siblings_an_env_starts_do_not_outlive_the_audit(piddir, monkeypatch):
    import specpack

    monkeypatch.setenv("SPECPACK_TEST_PIDDIR", piddir)
    report = specpack.audit("CloneParent-v0", steps=2, jobs=1)
    assert len(report.findings) == 1, report
    pids = cloneparent.recorded(piddir)
    assert len(pids) >= 2, pids
    assert wait_stopped(STOP_GRACE + 5)
    assert wait_dead(pids, GONE) == [], f"still running after the audit: {pids}"
