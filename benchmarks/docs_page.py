"""Write docs/benchmarks.md from a saved run: ``python benchmarks/docs_page.py out.json``.

``out.json`` comes from ``python benchmarks/run.py --json > out.json``; the table is
``run.py --from-json out.json --markdown``, and the prose quotes that run's ratios.
"""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
src = sys.argv[1]
table = subprocess.run([sys.executable, str(HERE / "run.py"), "--from-json", src, "--markdown"],
                       capture_output=True, text=True, check=True).stdout
with open(src, encoding="utf-8") as fh:
    d = json.load(fh)
rows = {r["figure"]: r for p in ("core", "carry", "verify") for r in d["results"].get(p, [])}


def r(fig: str) -> float:
    """The ratio of one figure."""
    return float(rows[fig]["ratio"])



page = f'''# Benchmarks

What specpack costs, next to what you would use without it. Every figure is a **ratio of two
things measured side by side in the same run**: the candidates are timed in interleaved
batches (the order rotated each round, the garbage collector off inside a batch), the ratio is
taken per round, and the median over the rounds is reported with that round's two times. The
machine's noise then hits both sides of a ratio alike; absolute times vary from run to run
(this machine is shared), ratios much less.

```bash
python benchmarks/run.py              # everything, about 2-5 minutes on 2 cores
python benchmarks/run.py --quick      # fewer rounds
python benchmarks/run.py --json > out.json   # for machines
python benchmarks/docs_page.py out.json      # rewrite this page from that run
```

## What is measured

- **make**: `pack.make()` for `CartPole-v1` against `gymnasium.make("CartPole-v1")` and against
  the *floor*, the same stack built by hand:
  `TimeLimit(OrderEnforcing(PassiveEnvChecker(CartPoleEnv())), 500)`. The floor is what any
  rebuild must pay; `gymnasium.make` adds the registry lookup, the entry-point import and a deep
  copy of the spec kwargs.
- **capture**: `specpack.capture("CartPole-v1")` against `gymnasium.make`, i.e. what resolving
  once in the parent costs compared with building one env.
- **pickle**: `pickle.dumps(pack)` (size, dumps and loads time) against the pickled `EnvSpec`,
  the smallest thing users send to workers today.
- **growth**: the same ratios for an env registered with 0, 10 and 100 kwargs, and with 0, 5
  and 20 `ClipReward` layers in its spec's `additional_wrappers`.
- **carry**: a generated module with 1, 10 and 100 helper classes and an env that uses them all,
  loaded from a file path (so its code travels by value) and, for comparison, captured by
  reference (as if installed). Size of the pickled pack, and the first `pickle.loads(blob).make()`
  in a fresh interpreter that has already imported gymnasium and specpack: by value it
  unpickles the code, by reference it imports the module from `PYTHONPATH` (compiled).
- **verify**: `pack.verify()` (a fresh interpreter, a 100-step seeded rollout compared with a
  rebuild here) against the bare interpreter start `python -c "import gymnasium"`.
- **worker start** (`bench_workers.py`): building an async `CartPole-v1` vector env of 2, 4 and
  8 workers per start method with `specpack.make_vec` and with `gymnasium.make_vec`, each trial
  in a fresh interpreter; *cold* is the first in a process (for forkserver: including the
  server's start), *warm* the second. See the [vector env recipe](recipes/vector.md).

Goals: `make` at most 0.9x `gymnasium.make` and within 1.1x of the floor; `capture` at most 0.1x
`gymnasium.make`; the by-reference pickle at most 1.5x the `EnvSpec`; `verify` within 1.5x of
the interpreter start.

## Latest run

{table}
## Reading the figures

- `pack.make()` is cheaper than `gymnasium.make` ({r("make CartPole-v1 vs gymnasium.make"):.2f}x)
  because the lookup, the import and the kwargs copy were done once, at capture; what remains
  is {100 * (r("make CartPole-v1 vs the floor (by hand)") - 1):.0f}% over building the
  stack by hand (setting `env.spec` as `make` does, and loading each layer's class and
  kwargs on every call). The gap to `gymnasium.make` widens with many kwargs, which `make` deep-copies
  on every call.
- `capture` of a registered id costs a few microseconds ({r("capture(id) vs gymnasium.make"):.2f}x
  `gymnasium.make`) when the id's entry point is a `"module:Class"` string; ids registered with
  a callable entry point, and the growth rows, take the full resolution path each time
  (about a quarter of a `gymnasium.make`). Capturing code *by value* (a class in `__main__`)
  runs cloudpickle once; later captures reuse the payload while its witness holds (nothing
  cloudpickle read has changed, see [how it works](how-it-works.md)): an identical call costs
  {r("capture(id) of a __main__ env (by value) vs gymnasium.make of it"):.2f}x `gymnasium.make`,
  a call with new kwargs {r("by-value capture with new kwargs each call vs gymnasium.make"):.2f}x
  (the resolution, plus checking the witness). Code that reads an array or an instance has no
  witness and is pickled again at every capture.
- A by-reference pack pickles to {r("pickle size (by reference) vs EnvSpec"):.2f}x the
  `EnvSpec`: it also carries the resolved wrapper stack and the version record. Pickling and
  unpickling it take {r("pickle.dumps time vs EnvSpec"):.1f}x and {r("pickle.loads time vs EnvSpec"):.1f}x an `EnvSpec`'s time
  ({rows["pickle.dumps time vs EnvSpec"]["specpack"]} and {rows["pickle.loads time vs EnvSpec"]["specpack"]}), paid once per worker start.
- By-value packs grow with the code they carry (about 1 kB per small class). The first load
  in a process costs {min(r(f"by value, {n}: first loads+make vs import") for n in ("1 class", "10 classes", "100 classes")):.1f}x to
  {max(r(f"by value, {n}: first loads+make vs import") for n in ("1 class", "10 classes", "100 classes")):.1f}x of importing the same module, a few
  milliseconds either way; later `make()` calls in that process reuse the loaded class.
- `verify()` costs about one interpreter start ({r("verify() CartPole-v1, 100 steps vs interpreter start"):.2f}x):
  the child starts first, and the local rebuild and rollout run while it boots.
'''
(HERE.parent / "docs" / "benchmarks.md").write_text(page, encoding="utf-8")
