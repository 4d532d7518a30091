"""Another machine: a self-contained CustomAnt pack against ``gymnasium.make``, check vs verify.

The env is issue 21's CustomAnt: gymnasium's ``Ant-v5`` with a project XML,
``robots/long_ant.xml``, that ``<include>``s ``robots/parts.xml`` (written at run time by
``tests/scripts/custom_ant.py`` from the installed gymnasium's ``ant.xml``). It is captured with
``self_contained=True, assets=[robots]``, so the pack carries both files. Figures:

* **size**: the pickled pack against the pickled ``EnvSpec`` (what users send today, which
  carries a path and no file), and the pack file (``specpack.dump``) against the bytes of the
  robot folder it carries;
* **first make on a node**: a whole fresh interpreter that unpickles the pack and calls
  ``make()`` with an empty asset cache (``SPECPACK_CACHE`` a new folder: the files are
  materialised), and with the node's cache already holding them (the next worker process),
  against one that registers the id and calls ``gymnasium.make``: wall time of the process
  (interpreter start and imports included), interleaved rounds, the median ratio;
* **warm make**: ``pack.make()`` against ``gymnasium.make`` in this process (``timeit``-style
  batches, interleaved; the cache already holds the files);
* **check vs verify**: ``specpack.check(sealed)`` (a fresh interpreter compares a 100-step
  rollout of ``CartPole-v1`` with the seal's digests) against
  ``specpack.verify(pack, steps=100)`` (a fresh interpreter and a rebuild here), wall time,
  interleaved.

No goals: these are what the issue asks the note to give. Usage:
``python benchmarks/bench_another_machine.py [--quick] [--json]``.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium
from _bench import median_round, part_main, row, side_by_side, size, us

import specpack

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "scripts"))
from custom_ant import ENV_ID, write_project

_PACK_CHILD = """
import pickle, sys
import specpack
env = pickle.loads(sys.stdin.buffer.read()).make()
env.reset(seed=0)
env.close()
"""

_GYM_CHILD = """
import sys
import gymnasium
gymnasium.register({env_id!r}, entry_point="gymnasium.envs.mujoco.ant_v5:AntEnv",
                   max_episode_steps=1000, kwargs={{"xml_file": {xml!r}}})
env = gymnasium.make({env_id!r})
env.reset(seed=0)
env.close()
"""


def _wall(code: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> float:
    """Wall time of a fresh interpreter running ``code``."""
    full = {**os.environ, **(env or {})}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], input=stdin, env=full, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _ant_rows(quick: bool, tmp: Path) -> list[dict[str, Any]]:
    xml = write_project(tmp / "project")
    robots = xml.parent
    gymnasium.register(ENV_ID, entry_point="gymnasium.envs.mujoco.ant_v5:AntEnv",
                       max_episode_steps=1000, kwargs={"xml_file": str(xml)})
    pack = specpack.capture(ENV_ID, self_contained=True, assets=[str(robots)])
    assert all(a.carried for a in pack.assets), pack.assets
    blob = pickle.dumps(pack)
    spec_blob = pickle.dumps(gymnasium.spec(ENV_ID))
    packfile = tmp / "custom_ant.specpack"
    specpack.dump(pack, packfile)
    carried = _folder_bytes(robots)
    rows = [
        row("another_machine", "pickle size, self-contained CustomAnt vs EnvSpec",
            size(len(blob)), f"EnvSpec {size(len(spec_blob))}", len(blob) / len(spec_blob)),
        row("another_machine", "pack file size vs the robot files it carries",
            size(packfile.stat().st_size), f"robots/ {size(carried)}",
            packfile.stat().st_size / carried),
    ]

    rounds = 3 if quick else 7
    gym_child = _GYM_CHILD.format(env_id=ENV_ID, xml=str(xml))
    node_cache = {"SPECPACK_CACHE": str(tmp / "node-cache")}
    times: dict[str, list[float]] = {"cold": [], "cached": [], "gym": []}
    _wall(gym_child)  # page cache and __pycache__ warm for every side
    _wall(_PACK_CHILD, blob, node_cache)  # the node's cache now holds the files
    for r in range(rounds):
        cache = tempfile.mkdtemp(prefix="cache", dir=tmp)
        sides = list(times)
        for which in sides[r % 3:] + sides[:r % 3]:
            if which == "cold":
                times[which].append(_wall(_PACK_CHILD, blob, {"SPECPACK_CACHE": cache}))
            elif which == "cached":
                times[which].append(_wall(_PACK_CHILD, blob, node_cache))
            else:
                times[which].append(_wall(gym_child))
        shutil.rmtree(cache, ignore_errors=True)
    p, g, ratio = median_round(times["cold"], times["gym"])
    rows.append(row("another_machine",
                    "first make on a node (fresh process, empty cache) vs gymnasium.make",
                    us(p), f"gymnasium.make {us(g)}", ratio))
    p, g, ratio = median_round(times["cached"], times["gym"])
    rows.append(row("another_machine",
                    "next process on that node (files already cached) vs gymnasium.make",
                    us(p), f"gymnasium.make {us(g)}", ratio))

    os.environ["SPECPACK_CACHE"] = str(tmp / "warm-cache")
    try:
        pack.make().close()  # materialise once
        samples = side_by_side({"pack": lambda: pack.make().close(),
                                "gym": lambda: gymnasium.make(ENV_ID).close()},
                               rounds=5 if quick else 15, batch_seconds=0.1)
    finally:
        del os.environ["SPECPACK_CACHE"]
    p, g, ratio = median_round(samples["pack"], samples["gym"])
    rows.append(row("another_machine", "warm make in-process vs gymnasium.make", us(p),
                    f"gymnasium.make {us(g)}", ratio))
    return rows


def _check_rows(quick: bool) -> list[dict[str, Any]]:
    pack = specpack.capture("CartPole-v1")
    sealed = specpack.seal(pack, steps=100, seed=0)
    assert specpack.check(sealed) and specpack.verify(pack, steps=100)  # warm both paths once
    rounds = 3 if quick else 9
    check: list[float] = []
    verify: list[float] = []
    for r in range(rounds):
        for which in (("c", "v") if r % 2 == 0 else ("v", "c")):
            t0 = time.perf_counter()
            ok = specpack.check(sealed) if which == "c" else specpack.verify(pack, steps=100)
            (check if which == "c" else verify).append(time.perf_counter() - t0)
            assert ok, str(ok)
    c, v, ratio = median_round(check, verify)
    return [row("another_machine", "check() vs verify(), CartPole-v1, 100 steps", us(c),
                f"verify() {us(v)}", ratio)]


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The rows of this part (about a minute; ``quick``: fewer rounds)."""
    with tempfile.TemporaryDirectory(prefix="bench_another") as tmp:
        return [*_ant_rows(quick, Path(tmp)), *_check_rows(quick)]


def main(argv: list[str] | None = None) -> int:
    return part_main(run, "another machine: CustomAnt, check vs verify", argv)


if __name__ == "__main__":
    sys.exit(main())
