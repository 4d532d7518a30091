"""docs/multi-agent.md: every ```python block is a complete program that runs as it is, each in
a fresh interpreter (worker processes included).

Runs in CI's pettingzoo venv only (``SPECPACK_PETTINGZOO_TESTS=1``); elsewhere the module
collects no tests.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ENABLED = os.environ.get("SPECPACK_PETTINGZOO_TESTS") == "1"
__test__ = ENABLED

if ENABLED:
    from _helpers import ROOT, run_python

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "multi-agent.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_its_recipes() -> None:
    assert len(BLOCKS) >= 7


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_python_block_runs_as_a_program(index: int, tmp_path: Path) -> None:
    script = tmp_path / f"block{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    proc = run_python([str(script)], cwd=tmp_path, timeout=300,
                      env={"PYTHONPATH": os.pathsep.join(
                          [str(ROOT), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip(), "a recipe prints what it shows"
