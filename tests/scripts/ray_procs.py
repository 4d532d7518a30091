"""Run a Ray driver script in its own session, and leave no Ray process behind.

Ray's processes (GCS, raylets, workers, agents) all stay in the session of the driver that
started them, so the driver runs with ``start_new_session=True`` and, once it has exited, its
session is checked for survivors, which are then killed by pid. Nothing else on the machine is
touched: ``ray stop --force`` would kill every Ray process of this user, including other
people's clusters on a shared machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class DriverRun:
    """What a driver script did: exit code, output, its JSON line, and any survivors."""

    returncode: int | None
    stdout: str
    stderr: str
    elapsed: float
    leftovers: list[str] = field(default_factory=list)

    @property
    def result(self) -> Any:
        lines = [ln for ln in self.stdout.splitlines() if ln.startswith("{")]
        assert self.returncode == 0 and lines, (
            f"driver exited {self.returncode}\nstdout:\n{self.stdout[-4000:]}\n"
            f"stderr:\n{self.stderr[-8000:]}"
        )
        return json.loads(lines[-1])


def session_members(sid: int) -> dict[int, str]:
    """The live processes of session ``sid`` (pid: command line), read from /proc."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            # Fields after the command name (which may hold spaces) in parentheses.
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] == "Z" or int(fields[3]) != sid:
                continue
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        found[int(entry.name)] = cmd.strip()[:200]
    return found


def run_driver(script: Path, *args: str, python: str = sys.executable,
               timeout: float = 240, settle: float = 15) -> DriverRun:
    """Run ``python script args`` with HOME and RAY_TMPDIR in a fresh short temp folder.

    After the driver exits (or is killed at ``timeout``), wait up to ``settle`` seconds for
    Ray's processes in its session to end on their own; the ones still there are reported
    in ``leftovers`` and killed.
    """
    root = tempfile.mkdtemp(prefix="spr-", dir="/tmp")  # short: Ray's unix sockets live here
    env = {**os.environ, "HOME": root, "RAY_TMPDIR": root, "RAY_USAGE_STATS_ENABLED": "0",
           "PYTHONUNBUFFERED": "1"}
    started = time.monotonic()
    proc = subprocess.Popen([python, str(script), *args], cwd=root, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            err += f"\n[ray_procs] driver killed after {timeout}s"
        elapsed = time.monotonic() - started
        deadline = time.monotonic() + settle
        while session_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = session_members(proc.pid)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return DriverRun(proc.returncode, out, err, elapsed, sorted(left.values()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in session_members(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(root, ignore_errors=True)
