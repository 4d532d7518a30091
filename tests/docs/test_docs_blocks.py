"""Every ```python block of README.md and docs/ runs as written and prints what the page shows.

One test per block, named by page and line. A block that needs a library outside specpack's
dependencies names its install line (``# requires: pip install ".[tianshou]"``) and is marked
``requires_tianshou``; where the line's requirements are missing the test is skipped with the
reason, and under CI=true a skip is a failure (tests/conftest.py), so CI runs it in a venv
made with that line (.ci/run). Without ``-m``, such blocks are deselected (tests/docs/conftest.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from docs_blocks import (
    ROOT,
    Block,
    InstallLine,
    blocks_of,
    install_lines,
    missing,
    pages,
    python_blocks,
    run_block,
    undeclared_imports,
)

BLOCKS = python_blocks()


def _param(block: Block) -> object:
    marks = [pytest.mark.integration]
    if block.install is not None:
        marks.append(getattr(pytest.mark, block.install.marker))
    return pytest.param(block, id=block.where, marks=marks)


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_docs_python_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    unmet = [why for r in block.requires if (why := missing(r)) is not None]
    if unmet and block.install is not None:
        why = (f"{block.where} needs {block.install.command}: {'; '.join(unmet)}. Run it "
               f"in a venv made with that line (pytest tests/docs -m {block.install.marker})")
        if os.environ.get("CI") == "true":  # CI made this venv with that line: it must hold
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    failure = run_block(block, tmp_path)
    if failure is not None:
        pytest.fail(failure, pytrace=False)


def test_docs_blocks_declare_their_optional_libraries() -> None:
    """A block importing ray, SB3, Tianshou, ... names an install line that brings them."""
    bad = [f"{b.where}: imports {', '.join(u)}, which its install line does not bring "
           f"({b.install.command if b.install else 'no # requires: line'})"
           for b in BLOCKS if (u := undeclared_imports(b))]
    assert not bad, "\n".join(bad)


def test_every_install_line_of_the_docs_is_shown_on_its_page() -> None:
    """The line a block's header names is the line its page tells the reader to run."""
    def shown(path: Path) -> str:
        return "\n".join(ln for ln in path.read_text("utf-8").splitlines()
                         if not ln.lstrip().startswith("# requires:"))

    bad = [f"{b.where}: the page never shows {b.install.command!r} outside the headers"
           for b in BLOCKS if b.install is not None and b.install.command not in shown(b.path)]
    assert not bad, "\n".join(bad)


def test_install_lines_name_extras_and_report_torch() -> None:
    line = InstallLine.parse('pip install ".[sb3,pettingzoo]" mpe2')
    assert line.extras == ("pettingzoo", "sb3") and line.others == ("mpe2",)
    assert line.command == 'pip install ".[pettingzoo,sb3]" mpe2'
    assert line.marker == "requires_pettingzoo_sb3_mpe2"
    assert line.needs_torch
    names = {r.name for r in line.requirements()}
    assert {"pettingzoo", "supersuit", "stable-baselines3", "mpe2"} <= names
    assert not InstallLine.parse('pip install ".[joblib]"').needs_torch
    for bad in ["stable-baselines3", 'pip install ".[no-such-extra]"']:
        with pytest.raises(ValueError):
            InstallLine.parse(bad)
    assert {line.marker for line in install_lines()} >= {"requires_gym", "requires_pettingzoo"}


def test_docs_collection_finds_the_blocks_of_every_page() -> None:
    """The collector sees README.md and docs/ (a broken glob would make every test vanish)."""
    names = {p.relative_to(ROOT).as_posix() for p in pages()}
    assert {"README.md", "docs/index.md", "docs/quickstart.md",
            "docs/recipes/vector.md"} <= names
    where = {b.path.relative_to(ROOT).as_posix() for b in BLOCKS}
    assert {"README.md", "docs/index.md", "docs/quickstart.md"} <= where
    assert len(BLOCKS) >= 20


def test_docs_harness_pairs_output_and_reads_requirements(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    text = ("Intro\n\n```python\n# requires: pip install \".[gym]\"\nprint(1)\n```\n\n```text\n1\n```\n"
            "\n  ```py\n  print(2)\n  ```\n\nprose\n\n```text\nnot output\n```\n"
            "```pycon\n>>> 1\n```\n")
    found = blocks_of(page, text)
    assert [(b.line, b.lang) for b in found] == [(3, "python"), (8, "text"), (12, "py"),
                                                 (18, "text"), (21, "pycon")]
    assert found[0].output == "1\n"
    assert found[2].output is None and found[2].code == "print(2)\n"
    assert [str(r) for r in found[0].requires] == ["gym==0.26.2", "numpy<2"]
    assert found[0].install is not None and found[0].install.marker == "requires_gym"


def test_docs_harness_reports_a_failing_block_with_its_page_and_line(tmp_path: Path) -> None:
    """The harness can fail: a non-zero exit, wrong output and an undeclared import."""
    page = ROOT / "docs" / "example-page.md"
    crash = Block(page, 7, "python", "import sys\nprint('oops', file=sys.stderr)\nsys.exit(3)\n")
    msg = run_block(crash, tmp_path)
    assert msg is not None and msg.startswith("docs/example-page.md:7: exited 3")
    assert "oops" in msg
    drift = Block(page, 9, "python", "print('wrote cartpole.pack (1,081 bytes)')\n",
                  output="wrote cartpole.pack\n(1,280 bytes)\n")
    msg = run_block(drift, tmp_path)
    assert msg is not None and "printed something else" in msg and "1,081" in msg
    wrapped = Block(page, 11, "python", "print('a b  c')\n", output="a\nb c\n")
    assert run_block(wrapped, tmp_path) is None
    assert undeclared_imports(Block(page, 1, "python", "import ray\nfrom tianshou import x\n")) \
        == ["ray", "tianshou"]
    assert missing(next(iter(Block(page, 1, "python",
                                   "# requires: pip install . numpy<0.1\n").requires)))
