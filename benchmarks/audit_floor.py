"""The audit's floor: the builds and rollouts ``specpack audit`` does, done plainly.

For every env id given, the same work the audit's scheduler does, with nothing of specpack:

- *reference*: a new ``fork`` of this process per env (this process imported the packages,
  as the audit's does), which builds the env twice with ``gymnasium.make`` and runs the same
  rollout on each (the reference and the local repeat control);
- *remote*: ``jobs`` long-lived fresh interpreters (``spawn``) that import the same packages
  once and then build and roll out one env after another (the rebuild across the boundary);
- *control*: as many more under another ``PYTHONHASHSEED`` (the hash control, which the audit
  runs beside every env when it may use two CPUs).

A rollout is ``reset(seed=seed)`` and ``steps`` actions sampled from a seeded copy of the
fresh env's action space, resetting when an episode ends. No capture, no pickled pack, no
digests or comparison: what is left is what any audit of these envs must pay. Each task
measures its own CPU time (``time.process_time``), summed per family (the top-level package of
the id's entry point).

Usage: ``python benchmarks/audit_floor.py --import ale_py --import minigrid --jobs 2
--steps 50 ID...`` (``--ids FILE``: one id per line). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import multiprocessing as mp
import os
import sys
import time
from collections import defaultdict
from typing import Any

import gymnasium


def family(env_id: str) -> str:
    """The top-level package of the id's entry point (``ale_py`` for ``ALE/Pong-v5`` and for
    ``PongNoFrameskip-v4`` alike), however the package registered it; ``?`` if unknown."""
    try:
        entry = gymnasium.spec(env_id).entry_point
    except Exception:  # noqa: BLE001 - an id this process cannot resolve
        return "?"
    if isinstance(entry, str):
        return entry.partition(":")[0].partition(".")[0]
    return str(getattr(entry, "__module__", "?")).partition(".")[0]


def rollout(env_id: str, steps: int, seed: int) -> None:
    """One build and one seeded rollout of ``steps`` actions, then close."""
    env = gymnasium.make(env_id)
    try:
        space = copy.deepcopy(env.action_space)
        space.seed(seed)
        actions = [space.sample() for _ in range(steps)]
        env.reset(seed=seed)
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
    finally:
        env.close()


def _timed(env_id: str, steps: int, seed: int, builds: int) -> tuple[str, float, str]:
    """``builds`` rollouts of ``env_id``: (id, CPU seconds, error or "")."""
    cpu = time.process_time()
    error = ""
    try:
        for _ in range(builds):
            rollout(env_id, steps, seed)
    except Exception as e:  # noqa: BLE001 - a failing env costs what it cost
        error = f"{type(e).__name__}: {e}"[:200]
    return env_id, time.process_time() - cpu, error


def reference(env_id: str, steps: int, seed: int) -> tuple[str, float, str]:
    """The reference and the repeat control: two builds in a fork of this process."""
    return _timed(env_id, steps, seed, 2)


def rebuild(env_id: str, steps: int, seed: int) -> tuple[str, float, str]:
    """The rebuild (or the hash control): one build in a long-lived fresh interpreter."""
    return _timed(env_id, steps, seed, 1)


def _import_all(modules: list[str]) -> None:
    for name in modules:
        importlib.import_module(name)


def run(ids: list[str], modules: list[str], jobs: int, steps: int, seed: int,
        hash_control: bool) -> dict[str, Any]:
    """Every env's reference, rebuild and (``hash_control``) control; CPU per family."""
    _import_all(modules)
    refs = mp.get_context("fork").Pool(jobs, maxtasksperchild=1)  # a new fork per env
    spawn = mp.get_context("spawn")
    sides = [spawn.Pool(jobs, initializer=_import_all, initargs=(modules,))]
    if hash_control:
        before = os.environ.get("PYTHONHASHSEED")
        os.environ["PYTHONHASHSEED"] = "2"  # its workers start now, under this seed
        sides.append(spawn.Pool(jobs, initializer=_import_all, initargs=(modules,)))
        if before is None:
            del os.environ["PYTHONHASHSEED"]
        else:
            os.environ["PYTHONHASHSEED"] = before
    cpu: dict[str, float] = defaultdict(float)
    errors: dict[str, str] = {}
    pending: list[tuple[bool, Any]] = []  # (is a reference, AsyncResult)
    queue = list(reversed(ids))
    # Like the audit: at most 4 * jobs envs in flight; an env's rebuilds follow its reference.
    while queue or pending:
        while queue and sum(r for r, _ in pending) < 4 * jobs:
            pending.append((True, refs.apply_async(reference, (queue.pop(), steps, seed))))
        ready = [p for p in pending if p[1].ready()]
        if not ready:
            time.sleep(0.005)
            continue
        for item in ready:
            pending.remove(item)
            env_id, seconds, error = item[1].get()
            cpu[family(env_id)] += seconds
            if error:
                errors.setdefault(env_id, error)
            if item[0]:
                pending += [(False, pool.apply_async(rebuild, (env_id, steps, seed)))
                            for pool in sides]
    for pool in [refs, *sides]:
        pool.close()
        pool.join()
    return {"envs": len(ids), "cpu_by_family": {k: round(v, 2) for k, v in sorted(cpu.items())},
            "errors": errors}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("ids", nargs="*")
    parser.add_argument("--ids", dest="ids_file", help="a file of env ids, one per line")
    parser.add_argument("--import", dest="modules", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-hash-control", action="store_true")
    args = parser.parse_args(argv)
    ids = list(args.ids)
    if args.ids_file:
        with open(args.ids_file, encoding="utf-8") as fh:
            ids += [line.strip() for line in fh if line.strip()]
    t0 = time.perf_counter()
    out = run(ids, args.modules, args.jobs, args.steps, args.seed,
              hash_control=not args.no_hash_control and (os.cpu_count() or 1) >= 2)
    out["wall"] = round(time.perf_counter() - t0, 2)
    sys.stdout.write("\n" + json.dumps(out) + "\n")  # a line of its own, after what envs print
    return 0


if __name__ == "__main__":
    sys.exit(main())
