"""The docs' sessions that show another gymnasium release, run under that release.

docs/audit.md shows what ``specpack audit --wrappers-only`` prints under gymnasium 1.0.0 (the
oldest 1.x release, whose ``AddRenderObservation`` and ``RecordEpisodeStatistics`` record their
arguments wrongly). CI's gymnasium 1.0.0 venv (``SPECPACK_OTHER_PYTHON``, with
``gymnasium[classic-control]`` for the render wrappers) runs the command here and the page's
lines are compared as every session's are (:mod:`docs_sessions`), with one more normalisation:
decimal numbers, since the sample names wall-clock times the wrapper puts in ``info``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from docs_blocks import ROOT, blocks_of, child_env, is_session
from docs_sessions import NOT_RUN, first_command, matches, normalised, steps_of

PAGE = ROOT / "docs" / "audit.md"
COMMAND = "specpack audit --wrappers-only        # gymnasium 1.0.0"


def _other_python() -> str:
    other = os.environ.get("SPECPACK_OTHER_PYTHON")
    if other:
        return other
    if os.environ.get("CI") == "true":
        pytest.fail("CI must set SPECPACK_OTHER_PYTHON to the python of a gymnasium 1.0.0 venv")
    pytest.skip("set SPECPACK_OTHER_PYTHON to the python of a gymnasium 1.0.0 venv")


def _numbers(text: str) -> str:
    return re.sub(r"\b\d+\.\d+\b", "<n>", text)


def test_the_gymnasium_1_0_wrapper_audit_prints_what_docs_audit_md_shows(tmp_path: Path) -> None:
    other = _other_python()
    version = subprocess.run([other, "-c", "import gymnasium; print(gymnasium.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == "1.0.0", f"SPECPACK_OTHER_PYTHON runs gymnasium {version}, not 1.0.0"
    assert (PAGE.relative_to(ROOT).as_posix(), COMMAND) in NOT_RUN
    [block] = [b for b in blocks_of(PAGE) if is_session(b) and first_command(b) == COMMAND]
    [(_, shown)] = steps_of(block)
    env = child_env(tmp_path)
    env["COLUMNS"] = "200"
    proc = subprocess.run([other, "-m", "specpack", "audit", "--wrappers-only"], cwd=tmp_path,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    want = _numbers(normalised("\n".join(shown), tmp_path)).split("\n")
    got = _numbers(normalised(proc.stdout, tmp_path)).split("\n")
    assert matches([ln for ln in want if ln], [ln for ln in got if ln]), (
        f"docs/audit.md's gymnasium 1.0.0 sample drifted; printed (exit {proc.returncode}):\n"
        f"{proc.stdout}")
