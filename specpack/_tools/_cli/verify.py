"""``specpack verify``: rebuild a pack file in a fresh process, compare, show the verdict.
Exit code 0 identical, 1 anything else, 2 what :func:`.packfile.preflight` finds."""

from __future__ import annotations

import argparse
import json

from ..._core._errors import SpecPackError, WorkerError
from ..._core._process.launch import label
from ..._core._text import printable, public_names
from .._verify.engine import verify
from .._verify.judge import HERE
from .._verify.report import REBUILD_ERROR, VerifyReport, seeds_text
from .output import EXIT_BAD_INPUT, EXIT_NOT_IDENTICAL, EXIT_OK, spinner, stdout_to_stderr
from .packfile import load_pack, preflight, run_imports

__all__ = ["command", "render_report"]

_OUTPUT_LINES = 20
_JSON_FIELDS = ("status", "identical", "differences", "where", "steps", "seed", "rollout_compared",
                "elapsed", "notes", "ignore_info", "hash_seeds", "stdout", "stderr")


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
    built_here = _failed_here(report)
    if built_here is not None and not ns.json:
        first, _, rest = built_here.partition("\n")
        raise WorkerError(f"{pack.label}: {first}", child_traceback=rest.strip("\n"))
    if ns.json:
        fields = report.to_dict()
        doc = {"file": ns.file, "id": pack.id, **{k: fields[k] for k in _JSON_FIELDS}}
        doc["elapsed"] = round(report.elapsed, 4)
        print(json.dumps(doc, indent=2, default=str, ensure_ascii=True))
        if built_here is not None:
            return EXIT_BAD_INPUT
    else:
        print(render_report(report, pack.label, where, ns.timeout))
    return EXIT_OK if report else EXIT_NOT_IDENTICAL


def _failed_here(report: VerifyReport) -> str | None:
    """The report's only finding if it is a failed build here (said as ``specpack run`` does)."""
    differences = [public_names(d) for d in report.differences]
    if (report.status == REBUILD_ERROR and len(differences) == 1
            and differences[0].startswith(f"{HERE} failed")):
        return differences[0]
    return None


#: The headline of each status but ``identical`` and ``unseeded`` (see :func:`render_report`).
_HEADS = {
    "not_identical": "NOT identical: {label} rebuilt in {where} differs from the build here "
                     "({counted}):",
    "not_reproducible": "NOT reproducible: {label} differs between runs that should agree (two "
                        "builds here, or two fresh interpreters under different hash seeds), so "
                        "a rebuild elsewhere cannot match it ({counted}):",
    "not_compared": "rollout NOT compared: {label} rebuilt in {where} matches the build here in "
                    "what was compared, but its rollout was not compared ({counted}):",
    "rollout_error": "rollout error: {label} raised during the {steps}-step rollout with seed "
                     "{seed} ({counted}):",
    "built_here": "build failed here: {label} could not be built in this process ({counted}):",
    "rebuild_error": "rebuild failed: {label} could not be built in {where} ({counted}):",
    "timeout": "timeout: {label} was not rebuilt and compared in {where} within {timeout:g} s:",
}
_CAUSES = {"hash_order": "hash order (PYTHONHASHSEED)",
           "global_generator": "a global random generator"}


def render_report(report: VerifyReport, label: str, where: str, timeout: float) -> str:
    """The text ``specpack verify`` prints for a report of ``label`` rebuilt in ``where``."""
    status: str = report.status
    differences = [public_names(d) for d in report.differences]
    label = printable(label, limit=2000)
    steps, seed, elapsed = report.steps, report.seed, report.elapsed
    n = len(differences)
    counted = f"{n} difference{'s' if n != 1 else ''}; {elapsed:.2f} s"
    if status == "identical":
        compared = "layers, spaces, render_mode, spec"
        if report.rollout_compared:
            compared += f", {steps}-step rollout with seed {seed}"
        head = (f"identical: {label} rebuilt in {where} matches the build here "
                f"({compared}; {elapsed:.2f} s)")
    elif status == "unseeded":
        why = _CAUSES.get(str(report.cause), "process state")
        head = (f"NOT reproducible: {label} depends on {why}, which reset(seed=...) does not "
                f"seed, so its rollout differs in every process ({counted}):")
    else:
        if status == "rebuild_error" and differences and all(
                d.startswith(f"{HERE} failed") for d in differences):
            status = "built_here"
        head = _HEADS.get(status, "{status}: {label} rebuilt in {where} ({counted}):").format(
            status=status, label=label, where=where, counted=counted, steps=steps, seed=seed,
            timeout=timeout)
    lines = [printable(head, limit=2000)]
    for d in differences:
        first, *rest = d.splitlines() or [""]
        lines.append(f"  - {printable(first, limit=2000)}")
        lines += [f"    {printable(line, limit=2000)}" for line in rest]
    if report.status != "identical":
        lines += _output("stdout", report.stdout, where) + _output("stderr", report.stderr, where)
    lines += [f"note: {printable(note, limit=2000)}" for note in report.notes]
    if report.ignore_info:
        lines.append(printable(f"info keys left out: {', '.join(map(repr, report.ignore_info))}",
                               limit=2000))
    if report.hash_seeds:
        lines.append(f"hash seeds (PYTHONHASHSEED): {seeds_text(report.hash_seeds)}")
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
