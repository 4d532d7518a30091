"""A verdict is truthy only when both rollouts completed and matched.

Each test states a scenario whose verdict or failure mode is wrong today: an env that raises
everywhere is reported identical, an env that prints breaks the fresh-interpreter channel, a
hanging env blocks verify, the parent unpickles whatever the child writes to stdout, a child
that dies at start-up turns into BrokenPipeError, a relative PYTHONPATH is lost in the child,
and a missing main guard is reported only as "the child process died".
"""

from __future__ import annotations

import json
import os
import pickle
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _helpers import run_python

import specpack

TESTS = Path(__file__).resolve().parents[2]
FIXTURES = TESTS / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import trustenvs  # noqa: E402

pytestmark = pytest.mark.integration


def _pythonpath(*first: Path | str) -> str:
    """PYTHONPATH with ``first`` entries, then tests/fixtures, then what it was (the worktree)."""
    parts = [str(p) for p in first] + [str(FIXTURES)]
    parts += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(dict.fromkeys(parts))


@pytest.fixture(autouse=True)
def _fixtures_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Children (fresh interpreters, spawn) can import ``trustenvs`` by name."""
    monkeypatch.setenv("PYTHONPATH", _pythonpath())


def _text(report: object) -> str:
    return "\n".join(map(str, getattr(report, "differences", []))) + "\n" + str(report)


# -- 1. an env that fails the same way everywhere ---------------------------------------------


@pytest.mark.parametrize("where", ["subprocess", "spawn"])
def test_verify_of_env_that_raises_zero_division_at_step_5_everywhere_is_falsy_and_names_it(
        where: str) -> None:
    pack = specpack.capture(trustenvs.RaisesAtStep, raise_at=5)
    assert specpack.verify(pack, steps=4, where=where, timeout=60)  # control: before step 5 all is well
    report = specpack.verify(pack, steps=20, where=where, timeout=60)
    text = _text(report)
    assert not report, f"a rollout that raised on both sides was called identical:\n{text}"
    assert report.status == "rollout_error", text
    assert "ZeroDivisionError" in text, text
    assert re.search(r"\bstep 5\b", text), text
    assert "both" in text.lower(), f"the report should say it failed on both sides:\n{text}"


# -- 2. an env that prints ----------------------------------------------------------------------


@pytest.mark.parametrize("where", ["subprocess", "spawn"])
def test_verify_of_env_that_prints_in_constructor_reset_and_step_is_identical(where: str) -> None:
    report = specpack.verify(specpack.capture(trustenvs.Chatty), steps=10, where=where, timeout=60)
    assert report, _text(report)
    assert report.status == "identical"
    assert report.differences == []


# -- 3. an env that hangs -----------------------------------------------------------------------

HANG_SCRIPT = '''
import json, os, sys, time
import specpack
import trustenvs


def main():
    where, pid_dir, hang_in = sys.argv[1], sys.argv[2], sys.argv[3]
    spare = os.getpid() if hang_in == "the-rebuild-only" else None
    pack = specpack.capture(trustenvs.Hangs, hang_at=3, pid_dir=pid_dir, spare_pid=spare)
    start = time.perf_counter()
    report = specpack.verify(pack, steps=10, where=where, timeout=8)
    elapsed = time.perf_counter() - start
    print(json.dumps({"ok": bool(report), "status": getattr(report, "status", None),
                      "elapsed": elapsed, "text": str(report)}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
'''


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _recorded_pids(pid_dir: Path) -> list[int]:
    return sorted(int(p.stem) for p in pid_dir.glob("*.pid"))


def _kill_recorded(pid_dir: Path) -> None:
    """Clean up after a failure: SIGKILL the hanging processes this test started (by pid)."""
    for pid in _recorded_pids(pid_dir):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"python" in cmdline and _running(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.mark.parametrize("hang_in", ["every-process", "the-rebuild-only"])
@pytest.mark.parametrize("where", ["subprocess", "spawn"])
def test_verify_of_env_that_hangs_in_step_3_times_out_and_leaves_no_process_running(
        tmp_path: Path, where: str, hang_in: str) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    script = tmp_path / "hang.py"
    script.write_text(HANG_SCRIPT)
    try:
        try:
            proc = run_python([str(script), where, str(pid_dir), hang_in], cwd=tmp_path,
                              timeout=60, env={"PYTHONPATH": _pythonpath()})
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            pytest.fail(f"verify(timeout=8) of an env hanging in {hang_in} had not returned "
                        f"(or the script had not exited) after 60 s; stdout: {out[-2000:]}")
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        assert not result["ok"], result["text"]
        assert result["status"] == "timeout", result["text"]
        pids = _recorded_pids(pid_dir)
        assert pids, "the env never hung: the test proves nothing"
        deadline = time.monotonic() + 60  # returns once they are gone
        while any(map(_running, pids)) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [p for p in pids if _running(p)]
        assert not left, f"verify left hanging processes running: {left}"
    finally:
        _kill_recorded(pid_dir)


# -- 4. the parent must not unpickle what the child's env printed --------------------------


class _OpenForWriting:
    """Unpickling this opens (creates) ``path``: code execution through pickle."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        return (open, (self.path, "w"))


def test_cli_verify_of_untrusted_file_never_unpickles_what_the_env_writes_to_stdout(
        tmp_path: Path) -> None:
    control = tmp_path / "CONTROL"
    pickle.loads(pickle.dumps(_OpenForWriting(str(control)))).close()
    assert control.exists()  # this kind of payload runs code in whoever unpickles it
    marker = tmp_path / "PWNED"
    payload = pickle.dumps(_OpenForWriting(str(marker)), protocol=2)
    pack = specpack.capture(trustenvs.PrintsPayload, by_value=False, payload=payload)
    assert not pack.entry_point.by_value
    path = tmp_path / "printer.specpack"
    specpack.dump(pack, path)
    assert not specpack.files.describe(path)["needs_trust"]  # loads without --trust
    # stdout holds the raw payload the env printed here too: read bytes, not text
    proc = subprocess.run(
        [sys.executable, "-m", "specpack", "verify", str(path), "--allow", "trustenvs",
         "--steps", "5", "--timeout", "60"],
        cwd=tmp_path, timeout=120, capture_output=True,
        env={**os.environ, "PYTHONPATH": _pythonpath()},
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert not marker.exists(), (
        "`specpack verify` of a file loaded without --trust ran code: the parent unpickled "
        f"bytes the env wrote to the child's stdout\nstdout: {proc.stdout[-1000:]!r}\n"
        f"stderr: {err[-2000:]}"
    )
    assert proc.returncode == 0, f"{proc.stdout[-2000:]!r}\n{err[-2000:]}"


# -- 5. a child that dies at start-up, with a pack larger than a pipe buffer ---------------


# spawn today deadlocks here: multiprocessing's spawn Popen writes the pickled Process args
# (the pack) into the child's pipe while it still holds that pipe's read end itself, so a child
# that died at start-up leaves the write blocked forever; hence the per-test timeout.
@pytest.mark.timeout(120)
@pytest.mark.parametrize("where", ["subprocess", "spawn"])
def test_verify_when_the_child_dies_at_startup_and_the_pack_exceeds_a_pipe_is_a_falsy_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    site = tmp_path / "dying_site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos._exit(3)\n")
    pack = specpack.capture(trustenvs.Plain, by_value=False, blob=bytes(range(256)) * 1024)
    assert len(pickle.dumps(pack)) > 4 * 65536
    monkeypatch.setenv("PYTHONPATH", _pythonpath(site))  # every fresh interpreter exits 3
    report = specpack.verify(pack, steps=5, where=where, timeout=60)
    text = _text(report)
    assert not report, text
    assert report.status == "rebuild_error", text  # the death seen, not the deadline reached
    assert report.differences, text


# -- 6. a relative PYTHONPATH ---------------------------------------------------------------

RELMOD = '''
import gymnasium
import numpy as np


class RelEnv(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(-10.0, 10.0, (2,), np.float64)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.np_random.uniform(-1, 1, 2), {}

    def step(self, action):
        return self.np_random.uniform(-1, 1, 2), float(action), False, False, {}
'''

REL_SCRIPT = '''
import json
import specpack
import relmod


def main():
    pack = specpack.capture(relmod.RelEnv)
    report = specpack.verify(pack, steps=10, timeout=60)
    print(json.dumps({"by_value": pack.entry_point.by_value, "ok": bool(report),
                      "text": str(report)}))


if __name__ == "__main__":
    main()
'''


def test_verify_of_env_importable_through_a_relative_pythonpath_is_identical(
        tmp_path: Path) -> None:
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "relmod.py").write_text(RELMOD)
    (tmp_path / "script.py").write_text(REL_SCRIPT)
    # cd tmp_path && PYTHONPATH=mods:<the worktree> python script.py
    proc = run_python(["script.py"], cwd=tmp_path, timeout=120,
                      env={"PYTHONPATH": os.pathsep.join(["mods", _pythonpath()])})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["by_value"] is False  # importable via PYTHONPATH: carried by reference
    assert result["ok"], result["text"]


# -- 7. spawn from a script without a main guard --------------------------------------------

NO_GUARD = '''
import json
import specpack

pack = specpack.capture("CartPole-v1", max_episode_steps=20)
report = specpack.verify(pack, steps=5, where="spawn", timeout=60)
print("REPORT " + json.dumps({"ok": bool(report), "text": str(report)}))
'''


def test_verify_spawn_from_a_script_without_main_guard_says_the_guard_is_needed(
        tmp_path: Path) -> None:
    script = tmp_path / "no_guard.py"
    script.write_text(textwrap.dedent(NO_GUARD))
    proc = run_python([str(script)], cwd=tmp_path, timeout=120)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("REPORT ")]
    assert lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    result = json.loads(lines[-1][len("REPORT "):])
    assert not result["ok"], result["text"]
    assert re.search(r"""if __name__ == ["']__main__["']:""", result["text"]), result["text"]
