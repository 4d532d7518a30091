"""``specpack verify``: rebuild a pack file in a fresh process, compare, show the verdict.

Exit code 0 identical, 1 anything else, 2 for what the user can fix before anything is built
(see :func:`.packfile.preflight`). Every string from the file or the env is shown escaped.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..._core._errors import SpecPackError, WorkerError
from ..._core._process.launch import label
from ..._core._text import printable, public_names
from .._verify.engine import verify
from .._verify.judge import HERE
from .._verify.report import seeds_text
from .output import EXIT_BAD_INPUT, EXIT_NOT_IDENTICAL, EXIT_OK, spinner, stdout_to_stderr
from .packfile import load_pack, preflight, run_imports

__all__ = ["command", "render_report"]

_OUTPUT_LINES = 20


def command(ns: argparse.Namespace) -> int:
    """Load ``ns.file``, verify it, print the report (text or ``--json``)."""
    if ns.steps < 0:
        raise SpecPackError(f"--steps {ns.steps}: must be 0 or more")
    run_imports(ns)
    pack = load_pack(ns)
    preflight(pack)
    where = f"a {label(ns.where)}"
    with spinner(f"verifying {pack.label} in {where} ({ns.steps} steps, seed {ns.seed})"), \
            stdout_to_stderr():
        report = verify(pack, steps=ns.steps, seed=ns.seed, where=ns.where, timeout=ns.timeout,
                        ignore_info=getattr(ns, "ignore_info", None) or ())
    status = str(report.status)
    built_here = _failed_here(report)
    if built_here is not None and not ns.json:
        first, _, rest = built_here.partition("\n")
        raise WorkerError(f"{pack.label}: {first}", child_traceback=rest.strip("\n"))
    if ns.json:
        doc = {
            "file": ns.file,
            "id": pack.id,
            "status": status,
            "identical": bool(report),
            "differences": [str(d) for d in report.differences],
            "where": ns.where,
            "steps": ns.steps,
            "seed": ns.seed,
            "rollout_compared": bool(getattr(report, "rollout_compared", True)),
            "elapsed": round(float(getattr(report, "elapsed", 0.0)), 4),
            "notes": [str(n) for n in getattr(report, "notes", [])],
            "ignore_info": list(getattr(report, "ignore_info", [])),
            "hash_seeds": dict(getattr(report, "hash_seeds", {})),
            "stdout": str(getattr(report, "stdout", "") or ""),
            "stderr": str(getattr(report, "stderr", "") or ""),
        }
        print(json.dumps(doc, indent=2, default=str, ensure_ascii=True))
        if built_here is not None:
            return EXIT_BAD_INPUT
    else:
        print(render_report(report, pack.label, where, ns.timeout))
    return EXIT_OK if report else EXIT_NOT_IDENTICAL


def _failed_here(report: Any) -> str | None:
    """The finding of a build that failed here, when it is the report's only one (the pack
    does not build on this machine at all: reported as ``specpack run`` does), else None."""
    if str(report.status) != "rebuild_error":
        return None
    differences = [public_names(str(d)) for d in report.differences]
    if len(differences) == 1 and differences[0].startswith(f"{HERE} failed"):
        return differences[0]
    return None


def render_report(report: Any, label: str, where: str, timeout: float) -> str:
    """The text ``specpack verify`` prints for a report of ``label`` rebuilt in ``where``."""
    status = str(report.status)
    differences = [public_names(str(d)) for d in report.differences]
    label = printable(label, limit=2000)
    steps, seed = report.steps, report.seed
    elapsed = float(getattr(report, "elapsed", 0.0))
    n = len(differences)
    counted = f"{n} difference{'s' if n != 1 else ''}; {elapsed:.2f} s"
    if status == "identical":
        compared = "layers, spaces, render_mode, spec"
        if getattr(report, "rollout_compared", True):
            compared += f", {steps}-step rollout with seed {seed}"
        head = (f"identical: {label} rebuilt in {where} matches the build here "
                f"({compared}; {elapsed:.2f} s)")
    elif status == "not_identical":
        head = f"NOT identical: {label} rebuilt in {where} differs from the build here ({counted}):"
    elif status == "not_reproducible":
        head = (f"NOT reproducible: {label} differs between runs that should agree (two "
                "builds here, or two fresh interpreters under different hash seeds), so a "
                f"rebuild elsewhere cannot match it ({counted}):")
    elif status == "unseeded":
        why = {"hash_order": "hash order (PYTHONHASHSEED)",
               "global_generator": "a global random generator"}.get(
            str(getattr(report, "cause", "")), "process state")
        head = (f"NOT reproducible: {label} depends on {why}, which reset(seed=...) does not "
                f"seed, so its rollout differs in every process ({counted}):")
    elif status == "not_compared":
        head = (f"rollout NOT compared: {label} rebuilt in {where} matches the build here in "
                f"what was compared, but its rollout was not compared ({counted}):")
    elif status == "rollout_error":
        head = (f"rollout error: {label} raised during the {steps}-step rollout with seed "
                f"{seed} ({counted}):")
    elif status == "rebuild_error" and differences and all(
            d.startswith(f"{HERE} failed") for d in differences):
        head = f"build failed here: {label} could not be built in this process ({counted}):"
    elif status == "rebuild_error":
        head = f"rebuild failed: {label} could not be built in {where} ({counted}):"
    elif status == "timeout":
        head = f"timeout: {label} was not rebuilt and compared in {where} within {timeout:g} s:"
    else:
        head = f"{status}: {label} rebuilt in {where} ({counted}):"
    lines = [printable(head, limit=2000)]
    for d in differences:
        first, *rest = d.splitlines() or [""]
        lines.append(f"  - {printable(first, limit=2000)}")
        lines += [f"    {printable(line, limit=2000)}" for line in rest]
    if status != "identical":
        for name in ("stdout", "stderr"):
            lines += _output(name, str(getattr(report, name, "") or ""), where)
    lines += [f"note: {printable(str(note), limit=2000)}"
              for note in getattr(report, "notes", [])]
    ignored = list(getattr(report, "ignore_info", []))
    if ignored:
        lines.append(printable(f"info keys left out: {', '.join(map(repr, ignored))}",
                               limit=2000))
    seeds = getattr(report, "hash_seeds", {})
    if seeds:
        lines.append(f"hash seeds (PYTHONHASHSEED): {seeds_text(seeds)}")
    return "\n".join(lines)


def _output(name: str, text: str, where: str) -> list[str]:
    """The last lines the env wrote to ``name`` in ``where``, indented and escaped."""
    shown = text.rstrip().splitlines()
    if not shown:
        return []
    cut = len(shown) > _OUTPUT_LINES
    out = [f"the env's {name} in {where}" + (f" (last {_OUTPUT_LINES} lines):" if cut else ":")]
    out += [f"  | {printable(line, limit=500)}" for line in shown[-_OUTPUT_LINES:]]
    return out
