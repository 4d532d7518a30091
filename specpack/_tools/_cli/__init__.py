"""The ``specpack`` command line: one short module per command over library calls
(``inspect``'s is :mod:`.describe`), every option in :mod:`.parsers`, the entry point in
:mod:`.main`."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
