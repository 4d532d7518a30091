"""The carry package is a stack: each module imports only the carry modules below it.

Read from the source with :mod:`ast`, without importing anything. Every import counts, a
function-level one too (a lazy import that goes up is still a loop between two modules), and
so does one under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import specpack._core._carry

#: The carry modules, bottom up: each may import only those before it.
STACK = ("allowlist", "importable", "sources", "payload", "tree", "carried", "ref",
         "values", "code", "__init__")

_HOME = Path(specpack._core._carry.__file__).parent


def _carry_imports(name: str) -> set[str]:
    """The carry modules that ``carry/<name>.py`` imports, wherever the import stands."""
    tree = ast.parse((_HOME / f"{name}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:  # from .x import y
                found.add(node.module.split(".")[0])
            elif node.level == 1:  # from . import x
                found.update(a.name for a in node.names)
            elif node.module and node.module.startswith("specpack._core._carry."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names
                         if a.name.startswith("specpack._core._carry."))
    return found


def test_the_stack_names_every_carry_module() -> None:
    assert sorted(STACK) == sorted(p.stem for p in _HOME.glob("*.py"))


def test_every_carry_import_points_down_the_stack_even_inside_a_function() -> None:
    upward = {
        f"{name} -> {target}"
        for i, name in enumerate(STACK)
        for target in _carry_imports(name)
        if target not in STACK[:i]
    }
    assert not upward, sorted(upward)
