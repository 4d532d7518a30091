"""A Ray driver whose cluster has a node that cannot see the user's project (run as a script).

Run by tests/integrations/test_ray_another_machine.py. The user's project (tests/scripts/
custom_ant.py writes it: ``robots/long_ant.xml`` that ``<include>``s ``robots/parts.xml``, and
``my_envs.py`` registering ``CustomAnt-v0``) is ``$HOME/here/project``, next to this machine's
specpack cache ``$HOME/here/cache``; the driver runs from the project, as a user runs
``python train.py`` there, and imports ``my_envs``. The cluster: a head node here
(``ray.cluster_utils.Cluster``, resource ``head_node``) and a worker node (resource
``bare_node``) started by tests/scripts/ray_hidden_node.py in a mount namespace where
``$HOME/here`` is an empty tmpfs (so the project path does not exist there), with its own
specpack cache folder. Three jobs, each with tasks pinned to both nodes:

- ``control``: no specpack. Tasks report whether they see the project and ``my_envs`` and
  call plain ``gymnasium.make("CustomAnt-v0")``.
- ``by_path``: ``runtime_env=specpack.ray.runtime_env(pack)`` with a pack captured without
  ``self_contained`` (it names the robot files by path).
- ``self_contained``: the same with ``capture(..., self_contained=True)`` (the files' bytes
  travel in the pack).

Each task returns a seeded rollout digest (or the error it met); the driver adds its own
references (``gymnasium.make`` and ``pack.make()`` here) and, after stopping the hidden node,
what was left of it. Everything is printed as one JSON line; a phase that fails records its
error and the others still run.

Usage: ``python ray_another_machine_driver.py`` with HOME and RAY_TMPDIR set to a short temp
folder, as root (tests/scripts/ray_procs.py's run_driver does that and cleans up after it).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from _common import describe_error
from custom_ant import ENV_ID, leg_length, write_project
from ray_hidden_node import mount_ns, ns_members, start_hidden_node

STEPS = 50
SEED = 7


def rollout_digest(env: Any, steps: int = STEPS, seed: int = SEED) -> dict[str, Any]:
    """sha256 of a seeded rollout's exact float64 bytes (observations, rewards, flags, info)."""
    digest = hashlib.sha256()

    def add(*values: Any) -> None:
        for value in values:
            digest.update(np.asarray(value, dtype=np.float64).tobytes())

    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    add(obs)
    resets = 0
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        add(obs, reward, terminated, truncated, *(info[k] for k in sorted(info)))
        if terminated or truncated:
            obs, _ = env.reset()
            add(obs)
            resets += 1
    return {"digest": digest.hexdigest(), "resets": resets}


def built(env: Any) -> dict[str, Any]:
    """What an Ant env was built from, and its rollout digest."""
    return {"xml": env.unwrapped.fullpath, "leg": leg_length(env), **rollout_digest(env)}


def error_report(e: BaseException) -> dict[str, Any]:
    """An error as data: its class and bases, its message, the files its traceback crossed."""
    return {"type": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__],
            "message": str(e), "text": describe_error(e),
            "frames": [f.filename for f in traceback.extract_tb(e.__traceback__)]}


def node_report(project: str) -> dict[str, Any]:
    """A task: where it runs, what it sees of the project, and ``gymnasium.make(ENV_ID)``."""
    import importlib.util

    import gymnasium
    import ray

    out: dict[str, Any] = {
        "node": ray.get_runtime_context().get_node_id(), "pid": os.getpid(),
        "mnt_ns": mount_ns(), "project_exists": os.path.exists(project),
        "my_envs_importable": importlib.util.find_spec("my_envs") is not None,
        "specpack_cache": os.environ.get("SPECPACK_CACHE"),
    }
    try:
        out.update(built(gymnasium.make(ENV_ID)))
    except Exception as e:  # noqa: BLE001 - the controls report the error
        out["error"] = error_report(e)
    return out


def session_of(pid: int) -> int | None:
    """The session of process ``pid`` (None once it has ended)."""
    try:
        return os.getsid(pid)
    except OSError:
        return None


def on_node(resource: str) -> dict[str, Any]:
    """Ray options pinning a task to the node that has ``resource``."""
    return {"resources": {resource: 0.01}, "num_cpus": 0}


def run_job(ray: Any, address: str, project: str, runtime_env: Any = None) -> dict[str, Any]:
    """One job: a ``node_report`` task on each node; returns ``{"head": ..., "bare": ...}``."""
    started = time.monotonic()
    ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    try:
        task = ray.remote(node_report)
        refs = {name: task.options(**on_node(f"{name}_node")).remote(project)
                for name in ("head", "bare")}
        out: dict[str, Any] = {name: ray.get(ref, timeout=120) for name, ref in refs.items()}
    finally:
        ray.shutdown()
    out["seconds"] = round(time.monotonic() - started, 1)
    return out


def wait_for_bare_node(ray: Any, address: str, timeout: float = 60) -> str:
    """Connect, wait until the hidden node is alive in the cluster; return its node id."""
    ray.init(address=address, log_to_driver=False)
    try:
        deadline = time.monotonic() + timeout
        while True:
            for n in ray.nodes():
                if n["Alive"] and "bare_node" in n["Resources"]:
                    return str(n["NodeID"])
            if time.monotonic() > deadline:
                raise RuntimeError(f"the hidden node did not join within {timeout}s")
            time.sleep(0.5)
    finally:
        ray.shutdown()


def capture_packs(robots: Path, result: dict[str, Any]) -> dict[str, Any]:
    """The two packs (by path, self-contained) and their ``make()`` here, in ``result``."""
    import specpack

    packs: dict[str, Any] = {}
    result["packs"] = {}
    for name, extra in (("by_path", {}), ("self_contained", {"self_contained": True})):
        try:
            pack = specpack.capture(ENV_ID, assets=[str(robots)], **extra)
            result["packs"][name] = {"make": built(pack.make())}
            packs[name] = pack
        except Exception as e:  # noqa: BLE001 - recorded; the lead's merge adds these
            result["packs"][name] = {"error": error_report(e)}
    return packs


def main() -> None:
    import gymnasium
    import ray
    from ray.cluster_utils import Cluster

    import specpack.ray

    started = time.monotonic()
    root = Path(os.environ["HOME"])  # run_driver's short temp folder
    here = root / "here"  # this machine's own files: the user's project, specpack's cache
    project = here / "project"
    xml = write_project(project)
    os.chdir(project)  # the user runs their script from the project: Ray adds cwd to workers
    sys.path.insert(0, str(project))
    import my_envs  # noqa: F401 - registers ENV_ID, as the user's script does

    os.environ["SPECPACK_CACHE"] = str(here / "cache")
    bare_cache = root / "bare-cache"
    result: dict[str, Any] = {
        "hidden": str(here), "project": str(project), "xml": str(xml), "bare_cache": str(bare_cache),
        "driver_mnt_ns": mount_ns(),
        "here": {"by_id": built(gymnasium.make(ENV_ID)),
                 "ant_v5": built(gymnasium.make("Ant-v5"))},
    }
    packs = capture_packs(xml.parent, result)

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "include_dashboard": False, "resources": {"head_node": 1}})
    node = None
    try:
        node = start_hidden_node(
            cluster.address, [here], resources={"bare_node": 1}, log=root / "bare-node.log",
            env={"SPECPACK_CACHE": str(bare_cache), "XDG_CACHE_HOME": str(root / "bare-xdg"),
                 "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"})
        result["bare_mnt_ns"] = node.ns
        result["bare_node_id"] = wait_for_bare_node(ray, cluster.address)
        result["joined_seconds"] = round(time.monotonic() - started, 1)
        result["jobs"] = {"control": run_job(ray, cluster.address, str(project))}
        for name, pack in packs.items():
            try:
                result["jobs"][name] = run_job(ray, cluster.address, str(project),
                                               specpack.ray.runtime_env(pack))
            except Exception as e:  # noqa: BLE001 - recorded, the next job still runs
                result["jobs"][name] = {"error": error_report(e)}
    except Exception as e:  # noqa: BLE001 - recorded with the node's log
        result["error"] = error_report(e)
    finally:
        ray.shutdown()
        if node is not None:
            result["bare_log"] = node.log_tail()
            # run_driver's backstop (it kills the driver's session) covers the node too.
            result["bare_sessions"] = sorted({session_of(pid) for pid in ns_members(node.ns)})
            result["driver_session"] = os.getsid(0)
            result["bare_survivors"] = sorted(node.stop().values())
            result["bare_ns_after_kill"] = sorted(ns_members(node.ns).values())
        cluster.shutdown()
    with open("/proc/self/mountinfo") as mounts:
        result["host_mounts_on_hidden"] = [ln for ln in mounts if str(here) in ln]
    result["project_intact"] = xml.is_file() and (xml.parent / "parts.xml").is_file()
    result["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
