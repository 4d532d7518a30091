"""A "bare" worker is a fresh interpreter that sees only what an installed node would have:
an empty working directory, no PYTHONPATH, no user site, this process's folders hidden (a
mount namespace as root, a user namespace, or the audit-hook fallback), specpack's own package
and the interpreter kept visible; nothing of it leaks into this process's mounts."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from specpack._core._process import bare
from specpack._core._process.worker import Worker

MECHANISMS = {"mount": bare.MOUNT, "userns": bare.USERNS, "audit": bare.AUDIT}


def _run(expr: str, hide: list[str] = ()) -> tuple[object, dict]:
    """Evaluate ``expr`` in a bare worker; its outcome and the child's report."""
    with Worker("bare", hide=hide) as worker:
        worker.submit("builtins:eval", expr.encode(), {})
        outcome = worker.collect(60)
        report = bare.read_report(worker.child.report)
    return outcome, report


@pytest.fixture(params=sorted(MECHANISMS))
def mechanism(request, monkeypatch):
    monkeypatch.setenv(bare.FORCE_VARIABLE, request.param)
    return MECHANISMS[request.param]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A user's project folder on PYTHONPATH and sys.path, with a module and a data file."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "my_envs.py").write_text("VALUE = 1\n")
    (folder / "level.txt").write_text("7\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(folder), os.environ.get("PYTHONPATH")])))
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_bare_worker_sees_an_empty_folder_no_pythonpath_no_user_site_and_no_project(
        project, mechanism):
    expr = ("(__import__('os').listdir('.'), 'PYTHONPATH' in __import__('os').environ, "
            "__import__('sys').flags.no_user_site, __import__('specpack').__name__, "
            "__import__('importlib.util').util.find_spec('my_envs') is None)")
    outcome, report = _run(expr)
    assert outcome.status == "ok", outcome.detail
    assert outcome.value == ([], False, 1, "specpack", True)
    assert report["mechanism"] == mechanism
    assert (str(project.resolve()), True) in report["rules"]


def test_bare_worker_cannot_read_a_file_in_a_hidden_folder(project, mechanism):
    outcome, _ = _run(f"open({str(project / 'level.txt')!r}).read()")
    assert outcome.status == "error"
    expected = "PermissionError" if mechanism == bare.AUDIT else "FileNotFoundError"
    assert expected in outcome.error and "level.txt" in outcome.error


def test_a_plain_fresh_interpreter_still_sees_the_project(project):
    with Worker("subprocess") as worker:
        worker.submit("builtins:eval", f"open({str(project / 'level.txt')!r}).read()".encode(),
                      {})
        assert worker.collect(60).value == "7\n"


@pytest.mark.parametrize("force", ["mount", "userns"])
def test_hiding_the_folder_that_holds_the_interpreter_keeps_it_and_specpack(
        tmp_path, monkeypatch, force):
    monkeypatch.setenv(bare.FORCE_VARIABLE, force)
    outer = Path(sys.prefix).resolve().parent  # holds the venv (and, here, the checkout)
    marker = outer / f"specpack-bare-marker-{os.getpid()}"
    marker.write_text("x")
    try:
        outcome, report = _run(
            f"(__import__('numpy').__name__, {marker.name!r} in __import__('os').listdir("
            f"{str(outer)!r}), __import__('specpack._tools._verify.jobs').__name__)",
            hide=[str(outer)])
    finally:
        marker.unlink()
    assert outcome.status == "ok", outcome.detail
    assert outcome.value == ("numpy", False, "specpack")
    assert report["mechanism"] == MECHANISMS[force]
    assert (str(outer), True) in report["rules"]


def test_the_audit_hook_refuses_listing_a_hidden_folder(project, monkeypatch):
    monkeypatch.setenv(bare.FORCE_VARIABLE, "audit")
    outcome, _ = _run(f"__import__('os').listdir({str(project)!r})")
    assert outcome.status == "error" and "PermissionError" in outcome.error
    assert "hidden from a bare rebuild" in outcome.error


def test_a_bare_worker_leaves_this_process_mounts_unchanged(project, mechanism):
    before = Path("/proc/self/mountinfo").read_text()
    outcome, _ = _run("1")
    assert outcome.status == "ok"
    assert Path("/proc/self/mountinfo").read_text() == before


def test_an_unknown_forced_mechanism_is_refused_by_name(monkeypatch):
    monkeypatch.setenv(bare.FORCE_VARIABLE, "chroot")
    with pytest.raises(Exception, match="SPECPACK_BARE_FORCE='chroot' is not one of"):
        Worker("bare")


def test_hiding_the_temp_folder_keeps_the_worker_files_and_hides_the_rest(tmp_path, mechanism):
    """The worker's own files live in the temp folder: hidden with it, they stay visible."""
    temp = Path(tempfile.gettempdir()).resolve()
    other = tmp_path / "other.txt"  # in the temp folder too
    other.write_text("x")
    outcome, report = _run(f"__import__('os').path.isfile({str(other)!r}) and "
                           f"open({str(other)!r}).read()", hide=[str(temp)])
    assert (str(temp), True) in report["rules"]
    if mechanism == bare.AUDIT:  # the hook refuses the open (os.stat is no audit event)
        assert outcome.status == "error" and "PermissionError" in outcome.error
    else:
        assert outcome.status == "ok" and outcome.value is False, outcome.detail


def test_a_project_reached_through_a_symlink_is_hidden_by_its_real_path(tmp_path, monkeypatch,
                                                                         mechanism):
    real = tmp_path / "real-project"
    real.mkdir()
    (real / "level.txt").write_text("7\n")
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(link), os.environ.get("PYTHONPATH")])))
    outcome, report = _run(f"open({str(link / 'level.txt')!r}).read()")
    assert (str(real.resolve()), True) in report["rules"]
    assert outcome.status == "error", outcome.value


def test_a_module_from_the_user_site_is_named_as_lacking(tmp_path, monkeypatch):
    """A bare interpreter runs with -s: a module installed with pip --user is not there."""
    user_site = tmp_path / "user-site"
    user_site.mkdir()
    (user_site / "bare_user_mod.py").write_text("X = 1\n")
    monkeypatch.setattr("site.getusersitepackages", lambda: str(user_site))
    monkeypatch.syspath_prepend(str(user_site))
    texts = ["BuildError: cannot import bare_user_mod:X (ModuleNotFoundError: No module named "
             "'bare_user_mod')"]
    assert bare.lacking(texts, {"rules": []}) == [
        f"on a bare node, bare_user_mod (from {user_site / 'bare_user_mod.py'}) is not "
        "installed: install it on the node, or capture(..., self_contained=True)"]
    assert bare.lacking(["No module named 'json_not_there_anywhere'"], {"rules": []}) == []
