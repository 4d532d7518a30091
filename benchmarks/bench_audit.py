"""``specpack audit --import ale_py --import minigrid --jobs 2``: the wall time of the whole command.

The audit of ale-py's 352 Atari ids, minigrid's 178 and gymnasium's own 63 (593 envs with
ale-py 0.12 and minigrid 3.2) as a user runs it: a fresh ``python -m specpack audit`` process,
timed from start to exit. The figure is held against a fixed one, 107 s: specpack 0.1.0's
audit of the same registry on a quiet 2-core machine (issue 20's goal: the exact audit must not
be slower). It is not measured side by side like the other parts (one run takes minutes), so
each row also reports the machine's load average around the run and the CPU seconds the audit
and its workers used, which depend much less on the load than the wall time does.

Usage: ``python benchmarks/bench_audit.py [--quick] [--json] [--repeat N]`` (needs ale-py and
minigrid installed; the audit is the one on ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

from _bench import row

#: specpack 0.1.0's wall time for this audit on a quiet 2-core machine (seconds).
BASELINE_SECONDS = 107.0
COMMAND = ("audit", "--import", "ale_py", "--import", "minigrid", "--jobs", "2", "--json")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure() -> dict[str, Any]:
    """One run of the command: wall and CPU seconds, load averages, the report's counts."""
    before_load = os.getloadavg()
    cpu0 = _children_cpu()
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as cwd:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "specpack", *COMMAND], cwd=cwd,
                              capture_output=True, text=True, timeout=3600)
        wall = time.perf_counter() - t0
    if not proc.stdout.strip():
        raise RuntimeError(f"the audit printed no report (exit {proc.returncode}); is ale-py "
                           f"and minigrid installed?\n{proc.stderr[-3000:]}")
    doc = json.loads(proc.stdout)
    counts = {k: v for k, v in doc["counts"]["envs"].items() if v}
    return {
        "wall": round(wall, 2),
        "audit_elapsed": doc["elapsed"],
        "cpu": round(_children_cpu() - cpu0, 1),
        "envs": len(doc["envs"]),
        "counts": counts,
        "load_before": [round(x, 2) for x in before_load],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "exit": proc.returncode,
    }


def run(quick: bool = False, repeat: int = 1) -> list[dict[str, Any]]:
    """One row per run (``quick`` changes nothing: the audit is the figure)."""
    rows = []
    for _ in range(repeat):
        m = measure()
        rows.append(row(
            "audit", f"specpack audit --import ale_py --import minigrid --jobs 2 ({m['envs']} envs)",
            f"{m['wall']:.1f} s", f"0.1.0: {BASELINE_SECONDS:g} s",
            m["wall"] / BASELINE_SECONDS, 1.0, **m))
    return rows


def format_runs(rows: list[dict[str, Any]]) -> str:
    """One line per run: wall, CPU, envs, load average (1 min) before and after."""
    return "\n".join(
        f"{r['envs']} envs in {r['wall']:.1f} s wall ({r['ratio']:.2f}x 0.1.0's "
        f"{BASELINE_SECONDS:g} s), {r['cpu']:.0f} s CPU; load {r['load_before'][0]:.2f} -> "
        f"{r['load_after'][0]:.2f}; {r['counts']}"
        for r in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeat", type=int, default=1, help="runs, one after the other")
    args = parser.parse_args(argv)
    rows = run(args.quick, args.repeat)
    print(json.dumps(rows, indent=2) if args.json else format_runs(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
