"""What a process pays for specpack: whole fresh interpreters, side by side with gymnasium's own.

* A worker's whole life up to a built env: ``python -c "pickle.loads(blob).make()"`` (a captured
  CartPole-v1 on stdin) against ``python -c "import gymnasium; gymnasium.make('CartPole-v1')"``.
* ``python -c "import gymnasium, specpack"`` against ``python -c "import gymnasium"``.

Each side is a whole process, timed by the CPU seconds (user + system) the kernel charges it
(``os.wait4``), so a busy machine slows both sides alike; the pairs are interleaved, their
order alternated, and the median ratio over the pairs is reported (goals: the worker 1.10x (issue 30),
the import 1.05x). The rows also say how many ``specpack`` modules the worker ends up with.

Usage: ``python benchmarks/bench_import.py [--quick] [--json]``.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from typing import Any

from _bench import child_env, median_round, part_main, row, run_python, us

import specpack

GOAL_WORKER_VS_GYM = 1.10  # issue 30: plain dataclasses fit
GOAL_IMPORT_VS_GYM = 1.05

WORKER = "import pickle, sys; pickle.loads(sys.stdin.buffer.read()).make()"
GYM_MAKE = "import gymnasium; gymnasium.make('CartPole-v1')"
IMPORT_BOTH = "import gymnasium, specpack"
IMPORT_GYM = "import gymnasium"


def cpu_seconds(code: str, stdin_path: str | None = None, env: dict[str, str] | None = None) -> float:
    """The CPU seconds (user + system) a fresh ``python -c code`` takes to run to its end.

    Parameters
    ----------
    code
        The program.
    stdin_path
        A file given to it as standard input (``None``: none).
    env
        Its environment.
    """
    with open(stdin_path or os.devnull, "rb") as stdin:
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=stdin, env=env,
                                stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed ({proc.returncode}): {code}")
    return usage.ru_utime + usage.ru_stime


def _pairs(ours: str, theirs: str, rounds: int, stdin_path: str | None,
           env: dict[str, str]) -> tuple[list[float], list[float]]:
    a: list[float] = []
    b: list[float] = []
    cpu_seconds(ours, stdin_path, env)  # warm the page cache and __pycache__ of both sides
    cpu_seconds(theirs, None, env)
    for r in range(rounds):
        for which in ("a", "b") if r % 2 == 0 else ("b", "a"):
            if which == "a":
                a.append(cpu_seconds(ours, stdin_path, env))
            else:
                b.append(cpu_seconds(theirs, None, env))
    return a, b


def worker_modules(blob_path: str, env: dict[str, str]) -> list[str]:
    """The ``specpack`` modules a fresh worker holds after ``pickle.loads(blob).make()``."""
    code = (WORKER.replace("sys.stdin.buffer.read()", "open(sys.argv[1], 'rb').read()")
            + "; print(' '.join(m for m in sys.modules if m.split('.')[0] == 'specpack'))")
    return run_python(code, blob_path, env=env).split()


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Both whole-process ratios, with the worker's module count."""
    rounds = 5 if quick else 15
    with tempfile.TemporaryDirectory() as tmp:
        env = child_env(os.path.join(tmp, "pycache"))
        blob_path = os.path.join(tmp, "cartpole.pkl")
        with open(blob_path, "wb") as fh:
            fh.write(pickle.dumps(specpack.capture("CartPole-v1")))
        modules = worker_modules(blob_path, env)
        w, g = _pairs(WORKER, GYM_MAKE, rounds, blob_path, env)
        i, b = _pairs(IMPORT_BOTH, IMPORT_GYM, rounds, None, env)
    w1, g1, worker_ratio = median_round(w, g)
    i1, b1, import_ratio = median_round(i, b)
    return [
        row("import", f"worker: loads(blob).make() ({len(modules)} specpack modules), CPU",
            us(w1), f"gymnasium.make {us(g1)}", worker_ratio, GOAL_WORKER_VS_GYM,
            modules=len(modules)),
        row("import", "import gymnasium, specpack, CPU", us(i1), f"import gymnasium {us(b1)}",
            import_ratio, GOAL_IMPORT_VS_GYM),
    ]


def main(argv: list[str] | None = None) -> int:
    return part_main(run, "whole-process cost of specpack vs gymnasium", argv)


if __name__ == "__main__":
    sys.exit(main())
