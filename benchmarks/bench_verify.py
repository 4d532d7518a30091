"""``specpack.verify(pack)`` next to the bare interpreter start, ``python -c "import gymnasium"``,
with the proof's own floor accounted for (wall and CPU).

``verify`` starts two fresh interpreters at once, the *rebuild* and the hash *control* (the
same job under another ``PYTHONHASHSEED``), and forks this process for the *build here* (plan
the actions, two builds); it then compares the traces. Each round times, in rotating order:

- **start**: one bare ``python -c "import gymnasium"`` (the goal's yardstick, the 1.0x);
- **two starts**: two of them at once, in the environment verify gives its fresh interpreters
  (``OPENBLAS_THREAD_TIMEOUT=4``: idle BLAS threads sleep at once), the floor of the rebuild
  and the control together: on 2 cores they share the machine with each other and with the
  build here;
- **rebuild**: one fresh worker running verify's rebuild job (interpreter start, the
  harness's imports, the pack's build, the 100-step rollout, its encoding);
- **verify**: the whole ``specpack.verify(pack, steps=100)``.

Every child (the bare starts and verify's own, which inherit this process's environment) runs
with the benchmark children's environment (:func:`_bench.child_env`): bytecode cached in a
folder of this run, so that ``PYTHONDONTWRITEBYTECODE`` does not make verify's children compile
specpack's modules from source in every round while gymnasium's come from their ``.pyc`` files.

Wall time is ``perf_counter`` around each; CPU is this process's and its reaped children's
(``getrusage``), read once every child has exited (outside the wall time). Ratios are taken
per round, and the median round is reported (the goal of issue 32: verify within 1.3x of
one start, wall).

Usage: ``python benchmarks/bench_verify.py [--quick] [--json]``.
"""

from __future__ import annotations

import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from _bench import child_env, median_round, part_main, row, us

import specpack
from specpack._core._process.launch import child_environment, wait_stopped
from specpack._core._process.worker import Worker
from specpack._tools._verify.jobs import RUN_JOB, plan
from specpack._tools._verify.judge import REBUILD_HASH_SEED, seeded_env

GOAL_VERIFY_VS_START = 1.3  # issue 32
_START = [sys.executable, "-c", "import gymnasium"]


def _cpu() -> float:
    """CPU seconds of this process and of its children reaped so far."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn: Callable[[], None]) -> tuple[float, float]:
    """``(wall, cpu)`` of ``fn()``; the CPU is read after every child it left has exited."""
    c0 = _cpu()
    t0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    wait_stopped(10.0)  # workers asked to stop exit by themselves: count their CPU
    return wall, _cpu() - c0


def _start() -> None:
    subprocess.run(_START, check=True)


def _two_starts() -> None:
    # started as verify starts its two: with the harness's environment (idle BLAS threads
    # sleep at once, launch.BLAS_SPIN), so the floor is the interpreters, not their spinning
    env = child_environment(None)
    procs = [subprocess.Popen(_START, env=env), subprocess.Popen(_START, env=env)]
    for p in procs:
        if p.wait() != 0:
            raise RuntimeError("python -c 'import gymnasium' failed")


def run(quick: bool = False) -> list[dict[str, Any]]:
    """verify / interpreter start for CartPole-v1 (subprocess, 100 steps), with its floor."""
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.clear()
        os.environ.update(child_env(os.path.join(tmp, "pycache")))
        try:
            return _run(quick)
        finally:
            os.environ.clear()
            os.environ.update(saved)


def _run(quick: bool) -> list[dict[str, Any]]:
    rounds = 3 if quick else 9
    pack = specpack.capture("CartPole-v1")
    payload = pickle.dumps(pack)
    actions = plan(payload, steps=100, seed=0)["actions"]

    def rebuild() -> None:
        with Worker("subprocess", env=seeded_env(REBUILD_HASH_SEED)) as worker:
            worker.submit(RUN_JOB, payload, {"steps": 100, "seed": 0, "actions": actions})
            outcome = worker.collect(60.0)
        assert outcome.status == "ok", outcome.detail

    def verify() -> None:
        report = specpack.verify(pack, steps=100)
        assert report, report.differences

    sides: dict[str, Callable[[], None]] = {
        "start": _start, "two": _two_starts, "rebuild": rebuild, "verify": verify}
    for fn in sides.values():  # warm the page cache and __pycache__ for every side
        _timed(fn)
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    items = list(sides.items())
    for r in range(rounds):
        k = r % len(items)
        for name, fn in items[k:] + items[:k]:
            w, c = _timed(fn)
            wall[name].append(w)
            cpu[name].append(c)
    start = "python -c \"import gymnasium\""
    rows = []
    v, b, ratio = median_round(wall["verify"], wall["start"])
    rows.append(row("verify", "verify() CartPole-v1, 100 steps vs interpreter start", us(v),
                    f"{start} {us(b)}", ratio, GOAL_VERIFY_VS_START))
    v, b, ratio = median_round(cpu["verify"], cpu["start"])
    rows.append(row("verify", "verify(), CPU of every process vs interpreter start's", us(v),
                    f"{start} {us(b)}", ratio))
    for what, label in (("wall", "two interpreter starts at once (rebuild + control floor)"),
                        ("cpu", "two interpreter starts at once, CPU")):
        samples = wall if what == "wall" else cpu
        v, b, ratio = median_round(samples["two"], samples["start"])
        rows.append(row("verify", f"{label} vs one", us(v), f"{start} {us(b)}", ratio))
    for what, label in (("wall", "the rebuild: one fresh worker, its job included"),
                        ("cpu", "the rebuild, CPU")):
        samples = wall if what == "wall" else cpu
        v, b, ratio = median_round(samples["rebuild"], samples["start"])
        rows.append(row("verify", f"{label} vs interpreter start", us(v), f"{start} {us(b)}",
                        ratio))
    for what, label in (("wall", "verify() vs its floor, two starts at once"),
                        ("cpu", "verify() vs its floor, CPU")):
        samples = wall if what == "wall" else cpu
        v, b, ratio = median_round(samples["verify"], samples["two"])
        rows.append(row("verify", label, us(v), f"two starts {us(b)}", ratio))
    return rows


def main(argv: list[str] | None = None) -> int:
    return part_main(run, "verify() vs interpreter start", argv)


if __name__ == "__main__":
    sys.exit(main())
