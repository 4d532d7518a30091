"""The audit's screen: what envs print is kept per env, never mixed into the bar or the table.

Each test runs ``python -m specpack audit`` as a user does, on the fixture package
``tests/fixtures/screenpkg``, whose envs print from Python, from C level (``os.write`` to
fd 2), from a child process, and while imported; every line they print holds ``MARK``. On a
pipe and on a real pseudo-terminal (where the progress bar is drawn), the summary and the bar
hold none of it, while ``--verbose`` shows it under each env and ``--json`` has it per finding.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from _helpers import FIXTURES, run_python

from specpack._tools._audit.api import audit_one
from specpack._tools._verify.judge import control_is_cheap

pytestmark = pytest.mark.integration

MARK = "SCREENPKG-SAYS"
REASON_END = "and-this-is-the-very-end-of-the-long-reason"
ENVS = ["screenpkg/Chatty-v0", "screenpkg/LongReason-v0", "screenpkg/Lazy-v0"]


def environment(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(FIXTURES), os.environ.get("PYTHONPATH")]))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return {**env, "PYTHONPATH": path, **extra}


def audit_args(*extra: str) -> list[str]:
    return ["-m", "specpack", "audit", *ENVS, "--import", "screenpkg", "--steps", "3", *extra]


def test_json_keeps_each_envs_output_in_its_finding_and_stderr_quiet(tmp_path: Path) -> None:
    proc = run_python(audit_args("--json"), cwd=tmp_path, env=environment())
    doc = json.loads(proc.stdout)  # stdout is the JSON document and nothing else
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert doc["schema"] == "specpack.audit/5"
    assert MARK not in proc.stderr, proc.stderr
    envs = {f["name"]: f for f in doc["envs"]}
    chatty = envs["screenpkg/Chatty-v0"]["output"]
    # the reference (a fork of the audit) and the rebuild (a fresh interpreter), each stream
    # under its own header; C-level writes, a child process and a terminal escape included
    assert chatty.index("[reference (here), stdout]\n") < chatty.index(
        "[reference (here), stderr]\n") < chatty.index("[rebuild (fresh interpreter), stdout]\n")
    assert f"{MARK} constructor (print)\x1b[2J\r{MARK} after a clear-screen escape" in chatty
    assert f"{MARK} a child process of the env" in chatty
    assert f"{MARK} reset (fd 2, C level)" in chatty.split("[reference (here), stderr]")[1]
    # 2 builds here, 1 there, and the hash control's when it runs beside every rebuild
    builds = 4 if control_is_cheap() else 3
    assert chatty.count(f"{MARK} Sampling rejected") == 3 * builds
    # the fresh interpreter imports screenpkg while rebuilding the first env it is given
    assert f"{MARK} imported (print)" in "".join(f["output"] for f in doc["envs"])
    # an entry-point module first imported by capture(id) here prints into its own env
    lazy = envs["screenpkg/Lazy-v0"]["output"]
    assert lazy.startswith(f"[capture (here), stdout]\n{MARK} screenpkg.lazy imported (print)\n"
                           f"[capture (here), stderr]\n{MARK} screenpkg.lazy imported (fd 2")
    # what the --import modules print is the report's own output, not an env's
    assert doc["output"] == (
        f"[importing the --import modules (here), stdout]\n{MARK} imported (print)\n"
        f"[importing the --import modules (here), stderr]\n{MARK} imported (fd 2, C level)\n")
    assert envs["screenpkg/LongReason-v0"]["reason"].endswith(
        f"{REASON_END} in step() at step 1 on both sides alike, so nothing after it was compared")


def test_the_summary_wraps_full_reasons_and_verbose_shows_output_under_each_env(
    tmp_path: Path,
) -> None:
    proc = run_python(audit_args("--verbose"), cwd=tmp_path, env=environment(COLUMNS="64"))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert MARK not in proc.stderr, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(map(len, lines)) <= 64, [ln for ln in lines if len(ln) > 64]
    assert "…" not in proc.stdout and "..." not in proc.stdout
    # the table ends before the first printed line; the reason is whole, under its row
    table = lines[:next(i for i, ln in enumerate(lines) if ln.startswith("printed in the"))]
    assert MARK not in "\n".join(table)
    row = table.index("  screenpkg/LongReason-v0  rollout_error")
    reason = []
    for line in table[row + 1:]:
        if not line.startswith("      "):
            break
        reason.append(line.strip())
    assert " ".join(reason).startswith("the rollout raised ValueError: screenpkg-says the step")
    assert " ".join(reason).endswith(f"{REASON_END} in step() at step 1 on both sides alike, "
                                     "so nothing after it was compared")
    # each env's output under its name, escapes shown as text, never sent to the terminal
    start = lines.index("  screenpkg/Chatty-v0 (identical):")
    end = lines.index("  screenpkg/LongReason-v0 (rollout_error):")
    chatty = lines[start + 1:end]
    assert chatty[0] == "    [reference (here), stdout]"
    assert f"      {MARK} constructor (print)\\x1b[2J" in chatty
    assert f"      {MARK} a child process of the env" in chatty
    assert "    [rebuild (fresh interpreter), stderr]" in chatty
    assert "\x1b" not in proc.stdout and "\r" not in proc.stdout
    assert lines[-1] == "NOT portable: 1 finding(s) fail the audit"


def run_in_terminal(args: list[str], cwd: Path, env: dict[str, str], columns: int,
                    timeout: float = 240) -> str:
    """``python ARGS`` with stdin, stdout and stderr on a real pseudo-terminal ``columns``
    wide; everything it wrote there, as text."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.ONLCR  # keep "\n" as the program wrote it (no "\r\n")
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, stdin=slave,
                            stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    data = bytearray()
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not chunk:
                break
            data += chunk
        else:
            raise AssertionError(f"no end within {timeout} s: {bytes(data)!r}")
    finally:
        os.close(master)
        proc.wait(30)
    return data.decode("utf-8", "replace")


def test_on_a_terminal_the_progress_bar_and_summary_hold_no_env_output(tmp_path: Path) -> None:
    text = run_in_terminal(audit_args(), tmp_path, environment(), columns=80)
    assert MARK not in text, text
    bar, _, rest = text.partition("\n")
    frames = [f for f in bar.split("\r") if f]
    assert frames and all(re.match(r"\[[#.]{30}\] \d/3  \d not portable ", f) for f in frames)
    assert frames[-1].startswith("[" + "#" * 30 + "] 3/3  1 not portable")
    assert all(len(f) < 80 for f in frames), frames  # redrawn in place, never wrapped
    lines = rest.splitlines()
    assert max(map(len, lines)) <= 80, [ln for ln in lines if len(ln) > 80]
    joined = " ".join(ln.strip() for ln in lines)
    assert f"{REASON_END} in step() at step 1 on both sides alike" in joined
    assert ("(3 of the 3 envs printed something, and so did the audit's process outside them: "
            "see --verbose, or each finding's \"output\" in --json)") in joined
    assert lines[-1] == "NOT portable: 1 finding(s) fail the audit"


def test_what_a_hanging_env_printed_before_its_timeout_is_kept(tmp_path: Path) -> None:
    proc = run_python(["-m", "specpack", "audit", "screenpkg/Hangs-v0", "--import", "screenpkg",
                       "--timeout", "20", "--json"], cwd=tmp_path, env=environment())
    # 20 s: the env hangs for good, so the bound is only how long a loaded machine may take to
    # build it and reach its prints (3 s was not enough with 2 cores under load)
    finding, = json.loads(proc.stdout)["envs"]
    assert finding["status"] == "timeout" and proc.returncode == 1
    assert finding["output"] == (f"[reference (here), stdout]\n{MARK} about to hang in reset\n"
                                 f"[reference (here), stderr]\n{MARK} hanging now (fd 2)\n")
    assert MARK not in proc.stderr


class Talker(gymnasium.Env):  # type: ignore[type-arg]
    """Defined in this test module (travels by value); prints from Python and C level."""

    def __init__(self) -> None:
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float64)
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        print("talker: reset")
        os.write(2, b"talker: reset, from C level\n")
        return np.zeros(1), {}

    def step(self, action: Any) -> Any:
        return np.zeros(1), 0.0, False, False, {}


def test_references_built_in_this_process_print_into_the_finding_not_onto_fds(
    capfd: pytest.CaptureFixture[str],
) -> None:
    finding = audit_one(Talker, steps=3, reference="here")
    assert finding.status == "identical"
    out, err = capfd.readouterr()
    assert "talker" not in out + err
    here = finding.output.split("[rebuild (fresh interpreter), stdout]")[0]
    assert here.startswith("[reference (here), stdout]\ntalker: reset\n")
    assert "[reference (here), stderr]\ntalker: reset, from C level\n" in here


def test_a_capture_of_this_process_gives_back_what_a_failing_block_printed(
    capfd: pytest.CaptureFixture[str],
) -> None:
    from specpack._tools._audit.output import Capture

    printed = Capture()
    with pytest.raises(ZeroDivisionError), printed:
        os.write(1, b"said before failing\n")
        raise ZeroDivisionError
    assert printed.stdout == "said before failing\n"
    assert "said before failing" in capfd.readouterr().err


def test_long_output_keeps_its_head_and_tail_and_says_what_was_cut() -> None:
    from specpack._tools._audit.output import OUTPUT_LIMIT, cut

    text = "".join(f"line {i}\n" for i in range(5000))
    kept = cut(text)
    assert len(kept) < OUTPUT_LIMIT + 200 and kept.startswith("line 0\n")
    assert kept.endswith("line 4999\n")
    note, = [ln for ln in kept.splitlines() if ln.startswith("[...")]
    dropped = len(text) - OUTPUT_LIMIT
    assert note == (f"[... {dropped} characters cut: the audit keeps the first 2048 and the "
                    "last 6144 characters of each stream ...]")
    # a worker already cut its capture file (in bytes): the note counts that as well
    worker = "a" * 5000 + "\n[... 70000 bytes cut ...]\n" + "b" * 9000
    assert "characters cut and 70000 bytes before that" in cut(worker)

