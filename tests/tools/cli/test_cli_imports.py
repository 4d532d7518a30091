"""The one ``--import`` (:func:`specpack._tools._imports.import_targets`), in this process and on every
subcommand that takes it.

The working directory is searched even where Python does not put it on the path (the console
script), a ``.py`` path is loaded as the module named after the file, and every failure is one
:class:`~specpack.CaptureError` naming the item.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli_support import assert_one_line_error, console, console_script, env_modules, specpack

from specpack._core._errors import CaptureError
from specpack._tools._imports import import_targets

# -- import_targets, in this process ------------------------------------------------------------


@pytest.fixture
def in_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory; the modules and sys.path entries the test adds are removed after."""
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    path = list(sys.path)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]
    sys.path[:] = path


def test_a_py_path_loads_as_the_module_named_after_the_file_once(in_dir: Path) -> None:
    (in_dir / "envs").mkdir()
    (in_dir / "envs" / "cli_imp_once.py").write_text("import itertools\nRUNS = []\nRUNS.append(1)\n")
    assert import_targets(["envs/cli_imp_once.py"]) == ["cli_imp_once"]
    module = sys.modules["cli_imp_once"]
    assert module.__file__ == os.path.realpath(in_dir / "envs" / "cli_imp_once.py")
    # The same file again is the same module, not a second run of its code.
    assert import_targets(["envs/cli_imp_once.py", "cli_imp_once"]) == ["cli_imp_once"] * 2
    assert sys.modules["cli_imp_once"].RUNS == [1]


def test_a_module_in_the_working_directory_is_found_without_it_on_the_path(in_dir: Path) -> None:
    (in_dir / "cli_imp_cwd.py").write_text("VALUE = 7\n")
    for entry in ("", os.getcwd()):
        while entry in sys.path:
            sys.path.remove(entry)
    assert import_targets(["cli_imp_cwd"]) == ["cli_imp_cwd"]
    assert sys.modules["cli_imp_cwd"].VALUE == 7
    # The working directory comes after the installed packages: it cannot hide one.
    assert sys.path[-1] == os.getcwd()


@pytest.mark.parametrize(
    ("files", "names", "needles"),
    [
        ({}, ["CartPole-v1"], ["'CartPole-v1': not a module name or a .py file",
                               "give a module name"]),
        ({}, ["envs/missing.py"], ["envs/missing.py: no such file"]),
        ({}, ["cli_imp_nowhere_xyz"], ["no module named 'cli_imp_nowhere_xyz'",
                                       "working directory"]),
        ({"json.py": "X = 1\n"}, ["json.py"], ["a module named 'json' is already loaded",
                                               "rename the file"]),
        ({"cli_imp_raises.py": "1 / 0\n"}, ["cli_imp_raises.py"],
         ["cli_imp_raises.py: importing the module raised ZeroDivisionError: division by zero"]),
        ({"cli_imp_exits.py": "import sys\nsys.exit(3)\n"}, ["cli_imp_exits"],
         ["cli_imp_exits: importing the module raised SystemExit: 3"]),
    ],
)
def test_every_import_failure_is_a_capture_error_naming_the_item(
    in_dir: Path, files: dict[str, str], names: list[str], needles: list[str]
) -> None:
    for name, text in files.items():
        (in_dir / name).write_text(text)
    with pytest.raises(CaptureError) as info:
        import_targets(names)
    for needle in needles:
        assert needle in str(info.value)


def test_a_file_that_raises_leaves_no_half_run_module_behind(in_dir: Path) -> None:
    (in_dir / "cli_imp_half.py").write_text("STARTED = True\nraise ValueError('half')\n")
    with pytest.raises(CaptureError):
        import_targets(["cli_imp_half.py"])
    assert "cli_imp_half" not in sys.modules


def test_names_are_all_checked_before_any_module_runs(in_dir: Path) -> None:
    (in_dir / "cli_imp_first.py").write_text("open('ran', 'w').close()\n")
    with pytest.raises(CaptureError, match="Pong-v0"):
        import_targets(["cli_imp_first", "Pong-v0"])
    assert not (in_dir / "ran").exists()
    assert "cli_imp_first" not in sys.modules


# -- --import on the command line -------------------------------------------------------------


@pytest.fixture(scope="module")
def envdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return env_modules(tmp_path_factory.mktemp("imports"))


@pytest.mark.integration
def test_capture_and_audit_take_the_same_import_by_name_from_the_console_script(
    envdir: Path,
) -> None:
    # The console script, unlike `python -m`, does not put the working directory on the path.
    assert console_script().exists()
    captured = console("capture", "CliAnt-v0", "--import", "cli_ant_envs", "-o", "cwd.pack",
                       cwd=envdir)
    assert captured.returncode == 0, captured.stderr
    audited = console("audit", "CliAnt-v0", "--import", "cli_ant_envs", "--steps", "3",
                      "--jobs", "1", "--json", cwd=envdir)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    doc = json.loads(audited.stdout)
    assert [(f["name"], f["status"]) for f in doc["envs"]] == [("CliAnt-v0", "identical")]
    by_path = console("audit", "CliAnt-v0", "--import", "envs/cli_ant_envs.py", "--steps", "3",
                      "--jobs", "1", "--json", cwd=envdir)
    assert by_path.returncode == 0, by_path.stdout + by_path.stderr
    assert json.loads(by_path.stdout)["envs"][0]["status"] == "identical"


@pytest.mark.integration
def test_run_and_verify_import_what_a_by_reference_file_needs(envdir: Path) -> None:
    made = specpack("capture", "CliAnt-v0", "--import", "envs/cli_ant_envs.py", "--by-reference",
                    "-o", "byref.pack", cwd=envdir)
    assert made.returncode == 0, made.stderr
    # Control: nothing here can import cli_ant_envs by name for this file.
    sub = envdir / "elsewhere"
    sub.mkdir(exist_ok=True)
    refused = specpack("run", "../byref.pack", "--steps", "5", cwd=sub)
    assert_one_line_error(refused, "cli_ant_envs")
    run = specpack("run", "--import", "../envs/cli_ant_envs.py", "../byref.pack",
                   "--steps", "5", cwd=sub)
    assert run.returncode == 0, run.stderr
    inspect = specpack("inspect", "../byref.pack", "--import", "cli_not_needed_xyz", cwd=sub)
    assert_one_line_error(inspect, "--import cli_not_needed_xyz", "no module named")
