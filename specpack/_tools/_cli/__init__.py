"""The ``specpack`` command line: capture, inspect, verify, check, run, demo and audit packs.

Each command is a short module over library calls (``inspect``'s is :mod:`.describe`);
:mod:`.parsers` holds every option, :mod:`.main` the entry point and the exit codes.
"""

from __future__ import annotations

from .main import main

__all__ = ["main"]
