"""Draw specpack's public line: move every internal module under a ``_`` name, fix references.

    python tools/public_line.py          # from the repository root; run it again: no change
    python tools/public_line.py --check  # exit 1, listing what is left to do, if anything is

Users import ``specpack``, ``specpack.testing``, ``specpack.ray``, ``specpack.vector``,
``specpack.files``, ``specpack.adapters`` and its library modules; everything else is an
internal module, and an internal module's name starts with ``_`` (or it sits inside a ``_``
package), as in httpx and pypa/packaging. This script:

1. ``git mv``\\ s each module of :data:`MOVES` to its ``_`` name (and ``git rm``\\ s
   :data:`REMOVED`: 0.1.0's pickle shim ``specpack/_carry.py`` gives its name to the ``_carry``
   package, which exports ``CodeRef``; no module is kept at the old paths: pickles are messages
   between processes of one specpack version, and the one old path a pack file may hold, in
   a by-value payload, is mapped by the payload reader, ``specpack._core._carry.carried``);
2. rewrites every import of a moved module, absolute or relative (``from .pack import``,
   ``from ..carry.values import``, ``from specpack import typedjson``);
3. rewrites every other mention of a moved module in tracked text files: dotted names
   (``"specpack.carry.values._walk"`` in a monkeypatch, ``specpack.cli:main`` in pyproject,
   import-linter contracts, ``::: specpack.pack.SpecPack`` in docs), file paths
   (``specpack/carry/values.py``) and ``python -m specpack.cli`` (now ``python -m specpack``);
   in Markdown, in reST roles of docstrings and in strings that are nothing but the name, a
   name that a public module exports is shown where users import it (``specpack.pack.SpecPack``
   -> ``specpack.SpecPack``, ``specpack.files.io.describe`` -> ``specpack.files.describe``);
4. sorts the imports of the files it changed (``ruff check --select I --fix``) when ruff is
   installed, since a renamed module sorts elsewhere.

Files named in :data:`NAMES_OLD_PATHS` mention old module paths on purpose (the pickle paths
that must keep loading, the changelog's history): only their import statements are rewritten.
The script is deterministic and idempotent: a second run finds nothing to move or rewrite.
Standard library only.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

#: (old path, new path) of each module or package that moves, relative to the repository root.
MOVES: tuple[tuple[str, str], ...] = (
    ("specpack/pack.py", "specpack/_pack.py"),
    ("specpack/layer.py", "specpack/_layer.py"),
    ("specpack/errors.py", "specpack/_errors.py"),
    ("specpack/versions.py", "specpack/_versions.py"),
    ("specpack/demo.py", "specpack/_demo.py"),
    ("specpack/carry", "specpack/_carry"),
    ("specpack/fileformat", "specpack/_fileformat"),
    ("specpack/typedjson", "specpack/_typedjson"),
    ("specpack/backends", "specpack/_backends"),
    ("specpack/cli", "specpack/_cli"),
    ("specpack/vector/envs.py", "specpack/vector/_envs.py"),
    ("specpack/vector/factory.py", "specpack/vector/_factory.py"),
    ("specpack/vector/forkserver.py", "specpack/vector/_forkserver.py"),
    ("specpack/vector/make.py", "specpack/vector/_make.py"),
    ("specpack/files/io.py", "specpack/files/_io.py"),
    ("specpack/adapters/workers.py", "specpack/adapters/_workers.py"),
)

#: Removed before the moves: 0.1.0's shim, whose name the ``_carry`` package takes.
REMOVED: tuple[str, ...] = ("specpack/_carry.py",)

#: Files whose old module paths are meant (pickle paths, history): only imports are rewritten.
NAMES_OLD_PATHS: frozenset[str] = frozenset({
    "CHANGELOG.md",
    "specpack/_carry/carried.py",
    "specpack/_pickled.py",
    "tests/files/test_golden.py",
    "tests/files/test_golden_pickles.py",
    "tests/golden/make_golden.py",
    "tests/test_public_line.py",
    "tools/public_line.py",
})

#: Public modules whose ``__all__`` decides where a Markdown mention of a name points.
PUBLIC_FACES: tuple[str, ...] = (
    "specpack", "specpack.files", "specpack.vector", "specpack.adapters", "specpack.testing",
    "specpack.ray",
)

TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt", ".sh", ".pyi"}
_DOTTED = re.compile(r"(?<![\w.])specpack((?:\.[A-Za-z_]\w*)+)")
_PATH = re.compile(r"(?<![\w.-])specpack((?:/[A-Za-z_]\w*)+)(\.py)?\b")
_RUN_CLI = re.compile(r"(-m\s+)specpack\.cli\b(?![.\w])")
_FROM = re.compile(r"^(\s*from\s+)(\.*)([\w.]*)(\s+import\b)")


def _dotted(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


#: Old dotted module name -> new dotted module name.
MODULE_MAP: dict[str, str] = {_dotted(old): _dotted(new) for old, new in MOVES}


def new_module(name: str) -> str:
    """The new name of dotted module (or attribute) path ``name``: its longest moved prefix."""
    parts = name.split(".")
    for i in range(len(parts), 1, -1):
        head = ".".join(parts[:i])
        if head in MODULE_MAP:
            return ".".join([MODULE_MAP[head], *parts[i:]])
    return name


# --- 1. moving files -------------------------------------------------------------------------

def git(root: Path, *args: str) -> str:
    """Run git in ``root``; its stdout."""
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def move_modules(root: Path, *, write: bool = True) -> list[str]:
    """``git rm`` the legacy shims and ``git mv`` each module not yet moved; what was (or, with
    ``write=False``, would be) done."""
    done: list[str] = []
    for path in REMOVED:
        if (root / path).is_file():
            if write:
                git(root, "rm", "-q", path)
            done.append(f"remove {path}")
    for old, new in MOVES:
        if (root / old).exists() and (root / new).exists():
            raise SystemExit(f"both {old} and {new} exist: merge them by hand, then run again")
        if (root / old).exists():
            if write:
                git(root, "mv", old, new)
            done.append(f"move {old} -> {new}")
    return done


# --- 2. imports ------------------------------------------------------------------------------

def _package_of(root: Path, file: Path) -> str | None:
    """The dotted package a Python file's relative imports start from, once moved (None
    outside the package)."""
    rel = file.relative_to(root)
    if not rel.parts or rel.parts[0] != "specpack":
        return None
    return new_module(".".join(rel.parts[:-1]))


def _relative(package: str, level: int, target: str) -> str:
    """``target`` written relative to ``package`` with ``level`` leading dots."""
    base = package.split(".")[: len(package.split(".")) - (level - 1)]
    prefix = ".".join(base)
    assert target == prefix or target.startswith(prefix + "."), (package, level, target)
    return target[len(prefix) + 1:] if target != prefix else ""


def _modules_in(root: Path) -> set[str]:
    """Every dotted module and package name of the (moved) tree, and the old names."""
    names = set(MODULE_MAP)
    for file in (root / "specpack").rglob("*.py"):
        rel = file.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.add(".".join(parts))
    return names


def rewrite_imports(root: Path, file: Path, text: str, modules: set[str]) -> str:
    """``text`` with every import of a moved module naming its new place (layout kept)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    package = _package_of(root, file)
    edits: list[tuple[int, int, int, int, str]] = []  # (line, col, end line, end col, new text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                moved = new_module(alias.name)
                if moved != alias.name:
                    # "import specpack.carry.values as v": the dotted name is rewritten in step 3
                    # for ordinary files; here for the files that keep old names in their text.
                    edits.append(_name_edit(lines, node, alias.name, moved))
        elif isinstance(node, ast.ImportFrom):
            if node.level and package is None:
                continue
            base = node.module or ""
            if node.level:
                anchor = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                absolute = f"{anchor}.{base}" if base else anchor
            else:
                absolute = base
            moved = new_module(absolute)
            if moved != absolute:
                written = _relative(package, node.level, moved) if node.level else moved
                line = lines[node.lineno - 1]
                m = _FROM.match(line[node.col_offset:])
                if m is None:
                    continue
                start = node.col_offset + m.start(3)
                edits.append((node.lineno, start, node.lineno, node.col_offset + m.end(3),
                               written))
            for alias in node.names:  # "from specpack import typedjson": a module by name
                old_full = f"{absolute}.{alias.name}"
                target = new_module(old_full)
                if target != old_full and old_full in modules:
                    edits.append(_alias_edit(lines, alias, target.rsplit(".", 1)[1]))
    for line, col, end_line, end_col, new in sorted(edits, reverse=True):
        if line != end_line:
            continue
        row = lines[line - 1]
        lines[line - 1] = row[:col] + new + row[end_col:]
    return "".join(lines)


def _name_edit(lines: list[str], node: ast.stmt, old: str,
               new: str) -> tuple[int, int, int, int, str]:
    row = lines[node.lineno - 1]
    col = row.index(old, node.col_offset)
    return (node.lineno, col, node.lineno, col + len(old), new)


def _alias_edit(lines: list[str], alias: ast.alias, new: str) -> tuple[int, int, int, int, str]:
    as_name = alias.asname or alias.name
    end = alias.end_col_offset if alias.end_col_offset is not None else alias.col_offset
    return (alias.lineno, alias.col_offset, alias.lineno, end, f"{new} as {as_name}")


# --- 3. other mentions -----------------------------------------------------------------------

def _exports(root: Path) -> dict[str, set[str]]:
    """Each public face's ``__all__`` (read from its source, nothing imported)."""
    out: dict[str, set[str]] = {}
    for face in PUBLIC_FACES:
        rel = Path(*face.split("."))
        file = root / rel / "__init__.py"
        if not file.exists():
            file = root / rel.with_suffix(".py")
        if not file.exists():
            continue
        for node in ast.parse(file.read_text()).body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                out[face] = set(ast.literal_eval(node.value))
    return out


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:])


def public_name(dotted: str, modules: set[str], exports: dict[str, set[str]]) -> str:
    """Where users import what ``dotted`` (``specpack.<private module>.<Name>...``) names.

    The nearest public face above the private module that exports ``Name`` gives the path;
    a name no face exports (or a module itself) is left as it is.
    """
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:i])
        if module in modules:
            break
    else:
        return dotted
    if not _is_private(module):
        return dotted
    name, rest = parts[i], parts[i + 1:]
    for j in range(i - 1, 0, -1):
        face = ".".join(parts[:j])
        if face in exports and name in exports[face]:
            return ".".join([face, name, *rest])
    return dotted


def _names_a_value(m: re.Match[str]) -> bool:
    """Whether a dotted name in Python source is a reST role's target or a whole string.

    ``:class:`~specpack.errors.BuildError``` and ``"specpack.errors.PackFormatError"`` (an
    expected ``f"{type(e).__module__}.{type(e).__qualname__}"``) name the public object, so
    they take its public path; other mentions (imports, ``import_module("specpack.pack")``,
    attribute chains) keep naming the module that defines it.
    """
    text, start, end = m.string, m.start(), m.end()
    if text[max(0, start - 2):start] in ("`~", ":`"):
        return True
    quote = text[start - 1:start]
    return quote in ("'", '"') and text[end:end + 1] == quote


def rewrite_mentions(text: str, *, markdown: bool, modules: set[str],
                     exports: dict[str, set[str]]) -> str:
    """``text`` with moved modules renamed wherever they are named."""
    text = _RUN_CLI.sub(r"\1specpack", text)

    def dotted(m: re.Match[str]) -> str:
        new = new_module("specpack" + m.group(1))
        return public_name(new, modules, exports) if markdown or _names_a_value(m) else new

    def path(m: re.Match[str]) -> str:
        suffix = m.group(2) or ""
        name = _dotted("specpack" + m.group(1))
        moved = new_module(name)
        if moved == name:
            return m.group(0)
        return moved.replace(".", "/") + suffix

    text = _DOTTED.sub(dotted, text)
    return _PATH.sub(path, text)


# --- driver ----------------------------------------------------------------------------------

def tracked_text_files(root: Path) -> list[Path]:
    """The tracked files this script may rewrite (golden data and binaries excluded)."""
    out = []
    for rel in git(root, "ls-files", "-z").split("\0"):
        if not rel:
            continue
        path = root / rel
        if rel.startswith("tests/golden/") and path.suffix != ".py":
            continue
        if path.suffix in TEXT_SUFFIXES or rel.startswith(".ci/"):
            if path.is_file():
                out.append(path)
    return sorted(out)


def rewrite_files(root: Path, *, write: bool = True) -> list[str]:
    """Rewrite imports and mentions in every tracked text file; the files (to be) changed."""
    modules = _modules_in(root)
    exports = _exports(root)
    changed = []
    for file in tracked_text_files(root):
        rel = file.relative_to(root).as_posix()
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = text
        if file.suffix in (".py", ".pyi"):
            new = rewrite_imports(root, file, new, modules)
        if rel not in NAMES_OLD_PATHS:
            new = rewrite_mentions(new, markdown=file.suffix == ".md", modules=modules,
                                   exports=exports)
        if new != text:
            if write:
                file.write_text(new, encoding="utf-8")
            changed.append(rel)
    return changed


def sort_imports(root: Path, files: list[str]) -> None:
    """``ruff check --select I --fix`` on the changed Python files (when ruff is installed)."""
    py = [f for f in files if f.endswith(".py")]
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if py and Path(ruff).exists():
        subprocess.run([ruff, "check", "-q", "--select", "I", "--fix", *py], cwd=root,
                       check=False)


def main(argv: list[str] | None = None) -> int:
    """Move the internal modules and rewrite what names them; print what changed.

    ``--check`` changes nothing: it lists what is left to do and exits 1 if anything is.
    """
    args = sys.argv[1:] if argv is None else argv
    write = "--check" not in args
    paths = [a for a in args if a != "--check"]
    root = Path(paths[0] if paths else ".").resolve()
    if not (root / "specpack" / "__init__.py").exists():
        raise SystemExit(f"{root} is not the specpack repository root (no specpack/__init__.py)")
    done = move_modules(root, write=write)
    changed = rewrite_files(root, write=write)
    if write:
        sort_imports(root, changed)
    for line in done:
        print(line)
    for rel in changed:
        print(f"rewrite {rel}")
    if not done and not changed:
        print("nothing to do: the public line is drawn")
        return 0
    return 0 if write else 1


if __name__ == "__main__":
    raise SystemExit(main())
