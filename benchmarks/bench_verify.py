"""``specpack.verify(pack)`` wall time next to the bare interpreter start,
``python -c "import gymnasium"``.

``verify`` starts a fresh interpreter, rebuilds the pack there and compares a 100-step seeded
rollout with a rebuild here; the floor is the cost of starting any Python that imports
gymnasium. Both are timed as wall time, interleaved, and the median ratio is reported (the
goal of issue 32: within 1.3x of the floor).

Usage: ``python benchmarks/bench_verify.py [--quick] [--json]``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

from _bench import median_round, part_main, row, us

import specpack

GOAL_VERIFY_VS_START = 1.3  # issue 32


def _bare_start() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import gymnasium"], check=True)
    return time.perf_counter() - t0


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The verify/interpreter-start ratio for CartPole-v1 (subprocess, 100 steps)."""
    rounds = 3 if quick else 9
    pack = specpack.capture("CartPole-v1")
    assert specpack.verify(pack, steps=100)  # warm the page cache and __pycache__ for both sides
    _bare_start()
    verify: list[float] = []
    bare: list[float] = []
    for r in range(rounds):
        for which in (("v", "b") if r % 2 == 0 else ("b", "v")):
            if which == "v":
                t0 = time.perf_counter()
                report = specpack.verify(pack, steps=100)
                verify.append(time.perf_counter() - t0)
                assert report, report.differences
            else:
                bare.append(_bare_start())
    v, b, ratio = median_round(verify, bare)
    return [row("verify", "verify() CartPole-v1, 100 steps vs interpreter start", us(v),
                f'python -c "import gymnasium" {us(b)}', ratio, GOAL_VERIFY_VS_START)]


def main(argv: list[str] | None = None) -> int:
    return part_main(run, "verify() vs interpreter start", argv)


if __name__ == "__main__":
    sys.exit(main())
