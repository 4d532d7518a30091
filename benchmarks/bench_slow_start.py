"""Vector-env start for an env with a slow (300 ms) constructor: no throwaway env in the parent.

gymnasium's ``AsyncVectorEnv`` builds ``env_fns[0]()`` in the parent just to read the spaces
(and TorchRL and PufferLib do the same; Sample Factory 2.1.1 builds its throwaway env in a
separate spawn process, which it waits for), so a slow constructor is paid once more,
serially, before any worker starts. A pack captured with ``record_spaces=True`` carries
the spaces, and ``specpack.make_vec`` builds nothing in the parent.

Each trial is a fresh ``python -c`` that imports a module registering ``SlowStart-v0`` (its
constructor sleeps 300 ms) and times the construction of an 8-worker async vector env, then a
reset; gymnasium and specpack trials alternate, and the median of each is reported with the
ratio. The pack is captured (one build, recording the spaces) before the timer starts: that
cost is paid once per program, not per vector env.

Usage: ``python benchmarks/bench_slow_start.py [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _bench import row

NUM_ENVS = 8
CONTEXTS = ("fork", "forkserver")

_MODULE = '''
import time
import gymnasium
from gymnasium.envs.classic_control import CartPoleEnv


class SlowStart(CartPoleEnv):
    def __init__(self, render_mode=None):
        time.sleep(0.3)
        super().__init__(render_mode=render_mode)


if "SlowStart-v0" not in gymnasium.registry:
    gymnasium.register("SlowStart-v0", entry_point="slowstart:SlowStart", max_episode_steps=200)
'''

_TRIAL = r"""
import json, sys, time
impl, ctx, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
import gymnasium, slowstart
if impl == "specpack":
    import specpack
    pack = specpack.capture("SlowStart-v0", record_spaces=True)
    build = lambda: specpack.make_vec(pack, n, context=ctx)
else:
    build = lambda: gymnasium.make_vec(
        "SlowStart-v0", n, vectorization_mode="async", vector_kwargs={"context": ctx})
t0 = time.perf_counter()
venv = build()
venv.reset(seed=0)
ms = (time.perf_counter() - t0) * 1000.0
venv.close()
print(json.dumps({"ms": ms}))
"""


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Median start (construction + first reset) per implementation and context, and ratios."""
    repeats = 2 if quick else 4
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="slowstart-") as tmp:
        Path(tmp, "slowstart.py").write_text(_MODULE)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [tmp, env.get("PYTHONPATH")]))
        for ctx in CONTEXTS:
            times: dict[str, list[float]] = {"gymnasium": [], "specpack": []}
            for _ in range(repeats):
                for impl in ("gymnasium", "specpack"):
                    out = subprocess.run(
                        [sys.executable, "-c", _TRIAL, impl, ctx, str(NUM_ENVS)], cwd=tmp,
                        env=env, capture_output=True, text=True, timeout=300, check=True)
                    times[impl].append(json.loads(out.stdout.strip().splitlines()[-1])["ms"])
            ours = statistics.median(times["specpack"])
            theirs = statistics.median(times["gymnasium"])
            rows.append(row(
                "slow_start", f"make_vec({NUM_ENVS}) start, 300 ms constructor, {ctx}",
                f"{ours:,.0f} ms", f"gymnasium.make_vec {theirs:,.0f} ms", ours / theirs,
                context=ctx, num_envs=NUM_ENVS, specpack_ms=round(ours, 1),
                gymnasium_ms=round(theirs, 1),
            ))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = run(quick=args.quick)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"make_vec start, {NUM_ENVS} workers, 300 ms constructor (construction + first reset)")
    for r in rows:
        print(f"  {r['context']:<10} specpack {r['specpack_ms']:7.0f} ms   gymnasium "
              f"{r['gymnasium_ms']:7.0f} ms   ratio {r['ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
