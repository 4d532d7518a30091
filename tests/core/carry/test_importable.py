"""Whether a fresh interpreter of this installation could import a module by name: what decides
if a capture carries code by reference or by value."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest
from _helpers import FIXTURES

from specpack._core._carry.importable import fresh_importable


def test_builtin_frozen_and_stdlib_modules_are_importable_their_missing_parts_not() -> None:
    assert fresh_importable("sys") and not fresh_importable("sys.anything")
    assert fresh_importable("zipimport")  # a frozen module
    assert fresh_importable("json") and fresh_importable("json.decoder")
    assert not fresh_importable("json.no_such_module")
    assert not fresh_importable("json.decoder.inner")  # json.decoder is no package
    assert not fresh_importable("no_such_top_level_module_for_specpack")
    assert not fresh_importable("__main__")


def test_a_module_built_at_run_time_is_not_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "specpack_runtime_module", types.ModuleType("x"))
    assert not fresh_importable("specpack_runtime_module")


def write_module(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.py"
    path.write_text("VALUE = 1\n")
    return path


def load_from(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_module_only_on_this_processs_path_is_not_importable_but_on_pythonpath_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here_only = f"specpack_here_only_{os.getpid()}"
    write_module(tmp_path / "a", here_only)
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    assert not fresh_importable(here_only)
    # tests/fixtures is on PYTHONPATH (tests/conftest.py), which a fresh interpreter inherits
    assert fresh_importable("verifyenvs")


def test_a_module_loaded_from_another_file_than_a_fresh_import_finds_is_not_importable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "verifyenvs.py"
    copy.write_text((FIXTURES / "verifyenvs.py").read_text())
    monkeypatch.setitem(sys.modules, "verifyenvs", load_from(copy, "verifyenvs"))
    assert not fresh_importable("verifyenvs")  # the name would import the other file
    original = load_from(FIXTURES / "verifyenvs.py", "verifyenvs")
    monkeypatch.setitem(sys.modules, "verifyenvs", original)
    assert fresh_importable("verifyenvs")
