"""verify() against envs that raise, print, hang, fork, segfault, attack the parent, or are not
reproducible even in one process: each gives a clear verdict, within its deadline, leaving no
process behind."""

from __future__ import annotations

import os
import pickle
import textwrap
import time

import pytest
import verifyenvs
from _helpers import ROOT, run_python

import specpack
from specpack._tools._verify import engine

pytestmark = pytest.mark.integration


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def still_running(pids: list[int], seconds: float = 60.0) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def test_rollout_raising_at_step_5_is_a_rollout_error_naming_it_on_both_sides():
    report = specpack.verify(specpack.capture(verifyenvs.CrashesAtStep5), steps=10)
    assert not report and report.status == "rollout_error"
    line = report.differences[0]
    assert "ZeroDivisionError" in line and "step 5" in line and "step()" in line
    assert "the same on both sides" in line
    with pytest.raises(specpack.NotIdenticalError, match="ZeroDivisionError"):
        specpack.verify(specpack.capture(verifyenvs.CrashesAtStep5), steps=10, check=True)


def test_printing_env_is_identical_and_the_report_holds_what_it_printed(capfd):
    report = specpack.verify(specpack.capture(verifyenvs.Prints), steps=3)
    assert report, str(report)
    assert "Prints: constructed" in report.stdout
    assert "Prints: step 3" in report.stdout
    assert report.stdout.count("Prints: raw fd write") == 3
    assert "Prints: raw fd 2 write" in report.stderr
    # the build here printed here, as if it had run in this process (three builds: the
    # action plan, the rollout and its repeat)
    out, err = capfd.readouterr()
    assert out.count("Prints: constructed") == 3 and out.count("Prints: raw fd write") == 6
    assert err.count("Prints: raw fd 2 write") == 6


@pytest.mark.parametrize("where", ["subprocess", "spawn"])
def test_hanging_env_that_forks_times_out_at_the_deadline_leaving_no_process(where, tmp_path):
    pidfile = tmp_path / "pids"
    pack = specpack.capture(verifyenvs.Hangs, pidfile=str(pidfile), fork=True)
    start = time.monotonic()
    report = specpack.verify(pack, steps=10, timeout=8, where=where)
    took = time.monotonic() - start
    assert not report and report.status == "timeout", str(report)
    assert took > 7.5, took  # not before the deadline (the env hangs for ever: it ended it)
    assert any("did not finish within 8 s" in d for d in report.differences)
    pids = sorted({int(p) for p in pidfile.read_text().split()})
    # the rebuild, the build here, and the grandchild each of them forked; a fresh-interpreter
    # rebuild also has its hash control (a second fresh interpreter) with its grandchild
    assert len(pids) == (6 if where == "subprocess" else 4), pids
    assert os.getpid() not in pids
    assert still_running(pids) == []


def test_env_hanging_in_its_constructor_is_a_timeout_within_the_one_deadline(tmp_path):
    pidfile = tmp_path / "pids"
    pack = specpack.capture(verifyenvs.Hangs, pidfile=str(pidfile), in_init=True)
    start = time.monotonic()
    report = specpack.verify(pack, steps=5, timeout=3)
    assert report.status == "timeout" and time.monotonic() - start > 2.5  # not before it
    assert "the build here (planning the actions) did not finish" in report.differences[0]
    assert still_running([int(p) for p in pidfile.read_text().split()]) == []


def test_segfaulting_env_is_a_rebuild_error_naming_the_signal():
    report = specpack.verify(specpack.capture(verifyenvs.Segfaults), steps=5)
    assert not report and report.status == "rebuild_error"
    assert "SIGSEGV" in report.differences[0]
    assert "rebuild failed in the fresh interpreter" in report.differences[0]


def test_pickle_written_to_stdout_runs_no_code_in_the_parent(tmp_path):
    marker = tmp_path / "parent-unpickled-it"
    pack = specpack.capture(verifyenvs.PicklesToStdout, marker=str(marker))
    report = specpack.verify(pack, steps=3)
    assert report, str(report)
    assert not marker.exists()
    # the payload is live: loading it is what would have created the marker
    probe = tmp_path / "probe"
    pickle.loads(pickle.dumps(verifyenvs.Evil(str(probe))))
    assert probe.exists()


def test_fresh_interpreter_dying_at_start_up_with_a_large_pack_gives_a_falsy_report(
        tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos._exit(3)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ["PYTHONPATH"]]))
    pack = specpack.capture(verifyenvs.Sized, blob=os.urandom(200_000))
    assert len(pickle.dumps(pack)) > 64 * 1024
    report = specpack.verify(pack, steps=3)
    assert not report and report.status == "rebuild_error"
    assert "exited with code 3" in report.differences[0]


def test_relative_pythonpath_entry_reaches_the_fresh_interpreter(tmp_path, monkeypatch):
    from specpack._core._carry import importable

    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "relpath_env.py").write_text(textwrap.dedent("""
        import gymnasium as gym
        import numpy as np

        class RelEnv(gym.Env):
            observation_space = gym.spaces.Box(-1, 1, (2,), np.float64)
            action_space = gym.spaces.Discrete(2)

            def reset(self, seed=None, options=None):
                super().reset(seed=seed)
                return self.np_random.uniform(-1, 1, 2), {}

            def step(self, action):
                return self.np_random.uniform(-1, 1, 2), float(action), False, False, {}
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["mods", os.environ["PYTHONPATH"]]))
    monkeypatch.syspath_prepend(str(mods))
    importable._installation_paths.cache_clear()
    importable._fresh_importable_cached.cache_clear()
    try:
        import relpath_env

        pack = specpack.capture(relpath_env.RelEnv)
        assert not pack.entry_point.by_value  # by reference: the child must import it
        report = specpack.verify(pack, steps=5)
    finally:
        importable._installation_paths.cache_clear()
        importable._fresh_importable_cached.cache_clear()
    assert report, str(report)


def test_spawn_from_a_script_without_main_guard_says_to_add_one(tmp_path):
    script = tmp_path / "no_guard.py"
    script.write_text(textwrap.dedent("""
        import specpack
        import verifyenvs

        report = specpack.verify(specpack.capture(verifyenvs.Prints), steps=2, where="spawn", timeout=60)
        print("VERDICT", report.status)
        print(report)
    """))
    proc = run_python([str(script)], cwd=tmp_path, env={"PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ["PYTHONPATH"]])})
    assert "VERDICT rebuild_error" in proc.stdout, proc.stdout + proc.stderr
    assert 'if __name__ == "__main__":' in proc.stdout


def test_env_replacing_its_action_space_with_an_equal_one_on_reset_is_identical():
    report = specpack.verify(specpack.capture(verifyenvs.ReplacesActionSpace), steps=10)
    assert report, str(report)


def test_action_space_that_changes_on_reset_is_a_finding():
    report = specpack.verify(specpack.capture(verifyenvs.ChangesActionSpace), steps=5)
    assert not report and report.status == "not_identical"
    assert "not the one the actions were planned from" in report.differences[0]
    assert "at n:" in report.differences[0]


def test_env_not_reproducible_in_one_process_is_not_reproducible_naming_the_step():
    report = specpack.verify(specpack.capture(verifyenvs.Counted), steps=10)
    assert not report and report.status == "not_reproducible"
    assert "step 3: observation differs" in report.differences[0]


def test_actions_typed_json_cannot_carry_are_planned_on_each_side_and_noted():
    report = specpack.verify(specpack.capture(verifyenvs.GraphActions), steps=5)
    assert report, str(report)
    assert any("each side planned its own actions" in n for n in report.notes)


def test_local_side_in_a_thread_where_fork_is_unavailable(monkeypatch):
    monkeypatch.setattr(engine, "fork_available", lambda: False)
    report = specpack.verify(specpack.capture("CartPole-v1"), steps=20)
    assert report, str(report)
    assert any("thread" in n for n in report.notes)
    report = specpack.verify(specpack.capture(verifyenvs.Counted), steps=5)
    assert report.status == "not_reproducible"


def test_report_renders_and_serialises():
    report = specpack.verify(specpack.capture(verifyenvs.CrashesAtStep5), steps=6)
    text = str(report)
    assert text.startswith("verify (fresh interpreter, 6 steps, seed 0")
    assert "rollout error" in text and "ZeroDivisionError" in text
    data = report.to_dict()
    assert data["status"] == "rollout_error" and data["identical"] is False
    import json

    assert json.loads(json.dumps(data)) == data


def test_bad_timeout_and_seed_are_refused():
    pack = specpack.capture("CartPole-v1")
    for bad in (0, -1, float("nan"), float("inf"), True, "10"):
        with pytest.raises(specpack.SpecPackError, match="timeout="):
            specpack.verify(pack, timeout=bad)
    with pytest.raises(specpack.SpecPackError, match="seed="):
        specpack.verify(pack, seed=-1)
    with pytest.raises(specpack.SpecPackError, match="did you mean 'spawn'"):
        specpack.verify(pack, where="spwan")
