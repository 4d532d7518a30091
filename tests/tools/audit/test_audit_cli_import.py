"""The 0.2 form ``specpack audit --import a b``: ``b`` is never silently audited as a TARGET.

In 0.3 ``--import`` takes one module and is repeated for more, so ``b`` is a TARGET. When
``b`` is a module that registers no env yet, the 0.2 reader meant "import both"; auditing every
env ``b`` registers (178 minigrid envs for ``--import ale_py minigrid``) without a word is not
an answer. The CLI refuses it (exit 2), saying how 0.3 reads it and how to write either
meaning; a TARGET that names registered envs, or one written before the options, is audited.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from _helpers import FIXTURES, run_python

pytestmark = pytest.mark.integration

ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES),
                                                   os.environ.get("PYTHONPATH")]))}
MODULES = ["partialenvs"] + (["minigrid"] if importlib.util.find_spec("minigrid") else [])


def cli(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    proc = run_python(["-m", "specpack", "audit", *args], cwd=tmp_path, timeout=300, env=ENV)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("form", ["--import auditpkg", "--import=auditpkg"])
def test_a_module_right_after_imports_value_is_refused_with_how_0_3_reads_it(
        tmp_path: Path, module: str, form: str) -> None:
    code, out, err = cli(tmp_path, *form.split(), module, "--steps", "3")
    assert code == 2 and out == "", (code, out[-2000:])  # nothing was audited
    said = " ".join(err.split())
    assert f"'{module}' right after --import auditpkg is read as a TARGET" in said
    assert f"to import both, write --import auditpkg --import {module}" in said
    assert f"(specpack audit {module} --import auditpkg)" in said


def test_what_the_refusal_says_works_both_ways(tmp_path: Path) -> None:
    # import both (the 0.2 meaning), auditing one id
    code, out, err = cli(tmp_path, "--import", "auditpkg", "--import", "partialenvs",
                         "PartialPole-long-v0", "--steps", "3", "--json")
    assert code == 0, err
    assert [f["name"] for f in json.loads(out)["envs"]] == ["PartialPole-long-v0"]
    # the module as a TARGET, written before the options: every env it registers
    code, out, err = cli(tmp_path, "partialenvs", "--import", "auditpkg", "--steps", "3",
                         "--json")
    names = [f["name"] for f in json.loads(out)["envs"]]
    assert "PartialPole-long-v0" in names and "LocalPartialPole-short-v0" in names, err


def test_a_registered_id_or_namespace_right_after_imports_value_is_a_target(
        tmp_path: Path) -> None:
    code, out, err = cli(tmp_path, "--import", "auditpkg", "auditpkg/Good-v0", "--steps", "3",
                         "--json")
    assert code == 0, err
    assert [f["name"] for f in json.loads(out)["envs"]] == ["auditpkg/Good-v0"]
