"""Shared plumbing of the benchmarks: side-by-side timing, rows, formatting.

Every figure is a *ratio* of two things measured side by side in the same run: the
candidates are timed in interleaved batches (the order rotated each round, the garbage
collector off inside a batch, as ``timeit`` does), the ratio is taken per round, and the
median over the rounds is reported. Machine noise then hits both sides of a ratio alike.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def row(
    bench: str,
    figure: str,
    ours: str,
    baseline: str,
    ratio: float | None,
    goal: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One line of the table: a figure, both sides, their ratio and the goal (``ratio <= goal``)."""
    return {
        "bench": bench,
        "figure": figure,
        "specpack": ours,
        "baseline": baseline,
        "ratio": None if ratio is None else round(ratio, 3),
        "goal": goal,
        "met": None if goal is None or ratio is None else ratio <= goal,
        **extra,
    }


def _batch(fn: Callable[[], Any], number: int) -> float:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - t0) / number
    finally:
        if enabled:
            gc.enable()


def calibrate(fn: Callable[[], Any], batch_seconds: float = 0.02) -> int:
    """How many calls make one batch of about ``batch_seconds``."""
    fn()
    n = 1
    while True:
        t = _batch(fn, n) * n
        if t >= batch_seconds / 4 or n >= 1_000_000:
            return max(1, int(n * batch_seconds / max(t, 1e-9)))
        n *= 4


def side_by_side(
    funcs: dict[str, Callable[[], Any]], rounds: int, batch_seconds: float = 0.02
) -> dict[str, list[float]]:
    """Per-call seconds of each function, one sample per round, interleaved."""
    numbers = {name: calibrate(fn, batch_seconds) for name, fn in funcs.items()}
    samples: dict[str, list[float]] = {name: [] for name in funcs}
    items = list(funcs.items())
    for r in range(rounds):
        k = r % len(items)
        for name, fn in items[k:] + items[:k]:
            samples[name].append(_batch(fn, numbers[name]))
    return samples


def median_ratio(a: list[float], b: list[float]) -> float:
    """The median over rounds of ``a[i] / b[i]`` (paired: same round, same machine state)."""
    return median_round(a, b)[2]


def median_round(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """``(a[i], b[i], a[i] / b[i])`` of the round whose ratio is the median.

    The absolute times shown next to a ratio are that round's, so that the row is consistent
    (its two times divide to its ratio) even on a noisy machine.
    """
    ratios = sorted((x / y, x, y) for x, y in zip(a, b))
    r, x, y = ratios[(len(ratios) - 1) // 2]
    return x, y, r


def med(xs: list[float]) -> float:
    """The median."""
    return statistics.median(xs)


def us(seconds: float) -> str:
    """Seconds as a readable duration."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def size(n: float) -> str:
    """Bytes as a readable size."""
    return f"{n:,.0f} B" if n < 10_000 else f"{n / 1000:,.1f} kB"


def run_python(code: str, *args: str, env: dict[str, str] | None = None,
               cwd: str | None = None, stdin: bytes | None = None) -> str:
    """Run ``code`` in a fresh ``sys.executable``; its stdout (raises on failure)."""
    full = dict(os.environ)
    full.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, env=full, cwd=cwd,
        input=stdin, timeout=300,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode()


def child_env(cache: str) -> dict[str, str]:
    """The environment of benchmark children: this specpack first on the path, bytecode cached.

    An installed package runs from its ``.pyc`` files; a child that compiled every module from
    source (``PYTHONDONTWRITEBYTECODE``, a read-only checkout) would measure the compiler. The
    children share one bytecode cache in ``cache``, which warm-up runs fill for every side.

    Parameters
    ----------
    cache
        A folder for the children's bytecode (``PYTHONPYCACHEPREFIX``).
    """
    import specpack

    home = str(Path(specpack.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (home, env.get("PYTHONPATH")) if p)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    from importlib.metadata import version

    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    def v(name: str) -> str:
        try:
            return version(name)
        except Exception:  # noqa: BLE001
            return "not installed"

    return {
        "uname": " ".join(os.uname()),
        "cpu": cpu or platform.processor(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "gymnasium": v("gymnasium"),
        "numpy": v("numpy"),
        "cloudpickle": v("cloudpickle"),
        "specpack": _specpack_version(),  # the code measured, not a stale install record
    }


def _specpack_version() -> str:
    import specpack

    return str(specpack.__version__)


def part_main(run: Callable[[bool], list[dict[str, Any]]], description: str,
              argv: list[str] | None = None) -> int:
    """The command line of one benchmark part: ``--quick``, ``--json``; prints its rows."""
    import argparse
    import json

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = run(args.quick)
    print(json.dumps(rows, indent=2) if args.json else format_rows(rows))
    return 0


#: The heading of each part's rows in a table.
_TITLES = {
    "core": "make, capture and pickle (CartPole-v1)",
    "growth": "growth with kwargs and wrappers",
    "import": "what a process pays: whole fresh interpreters (CPU)",
    "carry": "code carried by value",
    "verify": "verify",
    "slow_start": "vector-env start with a slow constructor",
    "another_machine": "another machine: a self-contained CustomAnt pack, check vs verify",
    "audit": "specpack audit of ale-py and minigrid (CPU against its floor, the same work plainly)",
}


def _ratio(r: dict[str, Any]) -> str:
    return "" if r.get("ratio") is None else f"{r['ratio']:.2f}x"


def _goal(r: dict[str, Any]) -> tuple[str, str]:
    if r.get("goal") is None:
        return "", ""
    return f"<= {r['goal']:g}x", "met" if r.get("met") else "MISSED"


def format_rows(rows: list[dict[str, Any]], markdown: bool = False) -> str:
    """The ratio rows as a plain-text (or Markdown) table, grouped by part."""
    header = ("figure", "specpack", "baseline", "ratio", "goal", "")
    body: list[tuple[str, ...] | str] = []
    group = None
    for r in rows:
        if "figure" not in r:
            continue
        if r["bench"] != group:
            group = r["bench"]
            body.append(_TITLES.get(str(group), str(group)))
        body.append((r["figure"], r["specpack"], r["baseline"], _ratio(r), *_goal(r)))
    cells = [b for b in body if isinstance(b, tuple)]
    if markdown:
        lines = ["| " + " | ".join(header[:-1]) + " | |", "|---|---:|---:|---:|---:|---|"]
        for b in body:
            if isinstance(b, str):
                lines.append(f"| **{b}** | | | | | |")
            else:
                lines.append("| " + " | ".join(b) + " |")
        return "\n".join(lines)
    widths = [max(len(c[i]) for c in [header, *cells]) for i in range(len(header))]
    right = {1, 2, 3}

    def fmt(c: tuple[str, ...]) -> str:
        return "  ".join(x.rjust(w) if i in right else x.ljust(w)
                         for i, (x, w) in enumerate(zip(c, widths))).rstrip()

    lines = [fmt(header)]
    for b in body:
        lines.append(f"-- {b}" if isinstance(b, str) else fmt(b))
    return "\n".join(lines)
