"""``specpack._tools._cli.main`` called in-process, as an embedding program or a test would call it.

What it promises there as much as in a shell: env prints kept off stdout even when stdout is no
real file, one ``specpack: error:`` line naming the method and step where ``run``'s env failed
(or ``unexpected ...`` for a bug outside the env's calls), exit 130 on Ctrl-C, exit 0 when the
reader of stdout went away, and the terminal-only spinner and audit progress bar.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import pty
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import cli_edge_envs
import pytest
from _helpers import run_python

import specpack
from specpack._tools._audit.report import Finding
from specpack._tools._cli import main
from specpack._tools._cli.output import AuditProgress, spinner, stdout_to_stderr, warn
from specpack.files import dump


def pack_file(tmp_path: Path, cls: type, **kwargs: object) -> str:
    path = tmp_path / f"{cls.__name__}.pack"
    dump(specpack.capture(cls, **kwargs), path)
    return str(path)


def error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("specpack: error: ")]
    assert len(lines) == 1, err
    return lines[0]


class Terminal:
    """A real pseudo-terminal: ``tty`` is the file a program writes to (``isatty()`` is True);
    a thread drains what arrives, so a writer never blocks on a full buffer."""

    def __init__(self) -> None:
        self.master, slave = pty.openpty()
        self.tty = os.fdopen(slave, "w", encoding="utf-8")
        self.data = bytearray()
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: the terminal's other side is closed
                chunk = b""
            with self.changed:
                self.data += chunk
                self.changed.notify_all()
            if not chunk:
                return

    def wait_for(self, needle: bytes, timeout: float = 60) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: needle in self.data, timeout), bytes(self.data)

    def close(self) -> str:
        """Close the writing side; everything written, as text."""
        self.tty.close()
        self.reader.join(timeout=60)
        os.close(self.master)
        return self.data.decode("utf-8", "replace")


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal()
    yield term
    if not term.tty.closed:
        term.close()


# -- run: the env's failures, named ----------------------------------------------------------------


def test_run_in_process_keeps_the_env_prints_off_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pytest's captured stdout has no file descriptor: the prints are moved in Python.
    assert main(["run", pack_file(tmp_path, cli_edge_envs.Talks), "--steps", "4", "--json"]) == 0
    out, err = capsys.readouterr()
    figures = json.loads(out)
    assert figures["steps"] == 4 and figures["episodes"] == 1
    assert "talks: constructed" in err and "talks: step" in err and "talks" not in out


def test_stdout_to_stderr_without_file_descriptors_moves_python_prints() -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with stdout_to_stderr():
            print("from the env")
        print("the command's own output")
    assert out.getvalue() == "the command's own output\n"
    assert err.getvalue() == "from the env\n"


def test_run_names_the_action_planning_when_the_action_space_cannot_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", pack_file(tmp_path, cli_edge_envs.CannotPlan)]) == 2
    line = error_line(capsys.readouterr().err)
    assert ("CannotPlan: env.action_space.sample raised RuntimeError at step 0 (planning the "
            "actions): this space cannot be sampled") in line
    # the env's own exception is chained: --debug shows where in the env it was raised
    assert line.endswith("(run again with --debug for the traceback)")


def test_run_names_the_reset_after_an_episode_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = pack_file(tmp_path, cli_edge_envs.SecondResetFails, length=2)
    assert main(["run", path, "--steps", "10"]) == 2
    line = error_line(capsys.readouterr().err)
    assert ("env.reset raised OSError at step 2 (after the episode ended): the simulator "
            "went away") in line


def test_run_succeeds_when_only_closing_the_env_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", pack_file(tmp_path, cli_edge_envs.CloseFails), "--steps", "7"]) == 0
    out, err = capsys.readouterr()
    assert "7 steps in" in out
    assert "episodes: 2 finished, return mean 3.000 (min 3.000, max 3.000); mean length 3.0" in out
    assert "plus one in progress (1 steps, return 1.000 so far)" in out
    assert "error" not in err


def test_run_of_an_episode_that_never_ends_says_none_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", pack_file(tmp_path, cli_edge_envs.Base, length=100), "--steps", "5"]) == 0
    out = capsys.readouterr().out
    assert "episodes: none finished" in out
    assert "plus one in progress (5 steps, return 5.000 so far)" in out


@pytest.mark.filterwarnings("ignore:.*The reward returned by `step\\(\\)` must be:UserWarning")
def test_a_bug_outside_the_envs_calls_is_one_unexpected_line_and_debug_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = pack_file(tmp_path, cli_edge_envs.TextReward)
    assert main(["run", path]) == 2
    err = capsys.readouterr().err
    line = error_line(err)
    assert line.startswith("specpack: error: unexpected ValueError: ")
    assert "'lots'" in line and line.endswith("(run again with --debug for the traceback)")
    assert "Traceback" not in err
    assert main(["run", path, "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "float(reward)" in err
    assert "--debug for the traceback" not in error_line(err)


def test_ctrl_c_while_the_env_steps_exits_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", pack_file(tmp_path, cli_edge_envs.Interrupted)]) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == "specpack: interrupted"
    assert "error" not in err and "Traceback" not in err


def test_a_reader_that_went_away_is_not_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `specpack inspect FILE | head -0`: the pipe's reading end is closed before the write.
    path = pack_file(tmp_path, cli_edge_envs.Base)
    read_end, write_end = os.pipe()
    os.close(read_end)
    pipe = open(write_end, "w", buffering=1)  # closed below, after main
    monkeypatch.setattr(sys, "stdout", pipe)
    try:
        assert main(["inspect", path]) == 0
        assert sys.stdout is not pipe  # later writes go nowhere rather than raising again
        print("more output")
    finally:
        with contextlib.suppress(BrokenPipeError):
            pipe.close()
    assert capsys.readouterr().err == ""


def test_python_dash_m_specpack_cli_is_the_command_line(tmp_path: Path) -> None:
    proc = run_python(["-m", "specpack._tools._cli", "--version"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"specpack {specpack.__version__}\n"
    proc = run_python(["-m", "specpack._tools._cli", "inspect", "missing.pack"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "specpack: error: missing.pack: no such file\n"


def test_main_reads_sys_argv_when_given_no_arguments(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["specpack", "inspect", "missing.pack"])
    assert main() == 2
    assert capsys.readouterr().err == "specpack: error: missing.pack: no such file\n"


# -- inspect: what the table says about the file ---------------------------------------------------


def test_inspect_flags_a_hand_edited_manifest_and_shows_a_bare_env(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path(pack_file(tmp_path, cli_edge_envs.Base, length=4))
    assert main(["inspect", str(path)]) == 0
    table = capsys.readouterr().out
    assert "1. OrderEnforcing()" in table and "length = 4" in table
    assert "the manifest was edited" not in table
    manifest = json.loads(path.read_text())
    manifest["kwargs"]["length"] = 5
    manifest["layers"] = []
    path.write_text(json.dumps(manifest))
    assert main(["inspect", str(path)]) == 0
    table = capsys.readouterr().out
    assert "length = 5" in table
    assert "layers       (none: the bare env)" in table.splitlines()
    row = next(ln for ln in table.splitlines() if ln.startswith("fingerprint"))
    assert f"(the file records {manifest['fingerprint']}: the manifest was edited)" in row


# -- on a terminal: the spinner and the audit's progress bar ---------------------------------------


def test_the_spinner_draws_on_a_terminal_and_clears_its_line(terminal: Terminal) -> None:
    with spinner("working", stream=terminal.tty):
        terminal.wait_for(b"\rworking |")  # the first frame, with the elapsed time
    text = terminal.close()
    assert " s" in text.split("\rworking |", 1)[1]
    assert text.endswith("\r" + " " * (len("working") + 12) + "\r")


def test_the_spinner_is_silent_when_not_on_a_terminal() -> None:
    stream = io.StringIO()
    with spinner("working", stream=stream):
        pass
    assert stream.getvalue() == ""


def test_verify_on_a_terminal_spins_on_stderr_and_prints_the_report_on_stdout(
    tmp_path: Path, terminal: Terminal, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = pack_file(tmp_path, cli_edge_envs.Base)
    monkeypatch.setattr(sys, "stderr", terminal.tty)
    assert main(["verify", path, "--steps", "5"]) == 0
    text = terminal.close()
    message = "verifying cli_edge_envs:Base in a fresh interpreter (5 steps, seed 0)"
    assert text.endswith("\r" + " " * (len(message) + 12) + "\r"), text
    assert capsys.readouterr().out.startswith("identical: cli_edge_envs:Base rebuilt in a fresh interpreter")


def test_audit_on_a_terminal_shows_a_progress_bar(
    terminal: Terminal, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stderr", terminal.tty)
    assert main(["audit", "CartPole-v1", "--jobs", "1", "--steps", "5"]) == 0
    text = terminal.close()
    assert "\r[" + "#" * 30 + "] 1/1  0 not portable" in text and "CartPole-v1" in text
    assert capsys.readouterr().out.rstrip().endswith("portable")


def progress_lines(show: Callable[[Finding, int, int], None], stream: io.StringIO,
                   findings: list[Finding]) -> list[str]:
    for i, f in enumerate(findings, start=1):
        show(f, i, len(findings))
    return stream.getvalue().split("\r")


def test_the_progress_bar_counts_what_is_not_portable_and_ends_the_line() -> None:
    stream = io.StringIO()
    findings = [Finding("env", "A-v0", "identical"), Finding("env", "B-v0", "timeout"),
                Finding("env", "C\nv0", "not_identical"), Finding("env", "D-v0", "skipped")]
    last = progress_lines(AuditProgress(stream), stream, findings)[-1]
    assert last.startswith("[" + "#" * 30 + "] 4/4  2 not portable  ")
    assert "D-v0" in last and last.endswith("\n")
    first = stream.getvalue().split("\r")[1]
    assert first.startswith("[" + "#" * 7 + "." * 23 + "] 1/4  0 not portable")


def test_a_warning_is_one_line_with_line_breaks_and_controls_escaped(
        capsys: pytest.CaptureFixture[str]) -> None:
    # issue 31: a line break is escaped as everywhere else (it was folded into a space)
    warn("the module   'x'\x1b[31m cannot\nINJECTED be imported")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("specpack: warning: the module 'x'")
    assert "\x1b" not in err and "cannot\\nINJECTED be imported" in err


def test_inspect_of_a_by_value_env_says_what_travels_and_what_loading_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "walker_envs.py"
    source.write_text(Path(cli_edge_envs.__file__).read_text())
    spec = importlib.util.spec_from_file_location("walker_envs", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pack = specpack.capture(module.Base, length=2)
    assert pack.entry_point.by_value
    path = tmp_path / "walker.pack"
    dump(pack, path)
    assert main(["inspect", str(path)]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert "                base env: the entry point (carried by value)" in rows
    payload = next(r for r in rows if r.startswith("payloads"))
    assert "Base" in payload and "cloudpickle for Python" in payload
    trust = next(r for r in rows if r.startswith("trust"))
    assert "needs --trust, or --key-file" in trust and "trust=True" not in trust, trust
