"""Markers of the docs-block tests: one ``requires_<extras>`` marker per install line a block
names (``# requires: pip install ".[tianshou]"`` on its first line), so CI runs exactly those
blocks in the venv made with that line (``pytest tests/docs -m requires_tianshou``).

Without ``-m`` (the README's test command, in the main venv) those blocks are deselected, not
skipped: they belong to their own venvs, where CI selects them by marker."""

from __future__ import annotations

from typing import Any

from docs_blocks import marker_names


def pytest_configure(config: Any) -> None:
    for name in marker_names():
        config.addinivalue_line(
            "markers", f"{name}: a docs block that needs this library installed (never "
            "skipped in CI: run it in a venv made with its install line)")


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    if config.getoption("markexpr", ""):
        return
    names = set(marker_names())
    keep, drop = [], []
    for item in items:
        (drop if names & {m.name for m in item.iter_markers()} else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
