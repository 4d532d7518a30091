"""The import layers: the core reaches none of the heavy packages through a module-level import.

Read from the source with :mod:`ast`, without importing anything: an import counts when it runs
as the module loads (at the top, or inside an ``if``/``try``/``with`` or a class body there),
not inside a function (a lazy import runs on first use) nor under ``if TYPE_CHECKING:``
(annotations only). Importing ``a.b.c`` also runs the ``__init__`` of ``a`` and ``a.b``, so
those count too. From every core module, the modules that loading it loads must include none
of the heavy packages; a failure names the chain of imports that pulls one in.

``lint-imports`` (the ``[tool.importlinter]`` contract in pyproject.toml) complements this: it
sees function-level imports as well, so it pins which core modules may open a lazy door to a
heavy package at all; this test pins that none of those doors is at module level.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import specpack

HEAVY = ("specpack._process", "specpack._verify", "specpack._audit", "specpack.fileformat",
         "specpack.typedjson", "specpack.cli", "specpack.adapters", "specpack.vector")
#: The core: what a worker that unpickles and builds a pack, or ``import specpack``, or
#: ``capture`` loads. Packages stand for every module inside them.
CORE = ("specpack", "specpack.pack", "specpack._build", "specpack._fileface", "specpack._proof",
        "specpack._surface", "specpack._assets", "specpack._capture", "specpack.backends",
        "specpack.carry", "specpack.layer", "specpack.errors", "specpack.versions")


def _modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module of the package at ``root``: dotted name -> (file, is a package)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _load_time_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when a module with this body loads."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _type_checking(node.test):
                yield from _load_time_imports(node.body)
            yield from _load_time_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody,
                          *(h.body for h in node.handlers)):
                yield from _load_time_imports(block)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            yield from _load_time_imports(node.body)


def load_time_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules that loading it imports directly (packages included)."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _load_time_imports(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = here.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for target in names:
                parts = target.split(".")
                targets.update(p for p in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
                               if p in modules)
        graph[name] = targets - {name}
    return graph


def heavy_chains(graph: dict[str, set[str]], starts: list[str]) -> list[str]:
    """For each heavy module loading ``starts`` reaches, the chain that reaches it."""
    parent: dict[str, str | None] = {}
    queue: list[tuple[str, str | None]] = [(s, None) for s in starts]
    while queue:
        name, via = queue.pop(0)
        if name in parent:
            continue
        parent[name] = via
        if not name.startswith(HEAVY):
            queue.extend((t, name) for t in sorted(graph[name]))
    chains = []
    for name, via in parent.items():
        if name.startswith(HEAVY) and via is not None and not via.startswith(HEAVY):
            chain = [name]
            while chain[-1] in parent and parent[chain[-1]] is not None:
                chain.append(str(parent[chain[-1]]))
            chains.append(" <- ".join(chain))
    return chains


GRAPH = load_time_graph(Path(specpack.__file__).resolve().parent)


@pytest.mark.parametrize("core", CORE)
def test_core_module_loads_no_heavy_package(core: str) -> None:
    starts = [m for m in GRAPH if m == core or (core != "specpack" and m.startswith(core + "."))]
    assert starts, f"{core} is not a module of specpack"
    chains = heavy_chains(GRAPH, starts)
    assert chains == [], "module-level imports pull heavy packages into the core:\n" + "\n".join(
        chains)


def test_walker_counts_load_time_imports_and_skips_lazy_and_annotation_ones(
        tmp_path: Path) -> None:
    pkg = tmp_path / "specpack"
    (pkg / "_process").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_process" / "__init__.py").write_text("")
    (pkg / "_process" / "worker.py").write_text("")
    (pkg / "lazy.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._process import worker\n"
        "def f():\n    from ._process import worker\n")
    (pkg / "eager.py").write_text("try:\n    from ._process.worker import x\nexcept ImportError:"
                                  "\n    pass\n")
    graph = load_time_graph(pkg)
    assert graph["specpack.lazy"] == set()
    assert graph["specpack.eager"] == {"specpack", "specpack._process", "specpack._process.worker"}
    assert heavy_chains(graph, ["specpack.eager"]) == [
        "specpack._process <- specpack.eager", "specpack._process.worker <- specpack.eager"]
