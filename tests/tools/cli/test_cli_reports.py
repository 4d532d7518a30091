"""What the commands report: the --by-reference warning, the method and step where an env
raised, env prints kept off stdout, verify's report, hostile strings escaped, exact key files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_support import assert_one_line_error, env_modules, specpack

import specpack as sp
from specpack.files import dump

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = env_modules(tmp_path_factory.mktemp("reports"))
    for env_id, name in (("CliBoom-v0", "boom"), ("CliNoisy-v0", "noisy"),
                         ("CliBadReset-v0", "badreset")):
        proc = specpack("capture", env_id, "--import", "envs/cli_boom_envs.py", "-o",
                        f"{name}.pack", cwd=d)
        assert proc.returncode == 0, proc.stderr
    return d


# -- capture --by-reference ---------------------------------------------------------------------


def test_by_reference_capture_of_a_module_a_fresh_interpreter_cannot_import_warns(
    work: Path,
) -> None:
    proc = specpack("capture", "CliAnt-v0", "--import", "envs/cli_ant_envs.py", "--by-reference",
                    "-o", "byref.pack", cwd=work)
    assert proc.returncode == 0, proc.stderr
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("specpack: warning: ")]
    assert len(warnings) == 1, proc.stderr
    assert "'cli_ant_envs'" in warnings[0] and "cannot import" in warnings[0]
    assert "will fail" in warnings[0] and "--by-value" in warnings[0]
    # The warning is true: a fresh interpreter elsewhere cannot build the file.
    other = work / "other"
    other.mkdir(exist_ok=True)
    assert_one_line_error(specpack("run", "../byref.pack", "--steps", "3", cwd=other),
                          "cli_ant_envs")
    # Controls: by value there is nothing to warn about, nor for an installed env by reference.
    for args in (["CliAnt-v0", "--import", "envs/cli_ant_envs.py", "--by-value"],
                 ["CartPole-v1", "--by-reference"]):
        quiet = specpack("capture", *args, "-o", "quiet.pack", cwd=work)
        assert quiet.returncode == 0, quiet.stderr
        assert "warning" not in quiet.stderr, quiet.stderr


# -- run: where the env raised --------------------------------------------------------------------


def test_run_names_the_method_and_step_where_the_env_raised(work: Path) -> None:
    proc = specpack("run", "boom.pack", "--trust", "--steps", "20", cwd=work)
    line = assert_one_line_error(
        proc, "CliBoom-v0: env.step raised ZeroDivisionError at step 3: division by zero",
        env_printed=True)
    assert "unexpected" not in line
    reset = specpack("run", "badreset.pack", "--trust", "--steps", "20", cwd=work)
    assert_one_line_error(reset, "env.reset raised KeyError at step 0", "no reset today",
                          env_printed=True)
    debug = specpack("run", "boom.pack", "--trust", "--debug", cwd=work)
    assert debug.returncode == 2
    # The env's own traceback, chained: its step method and the original exception.
    assert "in step" in debug.stderr and "ZeroDivisionError: division by zero" in debug.stderr


def test_run_json_stdout_holds_only_the_json_while_the_env_prints(work: Path) -> None:
    proc = specpack("run", "noisy.pack", "--trust", "--steps", "30", "--json", cwd=work)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)
    assert figures["steps"] == 30 and figures["episodes"] == 4
    assert "boom: reset" in proc.stderr
    assert "said from C level" in proc.stderr  # written to fd 1 by the env, moved to stderr


def test_run_plays_the_same_actions_as_the_engine_plans(work: Path) -> None:
    first = json.loads(specpack("run", "noisy.pack", "--trust", "--steps", "50", "--seed", "4",
                                "--json", cwd=work).stdout)
    again = json.loads(specpack("run", "noisy.pack", "--trust", "--steps", "50", "--seed", "4",
                                "--json", cwd=work).stdout)
    assert first["returns"] == again["returns"] and first["episodes"] == 7


# -- verify's report ----------------------------------------------------------------------------


def test_verify_json_stdout_holds_only_the_json_while_the_env_prints(work: Path) -> None:
    proc = specpack("verify", "noisy.pack", "--trust", "--steps", "10", "--json", cwd=work)
    doc = json.loads(proc.stdout)
    assert {"status", "identical", "differences", "stdout", "stderr"} <= set(doc)
    assert "boom: reset" in proc.stderr  # the build here printed; to stderr


def test_verify_shows_the_status_the_step_and_the_env_output(work: Path) -> None:
    noisy = specpack("verify", "noisy.pack", "--trust", "--steps", "10", "--json", cwd=work)
    assert noisy.returncode == 0, noisy.stdout + noisy.stderr
    assert json.loads(noisy.stdout)["status"] == "identical"
    proc = specpack("verify", "boom.pack", "--trust", "--steps", "10", cwd=work)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("rollout error: CliBoom-v0"), proc.stdout
    assert "step" in proc.stdout and "ZeroDivisionError" in proc.stdout and " 3" in proc.stdout
    doc = json.loads(specpack("verify", "boom.pack", "--trust", "--steps", "10", "--json",
                              cwd=work).stdout)
    assert doc["status"] == "rollout_error" and doc["identical"] is False


# -- inspect: a hostile file's strings ------------------------------------------------------------


def test_inspect_json_escapes_c1_controls_and_bidi_overrides(work: Path) -> None:
    hostile = "\u009b31m red \u202egnp.exe \x1b[2J"
    proc = specpack("capture", "CliAnt-v0", "--import", "envs/cli_ant_envs.py",
                    "--kwarg", "payload=" + json.dumps(hostile), "-o", "hostile.pack", cwd=work)
    assert proc.returncode == 0, proc.stderr
    raw = specpack("inspect", "hostile.pack", "--json", cwd=work)
    assert raw.returncode == 0, raw.stderr
    assert raw.stdout.isascii()
    kwargs = json.loads(raw.stdout)["manifest"]["kwargs"]
    assert kwargs["payload"] == hostile  # escaped, not lost
    text = specpack("inspect", "hostile.pack", cwd=work)
    assert text.returncode == 0, text.stderr
    for c in ("\u009b", "\u202e", "\x1b"):
        assert c not in text.stdout
    assert "\\u202e" in text.stdout


# -- --key-file --------------------------------------------------------------------------------------


def test_key_file_bytes_are_the_key_exactly(work: Path, tmp_path: Path) -> None:
    key = b"  spaced key, 32 bytes or more to sign with\n"
    (tmp_path / "exact.key").write_bytes(key)
    (tmp_path / "stripped.key").write_bytes(key.strip())
    pack = sp.capture("CartPole-v1")
    dump(pack, tmp_path / "signed.pack", key=key)
    ok = specpack("inspect", "signed.pack", "--key-file", "exact.key", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    signature = next(ln for ln in ok.stdout.splitlines() if ln.startswith("signature"))
    assert signature.split()[1] == "valid", signature
    # A file holding the stripped key is another key.
    bad = specpack("inspect", "signed.pack", "--key-file", "stripped.key", cwd=tmp_path)
    assert_one_line_error(bad, "signed.pack", "--key-file stripped.key")
    run = specpack("run", "signed.pack", "--key-file", "exact.key", "--steps", "3", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
