"""Helpers of the client-library scripts (clients_*.py; run as ``__main__`` in a fresh
interpreter by tests/integrations/test_{tianshou,torchrl,minari}_*.py and
tests/integrations/adapters).

Each script defines its env *inside its own main guard* (no worker can import it) and counts
constructor calls per process: the env's ``__init__`` appends its pid to the file named by
``CLIENTS_BUILDS``, and :func:`builds_here` counts this process's lines.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

#: Each sub-env i is reset with SEED + i and stepped with ACTIONS[(t + i) % len] (Discrete(2)).
SEED = 11
STEPS = 6


def note_build() -> None:
    """Called by each script's env constructor: one line with this process's pid."""
    with open(os.environ["CLIENTS_BUILDS"], "a", encoding="utf-8") as fh:
        fh.write(f"{os.getpid()}\n")


def builds_here() -> int:
    """Env constructors run in this process so far."""
    try:
        with open(os.environ["CLIENTS_BUILDS"], encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip() == str(os.getpid()))
    except FileNotFoundError:
        return 0


def action(t: int, i: int) -> int:
    return (t + i) % 2


def reference(make: Callable[[], Any], n: int) -> list[list[list[float]]]:
    """The parent's rollouts: env i built by ``make``, reset with SEED + i, fixed actions."""
    out = []
    for i in range(n):
        env = make()
        obs, _ = env.reset(seed=SEED + i)
        steps = [obs.tolist()]
        for t in range(STEPS):
            obs, *_ = env.step(action(t, i))
            steps.append(obs.tolist())
        env.close()
        out.append(steps)
    return out


def describe(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    return text if len(text) < 2000 else text[:2000] + "..."


def attempt(fn: Callable[[], Any]) -> dict[str, Any]:
    """Run ``fn``; its value or its failure, the parent's env builds during it, seconds."""
    before, t0 = builds_here(), time.monotonic()
    try:
        value = fn()
        out: dict[str, Any] = {"ok": True, "value": value}
    except BaseException as e:  # noqa: BLE001 - the outcome is the measurement
        out = {"ok": False, "error": describe(e), "type": type(e).__name__}
    out["parent_builds"] = builds_here() - before
    out["seconds"] = round(time.monotonic() - t0, 2)
    return out


def emit(result: dict[str, Any]) -> None:
    print(json.dumps(result), flush=True)


def call_in_child(fn: Callable[[], Any]) -> str:
    """Call an env factory in a worker process: the built env's type, or the failure."""
    try:
        env = fn()
    except BaseException as e:  # noqa: BLE001 - the outcome is the measurement
        return describe(e)
    env.close()
    return f"built {type(getattr(env, 'unwrapped', env)).__name__}"


def run_client(name: str, tmp_path: Any, *args: str, extra_env: dict[str, str] | None = None,
               timeout: float = 900) -> dict[str, Any]:
    """Run ``tests/scripts/<name>`` as ``__main__`` in ``tmp_path`` (a fresh interpreter)
    with a fresh build-count file; its JSON line, plus its stderr (the workers' tracebacks)."""
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ)
    env["CLIENTS_BUILDS"] = str(Path(tmp_path) / "builds.txt")
    env.update(extra_env or {})
    script = Path(__file__).resolve().parent / name
    proc = subprocess.run([sys.executable, str(script), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise AssertionError(f"{name} {' '.join(args)} exited {proc.returncode}\nstdout:\n"
                             f"{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-6000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    result["stderr"] = proc.stderr
    return result
