"""``specpack`` usage errors catch typos: did-you-mean for commands, options and choices (no
abbreviated options), and how to write ``--import``/``--allow``, which take one value each.

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


def test_import_takes_one_module_and_repeats_with_the_id_anywhere(tmp_path: Path) -> None:
    env_modules(tmp_path)
    before = specpack("capture", "--import", "gymnasium.envs", "--import", "envs/cli_ant_envs.py",
                      "CliAnt-v0", "-o", "y.pack", cwd=tmp_path)
    assert before.returncode == 0, before.stderr
    after = specpack("capture", "CliAnt-v0", "-o", "z.pack", "--import", "envs/cli_ant_envs.py",
                     cwd=tmp_path)
    assert after.returncode == 0, after.stderr
    run = specpack("run", "--import", "envs/cli_ant_envs.py", "y.pack", "--trust", "--steps", "3",
                   cwd=tmp_path)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize(
    ("args", "prefix", "needles"),
    [
        # The list form of 0.2: the second module became the ID, the ID is left over.
        (["capture", "--import", "gymnasium.envs", "gymnasium", "CartPole-v1", "-o", "y.pack"],
         "specpack", ["unrecognized arguments: CartPole-v1",
                      "--import takes one value",
                      "(--import gymnasium.envs --import gymnasium)"]),
        # A list ended with --, options after the ID: argparse would take them as positionals.
        (["capture", "--import", "gymnasium.envs", "--", "CartPole-v1", "-o", "y.pack"],
         "specpack", ["--import takes one value, so no -- is needed after it"]),
        (["audit", "--import", "gymnasium.envs", "gymnasium", "--", "CartPole-v1"],
         "specpack", ["(--import gymnasium.envs --import gymnasium)"]),
        (["run", "x.pack", "--allow", "my_pkg", "other_pkg", "--trust"], "specpack",
         ["unrecognized arguments: other_pkg", "--allow takes one value",
          "(--allow my_pkg --allow other_pkg)"]),
    ],
)
def test_the_old_list_form_of_import_and_allow_says_how_to_write_it(
    tmp_path: Path, args: list[str], prefix: str, needles: list[str]
) -> None:
    proc = specpack(*args, cwd=tmp_path)
    assert_one_line_error(proc, *needles, prefix=prefix)
    assert not (tmp_path / "y.pack").exists()


def test_audit_takes_a_py_path_import_before_its_targets(tmp_path: Path) -> None:
    env_modules(tmp_path)
    proc = specpack("audit", "--import", "envs/cli_ant_envs.py", "CliAnt-v0",
                    "--steps", "3", "--jobs", "1", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert [(f["name"], f["status"]) for f in doc["envs"]] == [("CliAnt-v0", "identical")]


@pytest.mark.parametrize(
    ("args", "prefix", "needles"),
    [
        (["capture", "CartPole-v1", "--max-episode-step", "20", "-o", "y.pack"],
         "specpack capture",
         ["unknown option --max-episode-step; did you mean '--max-episode-steps'?"]),
        (["capture", "CartPole-v1", "--out", "y.pack"], "specpack capture",
         ["unknown option --out; did you mean '--output'?"]),
        (["verify", "x.pack", "--tru"], "specpack verify",
         ["unknown option --tru; did you mean '--trust'?"]),
        (["audit", "CartPole-v1", "--wrappers-o"], "specpack audit",
         ["unknown option --wrappers-o"]),
        (["--deb", "inspect", "x.pack"], "specpack",
         ["unknown option --deb; did you mean '--debug'?"]),
    ],
)
def test_an_abbreviated_option_is_refused_with_the_full_name(
    tmp_path: Path, args: list[str], prefix: str, needles: list[str]
) -> None:
    proc = specpack(*args, cwd=tmp_path)
    assert_one_line_error(proc, *needles, prefix=prefix)
    assert not (tmp_path / "y.pack").exists()


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
