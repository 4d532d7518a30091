"""``specpack audit --import ale_py --import minigrid``: CPU and wall against its floor.

The audit of ale-py's 352 Atari ids, minigrid's 178 and gymnasium's own 63 (593 envs with
ale-py 0.12 and minigrid 3.2) as a user runs it: a fresh ``python -m specpack audit`` process,
timed from start to exit, CPU counted over it and every worker it started. Beside it, the same
work done plainly (``audit_floor.py``: for every env the audit reported, two builds and
rollouts in a fork, one in a long-lived fresh interpreter, one more under another hash seed),
run in pairs whose order alternates: audit, floor, floor, audit (``--repeat`` pairs; 2 by
default, 1 with ``--quick``). A pair takes minutes, and a shared machine's speed drifts over
minutes; in that order a steady drift weighs on both sides alike, and the ratio is of the
means. The goal (issue 32): the audit's CPU at most 1.2x its floor's; wall time is reported for each ``--jobs`` given (it should scale
with the jobs up to the cores). The floor's CPU per family says which envs dominate.

Usage: ``python benchmarks/bench_audit.py [--json] [--repeat N] [--jobs 1 --jobs 2]`` (needs
ale-py and minigrid installed; the audit is the one on ``PYTHONPATH``).
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
from pathlib import Path
from statistics import fmean as mean
from typing import Any

from _bench import row

GOAL_CPU_VS_FLOOR = 1.2
MODULES = ("ale_py", "minigrid")
STEPS = 50  # the audit's default
FLOOR = Path(__file__).with_name("audit_floor.py")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(cmd: list[str], cwd: str) -> tuple[subprocess.CompletedProcess[str], float, float]:
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=7200)
    return proc, time.perf_counter() - t0, _children_cpu() - cpu0


def measure_audit(jobs: int) -> dict[str, Any]:
    """One audit: wall and CPU seconds, the report's counts, the ids it reported."""
    imports = [a for m in MODULES for a in ("--import", m)]
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as cwd:
        proc, wall, cpu = _timed([sys.executable, "-m", "specpack", "audit", *imports,
                                  "--jobs", str(jobs), "--steps", str(STEPS), "--json"], cwd)
    if not proc.stdout.strip():
        raise RuntimeError(f"the audit printed no report (exit {proc.returncode}); is ale-py "
                           f"and minigrid installed?\n{proc.stderr[-3000:]}")
    doc = json.loads(proc.stdout)
    return {"wall": round(wall, 2), "cpu": round(cpu, 1), "ids": [e["name"] for e in doc["envs"]],
            "counts": {k: v for k, v in doc["counts"]["envs"].items() if v}}


def measure_floor(ids: list[str], jobs: int) -> dict[str, Any]:
    """The floor's run over ``ids``: wall and CPU seconds, its CPU per family."""
    imports = [a for m in MODULES for a in ("--import", m)]
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as cwd:
        listing = os.path.join(cwd, "ids.txt")
        Path(listing).write_text("\n".join(ids), encoding="utf-8")
        proc, wall, cpu = _timed([sys.executable, str(FLOOR), *imports, "--jobs", str(jobs),
                                  "--steps", str(STEPS), "--ids", listing], cwd)
    if proc.returncode != 0:
        raise RuntimeError(f"the floor failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    doc = json.loads(proc.stdout.strip().splitlines()[-1])  # last: what the envs print is above
    return {"wall": round(wall, 2), "cpu": round(cpu, 1), "by_family": doc["cpu_by_family"],
            "errors": len(doc["errors"])}


def run(quick: bool = False, repeat: int | None = None,
        jobs: tuple[int, ...] = (2,)) -> list[dict[str, Any]]:
    """Per ``jobs``: ``repeat`` pairs (default 2, 1 if ``quick``) in the order audit, floor,
    floor, audit, ...; one row with the means (the floor rebuilds the first audit's ids)."""
    pairs = repeat if repeat is not None else (1 if quick else 2)
    rows = []
    for j in jobs:
        audits: list[dict[str, Any]] = []
        floors: list[dict[str, Any]] = []
        for i in range(pairs):
            for side in ("audit", "floor") if i % 2 == 0 else ("floor", "audit"):
                if side == "audit":
                    audits.append(measure_audit(j))
                else:
                    floors.append(measure_floor(audits[0]["ids"], j))
        cpu_a, cpu_f = mean([a["cpu"] for a in audits]), mean([f["cpu"] for f in floors])
        wall_a, wall_f = mean([a["wall"] for a in audits]), mean([f["wall"] for f in floors])
        rows.append(row(
            "audit", f"audit of ale-py + minigrid + gymnasium ({len(audits[0]['ids'])} envs, "
            f"--jobs {j}): CPU vs its floor",
            f"{cpu_a:.0f} s CPU, {wall_a:.0f} s wall",
            f"floor {cpu_f:.0f} s CPU, {wall_f:.0f} s wall", cpu_a / cpu_f, GOAL_CPU_VS_FLOOR,
            jobs=j, audits=[{k: v for k, v in a.items() if k != "ids"} for a in audits],
            floors=floors, load=[round(x, 2) for x in os.getloadavg()]))
    return rows


def format_runs(rows: list[dict[str, Any]]) -> str:
    """One paragraph per ``--jobs``: the medians, each pair, the floor's CPU per family."""
    out = []
    for r in rows:
        out.append(f"--jobs {r['jobs']}: audit CPU {r['ratio']:.2f}x its floor, means of "
                   f"{len(r['audits'])} pair(s) "
                   f"(goal <= {GOAL_CPU_VS_FLOOR}x): {r['specpack']} vs {r['baseline']}")
        for a, f in zip(r["audits"], r["floors"]):
            out.append(f"  audit {a['cpu']:.0f} s CPU / {a['wall']:.0f} s wall {a['counts']}; "
                       f"floor {f['cpu']:.0f} s CPU / {f['wall']:.0f} s wall, "
                       f"per family {f['by_family']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeat", type=int, default=None,
                        help="pairs, in alternating order (default 2; --quick: 1)")
    parser.add_argument("--jobs", type=int, action="append", help="default: 2")
    args = parser.parse_args(argv)
    rows = run(args.quick, args.repeat, tuple(args.jobs or (2,)))
    print(json.dumps(rows, indent=2) if args.json else format_runs(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
