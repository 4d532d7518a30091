"""Worker start time: ``specpack.make_vec`` next to ``gymnasium.make_vec``, per start method.

Each trial runs in a fresh ``python -c`` (the forkserver is a per-process singleton, and a
forkserver preloads ``__main__`` when ``__main__`` is a script file, so a script would skew it)
and times two constructions of an async CartPole-v1 vector env:

* ``cold``: the first in the process; for forkserver this includes starting the forkserver
  itself, which imports its preload list once (for specpack: gymnasium and numpy, ~150 ms
  here; for plain gymnasium nothing, so every worker imports gymnasium itself);
* ``warm``: the second, with the forkserver already running: the cost of every later
  ``make_vec`` (spawn keeps no server, so its warm column repeats its cold one, unmeasured).

One more cell, ``specpack-prestarted`` (forkserver only), calls
:func:`specpack.vector.warm_forkserver` first and sleeps 0.3 s, standing in for the rest of a
program's start-up (imports, building a model): its ``cold`` is the first ``make_vec`` of a
program that starts the forkserver early.

The table shows medians over the repeats; the goal lines compare 8 workers:
specpack forkserver at least 4x faster than gymnasium forkserver, and within 2x of fork; and,
side by side (issue 22), the cold start of ``specpack.make_vec`` against ``gymnasium.make_vec``
under spawn (goal <= 1.0x: every worker pays the import) and fork (goal <= 1.1x): the ratio is
taken per repeat (the two trials run back to back) and the median over the repeats reported,
for the wall time and for the CPU time the parent and its workers use from ``make_vec`` to
``close()`` (``getrusage`` of the process and its reaped children; the machine's load slows
both alike, so on a shared machine this ratio is the steadier one).

Usage: ``python benchmarks/bench_workers.py [--quick] [--json] [--repeats N] [--sizes 8]``.
``run(quick)`` returns the rows as dicts for ``benchmarks/run.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from typing import Any

from _bench import child_env

CONTEXTS = ("fork", "spawn", "forkserver")
#: Issue 22's goals for specpack.make_vec's cold start against gymnasium.make_vec's (8 workers).
GOAL_VS_GYMNASIUM = {"spawn": 1.0, "fork": 1.1}
SIZES = (2, 4, 8)
IMPLS = ("gymnasium", "specpack")

_TRIAL = r"""
import json, resource, sys, time
impl, ctx, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
import gymnasium
if impl.startswith("specpack"):
    import specpack
    from specpack.vector import make_vec  # its imports load here, not in the timed build
    pack = specpack.capture("CartPole-v1")
    if impl == "specpack-prestarted":
        specpack.vector.warm_forkserver(pack)
        time.sleep(0.3)  # stands in for the rest of a program's start-up (imports, a model)
    build = lambda: make_vec(pack, n, context=ctx)
else:
    build = lambda: gymnasium.make_vec(
        "CartPole-v1", n, vectorization_mode="async", vector_kwargs={"context": ctx})

def cpu():  # this process and its reaped children (the workers, once closed)
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

times, cpus = [], []
for _ in range(1 if ctx == "spawn" else 2):  # spawn has no server: warm == cold
    c0 = cpu()
    t0 = time.perf_counter()
    venv = build()
    times.append((time.perf_counter() - t0) * 1000.0)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (n, 4), obs.shape
    venv.close()
    cpus.append((cpu() - c0) * 1000.0)
print(json.dumps({"cold_ms": times[0], "warm_ms": times[-1], "cold_cpu_ms": cpus[0]}))
"""


def _trial(impl: str, ctx: str, n: int, env: dict[str, str]) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", _TRIAL, impl, ctx, str(n)],
        capture_output=True, text=True, timeout=120, env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"trial {impl}/{ctx}/{n} failed:\n{proc.stderr}")
    out: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def run(quick: bool = False, repeats: int | None = None,
        sizes: tuple[int, ...] | None = None) -> list[dict[str, Any]]:
    """Measure every (implementation, start method, workers) cell; one dict per cell.

    ``quick`` uses one repeat and only 2 and 8 workers (about 20 s instead of about 90 s).
    """
    reps = repeats if repeats is not None else (1 if quick else 7)  # issue 32: >= 7 pairs
    sizes = sizes or ((2, 8) if quick else SIZES)
    rows: list[dict[str, Any]] = []
    # Interleave the repeats so that machine noise spreads over every cell alike.
    samples: dict[tuple[str, str, int], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as cache:
        env = child_env(cache)  # workers run from bytecode, as an installed package does
        for impl in IMPLS:  # warm-up: fills the bytecode cache of both sides
            _trial(impl, "spawn", 1, env)
        for r in range(reps):
            for n in sizes:
                for ctx in CONTEXTS:
                    impls = IMPLS + (("specpack-prestarted",) if ctx == "forkserver" else ())
                    for impl in impls if r % 2 == 0 else impls[::-1]:  # alternate who goes first
                        samples.setdefault((impl, ctx, n), []).append(_trial(impl, ctx, n, env))
    for (impl, ctx, n), trials in samples.items():
        rows.append({
            "bench": "workers",
            "impl": impl,
            "context": ctx,
            "num_envs": n,
            "cold_ms": round(statistics.median(t["cold_ms"] for t in trials), 1),
            "warm_ms": round(statistics.median(t["warm_ms"] for t in trials), 1),
            "cold_cpu_ms": round(statistics.median(t["cold_cpu_ms"] for t in trials), 1),
            "repeats": len(trials),
        })
    rows.sort(key=lambda r: (r["num_envs"], CONTEXTS.index(r["context"]), r["impl"]))
    rows.extend(_goals(rows))
    rows.extend(_side_by_side(samples, max(sizes)))
    return rows


def _side_by_side(samples: dict[tuple[str, str, int], list[dict[str, float]]],
                  n: int) -> list[dict[str, Any]]:
    """specpack's cold start over gymnasium's, per repeat (back-to-back trials), the median."""
    out = []
    for ctx, goal in GOAL_VS_GYMNASIUM.items():
        ours, theirs = samples[("specpack", ctx, n)], samples[("gymnasium", ctx, n)]
        ratios = sorted(a["cold_ms"] / b["cold_ms"] for a, b in zip(ours, theirs))
        cpu = sorted(a["cold_cpu_ms"] / b["cold_cpu_ms"] for a, b in zip(ours, theirs))
        ratio = statistics.median(ratios)
        out.append({
            "bench": "workers_vs_gymnasium",
            "num_envs": n,
            "context": ctx,
            "ratio": round(ratio, 3),
            "pairs": len(ratios),
            "ratios": [round(r, 3) for r in ratios],
            "cpu_ratio": round(statistics.median(cpu), 3),
            "cpu_ratios": [round(r, 3) for r in cpu],
            "goal": goal,
            "met": ratio <= goal,
        })
    return out


def _cell(rows: list[dict[str, Any]], impl: str, ctx: str, n: int, key: str) -> float:
    for r in rows:
        if r.get("impl") == impl and r.get("context") == ctx and r.get("num_envs") == n:
            return float(r[key])
    raise KeyError((impl, ctx, n))


def _goals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    n = max(r["num_envs"] for r in rows)
    out = []
    for key in ("cold_ms", "warm_ms"):
        ours = _cell(rows, "specpack", "forkserver", n, key)
        theirs = _cell(rows, "gymnasium", "forkserver", n, key)
        fork = _cell(rows, "specpack", "fork", n, key)
        pre = _cell(rows, "specpack-prestarted", "forkserver", n, "cold_ms")
        speedup = theirs / ours
        vs_fork = ours / fork
        out.append({
            "bench": "workers_goal",
            "num_envs": n,
            "measure": key[:-3],
            "speedup_vs_gymnasium_forkserver": round(speedup, 2),
            "ratio_to_fork": round(vs_fork, 2),
            "goal_speedup_4x": speedup >= 4.0,
            "goal_within_2x_of_fork": vs_fork <= 2.0,
        })
    out.append({
        "bench": "workers_goal",
        "num_envs": n,
        "measure": "prestarted",
        "speedup_vs_gymnasium_forkserver": round(
            _cell(rows, "gymnasium", "forkserver", n, "cold_ms") / pre, 2),
        "ratio_to_fork": round(pre / _cell(rows, "specpack", "fork", n, "cold_ms"), 2),
        "goal_speedup_4x": _cell(rows, "gymnasium", "forkserver", n, "cold_ms") / pre >= 4.0,
        "goal_within_2x_of_fork": pre / _cell(rows, "specpack", "fork", n, "cold_ms") <= 2.0,
    })
    return out


def format_table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table of the cells and the goal lines."""
    lines = [
        f"{'workers':>7}  {'context':<10}  {'gymnasium cold':>14}  {'specpack cold':>13}  "
        f"{'gymnasium warm':>14}  {'specpack warm':>13}   (ms, median)",
    ]
    cells = [r for r in rows if r["bench"] == "workers"]
    for n in sorted({r["num_envs"] for r in cells}):
        for ctx in CONTEXTS:
            g = [_cell(cells, "gymnasium", ctx, n, k) for k in ("cold_ms", "warm_ms")]
            s = [_cell(cells, "specpack", ctx, n, k) for k in ("cold_ms", "warm_ms")]
            lines.append(
                f"{n:>7}  {ctx:<10}  {g[0]:>14.1f}  {s[0]:>13.1f}  {g[1]:>14.1f}  {s[1]:>13.1f}"
            )
            if ctx == "forkserver":
                p = _cell(cells, "specpack-prestarted", ctx, n, "cold_ms")
                lines.append(f"{'':>7}  {'  + warm_forkserver() at start-up':<35} {p:>13.1f}")
    for v in (r for r in rows if r["bench"] == "workers_vs_gymnasium"):
        lines.append(
            f"side by side ({v['num_envs']} workers, cold, {v['context']}): specpack.make_vec is "
            f"{v['ratio']:.2f}x gymnasium.make_vec, median of {v['pairs']} pairs "
            f"(goal <= {v['goal']:g}x: {'met' if v['met'] else 'NOT met'}); CPU of the parent "
            f"and its workers to close: {v['cpu_ratio']:.2f}x"
        )
    for g in (r for r in rows if r["bench"] == "workers_goal"):
        lines.append(
            f"goal ({g['measure']}, {g['num_envs']} workers): specpack forkserver is "
            f"{g['speedup_vs_gymnasium_forkserver']:.1f}x faster than gymnasium forkserver "
            f"(goal >= 4x: {'met' if g['goal_speedup_4x'] else 'NOT met'}) and "
            f"{g['ratio_to_fork']:.2f}x specpack fork "
            f"(goal <= 2x: {'met' if g['goal_within_2x_of_fork'] else 'NOT met'})"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1 repeat, 2 and 8 workers only")
    parser.add_argument("--repeats", type=int, default=None, help="trials per cell (default 7)")
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="numbers of workers (default 2 4 8)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    rows = run(quick=args.quick, repeats=args.repeats,
               sizes=tuple(args.sizes) if args.sizes else None)
    print(json.dumps(rows, indent=2) if args.json else format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
