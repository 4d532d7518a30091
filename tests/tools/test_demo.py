"""``specpack demo``: the registry problem and the rescue, in real workers.

The demo's script registers ``CustomAnt-v0`` inside its main guard. The table it prints must
show ``gymnasium.make(id)`` failing with the real cause in spawn and forkserver children, a
fresh interpreter and a Ray worker (working only under fork, which inherits the registry: the
control), and ``pack.make()`` working everywhere with the parent's rollout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

WORKERS = ("fork", "spawn", "forkserver", "fresh python", "ray worker")
NOT_FOUND = "NameNotFound: Environment `CustomAnt` doesn't exist."


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(tmp_path), RAY_TMPDIR=str(tmp_path))
    return subprocess.run(
        [sys.executable, "-m", "specpack", "demo", *args], cwd=tmp_path, capture_output=True,
        text=True, timeout=240, env=env,
    )


def test_demo_table_shows_registry_failures_and_pack_working_everywhere(tmp_path: Path) -> None:
    proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("worker  "))
    assert 'gymnasium.make("CustomAnt-v0")' in lines[header] and "pack.make()" in lines[header]
    rows = {}
    for ln in lines[header + 2:]:
        if not ln.strip():
            break
        for w in WORKERS:
            if ln.startswith(w + "  "):
                rows[w] = ln[len(w):].strip()
    assert set(rows) == set(WORKERS), proc.stdout
    # The control: a fork child inherits the registry, so gymnasium.make works there.
    assert rows["fork"].startswith("ok ")
    for w in ("spawn", "forkserver", "fresh python", "ray worker"):
        assert rows[w].startswith(NOT_FOUND), (w, rows[w])
        assert "ConnectionResetError" not in rows[w]
    for w in WORKERS:
        assert rows[w].endswith("ok, same rollout as the parent"), (w, rows[w])
    assert "pack.make() worked in every worker" in proc.stdout


def test_demo_json_reports_the_spec_workaround_failing_too(tmp_path: Path) -> None:
    proc = _run(tmp_path, "--json", "--no-ray")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    rows = {r["worker"]: r for r in result["rows"]}
    assert list(rows) == ["fork", "spawn", "forkserver", "fresh python"]
    assert result["pack_ok_everywhere"] is True
    assert rows["fork"]["spec"][0] == "ok"
    assert rows["spawn"]["spec"] == [
        "fail", "AttributeError: module '__mp_main__' has no attribute 'CustomAnt'"]
    assert rows["fresh python"]["spec"][0] == "fail"
    assert all(r["pack_same_rollout"] for r in rows.values())
