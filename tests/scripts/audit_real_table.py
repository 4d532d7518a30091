"""The "Findings in real packages" table of docs/audit.md from a ``specpack audit --json`` report.

Run with the interpreter that ran the audit (it imports the packages to map each env id to the
package whose entry point it names)::

    python tests/scripts/audit_real_table.py report.json highway_env gymnasium_robotics metaworld
"""

from __future__ import annotations

import collections
import importlib
import json
import sys
import warnings
from typing import Any

COLUMNS = ("identical", "not_identical", "not_reproducible", "needs_arguments",
           "missing_dependency", "capture_error", "rebuild_error", "timeout")


def package_of(spec: Any) -> str:
    """The top-level module of a spec's entry point (or vector entry point)."""
    ep = spec.entry_point if spec.entry_point is not None else spec.vector_entry_point
    module = ep.partition(":")[0] if isinstance(ep, str) else getattr(ep, "__module__", "?")
    return str(module).partition(".")[0]


def main(path: str, modules: list[str]) -> None:
    warnings.simplefilter("ignore")
    for name in modules:
        importlib.import_module(name)
    from gymnasium.envs.registration import registry

    doc = json.load(open(path))
    rows: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for f in doc["envs"]:
        spec = registry.get(f["name"])
        rows[package_of(spec) if spec is not None else "?"][f["status"]] += 1
    head = "| package | envs | " + " | ".join(c.replace("_", " ") for c in COLUMNS) + " |"
    print(head)
    print("| --- |" + " ---: |" * (len(COLUMNS) + 1))
    total: collections.Counter[str] = collections.Counter()
    for pkg in sorted(rows):
        total.update(rows[pkg])
        cells = [str(rows[pkg][c]) for c in COLUMNS]
        print(f"| {pkg} | {sum(rows[pkg].values())} | " + " | ".join(cells) + " |")
    cells = [f"**{total[c]}**" for c in COLUMNS]
    print(f"| **all** | **{sum(total.values())}** | " + " | ".join(cells) + " |")
    print(f"\nelapsed {doc['elapsed']} s, {doc['jobs']} workers per side, {doc['steps']} steps")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
