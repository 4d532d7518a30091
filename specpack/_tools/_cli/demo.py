"""``specpack demo``: the registry problem across start methods, and the rescue
(:mod:`specpack._tools._demo` does the work)."""

from __future__ import annotations

import argparse
import json

from .._demo import render, run_demo
from .output import EXIT_NOT_IDENTICAL, EXIT_OK

__all__ = ["command"]


def command(ns: argparse.Namespace) -> int:
    """Run the demo; print its table (or ``--json``); exit 1 unless the pack worked everywhere."""
    result = run_demo(ray=ns.ray)
    if ns.json:
        print(json.dumps(result, indent=2))
    else:
        print(render(result))
    return EXIT_OK if result["pack_ok_everywhere"] else EXIT_NOT_IDENTICAL
