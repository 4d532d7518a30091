"""A subprocess a test starts through the helpers explains its own hang: past its timeout the
helper fails with the stacks of every process of its tree (spawn, forkserver and fork workers,
a process in a new session) and the tail of its stderr, and leaves none of them running."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from _helpers import ProcessHang, run_python

pytestmark = pytest.mark.integration

TREE = textwrap.dedent("""
    import multiprocessing as mp, os, subprocess, sys, time

    def spawn_sleeper(ready):
        open(ready, "w").close()
        time.sleep(600)

    def forkserver_sleeper(ready):
        open(ready, "w").close()
        time.sleep(600)

    def fork_sleeper(ready):
        open(ready, "w").close()
        time.sleep(600)

    if __name__ == "__main__":
        procs = [mp.get_context(m).Process(target=f, args=(f"{m}.ready",))
                 for m, f in [("spawn", spawn_sleeper), ("forkserver", forkserver_sleeper),
                              ("fork", fork_sleeper)]]
        for p in procs:
            p.start()
        loner = subprocess.Popen(
            [sys.executable, "-c", "import time\\ndef loner():\\n    time.sleep(600)\\nloner()"],
            start_new_session=True)
        print("loner", loner.pid, flush=True)
        while not all(os.path.exists(f"{m}.ready") for m in ("spawn", "forkserver", "fork")):
            time.sleep(0.05)
        print("all started", file=sys.stderr, flush=True)
        for p in procs:
            p.join()  # the hang: they never end
""")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_a_child_sleeping_past_its_timeout_fails_with_its_stack_and_stderr(tmp_path: Path):
    code = "import sys, time\nprint('about to wait', file=sys.stderr, flush=True)\n" \
           "def wait_forever():\n    time.sleep(600)\nwait_forever()\n"
    with pytest.raises(ProcessHang) as caught:
        run_python(["-c", code], cwd=tmp_path, timeout=4)
    message = str(caught.value)
    assert "did not end within 4 s" in message
    assert 'File "<string>", line 4 in wait_forever' in message, message
    assert "about to wait" in message.split("stderr (last")[1], message


def test_a_hang_below_spawn_forkserver_and_fork_workers_shows_every_stack_and_kills_all(
        tmp_path: Path):
    script = tmp_path / "tree.py"
    script.write_text(TREE)
    with pytest.raises(ProcessHang) as caught:
        run_python([str(script)], cwd=tmp_path, timeout=20)
    message = str(caught.value)
    assert "all started" in message, message
    for where in ("spawn", "forkserver", "fork"):
        assert re.search(rf'File ".*tree.py", line \d+ in {where}_sleeper', message), message
    assert 'File "<string>", line 3 in loner' in message, message  # left the session
    assert re.search(r'File ".*tree.py", line \d+ in <module>', message)  # the parent's join
    pids = [int(p) for p in re.findall(r"^--- pid (\d+) ", message, re.M)]
    assert len(pids) >= 5, message  # parent, 3 workers, forkserver, loner, resource tracker
    assert not [pid for pid in pids if _alive(pid)], message


def test_a_fork_of_a_watched_process_exits_normally(tmp_path: Path):
    # faulthandler.dump_traceback_later's watchdog would make this fork hang at its exit.
    code = ("import os, sys\npid = os.fork()\nif pid == 0:\n    sys.exit(3)\n"
            "print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n")
    proc = run_python(["-c", code], cwd=tmp_path, timeout=30)
    assert (proc.returncode, proc.stdout.strip()) == (0, "3"), proc.stderr

