"""The one worker protocol, with real child processes: answers as typed JSON on their own
channel, output captured from fds 1 and 2, deaths and deadlines reported, nothing left running,
and nothing a child writes ever unpickled here."""

from __future__ import annotations

import os
import textwrap
import threading
import time
from multiprocessing.connection import wait
from pathlib import Path

import numpy as np
import pytest
from _helpers import ROOT, run_python

from specpack import SpecPackError
from specpack._core._process.launch import wait_stopped
from specpack._core._process.thread import ThreadWorker
from specpack._core._process.worker import STOP_GRACE, Worker, run_one

pytestmark = pytest.mark.integration
EVERY_WHERE = ["subprocess", "spawn", "forkserver", "fork"]


def _deadline(seconds: float = 60.0) -> float:
    return time.monotonic() + seconds


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])


def wait_dead(pids: list[int], seconds: float = 60.0) -> list[int]:
    """The pids still running after up to ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.mark.parametrize("where", EVERY_WHERE)
def test_job_value_comes_back_typed_and_fd_1_and_2_are_captured(where):
    out = run_one(where, "workerjobs:echo", b"x" * 100_000, {"k": (1, 2.5)},
                  deadline=_deadline())
    assert out.status == "ok", out
    v = out.value
    assert v["size"] == 100_000 and v["params"] == {"k": (1, 2.5)}
    assert v["array"].dtype == np.int16 and v["array"].tolist() == [0, 1, 2]
    assert [type(x) for x in v["tuple"]] == [int, float, bool, float]
    assert str(v["tuple"][3]) == "-0.0"
    assert "echo: print" in out.stdout and "echo: fd 1" in out.stdout
    assert out.stderr == "echo: fd 2\n"
    assert v["pid"] != os.getpid()


def test_a_fresh_interpreter_s_jobs_run_with_the_gc_on_and_their_cycles_collected():
    # what the boot imported is frozen (never walked again); what a job makes is collected
    out = run_one("subprocess", "workerjobs:gc_state", b"", {}, deadline=_deadline())
    assert out.status == "ok", out
    assert out.value["enabled"] is True and out.value["freed"] == 1
    assert out.value["frozen"] > 10_000


_SEEN = (b"(__import__('os').getpid(), __import__('gc').isenabled(), "
         b"__import__('gc').get_freeze_count())")


@pytest.mark.parametrize("where", ["subprocess", "bare"])
def test_a_fresh_interpreter_s_reaper_is_the_started_process_and_the_worker_its_child(where):
    with Worker(where) as worker:
        worker.submit("builtins:eval", _SEEN, {})
        out = worker.collect(60)
        assert out.status == "ok", out
        pid, enabled, frozen = out.value
        assert _parent(pid) == worker.child.pid != pid
        assert enabled and frozen > 10_000


@pytest.mark.parametrize("where", ["subprocess", "fork"])
def test_job_that_raises_is_an_error_with_the_child_traceback(where):
    out = run_one(where, "workerjobs:boom", b"", {}, deadline=_deadline())
    assert out.status == "error"
    assert out.error == "ValueError: boom: the job failed"
    assert "Traceback" in out.detail and "workerjobs.py" in out.detail


@pytest.mark.parametrize("where", ["subprocess", "fork"])
def test_hanging_job_times_out_at_the_deadline_and_its_forked_grandchild_dies(where, tmp_path):
    pidfile = tmp_path / "pids"
    start = time.monotonic()
    out = run_one(where, "workerjobs:hang", b"", {"pidfile": str(pidfile), "fork": True},
                  deadline=time.monotonic() + 3.0)
    took = time.monotonic() - start
    assert out.status == "timeout" and "did not finish" in out.error
    assert took > 2.5, took  # not before the deadline (the job hangs for ever: it ended it)
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2
    assert wait_dead(pids) == []


@pytest.mark.parametrize("where", EVERY_WHERE)
def test_closing_an_idle_worker_lets_the_child_exit_by_itself(where, tmp_path):
    """An idle child is asked to stop and exits 0 (coverage of subprocesses saves its data on
    the way out), instead of being SIGKILLed. A fresh interpreter (subprocess, spawn) also runs
    its ``atexit`` hooks; fork and forkserver children end in ``os._exit``, as
    multiprocessing's do."""
    mark = tmp_path / "exited"
    worker = Worker(where)
    worker.submit("workerjobs:exit_hook", b"", {"path": str(mark)})
    out = worker.collect(timeout=60)
    assert out.status == "ok", out
    waits = []  # close does not wait for it: the reaper thread does
    wait = worker.child.wait
    worker.child.wait = lambda *a, **k: waits.append(threading.get_ident()) or wait(*a, **k)
    worker.close()
    assert threading.get_ident() not in waits
    assert wait_stopped(60.0)
    assert worker.child is not None and worker.child.poll() == 0
    if where in ("subprocess", "spawn"):
        assert mark.read_text() == str(out.value)


def test_an_idle_child_that_will_not_exit_is_killed_after_the_grace_with_its_group(tmp_path):
    """A child whose exit hangs (a non-daemon thread, say) and a grandchild it forked are both
    gone once the grace has passed."""
    pidfile = tmp_path / "pids"
    worker = Worker("subprocess")
    worker.submit("workerjobs:linger", b"", {"pidfile": str(pidfile)})
    assert worker.collect(timeout=60).status == "ok"
    worker.close()
    assert wait_stopped(STOP_GRACE + 60.0)  # returns once they are gone
    assert worker.child is not None and worker.child.poll() == -9
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2 and wait_dead(pids) == []


def test_a_fork_of_the_parent_closing_its_copy_of_a_worker_leaves_the_child_alone():
    """A fork of this process (an env that forks, a user's os.fork) holds copies of our
    workers; closing them there (at its exit or by gc) must not stop or kill our children."""
    worker = Worker("subprocess")
    worker.submit("workerjobs:echo", b"x", {})
    assert worker.collect(timeout=60).status == "ok"
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            worker.close()
        except BaseException:  # noqa: BLE001
            code = 1
        os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    # a stop message, had the fork sent one, would come before this task: the child would end
    worker.submit("workerjobs:echo", b"y", {})
    out = worker.collect(timeout=60)
    assert out.status == "ok", out
    worker.close()


def test_closing_a_busy_worker_kills_it_at_once():
    worker = Worker("fork")
    worker.submit("workerjobs:nap", b"", {"seconds": 60})
    calls = []  # no grace for a child that is running a task: killed before any wait
    for name in ("kill", "wait"):
        method = getattr(worker.child, name)
        setattr(worker.child, name,
                lambda *a, _m=method, _n=name, **k: calls.append(_n) or _m(*a, **k))
    worker.close()
    assert calls[:1] == ["kill"], calls
    assert worker.child is not None and worker.child.poll() == -9


@pytest.mark.parametrize("where", ["subprocess", "spawn", "fork"])
def test_child_that_exits_or_segfaults_is_died_with_code_or_signal(where):
    out = run_one(where, "workerjobs:exit_with", b"", {"code": 7}, deadline=_deadline())
    assert out.status == "died" and "exited with code 7" in out.error
    out = run_one(where, "workerjobs:segfault", b"", {}, deadline=_deadline())
    assert out.status == "died" and "SIGSEGV" in out.error
    assert "Segmentation fault" in out.detail  # faulthandler's report from the stderr tail


def test_a_fork_child_reports_a_segfault_after_a_library_replaced_the_parents_handler():
    """Ray's core, loaded in the parent, replaces the SIGSEGV handler faulthandler installed;
    faulthandler.enable() on an enabled handler kept the replacement, so a fork child died of
    SIGSEGV without a word (a CI run: test_ray.py before this file). SIG_DFL stands in here."""
    import faulthandler
    import signal

    faulthandler.enable()
    signal.signal(signal.SIGSEGV, signal.SIG_DFL)  # what a native library's install does to it
    try:
        out = run_one("fork", "workerjobs:segfault", b"", {}, deadline=_deadline())
    finally:
        faulthandler.disable()
        faulthandler.enable()  # this process's handler back
    assert out.status == "died" and "SIGSEGV" in out.error
    assert "Segmentation fault" in out.detail


def test_value_typed_json_cannot_carry_is_an_error_not_a_pickle():
    out = run_one("subprocess", "workerjobs:unsendable", b"", {}, deadline=_deadline())
    assert out.status == "error" and "typed JSON" in out.error


def test_forged_frames_and_pickles_on_stdout_change_nothing_here(tmp_path):
    marker = tmp_path / "unpickled"
    out = run_one("subprocess", "workerjobs:forge", b"", {"marker": str(marker)},
                  deadline=_deadline())
    assert out.status == "ok" and out.value == "real"
    assert b"unpickled" in out.stdout.encode()  # the pickle did reach stdout...
    assert not marker.exists()  # ...and nothing here loaded it


def test_one_worker_runs_tasks_in_turn_and_workers_are_waitable_together():
    with Worker("subprocess") as a, Worker("fork") as b:
        a.submit("workerjobs:nap", b"", {"seconds": 0.3})
        b.submit("workerjobs:nap", b"", {"seconds": 0.0})
        with pytest.raises(SpecPackError, match="still running"):
            b.submit("workerjobs:nap", b"", {"seconds": 0.0})
        ready = wait([a.waitable, b.waitable], 30)
        assert ready  # together: whichever answers first (b's start may be slower under load)
        if b.waitable not in ready:
            assert b.waitable in wait([b.waitable], 30)
        assert b.poll_outcome(0).value == 0.0
        assert a.collect(30).value == 0.3
        pid, served = a.child.pid, set()
        for i in range(3):
            a.submit("workerjobs:echo", bytes(i), {"i": i})
            out = a.collect(30)
            assert out.value["params"] == {"i": i}
            served.add(out.value["pid"])
            assert out.stdout.count("echo: print") == 1  # each task its own capture
        # one process serves every task: the child itself, or (Linux) the child's fork, below
        # the child as its reaper
        assert len(served) == 1
        assert served == {pid} or _parent(*served) == pid
    assert wait_dead([pid, *served]) == []
    with pytest.raises(SpecPackError, match="closed"):
        a.submit("workerjobs:nap", b"", {"seconds": 0})


def test_params_that_are_not_typed_json_are_refused_here():
    with Worker("fork") as w, pytest.raises(SpecPackError, match="params"):
        w.submit("workerjobs:nap", b"", {"seconds": object()})


def test_output_is_bounded_with_a_cut_mark():
    out = run_one("fork", "workerjobs:chatty", b"", {"size": 1_000_000}, deadline=_deadline())
    assert out.value == 1_000_000
    assert len(out.stdout) < 70_000 and "bytes cut" in out.stdout


def test_interpreter_dying_at_start_up_with_a_large_payload_is_died_not_an_exception(
        tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos._exit(3)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ["PYTHONPATH"]]))
    out = run_one("subprocess", "workerjobs:echo", os.urandom(1 << 20), {},
                  deadline=_deadline())
    assert out.status == "died" and "exited with code 3" in out.error
    assert "before it could take the task" in out.detail


def test_relative_pythonpath_entries_are_made_absolute_for_the_fresh_interpreter(
        tmp_path, monkeypatch):
    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "relmod_worker.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["rel", os.environ["PYTHONPATH"]]))
    out = run_one("subprocess", "workerjobs:environment", b"", {"names": ["relmod_worker"]},
                  deadline=_deadline())
    assert out.status == "ok", out.detail
    assert out.value["PYTHONPATH"].split(os.pathsep)[0] == str(tmp_path / "rel")
    assert out.value["modules"]["relmod_worker"] == str(tmp_path / "rel" / "relmod_worker.py")
    assert Path(out.value["cwd"]) != tmp_path  # a temporary working directory


@pytest.mark.parametrize("given", [None, "30"])
def test_a_fresh_interpreter_s_idle_blas_threads_sleep_at_once_unless_the_user_says(
        given, monkeypatch):
    # verify's rebuild and its hash control start side by side: OpenBLAS's idle threads would
    # otherwise spin for about 0.1 s of a core in each (the thread count is not touched)
    if given is None:
        monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", given)
    out = run_one("subprocess", "workerjobs:environment", b"", {"names": []},
                  deadline=_deadline())
    assert out.status == "ok", out.detail
    assert out.value["OPENBLAS_THREAD_TIMEOUT"] == (given or "4")
    assert os.environ.get("OPENBLAS_THREAD_TIMEOUT") == given  # this process's is untouched


@pytest.mark.parametrize("where", ["spawn", "forkserver"])
def test_script_without_main_guard_gets_the_main_guard_hint(where, tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent(f"""
        import time
        from specpack._core._process.worker import run_one
        out = run_one({where!r}, "workerjobs:nap", b"", {{"seconds": 0}},
                      deadline=time.monotonic() + 60)
        print("STATUS", out.status)
        print(out.detail)
    """))
    proc = run_python([str(script)], cwd=tmp_path, env={"PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ["PYTHONPATH"]])})
    assert "STATUS died" in proc.stdout, proc.stdout + proc.stderr
    assert 'if __name__ == "__main__":' in proc.stdout


def test_thread_worker_answers_like_a_child_and_abandons_on_timeout():
    with ThreadWorker() as w:
        w.submit("workerjobs:echo", b"abc", {"k": 1})
        out = w.collect(30)
        assert out.status == "ok" and out.value["size"] == 3
        assert not out.value["array"].flags.writeable  # the same typed-JSON round trip
        w.submit("workerjobs:nap", b"", {"seconds": 2.0})
        out = w.collect(0.2)
        assert out.status == "timeout"  # at its 0.2 s, not when the 2 s nap ends ("ok")


def test_unknown_where_is_refused():
    with pytest.raises(SpecPackError, match="where="):
        Worker("thread")  # type: ignore[arg-type]
