"""``specpack`` usage errors catch typos: did-you-mean for commands, options and choices, and
the hint when ``--import`` swallowed the env id or file that followed it.

Every case runs the real command line in a fresh interpreter and expects exit code 2 with one
``error:`` line (argparse's usage errors keep their ``specpack COMMAND: error:`` prefix).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_support import assert_one_line_error, env_modules, specpack

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("args", "prefix", "needles"),
    [
        (["capture", "CartPole-v1", "--outptu", "x.pack"], "specpack capture",
         ["unknown option --outptu; did you mean '--output'?"]),
        (["capture", "CartPole-v1", "-o", "x.pack", "--by-refrence"], "specpack capture",
         ["unknown option --by-refrence; did you mean '--by-reference'?"]),
        (["run", "some.pack", "--trsut"], "specpack run",
         ["unknown option --trsut; did you mean '--trust'?"]),
        (["verify", "some.pack", "--key-flie", "k"], "specpack verify",
         ["unknown option --key-flie; did you mean '--key-file'?"]),
        (["inspect", "some.pack", "--jsno"], "specpack inspect",
         ["unknown option --jsno; did you mean '--json'?"]),
        (["audit", "CartPole-v1", "--jbos", "2"], "specpack audit",
         ["unknown option --jbos; did you mean '--jobs'?"]),
        (["--debgu", "inspect", "some.pack"], "specpack",
         ["unknown option --debgu; did you mean '--debug'?"]),
        (["verfy", "some.pack"], "specpack", ["unknown command 'verfy'; did you mean 'verify'?"]),
        (["inspcet", "some.pack"], "specpack",
         ["unknown command 'inspcet'; did you mean 'inspect'?"]),
        (["verify", "some.pack", "--where", "spwan"], "specpack verify",
         ["invalid choice: 'spwan'; did you mean 'spawn'?"]),
        (["audit", "--reference", "frok"], "specpack audit",
         ["invalid choice: 'frok'; did you mean 'fork'?"]),
    ],
)
def test_a_mistyped_option_command_or_choice_gets_a_did_you_mean(
    tmp_path: Path, args: list[str], prefix: str, needles: list[str]
) -> None:
    proc = specpack(*args, cwd=tmp_path)
    assert_one_line_error(proc, *needles, prefix=prefix)
    assert not (tmp_path / "x.pack").exists()


def test_a_typo_is_reported_before_a_missing_required_option(tmp_path: Path) -> None:
    # argparse alone would complain about the missing -o/--output the typo caused.
    line = assert_one_line_error(
        specpack("capture", "CartPole-v1", "--outptu", "x.pack", cwd=tmp_path),
        prefix="specpack capture")
    assert "required" not in line


@pytest.mark.parametrize(
    ("args", "prefix", "needles"),
    [
        # The id is taken as a module and the ID positional is missing.
        (["capture", "--import", "gymnasium.envs", "CartPole-v1", "-o", "y.pack"],
         "specpack capture",
         ["required: ID", "if 'CartPole-v1' is the env ID, --import took it as a module",
          "put it before --import, or end the --import list with --"]),
        # The file is taken as a module and FILE is missing.
        (["run", "--import", "gymnasium.envs", "cartpole.pack"], "specpack run",
         ["required: FILE", "if 'cartpole.pack' is the pack FILE, --import took it as a module"]),
        # The id cannot be a module name: refused before anything is imported.
        (["capture", "Ant-v5", "--import", "gymnasium.envs", "CartPole-v1", "-o", "y.pack"],
         "specpack",
         ["--import 'CartPole-v1': not a module name or a .py file",
          "--import took it as a module", "end the --import list with --"]),
        (["audit", "--import", "gymnasium.envs", "CartPole-v1"], "specpack",
         ["--import 'CartPole-v1': not a module name or a .py file",
          "--import took it as a module"]),
    ],
)
def test_an_id_swallowed_by_import_gets_the_hint_everywhere(
    tmp_path: Path, args: list[str], prefix: str, needles: list[str]
) -> None:
    proc = specpack(*args, cwd=tmp_path)
    assert_one_line_error(proc, *needles, prefix=prefix)
    assert not (tmp_path / "y.pack").exists()


def test_double_dash_ends_the_import_list_and_options_may_follow_the_id(tmp_path: Path) -> None:
    proc = specpack("capture", "--import", "gymnasium.envs", "--", "CartPole-v1", "-o", "y.pack",
                    cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "y.pack").exists()
    # Control: without --, the id is swallowed (the case the hint is for).
    swallowed = specpack("capture", "--import", "gymnasium.envs", "CartPole-v1", "-o", "z.pack",
                         cwd=tmp_path)
    assert swallowed.returncode == 2 and not (tmp_path / "z.pack").exists()


def test_audit_takes_a_py_path_import_and_ends_its_list_with_double_dash(tmp_path: Path) -> None:
    env_modules(tmp_path)
    proc = specpack("audit", "--import", "envs/cli_ant_envs.py", "--", "CliAnt-v0",
                    "--steps", "3", "--jobs", "1", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert [(f["name"], f["status"]) for f in doc["envs"]] == [("CliAnt-v0", "identical")]


def test_debug_works_on_every_subcommand_including_audit(tmp_path: Path) -> None:
    (tmp_path / "broken_envs.py").write_text("raise RuntimeError('broken on purpose')\n")
    for args in (["audit", "CartPole-v1", "--import", "broken_envs.py"],
                 ["capture", "CartPole-v1", "--import", "broken_envs.py", "-o", "x.pack"]):
        plain = specpack(*args, cwd=tmp_path)
        line = assert_one_line_error(plain, "--import broken_envs.py",
                                     "RuntimeError: broken on purpose", "--debug")
        assert line.endswith("(run again with --debug for the traceback)")
        debug = specpack(*args, "--debug", cwd=tmp_path)
        assert debug.returncode == 2
        assert "Traceback" in debug.stderr and "broken on purpose" in debug.stderr
        assert debug.stderr.strip().splitlines()[-1].startswith("specpack: error: --import")


def test_audit_help_comes_from_the_one_parser_with_the_common_options(tmp_path: Path) -> None:
    proc = specpack("audit", "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for option in ("--debug", "--import", "--wrappers-only", "--reference", "--json"):
        assert option in proc.stdout
