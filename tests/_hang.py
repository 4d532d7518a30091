"""Run a test's subprocess so that a hang explains itself (imported through ``_helpers``).

:func:`run_process` runs a command with ``tests/hangwatch`` on ``PYTHONPATH`` and a fresh
dump folder in ``SPECPACK_TEST_STACKS``: every Python process of the tree (the command, its
fresh interpreters, spawn, forkserver and fork workers) registers a ``faulthandler`` signal
(see tests/hangwatch/sitecustomize.py). When the timeout passes, the helper asks each process
of the tree for its stacks, kills the tree (orphans and processes that left the session
included: they carry the dump folder in their environment) and fails with the stacks, which
process waits on what, and the last lines of stderr and stdout.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from specpack._core._process.tree import descendants, kill_tree

HANGWATCH = Path(__file__).resolve().parent / "hangwatch"
#: The variable naming the dump folder (read by tests/hangwatch/sitecustomize.py).
STACKS_ENV = "SPECPACK_TEST_STACKS"
#: The dump signal (tests/hangwatch/sitecustomize.py registers the same one).
DUMP_SIGNAL = signal.SIGRTMIN + 5 if hasattr(signal, "SIGRTMIN") else None
#: Lines of stderr and stdout kept in a hang report.
TAIL = 40


class ProcessHang(AssertionError):
    """A subprocess outlived its timeout; the message holds every process's stacks."""


def run_process(
    cmd: list[str], cwd: Path, timeout: float = 180, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` in ``cwd``, capturing text output; a hang fails with every process's stacks.

    Parameters
    ----------
    cmd
        The command (``sys.executable`` and its arguments, for a Python child).
    cwd
        The working directory.
    timeout
        Seconds before the tree is dumped and killed, and :class:`ProcessHang` raised.
    env
        Variables set over this process's environment.

    Raises
    ------
    ProcessHang
        After ``timeout`` seconds: the message names the command and holds each process's
        stacks and the tail of stderr and stdout.
    """
    folder = tempfile.mkdtemp(prefix="specpack-stacks-")
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    full_env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [full_env.get("PYTHONPATH"), str(HANGWATCH)]))
    full_env[STACKS_ENV] = folder
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException as e:  # the timeout, or pytest-timeout / ^C interrupting the wait
            report = _dump_and_kill(proc, folder)
            out, err = _leftover_output(proc, e)
            message = _hang_message(cmd, cwd, timeout, report, out, err)
            if isinstance(e, subprocess.TimeoutExpired):
                raise ProcessHang(message) from None
            print(message, file=sys.stderr)  # shown with the interrupted test
            raise
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _tree(root: int, folder: str) -> list[int]:
    """``root``, its descendants, and every process whose environment names ``folder``."""
    marker = f"{STACKS_ENV}={folder}".encode()
    found = {root, *descendants(root)}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit() and int(name) not in found:
            try:
                with open(f"/proc/{name}/environ", "rb") as fh:
                    if marker in fh.read().split(b"\0"):
                        found.add(int(name))
            except OSError:  # gone, or not ours
                continue
    return sorted(found)


def _catches(pid: int, sig: int) -> bool:
    """Whether ``pid`` has a handler for ``sig`` (``SigCgt`` in /proc/<pid>/status)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except OSError:
        pass
    return False


def _describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
        cmd = cmd.replace("\n", "\\n")
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        state, ppid = stat[stat.rfind(b")") + 2:].split()[:2]
        return f"pid {pid} (parent {int(ppid)}, state {state.decode()}): {cmd[:300]}"
    except (OSError, ValueError):
        return f"pid {pid} (gone)"


def _dump_and_kill(proc: subprocess.Popen[str], folder: str) -> str:
    """Ask every process of the tree for its stacks, kill the tree; the stacks as text."""
    pids = _tree(proc.pid, folder)
    described = {pid: _describe(pid) for pid in pids}
    asked = [pid for pid in pids if DUMP_SIGNAL is not None and _catches(pid, DUMP_SIGNAL)]
    for pid in asked:
        os.kill(pid, DUMP_SIGNAL)  # type: ignore[arg-type]
    _wait_for_dumps(folder, asked)
    kill_tree(proc.pid)
    for _ in range(5):  # the ones that left the tree (orphans, new sessions)
        rest = [pid for pid in _tree(proc.pid, folder) if pid != proc.pid]
        if not rest:
            break
        for pid in rest:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    parts = []
    for pid in pids:
        path = Path(folder) / f"{pid}.txt"
        text = path.read_text(errors="replace") if path.exists() else ""
        stacks = text.partition("\n")[2].strip()
        if pid not in asked:
            stacks = "(no stacks: not a Python process of this tree, or -I/-S dropped the watch)"
        parts.append(f"--- {described[pid]}\n{stacks or '(no stacks written)'}")
    return "\n".join(parts)


def _wait_for_dumps(folder: str, pids: list[int], limit: float = 3.0) -> None:
    """Until each asked process's file holds a stack and the sizes stop growing."""
    end = time.monotonic() + limit
    last: dict[int, int] = {}
    while time.monotonic() < end:
        time.sleep(0.1)
        sizes = {}
        for pid in pids:
            try:
                sizes[pid] = os.path.getsize(os.path.join(folder, f"{pid}.txt"))
            except OSError:
                sizes[pid] = 0
        if sizes == last and all("most recent call first" in _read(folder, pid) for pid in pids):
            return
        last = sizes


def _read(folder: str, pid: int) -> str:
    try:
        return Path(folder, f"{pid}.txt").read_text(errors="replace")
    except OSError:
        return ""


def _leftover_output(proc: subprocess.Popen[str], e: BaseException) -> tuple[str, str]:
    """What the killed tree wrote (a pipe a lost process still holds: what came so far)."""
    try:
        return proc.communicate(timeout=5)
    except subprocess.TimeoutExpired as again:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait()
        e = again
    return _text(getattr(e, "stdout", None)), _text(getattr(e, "stderr", None))


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def _hang_message(cmd: list[str], cwd: Path, timeout: float, stacks: str, out: str,
                  err: str) -> str:
    def tail(text: str) -> str:
        lines = text.rstrip().splitlines()
        return "\n".join(lines[-TAIL:]) if lines else "(empty)"

    return (f"{' '.join(cmd)} (in {cwd}) did not end within {timeout:g} s; killed with its "
            f"process tree.\nStacks of every process of the tree:\n{stacks}\n"
            f"stderr (last {TAIL} lines):\n{tail(err)}\nstdout (last {TAIL} lines):\n{tail(out)}")
