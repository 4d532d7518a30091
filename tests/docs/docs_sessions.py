"""The command-line sessions of README.md and docs/: each ``$ command`` runs, and prints what
the page shows after it.

- A session is a ```console block, or a ```text block, whose lines (after an optional
  ``# requires: pip install ...`` header, as for python blocks) start with ``$ ``: each
  ``$`` line is a command run by bash, and the lines up to the next ``$`` line are what the
  page says it prints (stdout and stderr, as one stream, as a terminal shows them).
- The sessions of a page share one working directory, in page order, with the files the page
  asks the reader to save: a ```python block with ``title="envs/ant_envs.py"`` is written to
  that path before the next session runs (and, like every python block, also runs as a
  program of its own).
- ``specpack`` on a command line is the checkout's command-line interface, run by this
  interpreter (the ``[project.scripts]`` entry point of pyproject.toml).

What the page shows is compared line by line with what the commands print. Line breaks must
match (a line the program prints is one line on the page), and only what must vary from run
to run or machine to machine is normalised first (:data:`NORMALISE`, in this order):

- paths: the session's working directory (shown as ``.``);
- memory addresses (``0x7f3a...``);
- digests and fingerprints (``sha256:`` followed by hex, and any other run of 16+ hex digits);
- times and rates (``0.59 s``, ``8.5 ms``, ``164,351 steps/s``);
- version strings (``3.11.7``, ``0.3.0.dev0``, ``Python 3.11``);
- byte counts (``1,132 bytes``: a pack file embeds the version strings);
- runs of spaces inside a line (column padding follows the widths of the values above).

A line ``...`` on the page stands for any number of lines (an excerpt); a ``...`` anywhere
else is compared as written.

:data:`NOT_RUN` lists the sessions left out, each with the reason; it is meant to be empty.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from docs_blocks import (
    PYTHON_FENCES,
    ROOT,
    Block,
    InstallLine,
    blocks_of,
    child_env,
    is_session,
    pages,
    pyproject,
)

#: (pattern, replacement), applied in order to both sides.
NORMALISE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x<address>"),
    (re.compile(r"\bsha256:[0-9a-f]+(?:\.\.\.)?"), "sha256:<digest>"),
    (re.compile(r"\b[0-9a-f]{16,}\b"), "<hex>"),
    (re.compile(r"\b[\d,]+(?:\.\d+)? steps/s\b"), "<rate>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|us|µs|min)\b"), "<time>"),
    (re.compile(r"\b\d+\.\d+\.\d+[\w.+-]*"), "<version>"),
    (re.compile(r"\b([Pp]ython) \d+\.\d+\b"), r"\1 <version>"),
    (re.compile(r"\b[\d,]+ bytes\b"), "<n> bytes"),
    # an env that warns once per process prints in some of the audit's interpreters, not in
    # others, depending on which env shared an interpreter with it: the count is scheduling
    (re.compile(r"\(\d+ of the (\d+ \w+) printed something"), r"(<n> of the \1 printed something"),
    (re.compile(r"[ \t]+"), " "),
]


#: (page, first command) -> why the session is not run yet. A test keeps every entry on its page.
NOT_RUN: dict[tuple[str, str], str] = {
    ("docs/audit.md", "specpack audit --wrappers-only        # gymnasium 1.0.0"): (
        "the gymnasium 1.0.0 wrapper audit runs in CI's gymnasium 1.0.0 venv, compared line by "
        "line by tests/docs/test_docs_other_gymnasium.py, not in the page's own directory"),
}


def first_command(block: Block) -> str:
    steps = steps_of(block)
    return steps[0][0] if steps else ""


def not_run(block: Block) -> bool:
    return (block.path.relative_to(ROOT).as_posix(), first_command(block)) in NOT_RUN


def steps_of(block: Block) -> list[tuple[str, list[str]]]:
    """``[(command, [expected output line, ...]), ...]`` of a session block."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.code.rstrip("\n").split("\n"):
        if line.startswith("# requires:") and not steps:
            continue
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def sessions() -> dict[Path, list[Block]]:
    """Per page with sessions: its session blocks and the files it asks to save, in order."""
    found: dict[Path, list[Block]] = {}
    for page in pages():
        blocks = blocks_of(page)
        kept = [b for b in blocks if (is_session(b) and not not_run(b))
                or (b.lang in PYTHON_FENCES and b.title)]
        if any(is_session(b) for b in kept):
            found[page] = kept
    return found


def page_install(page: Path, blocks: list[Block]) -> InstallLine | None:
    """The install line of a page's sessions (one per page: they share a directory)."""
    lines = {b.install for b in blocks if is_session(b)}
    if len(lines) > 1:
        raise ValueError(f"{page}: sessions with different '# requires:' lines share a page")
    return lines.pop()


def normalised(text: str, workdir: Path) -> str:
    text = text.replace(f"{workdir}/", "").replace(str(workdir), ".")
    for pattern, repl in NORMALISE:
        text = pattern.sub(repl, text)
    return text.strip()


def matches(expected: list[str], printed: list[str]) -> bool:
    """Line by line; an expected ``...`` line matches any number of printed lines."""
    if not expected:
        return not printed
    if expected[0] == "...":
        return any(matches(expected[1:], printed[k:]) for k in range(len(printed) + 1))
    return bool(printed) and expected[0] == printed[0] and matches(expected[1:], printed[1:])


def _cli_bin(tmp: Path) -> Path:
    """A folder with a ``specpack`` command that runs the checkout's CLI in this interpreter."""
    module, func = pyproject()["project"]["scripts"]["specpack"].split(":")
    folder = tmp / "bin"
    folder.mkdir(exist_ok=True)
    cli = folder / "specpack"
    cli.write_text(f"#!/bin/sh\nexec '{sys.executable}' -c 'import sys; from {module} import "
                   f"{func}; sys.exit({func}())' \"$@\"\n", encoding="utf-8")
    cli.chmod(0o755)
    return folder


def run_page(blocks: list[Block], tmp: Path, timeout: float = 600) -> Iterator[str]:
    """Run a page's sessions in ``tmp``; yield one failure text per command that differs."""
    work = tmp / "session"
    work.mkdir(exist_ok=True)
    env = child_env(tmp)
    env["PATH"] = f"{_cli_bin(tmp)}:{env.get('PATH', '')}"
    env["COLUMNS"] = "200"
    for block in blocks:
        if not is_session(block):
            target = work / str(block.title)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
            continue
        for command, shown in steps_of(block):
            proc = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
            want = normalised("\n".join(shown), work).split("\n")
            got = normalised(proc.stdout, work).split("\n")
            if not matches([ln for ln in want if ln] or [""], [ln for ln in got if ln] or [""]):
                yield (f"{block.where}: $ {command}\npage shows:\n" + "\n".join(shown)
                       + f"\nprinted (exit {proc.returncode}):\n{proc.stdout}"
                       + "\nnormalised, page vs printed:\n" + "\n".join(want) + "\n---\n"
                       + "\n".join(got))
