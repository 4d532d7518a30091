"""The import layers: no import loops, and the core reaches no heavy package at load time.

Every import points down: no module of specpack imports (at the top or inside a function) a
module that imports it back, directly or through others; ``if TYPE_CHECKING:`` imports
(annotations only) do not count. A failure names the loop.

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

#: What a worker that only builds must not load: the tools, the edge, the public faces of
#: ``make_vec`` and pack files, and the parts of the core that only capture or a file needs
#: (the process harness, the file format, typed JSON).
HEAVY = ("specpack._tools", "specpack._integrations", "specpack.adapters", "specpack.vector",
         "specpack.ray", "specpack.files", "specpack.testing", "specpack._core._process",
         "specpack._core._fileformat", "specpack._core._typedjson")
#: What a worker that unpickles and builds a pack, or ``import specpack``, or ``capture``
#: loads. Packages stand for every module inside them.
CORE = ("specpack", "specpack._core._pack", "specpack._core._packvalue", "specpack._core._build",
        "specpack._core._surface", "specpack._core._assets",
        "specpack._core._capture", "specpack._core._backends", "specpack._core._carry",
        "specpack._core._layer", "specpack._core._errors", "specpack._core._versions",
        "specpack._core._sealed", "specpack._core._beside", "specpack._core._vector._factory")
#: Where the core may reach outside ``specpack._core``, each inside a function (none at module
#: level): the deprecated ``SpecPack.verify/seal/check`` call ``specpack.verify/seal/check``
#: through the public door, ``import specpack`` (removed with them in specpack 0.4).
CORE_DOORS_OUT = {
    "specpack._core._pack": {"specpack"},
}


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


def _named(node: ast.Import | ast.ImportFrom, here: str) -> list[str]:
    """The dotted names an import statement in package ``here`` names (its ``from`` part first)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = here.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def load_time_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules that loading it imports directly (packages included)."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _load_time_imports(ast.parse(path.read_text(encoding="utf-8")).body):
            for target in _named(node, here):
                parts = target.split(".")
                targets.update(p for p in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
                               if p in modules)
        graph[name] = targets - {name}
    return graph


def _every_import(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in ``body``, inside functions too, but not under TYPE_CHECKING."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and _type_checking(node.test):
            yield from _every_import(node.orelse)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _every_import([child])
                elif isinstance(child, (ast.excepthandler, ast.match_case)):
                    yield from _every_import(child.body)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere (a function's lazy import too).

    An import names the module it takes from, not the packages around it: ``from .a.b import
    x`` names ``a.b`` (or ``a.b.x`` when that is a module); ``from . import y`` names the
    package itself when ``y`` is defined in its ``__init__``.
    """
    modules = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _every_import(ast.parse(path.read_text(encoding="utf-8")).body):
            base, *names = _named(node, here)
            if isinstance(node, ast.Import):
                targets.update(n for n in (base, *names) if n in modules)
                continue
            for target in names:
                if target in modules:
                    targets.add(target)
                elif base in modules:
                    targets.add(base)
        graph[name] = targets - {name}
    return graph


def loops(graph: dict[str, set[str]]) -> list[str]:
    """One loop through each group of modules that import each other, as ``a -> b -> a``."""
    found: list[str] = []
    seen: set[str] = set()
    for start in sorted(graph):
        if start in seen:
            continue
        # the shortest path from each of start's imports back to start, breadth first
        parent: dict[str, str] = {}
        queue = [start]
        while queue and start not in parent:
            name = queue.pop(0)
            for target in sorted(graph[name]):
                if target not in parent:
                    parent[target] = name
                    queue.append(target)
        if start in parent:
            path = [start]
            while len(path) == 1 or path[-1] != start:
                path.append(parent[path[-1]])
            seen.update(path)
            found.append(" -> ".join(reversed(path)))
    return found


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
    (pkg / "_core" / "_process").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_core" / "__init__.py").write_text("")
    (pkg / "_core" / "_process" / "__init__.py").write_text("")
    (pkg / "_core" / "_process" / "worker.py").write_text("")
    (pkg / "lazy.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._core._process import worker\n"
        "def f():\n    from ._core._process import worker\n")
    (pkg / "eager.py").write_text("try:\n    from ._core._process.worker import x\n"
                                  "except ImportError:\n    pass\n")
    graph = load_time_graph(pkg)
    assert graph["specpack.lazy"] == set()
    assert graph["specpack.eager"] == {"specpack", "specpack._core", "specpack._core._process",
                                       "specpack._core._process.worker"}
    assert heavy_chains(graph, ["specpack.eager"]) == [
        "specpack._core._process <- specpack.eager",
        "specpack._core._process.worker <- specpack.eager"]


def test_no_module_of_specpack_imports_one_that_imports_it_back() -> None:
    found = loops(import_graph(Path(specpack.__file__).resolve().parent))
    assert found == [], "import loops (function-level imports count):\n" + "\n".join(found)


def test_loop_finder_counts_function_level_imports_and_skips_annotation_ones(
        tmp_path: Path) -> None:
    pkg = tmp_path / "specpack"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .leaf import x\nBASE = 1\n")
    (pkg / "sub" / "leaf.py").write_text("x = 1\ndef f():\n    from . import BASE\n")
    (pkg / "low.py").write_text("class C:\n    def __reduce__(self):\n"
                                "        from .high import r\n")
    (pkg / "high.py").write_text("from .low import C\n")
    (pkg / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                  "    from .high import r\n")
    (pkg / "uses_typed.py").write_text("from . import typed\n")
    graph = import_graph(pkg)
    assert graph["specpack.typed"] == set()
    assert graph["specpack.uses_typed"] == {"specpack.typed"}
    assert graph["specpack.sub.leaf"] == {"specpack.sub"}  # BASE is the package's own name
    assert loops(graph) == ["specpack.high -> specpack.low -> specpack.high",
                            "specpack.sub -> specpack.sub.leaf -> specpack.sub"]


def test_the_core_imports_nothing_outside_it() -> None:
    """No module of ``specpack/_core/`` imports a tool, an integration or a public face,
    anywhere (inside functions too; ``TYPE_CHECKING`` imports aside): the tree's wall."""
    graph = import_graph(Path(specpack.__file__).resolve().parent)
    outside = {
        name: sorted(t for t in targets
                     if not t.startswith("specpack._core") and t not in CORE_DOORS_OUT.get(name, ()))
        for name, targets in graph.items() if name.startswith("specpack._core")
    }
    assert {n: t for n, t in outside.items() if t} == {}
    assert "specpack._core._vector._factory" in graph  # the control: the walk saw the core
