"""The ```python blocks of README.md and docs/**/*.md, as programs to run.

House rule: every ```python block (also ```py, ```python3) in the README and the docs is a
complete program that runs as written; fragments use another fence (```pycon, ```text).

- A block that needs a library outside specpack's own dependencies names, on its first line,
  the install line that gives it, run from the root of a clone:
  ``# requires: pip install ".[sb3]"`` (the extras of pyproject.toml; other requirements may
  follow: ``pip install ".[pettingzoo]" mpe2``). The page shows the same line. Its test is
  marked ``requires_<extras and names>`` (``requires_pettingzoo_sb3``), one marker per install
  line, and CI runs each marker in a venv made with exactly that line (``.ci/run`` reads the
  lines from here: ``python tests/docs/docs_blocks.py install-lines``), so a dependency the
  extra lacks fails CI. Where the line's requirements are not met the test is skipped, and
  under CI=true a skip is a failure.
- A ```text block that follows a python block with nothing but blank lines between them is
  that program's output, as the page shows it: the program must print exactly that text, up
  to line wrapping (whitespace runs compare equal), numbers included.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

PYTHON_FENCES = frozenset({"python", "py", "python3", "py3"})
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_REQUIRES = re.compile(r"^#\s*requires:\s*(?P<line>.+?)\s*$")

#: Libraries a block may import only after declaring them (``# requires: ...``): import name ->
#: distribution. Everything else a block imports must come with specpack itself.
OPTIONAL_IMPORTS = {
    "agilerl": "agilerl",
    "gym": "gym",
    "pettingzoo": "pettingzoo",
    "supersuit": "supersuit",
    "joblib": "joblib",
    "minari": "minari",
    "pufferlib": "pufferlib",
    "ray": "ray",
    "rl_games": "rl-games",
    "sample_factory": "sample-factory",
    "stable_baselines3": "stable-baselines3",
    "tianshou": "tianshou",
    "torch": "torch",
    "torchrl": "torchrl",
    "tyro": "tyro",
}


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown page."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    output: str | None = None  # the ```text block right after it, for a python block
    info: str = ""  # the fence's info string: ```python title="envs/ant_envs.py"

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.line}"

    @property
    def title(self) -> str | None:
        """``title="envs/ant_envs.py"`` of the fence: the file the page asks the reader to save."""
        m = re.search(r'\btitle="(?P<title>[^"]+)"', self.info)
        return m.group("title") if m else None

    @property
    def install(self) -> InstallLine | None:
        """The install line of the block's ``# requires:`` header, or None without one."""
        first = self.code.split("\n", 1)[0].strip()
        m = _REQUIRES.match(first)
        if not m:
            return None
        try:
            return InstallLine.parse(m.group("line"))
        except ValueError as e:
            raise ValueError(f"{self.where}: {e}") from e

    @property
    def requires(self) -> tuple[Requirement, ...]:
        """Every requirement the install line brings beyond specpack's own dependencies."""
        return () if self.install is None else self.install.requirements()


@dataclasses.dataclass(frozen=True)
class InstallLine:
    """``pip install ".[a,b]" other``, run at the root of a clone: extras and other requirements."""

    extras: tuple[str, ...]
    others: tuple[str, ...]

    @classmethod
    def parse(cls, line: str) -> InstallLine:
        words = shlex.split(line)
        if words[:2] != ["pip", "install"] or len(words) < 3:
            raise ValueError(f"'# requires:' must name an install line, "
                             f"'pip install \".[extra]\"', not {line!r}")
        extras: list[str] = []
        others: list[str] = []
        for word in words[2:]:
            m = re.fullmatch(r"\.(?:\[(?P<extras>[\w,-]+)\])?", word)
            if m:
                extras += [canonicalize_name(e) for e in (m.group("extras") or "").split(",") if e]
                continue
            try:
                Requirement(word)
            except InvalidRequirement as e:
                raise ValueError(f"bad requirement {word!r} in {line!r}: {e}") from e
            others.append(word)
        unknown = sorted(set(extras) - set(project_extras()))
        if unknown:
            raise ValueError(f"{line!r} names extras pyproject.toml lacks: {', '.join(unknown)}")
        return cls(tuple(sorted(set(extras))), tuple(others))

    @property
    def command(self) -> str:
        """The line as the docs show it: ``pip install ".[pettingzoo,sb3]" mpe2``."""
        dot = f".[{','.join(self.extras)}]" if self.extras else "."
        return shlex.join(["pip", "install", dot, *self.others]).replace(f"'{dot}'", f'"{dot}"')

    @property
    def marker(self) -> str:
        """``requires_pettingzoo_sb3``: the pytest marker of the blocks that need this line."""
        names = [*self.extras, *(canonicalize_name(Requirement(o).name) for o in self.others)]
        return "requires_" + "_".join(names).replace("-", "_")

    def requirements(self) -> tuple[Requirement, ...]:
        """The requirements of the extras (expanded through ``specpack[...]``) and the others."""
        reqs: list[Requirement] = []
        seen: set[str] = set()
        todo = list(self.extras)
        while todo:
            extra = todo.pop()
            if extra in seen:
                continue
            seen.add(extra)
            for dep in project_extras()[extra]:
                req = Requirement(dep)
                if req.marker is not None and not req.marker.evaluate({"extra": extra}):
                    continue  # not for this Python or platform
                if canonicalize_name(req.name) == "specpack":
                    todo += [canonicalize_name(e) for e in req.extras]
                else:
                    reqs.append(req)
        return (*reqs, *(Requirement(o) for o in self.others))

    @property
    def needs_torch(self) -> bool:
        """An extra lists torch: CI installs the CPU wheel ``torch==2.13.0`` first."""
        return any(canonicalize_name(r.name) == "torch" for r in self.requirements())


def pyproject() -> dict[str, Any]:
    """The checkout's pyproject.toml."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def project_extras() -> dict[str, list[str]]:
    """``[project.optional-dependencies]`` of the checkout's pyproject.toml."""
    extras = pyproject()["project"]["optional-dependencies"]
    return {canonicalize_name(k): list(v) for k, v in extras.items()}


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks_of(path: Path, text: str | None = None) -> list[Block]:
    """Every fenced block of a page; a python block gets the ```text block right after it."""
    lines = (path.read_text(encoding="utf-8") if text is None else text).split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks = m.group("indent"), m.group("ticks")
        info = m.group("info").strip()
        lang = info.split()[0].lstrip(".{").rstrip("}").lower() if info else ""
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            close = _FENCE.match(lines[j])
            if close and close.group("ticks")[0] == ticks[0] and \
                    len(close.group("ticks")) >= len(ticks) and not close.group("info").strip():
                break
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        else:
            raise ValueError(f"{path}:{i + 1}: a ``` fence that is never closed")
        found.append(Block(path, i + 1, lang, "\n".join(body) + "\n", info=info))
        i = j + 1
    # Pair each python block with a text block that follows it after blank lines only.
    paired: list[Block] = []
    for k, block in enumerate(found):
        nxt = found[k + 1] if k + 1 < len(found) else None
        if block.lang in PYTHON_FENCES and nxt is not None and nxt.lang == "text":
            end = block.line + block.code.count("\n") + 1  # 1-based line of the closing fence
            between = lines[end:nxt.line - 1]
            if all(not ln.strip() for ln in between):
                block = dataclasses.replace(block, output=nxt.code)
        paired.append(block)
    return paired


def python_blocks() -> list[Block]:
    """Every python block of README.md and docs/ (none left out)."""
    return [b for p in pages() for b in blocks_of(p) if b.lang in PYTHON_FENCES]


def is_session(block: Block) -> bool:
    """A ```console block, or a ```text block whose first command line starts with ``$ ``
    (tests/docs/docs_sessions.py runs them)."""
    if block.lang not in ("console", "text"):
        return False
    lines = [ln for ln in block.code.splitlines() if ln.strip()]
    if lines and lines[0].startswith("# requires:"):
        lines = lines[1:]
    return bool(lines) and lines[0].startswith("$ ")


def checked_blocks() -> list[Block]:
    """The python blocks and the command-line sessions of README.md and docs/."""
    return [b for p in pages() for b in blocks_of(p) if b.lang in PYTHON_FENCES or is_session(b)]


def marker_names() -> list[str]:
    return sorted({line.marker for line in install_lines()})


def install_lines() -> list[InstallLine]:
    """Every distinct install line the docs' blocks and sessions name, in a stable order."""
    lines = {b.install.marker: b.install for b in checked_blocks() if b.install is not None}
    return [lines[k] for k in sorted(lines)]


def missing(req: Requirement) -> str | None:
    """Why ``req`` is not met in this interpreter, or None when it is."""
    try:
        version = importlib.metadata.version(req.name)
    except importlib.metadata.PackageNotFoundError:
        return f"{req.name} is not installed"
    if req.specifier and not req.specifier.contains(version, prereleases=True):
        return f"{req.name} {version} is installed, the block needs {req}"
    for extra in sorted(req.extras):
        for dep in importlib.metadata.requires(req.name) or []:
            dep_req = Requirement(dep)
            if dep_req.marker is not None and dep_req.marker.evaluate({"extra": extra}):
                if dep_req.marker.evaluate({"extra": ""}):
                    continue  # a plain dependency, not the extra's
                why = missing(dep_req)
                if why is not None:
                    return f"{req} needs {dep_req.name}: {why}"
    return None


def undeclared_imports(block: Block) -> list[str]:
    """Optional libraries the block imports that its install line does not bring."""
    declared = {canonicalize_name(r.name) for r in block.requires}
    used = set()
    for m in re.finditer(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", block.code, re.MULTILINE):
        dist = OPTIONAL_IMPORTS.get(m.group(1))
        if dist is not None and canonicalize_name(dist) not in declared:
            used.add(dist)
    return sorted(used)


def normalized(text: str) -> list[str]:
    """Output compared up to line wrapping: whitespace runs are equal, nothing else is."""
    return text.split()


def child_env(tmp: Path) -> dict[str, str]:
    """The environment of a block: HOME and Ray's files in temp folders, no test fixtures."""
    env = dict(os.environ)
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env["HOME"] = str(home)
    # Ray puts unix sockets under RAY_TMPDIR: keep that path short.
    env["RAY_TMPDIR"] = tempfile.mkdtemp(prefix="ray", dir="/tmp" if os.path.isdir("/tmp") else None)
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    keep = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
            if p and Path(p).resolve() != FIXTURES]
    # specpack itself: the checkout under test, whether or not it is installed.
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([str(ROOT), *keep]))
    env.pop("PYTHONSTARTUP", None)
    return env


def run_block(block: Block, tmp: Path, timeout: float = 280) -> str | None:
    """Run ``block`` as ``example.py`` in a fresh interpreter in ``tmp``; the failure, or None."""
    # (280 s: only a hung block takes that long; a block that starts two Ray clusters took 73 s
    # on a loaded 2-core machine, and pytest-timeout stops the test at 300 s)
    script = tmp / "example.py"
    script.write_text(block.code, encoding="utf-8")
    env = child_env(tmp)
    try:
        proc = subprocess.run(
            [sys.executable, script.name], cwd=tmp, env=env, capture_output=True, text=True,
            timeout=timeout, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as e:
        return (f"{block.where}: still running after {timeout:.0f} s\nstdout:\n"
                f"{_tail(e.stdout)}\nstderr:\n{_tail(e.stderr)}")
    finally:
        _remove_tree(Path(env["RAY_TMPDIR"]))
    if proc.returncode != 0:
        hint = ""
        m = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", proc.stderr)
        if m:
            hint = (f"\n(the block imports {m.group(1)!r}: declare it on its first line, "
                    f"'# requires: pip install \".[extra]\"' naming an extra that installs "
                    f"it, or make it a ```pycon fragment)")
        return (f"{block.where}: exited {proc.returncode}{hint}\nstdout:\n{_tail(proc.stdout)}"
                f"\nstderr:\n{_tail(proc.stderr)}")
    if block.output is not None and normalized(proc.stdout) != normalized(block.output):
        return (f"{block.where}: printed something else than the ```text block after it on "
                f"the page.\npage shows:\n{block.output}\nprogram printed:\n{proc.stdout}"
                f"\nstderr:\n{_tail(proc.stderr)}")
    return None


def _tail(text: str | bytes | None, limit: int = 6000) -> str:
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return text if len(text) <= limit else "...\n" + text[-limit:]


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def main(argv: list[str]) -> int:
    """``install-lines``: one line per docs venv, ``marker<TAB>torch|-<TAB>pip arguments``."""
    if argv != ["install-lines"]:
        print("usage: python tests/docs/docs_blocks.py install-lines", file=sys.stderr)
        return 2
    for line in install_lines():
        print(line.marker, "torch" if line.needs_torch else "-",
              shlex.join(shlex.split(line.command)[2:]), sep="\t")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
