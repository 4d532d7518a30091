"""``specpack check FILE``: a pack file checked against its seal, and a file that has none.

The command reads the seal a sealed file carries (``pack.seal``); its core,
:func:`specpack._tools._cli.check.check_file`, takes the seal as an argument, so the happy path is
tested here with a seal made by ``make_seal`` for the file's pack.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import sealenvs  # noqa: F401 - registers SealCounter-v0
from _cli_support import ANT_MODULE, assert_error, assert_one_line_error, specpack

import specpack as sp
from specpack._core._errors import SpecPackError
from specpack._tools._cli.check import NOT_SEALED, SEAL_IN_PYTHON, SEAL_ON_CLI, check_file
from specpack._tools._seal import make_seal
from specpack.files import dump

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with two unsealed pack files: CartPole (by reference) and SealCounter-v0."""
    d = tmp_path_factory.mktemp("check")
    dump(sp.capture("CartPole-v1"), d / "cartpole.pack")
    dump(sp.capture("SealCounter-v0"), d / "counter.pack")
    return d


def test_check_is_a_command_with_verifys_loading_options(tmp_path: Path) -> None:
    top = specpack("--help", cwd=tmp_path)
    assert top.returncode == 0 and "check" in top.stdout
    proc = specpack("check", "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for option in ("--trust", "--key-file", "--allow", "--import", "--timeout", "--where",
                   "--json"):
        assert option in proc.stdout, option


def test_check_of_an_unsealed_file_is_one_line_naming_capture_seal_and_what_to_run(
        work: Path) -> None:
    # issue 31: the command line seals (capture --seal): the fix names it, and verify.
    proc = specpack("check", "cartpole.pack", cwd=work)
    line = assert_one_line_error(proc, "not sealed", "specpack capture ID --seal STEPS",
                                 "--self-contained", "specpack verify FILE")
    assert NOT_SEALED in line and SEAL_ON_CLI in line and "specpack.dump(specpack.seal(pack)" not in line
    with pytest.raises(SpecPackError) as info:
        check_file(str(work / "cartpole.pack"))
    assert str(info.value).endswith(SEAL_IN_PYTHON) and "specpack verify" not in str(info.value)


def test_check_of_a_missing_file_and_an_untrusted_by_value_file_say_so(
        work: Path, tmp_path: Path) -> None:
    assert_one_line_error(specpack("check", "nope.pack", cwd=work), "nope.pack", "no such file")
    (tmp_path / "cli_ant_envs.py").write_text(ANT_MODULE)
    made = specpack("capture", "CliAnt-v0", "-o", "ant.pack", "--import", "cli_ant_envs.py",
                    cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert_error(specpack("check", "ant.pack", cwd=tmp_path), "--trust")


def test_check_file_with_the_files_seal_is_identical(work: Path) -> None:
    path = str(work / "cartpole.pack")
    seal = make_seal(sp.load(path), steps=20, timeout=60)
    pack, report = check_file(path, seal, timeout=60)
    assert report and report.status == "identical", str(report)
    assert pack.id == "CartPole-v1" and report.steps == 20
    _, here = check_file(path, seal, where="here", timeout=60)
    assert here, str(here)


def test_check_file_names_the_first_step_that_differs_from_the_seal(
        work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(work / "counter.pack")
    seal = make_seal(sp.load(path), steps=25, timeout=60, ignore_info=["clock"])
    monkeypatch.setenv("SEALENV_DRIFT_AT", "17")
    _, report = check_file(path, seal, timeout=60)
    assert (report.status, report.step, report.field) == ("not_identical", 17, "observation")
    assert "step 17: observation differs from the seal" in str(report)
    monkeypatch.delenv("SEALENV_DRIFT_AT")
    shorter = dataclasses.replace(seal, steps=10, digests=seal.digests[:11])
    _, again = check_file(path, shorter, timeout=60)
    assert again, str(again)


def test_check_file_without_a_seal_refuses_the_unsealed_file(work: Path) -> None:
    with pytest.raises(sp.SpecPackError, match=r"not sealed.*specpack\.seal\(pack\)"):
        check_file(str(work / "cartpole.pack"))


def test_specpack_check_of_a_sealed_file_end_to_end(work: Path) -> None:
    """A file written from ``specpack.seal(pack)`` carries its seal: ``specpack check FILE`` rebuilds it
    and exits 0; under a changed env (the variable stands for another machine's library) it
    exits 1 naming the first step and field that differ, also in ``--json``."""
    import json
    import os

    sealed = sp.seal(sp.capture("SealCounter-v0"), steps=25, seed=0, ignore_info=["clock"])
    assert sealed.sealed is not None and sealed.sealed.steps == 25
    dump(sealed, work / "sealed.pack")
    loaded = sp.load(work / "sealed.pack")
    assert loaded.sealed == sealed.sealed
    ok = specpack("check", "sealed.pack", cwd=work)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "identical" in ok.stdout
    drifted = {**os.environ, "SEALENV_DRIFT_AT": "17"}
    bad = specpack("check", "sealed.pack", cwd=work, env=drifted)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "step 17: observation differs from the seal" in bad.stdout
    doc = specpack("check", "sealed.pack", "--json", cwd=work, env=drifted)
    assert doc.returncode == 1, doc.stderr
    report = json.loads(doc.stdout)
    assert (report["status"], report["step"], report["field"]) == ("not_identical", 17,
                                                                    "observation")
