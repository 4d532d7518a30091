"""Every command-line session of README.md and docs/ runs and prints what the page shows.

One test per page with sessions (its sessions share a working directory, in page order). A
page whose sessions name an install line (``# requires: pip install ".[pettingzoo]"`` as their
first line) is marked like a python block with that line and runs in that line's CI venv.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_blocks import ROOT, Block, blocks_of, is_session
from docs_sessions import (
    NOT_RUN,
    first_command,
    matches,
    normalised,
    page_install,
    run_page,
    sessions,
    steps_of,
)

SESSIONS = sessions()


def _param(page: Path) -> object:
    marks = [pytest.mark.integration]
    line = page_install(page, SESSIONS[page])
    if line is not None:
        marks.append(getattr(pytest.mark, line.marker))
    return pytest.param(page, id=page.relative_to(ROOT).as_posix(), marks=marks)


@pytest.mark.parametrize("page", [_param(p) for p in SESSIONS])
def test_docs_command_sessions_print_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    failures = list(run_page(SESSIONS[page], tmp_path))
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


def test_sessions_are_found_on_the_quickstart() -> None:
    assert ROOT / "docs" / "quickstart.md" in SESSIONS


def test_sessions_left_unrun_are_still_on_their_pages() -> None:
    """An entry of NOT_RUN names a session that exists (a stale entry fails here)."""
    for (page, command), why in NOT_RUN.items():
        firsts = [first_command(b) for b in blocks_of(ROOT / page) if is_session(b)]
        assert command in firsts, f"{page}: no session starts with $ {command} ({why})"


def test_session_parsing_normalising_and_matching(tmp_path: Path) -> None:
    """What may vary is normalised, nothing else; ``...`` lines stand for any lines."""
    page = tmp_path / "page.md"
    text = ("```console\n# requires: pip install \".[gym]\"\n$ specpack run x\nline one\n\n"
            "$ ls | wc -l\n3\n```\n\n```text\nnot a session\n```\n")
    block = blocks_of(page, text)[0]
    assert steps_of(block) == [("specpack run x", ["line one", ""]), ("ls | wc -l", ["3"])]
    assert block.install is not None and block.install.marker == "requires_gym"
    a = normalised(f"built in 8.5 ms, {tmp_path}/a.pack (1,132 bytes) specpack 0.3.0.dev0 "
                   "sha256:a0a0327c 0x7f00ab 164,351 steps/s  Python 3.11", tmp_path)
    b = normalised("built in 44.0 ms, a.pack (1,081 bytes) specpack 0.1.0 sha256:ffff "
                   "0x1 78,106 steps/s Python 3.12", tmp_path)
    assert a == b
    assert normalised("return mean 21.689", tmp_path) != normalised("return mean 21.7", tmp_path)
    printed = "({} of the {} envs printed something: see --verbose"
    assert normalised(printed.format(2, 69), tmp_path) == normalised(printed.format(3, 69), tmp_path)
    assert normalised(printed.format(2, 69), tmp_path) != normalised(printed.format(2, 70), tmp_path)
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a b"], ["a", "b"])  # a line printed as one is one line on the page


def test_a_drifted_session_fails_with_its_page_and_line(tmp_path: Path) -> None:
    page = ROOT / "docs" / "example-page.md"
    block = Block(page, 3, "console", "$ echo specpack 0.1.0 '(executes code when loaded)'\n"
                  "specpack 0.1.0 (executes code when loaded)\n$ echo wrapped one line\n"
                  "wrapped\none line\n")
    failures = list(run_page([block], tmp_path))
    assert len(failures) == 1 and failures[0].startswith("docs/example-page.md:3: $ echo wrapped")
