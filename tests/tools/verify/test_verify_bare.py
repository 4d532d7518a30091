"""verify(where="bare") rebuilds where only installed distributions are visible and names what
a bare node would lack: a module of the user's project (by reference), a data file there; an
env made only of installed code (CartPole) is identical. The same with the audit-hook
fallback, and the namespace never leaks into this process."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

import specpack
from specpack._core._process import bare

MODULE = textwrap.dedent("""
    import gymnasium
    import numpy as np


    class ProjectEnv(gymnasium.Env):
        def __init__(self, level=None):
            self.value = 0.0
            if level is not None:
                with open(level) as fh:
                    self.value = float(fh.read())
            self.observation_space = gymnasium.spaces.Box(-10.0, 10.0, (1,), np.float64)
            self.action_space = gymnasium.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.array([self.value]), {}

        def step(self, action):
            return np.array([self.value + action]), 1.0, False, False, {}
""")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A user's project on PYTHONPATH (and sys.path) holding my_envs.py and level.txt."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "bare_project_envs.py").write_text(MODULE)
    (folder / "level.txt").write_text("3\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(folder), os.environ.get("PYTHONPATH")])))
    monkeypatch.syspath_prepend(str(folder))
    import bare_project_envs

    yield folder, bare_project_envs
    import sys

    sys.modules.pop("bare_project_envs", None)


def _by_reference(module):
    return specpack.capture(module.ProjectEnv, by_value=False, max_episode_steps=20)


@pytest.fixture(params=["namespace", "audit"])
def force(request, monkeypatch):
    if request.param == "audit":
        monkeypatch.setenv(bare.FORCE_VARIABLE, "audit")
    return bare.AUDIT if request.param == "audit" else bare.MOUNT


def test_a_project_module_on_pythonpath_is_identical_in_a_fresh_interpreter(project):
    _, module = project
    report = specpack.verify(_by_reference(module), steps=5)
    assert report.status == "identical", str(report)


def test_bare_names_the_project_module_a_node_would_lack_and_the_fix(project, force):
    folder, module = project
    report = specpack.verify(_by_reference(module), steps=5, where="bare")
    assert report.status == "rebuild_error", str(report)
    first = report.differences[0]
    assert first.startswith("on a bare node, bare_project_envs (from "), first
    assert str(folder) in first and "is not installed: install it on the node" in first
    assert "self_contained=True" in first
    assert any(n.startswith(f"bare: {force} hid ") for n in report.notes), report.notes
    assert "bare interpreter" in str(report)


def test_bare_names_a_data_file_of_the_project_passed_by_kwarg(project, force, monkeypatch):
    folder, module = project
    monkeypatch.chdir(folder)  # the user runs from the project folder
    pack = specpack.capture(module.ProjectEnv, by_value=True, max_episode_steps=20,
                            level=str(folder / "level.txt"))
    assert specpack.verify(pack, steps=5).status == "identical"
    report = specpack.verify(pack, steps=5, where="bare")
    assert report.status == "rebuild_error", str(report)
    first = report.differences[0]
    assert first == (f"on a bare node, {folder / 'level.txt'} does not exist: copy it there, or "
                     "capture(..., self_contained=True) to carry it (name it in assets=[...] if "
                     "no argument names it)"), str(report)
    # the traceback's frames name the module's file (by value: nothing a node lacks)
    lacks = [d for d in report.differences if d.startswith("on a bare node")]
    assert len(lacks) == 1, lacks


def test_cartpole_is_identical_in_a_bare_interpreter(force):
    report = specpack.verify(specpack.capture("CartPole-v1"), steps=30, where="bare")
    assert report.status == "identical", str(report)
    assert report.where == "bare"
    assert report.hash_seeds["rebuild"] is not None  # seeded like any fresh interpreter
    assert any(n.startswith(f"bare: {force}") for n in report.notes), report.notes


def test_verify_bare_leaves_this_process_mounts_unchanged(project):
    _, module = project
    before = Path("/proc/self/mountinfo").read_text()
    specpack.verify(_by_reference(module), steps=3, where="bare")
    assert Path("/proc/self/mountinfo").read_text() == before


def test_bare_is_a_boundary_of_verify_and_the_cli():
    from specpack._tools._cli.parsers import build_parser
    from specpack._tools._verify.engine import WHERE

    assert "bare" in WHERE
    ns = build_parser().parse_args(["verify", "CartPole-v1", "--where", "bare"])
    assert ns.where == "bare"
