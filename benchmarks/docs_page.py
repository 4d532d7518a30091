"""Write docs/benchmarks.md, the whole page, from one saved run: ``python benchmarks/docs_page.py out.json``.

``out.json`` comes from ``python benchmarks/run.py --json > out.json``; the table is
``run.py --from-json out.json --markdown``, and every figure the prose quotes is read from that
same run (a figure the run did not measure is said to be missing, never carried over from an
older page). Nothing on the page is written by hand between runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _rows(saved: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["figure"]: r for rows in saved["results"].values() for r in rows
            if isinstance(r, dict) and "figure" in r}


def page(saved: dict[str, Any], table: str) -> str:
    """The page's Markdown for the run ``saved`` whose Markdown table is ``table``."""
    rows = _rows(saved)

    def r(fig: str, fmt: str = ".2f") -> str:
        """One figure's ratio, formatted, or a word saying the run lacks it."""
        row = rows.get(fig)
        if row is None or row.get("ratio") is None:
            return "(not measured in this run)"
        return f"{float(row['ratio']):{fmt}}x"

    def side(fig: str, key: str = "specpack") -> str:
        row = rows.get(fig)
        return "(not measured)" if row is None else str(row.get(key))

    worker = next((f for f in rows if f.startswith("worker: loads(blob).make()")), "")
    by_value = [f"by value, {n}: first loads+make vs import"
                for n in ("1 class", "10 classes", "100 classes")]
    loads = [float(rows[f]["ratio"]) for f in by_value if f in rows]
    loads_text = (f"{min(loads):.1f}x to {max(loads):.1f}x" if loads
                  else "(not measured in this run)")
    audit = next((f for f in rows if f.startswith("audit of ale-py")), "")
    audit_text = ("The audit (`--only audit`, not in this run: it needs ale-py and minigrid) "
                  "is measured against its floor by `benchmarks/bench_audit.py`.")
    if audit:
        a = rows[audit]
        fam = a.get("floors", [{}])[0].get("by_family", {})
        total = sum(fam.values()) or 1.0
        parts = ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in
                          sorted(fam.items(), key=lambda kv: -kv[1]))
        audit_text = (f"The {audit.split(':')[0]} costs {r(audit)} the CPU of its floor (the same "
                      "builds and rollouts done plainly, `benchmarks/audit_floor.py`): "
                      f"{a.get('specpack')} against {a.get('baseline')}. The floor's CPU by "
                      f"family: {parts}.")
    return f'''# Benchmarks

What specpack costs, next to what you would use without it. Every figure is a **ratio of two
things measured side by side in the same run**: the candidates are timed in interleaved
batches (the order rotated each round, the garbage collector off inside a batch), the ratio is
taken per round, and the median over the rounds is reported with that round's two times. The
machine's noise then hits both sides of a ratio alike; absolute times vary from run to run
(this machine is shared), ratios much less. No test asserts a time: speed lives here.

```bash
python benchmarks/run.py              # every part but the audit, minutes on 2 cores
python benchmarks/run.py --only core import carry verify workers slow_start another_machine audit
                                      # and the audit too (needs ale-py and minigrid)
python benchmarks/run.py --quick      # fewer rounds
python benchmarks/run.py --json > out.json   # for machines
python benchmarks/docs_page.py out.json      # rewrite this whole page from that run
python tools/structure.py             # the package's structure figures (modules, lines, imports)
```

## What is measured

- **make**: `pack.make()` for `CartPole-v1` against `gymnasium.make("CartPole-v1")` and against
  the *floor*, the same stack built by hand:
  `TimeLimit(OrderEnforcing(PassiveEnvChecker(CartPoleEnv())), 500)`.
- **capture**: `specpack.capture("CartPole-v1")` against `gymnasium.make`, once with the memo
  of identical captures serving it and once with the memo cleared (a first capture).
- **pickle**: `pickle.dumps(pack)` (size, dumps and loads time) against the pickled `EnvSpec`.
- **growth**: the same ratios for an env registered with 0, 10 and 100 kwargs, and with 0, 5
  and 20 distinct `ClipReward` layers in its spec's `additional_wrappers` (the `EnvSpec` and
  the pack hold the same layers).
- **import** (`bench_import.py`): whole processes by CPU time (`os.wait4`), interleaved pairs: a
  worker's `pickle.loads(blob).make()` against `import gymnasium; gymnasium.make(...)`, and
  `import gymnasium, specpack` against `import gymnasium`.
- **carry**: a generated module with 1, 10 and 100 helper classes, loaded from a file path (its
  code travels by value) and, for comparison, by reference: pickle size and the first
  `pickle.loads(blob).make()` in a fresh interpreter.
- **verify**: `specpack.verify(pack)` (a fresh interpreter, a 100-step seeded rollout compared
  with a rebuild here) against the bare interpreter start `python -c "import gymnasium"`.
- **worker start** (`bench_workers.py`): an async `CartPole-v1` vector env of 2, 4 and 8
  workers per start method with `specpack.make_vec` and with `gymnasium.make_vec`, each trial
  in a fresh interpreter, 7 interleaved pairs per cell; *cold* is the first in a process (for
  forkserver: including the server's start), *warm* the second.
- **slow start**: an 8-worker vector env of a 300 ms constructor.
- **another machine**: a self-contained CustomAnt pack (`Ant-v5` with a project XML that
  `<include>`s a second file): pickle and pack-file size, the first `make()` in a fresh
  process with an empty and a filled asset cache, and `check()` against `verify()`.
- **audit** (`--only audit`, needs ale-py and minigrid): `specpack audit --import ale_py
  --import minigrid --jobs 2` as a user runs it, against its floor (`audit_floor.py`: for every
  env the audit reported, the same builds and rollouts with nothing of specpack), CPU and wall;
  two pairs in the order audit, floor, floor, audit (a pair takes minutes, over which a shared
  machine's speed drifts), the ratio of the means.

Goals: `make` at most 0.9x `gymnasium.make` and within 1.1x of the floor; `capture` at most
0.1x `gymnasium.make`, a first capture at most 0.5x; the by-reference pickle at most 1.5x the
`EnvSpec`; `verify` within 1.3x of the interpreter start; a worker's `loads` + `make` at most
1.10x and `import specpack` at most 1.05x gymnasium's own; cold starts of 8 workers: spawn at
most 1.0x and fork at most 1.1x `gymnasium.make_vec`, forkserver at least 4x faster than
gymnasium's; the audit's CPU at most 1.2x its floor's.

## Latest run

{table}
## Reading the figures

- `pack.make()` costs {r("make CartPole-v1 vs gymnasium.make")} `gymnasium.make` and
  {r("make CartPole-v1 vs the floor (by hand)")} the hand-built floor: the lookup, the import and
  the kwargs copy were done once, at capture.
- `capture` of a registered id costs {r("capture(id) vs gymnasium.make")} `gymnasium.make`
  when an identical capture was made before, and
  {r("capture(id), memo cleared (first capture) vs gymnasium.make")} for a first capture (the
  resolution, the `requires` lookup and the asset rule, which reads nothing unless a kwarg is
  written as a path). A `__main__` env captured by value costs
  {r("capture(id) of a __main__ env (by value) vs gymnasium.make of it")} for an identical call
  and {r("by-value capture with new kwargs each call vs gymnasium.make")} with new kwargs.
- A by-reference pack pickles to {r("pickle size (by reference) vs EnvSpec")} the `EnvSpec`
  ({side("pickle size (by reference) vs EnvSpec")}); with the same 20 wrapper layers on both
  sides, {r("20 wrappers: pickle size vs EnvSpec")}.
- A worker's whole life (`pickle.loads(blob).make()`) costs {r(worker) if worker else
  "(not measured in this run)"} the CPU of `gymnasium.make`'s, and `import gymnasium, specpack`
  {r("import gymnasium, specpack, CPU")} `import gymnasium`.
- By-value packs grow with the code they carry; their first load in a process costs
  {loads_text} of importing the same module.
- `verify()` costs {r("verify() CartPole-v1, 100 steps vs interpreter start")} one interpreter
  start. It runs three processes at once: the rebuild and the hash control, two fresh
  interpreters, and a fork of this process that plans the actions and builds twice. Two fresh
  interpreters started at once as verify starts them (idle BLAS threads sleeping at once, as
  `OPENBLAS_THREAD_TIMEOUT=4` makes them) cost
  {r("two interpreter starts at once (rebuild + control floor) vs one")} one start, and CPU
  {r("two interpreter starts at once, CPU vs one")}: that is verify's floor. verify costs
  {r("verify() vs its floor, two starts at once")} of it ({r("verify() vs its floor, CPU")} in
  CPU): specpack's imports in each child, the rebuild's job, the fork here, and the comparison.
- {audit_text}
'''


def main(argv: list[str]) -> int:
    src = argv[0]
    table = subprocess.run([sys.executable, str(HERE / "run.py"), "--from-json", src,
                            "--markdown"], capture_output=True, text=True, check=True).stdout
    with open(src, encoding="utf-8") as fh:
        saved = json.load(fh)
    (HERE.parent / "docs" / "benchmarks.md").write_text(page(saved, table), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
