"""Print the package's structure figures: the ones the layout is judged by.

    python tools/structure.py            # a table, from the repository root
    python tools/structure.py --json     # for machines
    python tools/structure.py --docs     # only the docs' first path (no interpreters started)

Counted from the code as it is, standard library only:

* modules and lines of ``specpack/`` (every ``.py`` file, blank and comment lines included);
* imports inside functions (``import``/``from ... import`` statements whose nearest enclosing
  scope is a function, ``TYPE_CHECKING`` blocks not counted);
* modules over 400 lines;
* what ``capture(id)`` + ``make()`` load: specpack modules and their lines, in a fresh
  interpreter;
* what a worker loads: the specpack modules a fresh interpreter has after
  ``pickle.loads(blob).make()`` for each kind of pack (by reference, by value, recorded
  spaces, sealed, self-contained), and whether any of them lies outside ``specpack/_core/``
  (a tool, the edge, a public face) or is a part of the core that only capture or a file
  needs (the process harness, the file format, typed JSON);
* the words of the docs' first path: the pages of ``mkdocs.yml``'s nav before "Guides", as
  whitespace-separated tokens of their markdown (code blocks included) plus the docstrings
  their ``::: name`` directives render (``inspect.getdoc`` of the object and of the members
  the directive's ``members``/``filters`` options let render).

It prints figures; it judges nothing (the issues state the goals).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "specpack"
#: What a worker that builds must not load: anything outside the core (the tools, the edge,
#: the public faces of make_vec and pack files) and the parts of the core that only capture or a
#: file needs (the process harness, the file format, typed JSON).
NOT_IN_A_WORKER = ("specpack._core._process", "specpack._core._fileformat",
                   "specpack._core._typedjson")


def _lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _inner_imports(tree: ast.AST) -> int:
    """Import statements whose nearest enclosing scope is a function."""
    count = 0

    def visit(node: ast.AST, in_function: bool) -> None:
        nonlocal count
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                count += in_function
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, True)
            elif isinstance(child, ast.ClassDef):
                visit(child, False)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            else:
                visit(child, in_function)

    visit(tree, False)
    return count


def static_figures() -> dict[str, Any]:
    """Modules, lines, imports inside functions, the largest modules."""
    files = sorted(PACKAGE.rglob("*.py"))
    lines = {_module_name(p): _lines(p) for p in files}
    inner = 0
    for p in files:
        inner += _inner_imports(ast.parse(p.read_text(encoding="utf-8")))
    return {
        "modules": len(files),
        "lines": sum(lines.values()),
        "imports_inside_functions": inner,
        "over_400_lines": sorted((n, c) for n, c in lines.items() if c > 400),
        "module_lines": lines,
    }


_LOADED = r"""
import json, pickle, sys
kind, blob = sys.argv[1], sys.argv[2]
if kind == "capture+make":
    import specpack
    specpack.capture("CartPole-v1").make()
else:
    with open(blob, "rb") as fh:
        data = fh.read()
    pickle.loads(data).make()
print(json.dumps(sorted(m for m in sys.modules if m == "specpack" or m.startswith("specpack."))))
"""

_PACKS = r"""
import pickle, sys, os, pathlib
import gymnasium, specpack
from gymnasium.envs.classic_control import CartPoleEnv
out, kind = sys.argv[1], sys.argv[2]
if kind == "by value":
    class LocalPole(CartPoleEnv):
        pass
    pack = specpack.capture(LocalPole)
elif kind == "recorded spaces":
    pack = specpack.capture("CartPole-v1", record_spaces=True)
elif kind == "sealed":
    pack = specpack.seal(specpack.capture("CartPole-v1"), steps=5)
elif kind == "self-contained":
    data = pathlib.Path(out).with_suffix(".txt")
    data.write_text("4")
    pack = specpack.capture("CartPole-v1", self_contained=True, assets=[str(data)])
else:
    pack = specpack.capture("CartPole-v1")
with open(out, "wb") as fh:
    pickle.dump(pack, fh)
"""

KINDS = ("by reference", "by value", "recorded spaces", "sealed", "self-contained")


def _is_tool(module: str) -> bool:
    """Whether a worker that builds should not have loaded ``module`` (see ``NOT_IN_A_WORKER``)."""
    inside = (module in ("specpack", "specpack._core", "specpack._pickled")
              or module.startswith("specpack._core."))
    return not inside or any(module == t or module.startswith(t + ".") for t in NOT_IN_A_WORKER)


def _run(code: str, *args: str, cwd: str | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)
    if done.returncode:
        raise RuntimeError(f"{args}: {done.stderr[-2000:]}")
    return done.stdout


def loaded_figures(module_lines: dict[str, int]) -> dict[str, Any]:
    """What capture + make and each kind of worker load, in fresh interpreters."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        mods = json.loads(_run(_LOADED, "capture+make", "", cwd=tmp).splitlines()[-1])
        out["capture+make"] = {"modules": len(mods),
                               "lines": sum(module_lines.get(m, 0) for m in mods),
                               "tools": [m for m in mods if _is_tool(m)]}
        for kind in KINDS:
            blob = os.path.join(tmp, kind.replace(" ", "_") + ".pkl")
            _run(_PACKS, blob, kind, cwd=tmp)
            mods = json.loads(_run(_LOADED, "worker", blob, cwd=tmp).splitlines()[-1])
            out[f"worker: {kind}"] = {"modules": len(mods),
                                      "lines": sum(module_lines.get(m, 0) for m in mods),
                                      "tools": [m for m in mods if _is_tool(m)]}
    return out


# -- the docs' first path -------------------------------------------------------------------
#
# What a newcomer reads first: the pages of mkdocs.yml's nav before "Guides", as the site
# shows them. Words are whitespace-separated tokens (code blocks included); a ``::: name``
# directive counts as the docstrings it renders (inspect.getdoc of the object and of the
# members its options let render), not as its own lines.

DOCS_STOP = "Guides"  #: the first nav entry that is not on the first path
_NAV_ENTRY = re.compile(r"^(?P<indent> *)- (?:(?P<title>[^:]+):\s*)?(?P<page>\S+\.md)?\s*$")
_DIRECTIVE = re.compile(r"^:::\s+(?P<name>\S+)\s*$")


def first_path_pages(mkdocs_yml: Path = ROOT / "mkdocs.yml") -> list[str]:
    """The pages of the nav's top level before the entry titled ``DOCS_STOP``, in nav order."""
    pages: list[str] = []
    lines = mkdocs_yml.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.rstrip() == "nav:") + 1
    top = None
    for line in lines[start:]:
        if line.strip() and not line.startswith((" ", "-")):
            break  # the next top-level key
        m = _NAV_ENTRY.match(line)
        if m is None:
            continue
        indent = len(m["indent"])
        top = indent if top is None else top
        if indent != top:
            continue  # a section's child
        if (m["title"] or "").strip() == DOCS_STOP:
            break
        if m["page"]:
            pages.append(m["page"])
    return pages


def _options(block: list[str]) -> dict[str, Any]:
    """The ``members`` and ``filters`` options of a directive's indented YAML (the forms
    ``key: [a, b]``, ``key: false`` and a ``- item`` list under ``key:``)."""
    found: dict[str, Any] = {}
    key = None
    for line in block:
        text = line.strip()
        if text.startswith("- ") and key is not None:
            found[key].append(text[2:].strip().strip("\"'"))
            continue
        key = None
        name, _, value = text.partition(":")
        if name not in ("members", "filters"):
            continue
        value = value.strip()
        if value.startswith("["):
            found[name] = [v.strip().strip("\"'") for v in value.strip("[]").split(",")
                           if v.strip()]
        elif value in ("false", "true"):
            found[name] = value == "true"
        else:
            found[name], key = [], name
    return found


def _resolve(dotted: str) -> Any:
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def _rendered_members(obj: Any, options: dict[str, Any]) -> list[Any]:
    """The members of a class or module that a directive renders: those its ``members``
    option names, else the public ones defined there (mkdocstrings' defaults: no inherited
    members; ``filters`` as given, else the site's ``!^_``), documented ones only."""
    import inspect

    if inspect.isclass(obj):
        own = dict(vars(obj))
    elif inspect.ismodule(obj):
        names = getattr(obj, "__all__", None) or [n for n, v in vars(obj).items()
                                                  if getattr(v, "__module__", None)
                                                  == obj.__name__]
        own = {n: getattr(obj, n) for n in names}
    else:
        return []
    wanted = options.get("members", True)
    if wanted is False:
        return []
    if wanted is True:
        filters = options.get("filters", ["!^_"])
        names = [n for n in own if all(
            (re.search(f[1:], n) is None) if f.startswith("!") else re.search(f, n)
            for f in filters)]
    else:
        names = [n for n in wanted if n in own]
    out = []
    for name in names:
        value = own[name]
        if isinstance(value, (classmethod, staticmethod)):
            value = value.__func__
        if isinstance(value, property) or inspect.isroutine(value) or inspect.isclass(value):
            out.append(value)
    return out


def _docstring_words(obj: Any, options: dict[str, Any]) -> int:
    import inspect

    words = len((inspect.getdoc(obj) or "").split())
    for member in _rendered_members(obj, options):
        words += _docstring_words(member, {}) if inspect.isclass(member) else len(
            (inspect.getdoc(member) or "").split())
    return words


def page_words(page: Path) -> tuple[int, int]:
    """A page's words as the site renders it: (its markdown without directives, the
    docstrings its ``:::`` directives render)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    text, docs, i = 0, 0, 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        if m is None:
            text += len(lines[i].split())
            i += 1
            continue
        i += 1
        block = []
        while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
            block.append(lines[i])
            i += 1
        docs += _docstring_words(_resolve(m["name"]), _options(block))
    return text, docs


def docs_figures() -> dict[str, Any]:
    """The words of the docs' first path, per page and in all."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # this tree's specpack, as the docs build renders it
    per_page = {}
    for name in first_path_pages():
        text, docs = page_words(ROOT / "docs" / name)
        per_page[name] = {"markdown": text, "docstrings": docs, "words": text + docs}
    return {"pages": per_page, "words": sum(p["words"] for p in per_page.values())}


def main(argv: list[str]) -> int:
    docs = docs_figures()
    first = ", ".join(f"{n} {p['words']}" for n, p in docs["pages"].items())
    if "--docs" in argv:
        print(f"docs first path: {docs['words']:,} words ({first})")
        return 0
    figures = static_figures()
    loaded = loaded_figures(figures.pop("module_lines"))
    if "--json" in argv:
        print(json.dumps({**figures, "loaded": loaded, "docs_first_path": docs}, indent=2))
        return 0
    print(f"package: {figures['modules']} modules, {figures['lines']:,} lines; "
          f"{figures['imports_inside_functions']} imports inside functions")
    big = ", ".join(f"{n} ({c})" for n, c in figures["over_400_lines"]) or "none"
    print(f"modules over 400 lines: {big}")
    for what, f in loaded.items():
        tools = ", ".join(f["tools"]) or "none"
        print(f"{what}: {f['modules']} specpack modules, {f['lines']:,} lines; loaded outside the core (or the harness, file format, typed JSON): "
              f"{tools}")
    print(f"docs first path: {docs['words']:,} words ({first})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
