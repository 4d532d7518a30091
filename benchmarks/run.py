"""specpack's benchmark suite: every figure a ratio, measured side by side in one run.

    python benchmarks/run.py              # the table (about 2-3 minutes on 2 cores)
    python benchmarks/run.py --quick      # fewer rounds (about 1 minute)
    python benchmarks/run.py --json       # for machines
    python benchmarks/run.py --markdown   # the table docs/benchmarks.md holds
    python benchmarks/run.py --only core verify
    python benchmarks/run.py --only audit  # the audit of ale-py + minigrid (minutes; opt-in)
    python benchmarks/run.py --from-json out.json --markdown   # re-format a saved --json run

Parts (each also runs on its own: ``python benchmarks/bench_core.py`` ...):

* ``core`` (bench_core.py): ``pack.make()`` vs ``gymnasium.make`` vs the hand-built floor,
  ``capture`` vs ``gymnasium.make``, pickle size and dumps/loads time vs the ``EnvSpec``, and
  how they grow with the number of kwargs and wrappers;
* ``import`` (bench_import.py): whole processes by CPU time: a worker's ``pickle.loads(blob).make()``
  vs ``import gymnasium; gymnasium.make(...)``, and ``import gymnasium, specpack`` vs
  ``import gymnasium``;
* ``carry`` (bench_carry.py): by-value pack size and first-load time for 1, 10, 100 classes;
* ``verify`` (bench_verify.py): ``verify()`` vs the bare ``python -c "import gymnasium"``;
* ``workers`` (bench_workers.py, from the vector-env work): worker start per start method;
* ``slow_start`` (bench_slow_start.py): an 8-worker vector env of a 300 ms constructor, with no
  throwaway env built in the parent;
* ``another_machine`` (bench_another_machine.py): a self-contained CustomAnt pack (Ant-v5 with a
  project XML that ``<include>``s a second file): pickle and pack-file size, the first ``make()``
  in a fresh process and a warm one against ``gymnasium.make``; ``check()`` against ``verify()``;
* ``audit`` (bench_audit.py, only with ``--only audit``: one run takes minutes and needs ale-py
  and minigrid): ``specpack audit --import ale_py --import minigrid --jobs 2``'s CPU against its
  floor (``audit_floor.py``: the same builds and rollouts done plainly), wall times beside.

Goals (from the issues): make <= 0.9x gymnasium.make and <= 1.1x the floor; capture <= 0.1x
gymnasium.make, a first capture (memo cleared) <= 0.5x; by-reference pickle <= 1.5x the EnvSpec;
verify <= 1.3x interpreter start; a worker's loads + make <= 1.10x and ``import specpack`` <= 1.05x
gymnasium's own; cold starts of 8 workers: spawn <= 1.0x, fork <= 1.1x gymnasium.make_vec,
forkserver >= 4x faster than gymnasium's.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import format_rows, machine

PARTS = ("core", "import", "carry", "verify", "workers", "slow_start", "another_machine", "audit")
#: The parts run without ``--only`` (the audit takes minutes and needs ale-py and minigrid).
DEFAULT_PARTS = ("core", "import", "carry", "verify", "workers", "slow_start", "another_machine")
_MODULES = {"core": "bench_core", "import": "bench_import", "carry": "bench_carry",
            "verify": "bench_verify",
            "workers": "bench_workers", "slow_start": "bench_slow_start",
            "another_machine": "bench_another_machine", "audit": "bench_audit"}


def _workers_text(module: Any, rows: list[dict[str, Any]]) -> str:
    formatter = getattr(module, "format_table", None)
    if callable(formatter):
        return str(formatter(rows))
    return json.dumps(rows, indent=2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--json", action="store_true", help="print machine and rows as JSON")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(DEFAULT_PARTS),
                        help="run only these parts (audit: only when named)")
    parser.add_argument("--from-json", metavar="FILE",
                        help="format the results of an earlier --json run instead of measuring")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results: dict[str, list[dict[str, Any]]] = {}
    texts: dict[str, str] = {}
    saved: dict[str, Any] | None = None
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as fh:
            saved = json.load(fh)
        results = saved["results"]
        args.quick = bool(saved.get("quick"))
        if "workers" in results:
            texts["workers"] = _workers_text(importlib.import_module("bench_workers"),
                                             results["workers"])
    for part in [] if saved is not None else args.only:
        try:
            module = importlib.import_module(_MODULES[part])
        except ModuleNotFoundError as e:
            if e.name != _MODULES[part]:
                raise
            print(f"({part}: {_MODULES[part]}.py is not there yet; skipped)", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        print(f"running {part} ...", file=sys.stderr, flush=True)
        results[part] = module.run(args.quick)
        print(f"  {part} took {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        if part == "workers":
            texts[part] = _workers_text(module, results[part])
    seconds = time.perf_counter() - start
    info = machine()
    if saved is not None:
        seconds, info = float(saved["seconds"]), saved["machine"]
    if args.json:
        print(json.dumps({"machine": info, "quick": args.quick, "seconds": round(seconds, 1),
                          "results": results}, indent=2))
        return 0
    ratio_rows = [r for part in ("core", "import", "carry", "verify", "slow_start",
                                 "another_machine", "audit")
                  for r in results.get(part, [])]
    head = [
        f"specpack benchmarks ({'quick, ' if args.quick else ''}{seconds:.0f} s): every ratio "
        "is measured side by side in this run: the median over interleaved rounds (times shown are "
        "the median round's)",
        f"machine: {info['uname']}",
        f"         {info['cpu']}, {info['cpus']} CPUs; Python {info['python']}, gymnasium "
        f"{info['gymnasium']}, numpy {info['numpy']}, cloudpickle {info['cloudpickle']}, "
        f"specpack {info['specpack']}",
        "",
    ]
    if args.markdown:
        head = [
            f"Measured in {seconds:.0f} s{' (--quick)' if args.quick else ''}; every ratio side "
            "by side in this run, the median over interleaved rounds (the times shown are the "
            "median round's).",
            "",
            f"- machine: `{info['uname']}`",
            f"- CPU: {info['cpu']}, {info['cpus']} CPUs",
            f"- Python {info['python']}, gymnasium {info['gymnasium']}, numpy {info['numpy']}, "
            f"cloudpickle {info['cloudpickle']}, specpack {info['specpack']}",
            "",
        ]
    out = [*head, format_rows(ratio_rows, markdown=args.markdown)]
    if "workers" in texts:
        if args.markdown:
            out += ["", "Worker start (`bench_workers.py`):", "", "```text", texts["workers"],
                    "```"]
        else:
            out += ["", "-- worker start (bench_workers.py)", texts["workers"]]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
