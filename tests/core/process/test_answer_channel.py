"""The answer channel is keyed: an env that finds it (fd numbers on the command line, pipes in
``/proc/self/fd``) and writes a well-formed answer frame there cannot choose the outcome of a
task, nor verify's verdict; the parent names the violation."""

from __future__ import annotations

import time

import pytest

import specpack
from specpack._core._process.worker import run_one

pytestmark = pytest.mark.integration
EVERY_WHERE = ["subprocess", "spawn", "forkserver", "fork"]


@pytest.mark.parametrize("then", ["exit", "return"])
@pytest.mark.parametrize("where", EVERY_WHERE)
def test_a_job_writing_a_wellformed_answer_to_every_pipe_cannot_choose_the_outcome(where, then):
    # the pipes this process already has (pytest's, a forkserver's) are left alone: a fork
    # child inherits them, and garbage there would break this test session, not the worker
    import hostilejobs

    skip = tuple(hostilejobs.pipe_fds().values())
    out = run_one(where, "hostilejobs:forge", b"", {"then": then, "skip": skip},
                  deadline=time.monotonic() + 60)
    assert out.value != "forged", out
    assert out.status == "died", out
    assert out.error.startswith("WorkerDied: ProtocolError: the "), out
    assert "sent a frame without this worker's key" in out.error, out


def test_the_fresh_interpreter_finds_no_fd_numbers_in_its_argv_or_environment():
    argv = run_one("subprocess", "hostilejobs:argv", b"", {}, deadline=time.monotonic() + 60)
    assert argv.status == "ok", argv
    assert argv.value == ["-c"], argv.value


def test_an_env_that_forges_the_rebuilds_answer_cannot_make_verify_say_identical(monkeypatch):
    import forgingenvs

    monkeypatch.setattr(forgingenvs, "HERE", True)
    report = specpack.verify(specpack.capture("Forger-v0"), steps=forgingenvs.STEPS,
                             seed=forgingenvs.SEED)
    assert not report
    assert report.status == "rebuild_error", report
    assert "ProtocolError" in report.differences[0], report.differences
    assert "without this worker's key" in report.differences[0], report.differences
