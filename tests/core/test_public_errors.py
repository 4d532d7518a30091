"""The errors a user meets read ``specpack.X`` in tracebacks (``specpack.BuildTypeError``, not
``specpack._core._errors.BuildTypeError``; ``specpack.UnknownKeywordError``, which was not
exported), are exported where they say, and pickle by that name across processes."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from _helpers import run_python

import specpack

SCRIPT = r'''
import sys, gymnasium, specpack

class Picky(gymnasium.Env):
    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)
    def __init__(self, size=1):
        if size != 1:
            raise TypeError("size must be 1")

case = sys.argv[1]
if case == "build":
    specpack.capture(Picky).make(size=2)
elif case == "keyword":
    specpack.load("missing.pack", trsut=True)
elif case == "flag":
    specpack.load("missing.pack", trust="no")
elif case == "missing":
    specpack.load("missing.pack")
elif case == "verify":
    specpack.verify("CartPole-v1")
'''

CASES = {
    "build": "specpack.BuildTypeError: ",
    "keyword": "specpack.UnknownKeywordError: load() got an unexpected keyword argument 'trsut'",
    "flag": "specpack.ArgumentTypeError: specpack.load() got trust='no'",
    "missing": "specpack.PackFileNotFoundError: missing.pack: no such file",
    "verify": "specpack.ArgumentTypeError: specpack.verify takes a SpecPack",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_traceback_names_the_error_where_users_import_it(tmp_path: Path, case: str) -> None:
    (tmp_path / "raise_it.py").write_text(SCRIPT)
    proc = run_python(["raise_it.py", case], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(CASES[case]), last
    assert "specpack._" not in last


@pytest.mark.parametrize("name", ["ArgumentTypeError", "BuildTypeError", "BuildValueError",
                                  "BuildDependencyError", "PackFileNotFoundError",
                                  "UnknownKeywordError"])
def test_each_is_exported_and_pickles_by_its_public_name(name: str) -> None:
    cls = getattr(specpack, name)
    assert cls.__module__ == "specpack" and name in specpack.__all__
    assert issubclass(cls, specpack.SpecPackError)
    assert pickle.loads(pickle.dumps(cls)) is cls
    blob = pickle.dumps(cls("message"))
    assert b"specpack._" not in blob
    assert type(pickle.loads(blob)) is cls
