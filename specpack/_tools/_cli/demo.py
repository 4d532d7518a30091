"""``specpack demo``: a script registers ``CustomAnt-v0`` in its main guard, then fork, spawn,
forkserver, fresh-``python`` and Ray workers try ``gymnasium.make(id)``, ``gymnasium.make(spec)``
and ``pack.make()``: the registry problem specpack solves, in real worker processes."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from ..._core._errors import SpecPackError
from .output import EXIT_NOT_IDENTICAL, EXIT_OK

__all__ = ["SCRIPT", "command", "render", "run_demo"]

#: Shared by the demo script and its fresh-interpreter worker: build the env and report.
_PROBE = r'''
import pickle
import sys

import gymnasium

ENV_ID = "CustomAnt-v0"


def cause(e):
    """The first line of an exception, with its type: what really went wrong."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")


def rollout(env):
    """A short seeded rollout, summarised as one number (equal iff the rollouts are)."""
    obs, _ = env.reset(seed=0)
    env.action_space.seed(0)
    total = float(obs.sum())
    for _ in range(30):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        total += float(reward) + float(obs.sum())
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()
    return repr(total)


def probe(spec_blob, pack):
    """Try gymnasium.make(id), gymnasium.make(spec) and pack.make() in this process."""
    ways = {"id": lambda: gymnasium.make(ENV_ID),
            "spec": lambda: gymnasium.make(pickle.loads(spec_blob)),
            "pack": lambda: (pickle.loads(pack) if isinstance(pack, bytes) else pack).make()}
    out = {}
    for way, build in ways.items():
        try:
            out[way] = ["ok", rollout(build())]
        except Exception as e:
            out[way] = ["fail", cause(e)]
    return out
'''

_FRESH = _PROBE + r'''

if __name__ == "__main__":
    spec_blob, pack_blob = pickle.loads(sys.stdin.buffer.read())
    print("DEMO-RESULT " + __import__("json").dumps(probe(spec_blob, pack_blob)))
'''

#: The demo script itself (``__FRESH__`` and ``__RAY__`` are filled in by :func:`run_demo`).
SCRIPT = _PROBE + r'''

import json
import multiprocessing as mp
import os
import subprocess
import tempfile
import time

import numpy as np

import specpack

FRESH_WORKER = __FRESH__


def in_pool(method, spec_blob, pack):
    ctx = mp.get_context(method)
    with ctx.Pool(1) as pool:
        return pool.apply_async(probe, (spec_blob, pack)).get(timeout=120)


def in_fresh_python(spec_blob, pack):
    with tempfile.TemporaryDirectory(prefix="specpack-demo-fresh-") as cwd:
        proc = subprocess.run(
            [sys.executable, "-c", FRESH_WORKER],
            input=pickle.dumps((spec_blob, pickle.dumps(pack))),
            capture_output=True, cwd=cwd, timeout=120,
        )
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("DEMO-RESULT "):
            return json.loads(line[len("DEMO-RESULT "):])
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    raise RuntimeError(f"the fresh interpreter exited {proc.returncode}: {err[-1:] }")


def in_ray(spec_blob, pack):
    import ray

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(probe)
        return ray.get(remote.remote(spec_blob, pack), timeout=120)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    class CustomAnt(gymnasium.Env):
        """A tiny custom env, defined and registered only inside the main guard."""

        def __init__(self, legs=4, render_mode=None):
            self.legs = legs
            self.observation_space = gymnasium.spaces.Box(-10.0, 10.0, (legs,), np.float64)
            self.action_space = gymnasium.spaces.Discrete(legs)
            self.render_mode = render_mode

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.pos = self.np_random.uniform(-1.0, 1.0, self.legs)
            return self.pos.copy(), {}

        def step(self, action):
            self.pos[action] += 0.5
            reward = float(self.pos.sum())
            return self.pos.copy(), reward, bool(self.pos.max() > 3.0), False, {}

    gymnasium.register(ENV_ID, entry_point="__main__:CustomAnt", max_episode_steps=50,
                       kwargs={"legs": 6})
    pack = specpack.capture(ENV_ID)
    spec_blob = pickle.dumps(gymnasium.spec(ENV_ID))
    here = probe(spec_blob, pack)
    workers = [("fork", lambda: in_pool("fork", spec_blob, pack)),
               ("spawn", lambda: in_pool("spawn", spec_blob, pack)),
               ("forkserver", lambda: in_pool("forkserver", spec_blob, pack)),
               ("fresh python", lambda: in_fresh_python(spec_blob, pack))]
    if __RAY__:
        workers.append(("ray worker", lambda: in_ray(spec_blob, pack)))
    rows = []
    for name, run in workers:
        start = time.perf_counter()
        try:
            res = run()
        except Exception as e:
            res = {k: ["fail", f"the worker itself failed: {cause(e)}"]
                   for k in ("id", "spec", "pack")}
        rows.append({"worker": name, "seconds": round(time.perf_counter() - start, 3), **res})
    print("DEMO-RESULT " + json.dumps({"pack": repr(pack), "here": here, "rows": rows}))
'''


def command(ns: argparse.Namespace) -> int:
    """Run the demo; print its table (or ``--json``); exit 1 unless the pack worked everywhere."""
    result = run_demo(ray=ns.ray)
    print(json.dumps(result, indent=2) if ns.json else render(result))
    return EXIT_OK if result["pack_ok_everywhere"] else EXIT_NOT_IDENTICAL


def run_demo(ray: bool | None = None, timeout: float = 300.0) -> dict[str, Any]:
    """Run the demo script in a fresh interpreter and return its results: one row per worker
    with each way's ``["ok", rollout]`` or ``["fail", cause]``, and ``pack_ok_everywhere``.
    ``ray=None`` includes a Ray worker when Ray is installed."""
    use_ray = importlib.util.find_spec("ray") is not None if ray is None else bool(ray)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="specpack-demo-", ignore_cleanup_errors=True) as tmp:
        script = os.path.join(tmp, "custom_ant_demo.py")
        with open(script, "w", encoding="utf-8") as fh:
            fh.write(SCRIPT.replace("__FRESH__", repr(_FRESH)).replace("__RAY__", repr(use_ray)))
        env = dict(os.environ)
        if use_ray:
            env.update(HOME=tmp, RAY_TMPDIR=tmp, RAY_USAGE_STATS_ENABLED="0")
        proc = subprocess.run([sys.executable, script], cwd=tmp, env=env, capture_output=True,
                              text=True, timeout=timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("DEMO-RESULT ")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SpecPackError(f"the demo script failed (exit code {proc.returncode}): {tail}")
    result: dict[str, Any] = json.loads(lines[-1][len("DEMO-RESULT "):])
    parent = result["here"]["pack"][1]
    for row in result["rows"]:
        row["pack_same_rollout"] = row["pack"][0] == "ok" and row["pack"][1] == parent
    result["pack_ok_everywhere"] = all(r["pack_same_rollout"] for r in result["rows"])
    result["seconds"] = round(time.perf_counter() - start, 2)
    result["ray"] = use_ray
    return result


def _cell(outcome: list[str], parent: str | None = None) -> str:
    status, detail = outcome
    if status != "ok":
        return detail
    if parent is None:
        return "ok"
    return "ok, same rollout as the parent" if detail == parent else "ok, but a DIFFERENT rollout"


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    rule = tuple("-" * w for w in widths)
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
            for r in [header, rule, *rows]]


def render(result: dict[str, Any]) -> str:
    """The demo's tables as text."""
    parent = result["here"]["pack"][1]
    lines = [
        "specpack demo: CustomAnt is defined and registered inside `if __name__ == "
        '"__main__":`',
        '  gymnasium.register("CustomAnt-v0", entry_point="__main__:CustomAnt", '
        'max_episode_steps=50, kwargs={"legs": 6})',
        '  pack = specpack.capture("CustomAnt-v0")',
        f"  -> {result['pack']}",
        "",
        "Each worker gets the pack (pickled) and tries to build the env:",
        "",
    ]
    rows = [(r["worker"], _cell(r["id"]), _cell(r["pack"], parent)) for r in result["rows"]]
    lines += _table(("worker", 'gymnasium.make("CustomAnt-v0")', "pack.make()"), rows)
    lines += [
        "",
        'Passing the spec instead, gymnasium.make(gymnasium.spec("CustomAnt-v0")), does not '
        "help either:",
        "",
    ]
    lines += _table(("worker", "gymnasium.make(spec)"),
                    [(r["worker"], _cell(r["spec"])) for r in result["rows"]])
    ok = result["pack_ok_everywhere"]
    lines += [
        "",
        "Only fork children inherit the parent's registry. Spawn and forkserver children "
        "re-run the script without",
        "its main guard, and a fresh interpreter or a Ray worker never ran it: neither the "
        "registration nor the class",
        "is there. (In AsyncVectorEnv(..., context='spawn') the parent sees only "
        "ConnectionResetError: [Errno 104].)",
        "pack.make() " + ("worked in every worker, with the parent's rollout." if ok
                          else "FAILED somewhere: this is a specpack bug, please report it."),
        f"({result['seconds']:.1f} s)",
    ]
    return "\n".join(lines)
