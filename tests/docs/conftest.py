"""Markers of the docs-block tests: one ``requires_<distribution>`` marker per library a
block declares (``# requires: tianshou`` on its first line), so CI can run exactly those
blocks in the venv that has the library (``pytest tests/docs -m requires_tianshou``)."""

from __future__ import annotations

from typing import Any

from docs_blocks import marker_names


def pytest_configure(config: Any) -> None:
    for name in marker_names():
        config.addinivalue_line(
            "markers", f"{name}: a docs block that needs this library installed (never "
            "skipped in CI: run it in a venv that has the library)")
