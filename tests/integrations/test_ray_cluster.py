"""specpack.ray.runtime_env: env ids registered in the driver, usable in every Ray worker.

The cluster tests run tests/scripts/ray_cluster_driver.py once (module fixture) as a script:
a head node and a worker node, then a third node added after ``ray.init``, all on this machine
(``ray.cluster_utils.Cluster``, one CPU each). The env is defined in the driver's ``__main__``
and registered in its main guard. Tasks and actors pinned to each node by custom resources
call plain ``gymnasium.make(id)``; a new job without specpack is the control. The other tests
check ``runtime_env()``'s own contract (errors in the driver, ``base`` untouched) and run the
hook in a fresh interpreter without Ray.
"""

from __future__ import annotations

import json
import os
import pickle
import threading
from collections.abc import Iterator
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from _common import layer_names, rollout
from _helpers import SCRIPTS, run_python
from ray_procs import DriverRun, run_driver

import specpack
import specpack.ray
from specpack._core._errors import BuildError, CaptureError, UncarriableValueError, UnknownEnvError

pytestmark = pytest.mark.integration

LOCAL_ID = "RayHookProbe-v0"


class Probe(gym.Env):
    """Defined in this test module, which a fresh interpreter cannot import."""

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.x = self.np_random.normal(size=2) * self.scale
        return self.x.copy(), {}

    def step(self, action: Any) -> Any:
        self.x = self.x + self.scale * (int(action) - 0.5) + self.np_random.normal(size=2)
        return self.x.copy(), float(self.x.sum()), False, False, {}


@pytest.fixture
def local_pack() -> Iterator[specpack.SpecPack]:
    gym.register(LOCAL_ID, entry_point=Probe, max_episode_steps=4, kwargs={"scale": 3.0})
    try:
        yield specpack.capture(LOCAL_ID)
    finally:
        gym.envs.registration.registry.pop(LOCAL_ID, None)


# -- runtime_env(): everything that can be wrong fails in the driver ---------------------------


def test_unknown_id_fails_in_the_driver_with_gymnasiums_error_and_a_suggestion() -> None:
    with pytest.raises(UnknownEnvError) as info:
        specpack.ray.runtime_env("CartPol-v1")
    assert isinstance(info.value, gym.error.NameNotFound)
    assert "CartPole" in str(info.value)


def test_no_ids_is_refused() -> None:
    with pytest.raises(CaptureError, match=r"at least one env id"):
        specpack.ray.runtime_env()


def test_an_argument_that_is_neither_id_nor_pack_is_refused_by_type() -> None:
    with pytest.raises(CaptureError, match=r"takes env ids \(str\) and SpecPacks, got int 3"):
        specpack.ray.runtime_env(3)  # type: ignore[arg-type]


def test_a_pack_without_id_is_refused_with_the_fix() -> None:
    pack = specpack.capture(Probe)
    assert pack.id is None
    with pytest.raises(CaptureError, match=r"has no id.*gymnasium.register\("):
        specpack.ray.runtime_env(pack)


def test_two_different_packs_under_one_id_are_refused(local_pack: specpack.SpecPack) -> None:
    gym.envs.registration.registry.pop(LOCAL_ID)
    gym.register(LOCAL_ID, entry_point=Probe, max_episode_steps=4, kwargs={"scale": 9.0})
    other = specpack.capture(LOCAL_ID)
    with pytest.raises(CaptureError, match=rf"two different packs for '{LOCAL_ID}'"):
        specpack.ray.runtime_env(local_pack, other)


def test_the_same_env_named_twice_is_registered_once(local_pack: specpack.SpecPack) -> None:
    hook = specpack.ray.runtime_env(LOCAL_ID, local_pack)["worker_process_setup_hook"]
    assert hook.ids == (LOCAL_ID,)


def test_a_pack_that_does_not_pickle_fails_in_the_driver(local_pack: specpack.SpecPack) -> None:
    # Built by hand around capture's checks: a raw lock among the kwargs.
    locked = specpack.SpecPack(
        backend=local_pack.backend, id="Locked-v0", entry_point=local_pack.entry_point,
        _kwargs={"scale": threading.Lock()}, spec=dict(local_pack.spec),
        layers=local_pack.layers, auto_render=local_pack.auto_render,
        versions=dict(local_pack.versions))
    with pytest.raises(UncarriableValueError, match=r"'Locked-v0' cannot travel to Ray workers"):
        specpack.ray.runtime_env(locked)


def test_base_is_extended_never_changed(local_pack: specpack.SpecPack) -> None:
    base = {"env_vars": {"A": "1"}, "config": {"setup_timeout_seconds": 60}}
    out = specpack.ray.runtime_env(local_pack, base=base)
    out["env_vars"]["B"] = "2"  # as Ray does when it uploads the hook
    out["config"]["eager_install"] = False
    assert base == {"env_vars": {"A": "1"}, "config": {"setup_timeout_seconds": 60}}
    assert out["env_vars"] == {"A": "1", "B": "2"}
    assert type(out["worker_process_setup_hook"]) is specpack.ray.RegisterPacks


@pytest.mark.parametrize("base", [["not", "a", "mapping"], {"worker_process_setup_hook": 7},
                                  {"worker_process_setup_hook": "nodots"}])
def test_a_malformed_base_is_refused(local_pack: specpack.SpecPack, base: Any) -> None:
    with pytest.raises(CaptureError, match=r"runtime_env|module\.function"):
        specpack.ray.runtime_env(local_pack, base=base)


def test_a_pack_that_cannot_load_in_a_worker_is_named_in_the_hooks_error() -> None:
    hook = specpack.ray.RegisterPacks((("Broken-v0", b"not a pickle"),))
    with pytest.raises(BuildError, match=r"'Broken-v0' cannot be loaded in this Ray worker"):
        hook()
    assert "Broken-v0" not in gym.envs.registration.registry


# -- the hook in a fresh interpreter (how Ray ships and runs it, without Ray) ----------------

HOOK_CHILD = """
import json, os, sys
import cloudpickle, gymnasium
from _common import layer_names, rollout
hook = cloudpickle.loads(open(sys.argv[1], "rb").read())
ids = sys.argv[2:]
before = [i in gymnasium.envs.registration.registry for i in ids]
hook()
print(json.dumps({"before": before, "base_hook": os.environ.get("SPECPACK_BASE_HOOK_RAN"),
                  "envs": {i: [rollout(gymnasium.make(i)), layer_names(gymnasium.make(i))]
                           for i in ids}}))
"""


def test_hook_registers_ids_in_a_fresh_interpreter_after_the_users_own_hook(
    local_pack: specpack.SpecPack, tmp_path: Any
) -> None:
    # A built-in id the driver changed: the worker's own CartPole-v1 must give way to it.
    short_cartpole = specpack.capture("CartPole-v1", max_episode_steps=3)
    env = specpack.ray.runtime_env(
        LOCAL_ID, short_cartpole,
        base={"worker_process_setup_hook": "ray_hooks.squat",
              "env_vars": {"SPECPACK_SQUAT_ID": LOCAL_ID}})
    hook_file = tmp_path / "hook.pkl"
    hook_file.write_bytes(cloudpickle.dumps(env["worker_process_setup_hook"]))
    # As in a Ray worker: the user's hook module is importable (Ray adds the script's folder),
    # the env's module (this test file) is not; the env var comes from base["env_vars"].
    proc = run_python(["-c", HOOK_CHILD, str(hook_file), LOCAL_ID, "CartPole-v1"], cwd=tmp_path,
                      env={"SPECPACK_SQUAT_ID": LOCAL_ID,
                           "PYTHONPATH": os.pathsep.join([str(SCRIPTS),
                                                          os.environ["PYTHONPATH"]])})
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["before"] == [False, True]
    assert got["base_hook"] is not None
    assert got["envs"][LOCAL_ID] == [rollout(local_pack.make()), layer_names(local_pack.make())]
    assert got["envs"]["CartPole-v1"] == [rollout(short_cartpole.make()),
                                          layer_names(short_cartpole.make())]
    assert [step[3] for step in got["envs"]["CartPole-v1"][0][:4]] == [False] * 3 + [True]


def test_the_hook_pickles_with_plain_pickle_too(local_pack: specpack.SpecPack) -> None:
    hook = specpack.ray.runtime_env(local_pack)["worker_process_setup_hook"]
    back = pickle.loads(pickle.dumps(hook))
    assert back.ids == (LOCAL_ID,) and back.packs == hook.packs


# -- a real 3-node cluster -----------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster_run() -> DriverRun:
    return run_driver(SCRIPTS / "ray_cluster_driver.py", timeout=240)


@pytest.fixture(scope="module")
def cluster(cluster_run: DriverRun) -> dict[str, Any]:
    result: dict[str, Any] = cluster_run.result
    return result


def test_driver_reference_by_id_equals_pack_make(cluster: dict[str, Any]) -> None:
    driver = cluster["driver"]
    assert driver["by_id"] == driver["pack"]
    assert driver["pack"]["layers"] == ["TimeLimit", "OrderEnforcing", "PassiveEnvChecker",
                                        "Odometer"]
    assert [step[3] for step in driver["pack"]["rollout"]].count(True) == 1  # one truncation


def test_tasks_and_actors_on_every_node_make_the_driver_env_by_id(
    cluster: dict[str, Any],
) -> None:
    ref = cluster["driver"]["pack"]
    reports = {**cluster["first"], **cluster["late"]}
    assert sorted(reports) == ["node0", "node1", "node2"]
    for node, pair in reports.items():
        for kind in ("task", "actor"):
            got = pair[kind]
            assert "error" not in got, (node, kind, got.get("error"))
            assert got["kwargs"] == [2.5, "from-driver"], (node, kind)
            assert got["layers"] == ref["layers"], (node, kind)  # no wrapper twice
            assert got["rollout"] == ref["rollout"], (node, kind)
        assert pair["task"]["node"] == pair["actor"]["node"]
    nodes = {pair["task"]["node"] for pair in reports.values()}
    assert nodes == set(cluster["node_ids"]) and len(nodes) == 3


def test_a_node_added_after_ray_init_gets_the_ids(cluster: dict[str, Any]) -> None:
    assert cluster["nodes_at_init"] == 2
    late = cluster["late"]["node2"]["task"]
    assert late["node"] not in {p["task"]["node"] for p in cluster["first"].values()}
    assert late["rollout"] == cluster["driver"]["pack"]["rollout"]


def test_make_vec_and_sb3_make_vec_env_by_id_in_a_task(cluster: dict[str, Any]) -> None:
    vec, driver = cluster["vec"], cluster["driver"]
    assert vec["make_vec"] == driver["make_vec"]
    assert vec["sb3"] == driver["sb3"]
    assert vec["sb3_layers"] == ["Monitor", *driver["pack"]["layers"]]


def test_the_users_own_setup_hook_runs_and_base_is_unchanged(cluster: dict[str, Any]) -> None:
    assert cluster["base_unchanged"] is True
    for pair in (*cluster["first"].values(), *cluster["late"].values()):
        for kind in ("task", "actor"):
            # The hook ran in that very process (and registered CartPole under the id,
            # which the captured pack then replaced: the rollouts above are the driver's).
            assert pair[kind]["base_hook"] == str(pair[kind]["pid"])


def test_a_task_with_its_own_runtime_env_still_gets_the_ids(cluster: dict[str, Any]) -> None:
    own = cluster["own_env"]
    assert own["task_env"] == "own"  # its own env var: a worker started for this task
    assert own["base_hook"] == str(own["pid"])
    assert own["rollout"] == cluster["driver"]["pack"]["rollout"]


def test_control_a_job_without_specpack_cannot_make_the_id(cluster: dict[str, Any]) -> None:
    control = cluster["control"]
    assert control["error"].startswith("NameNotFound: Environment `ClusterOdometer`"), control
    assert control["base_hook"] is None


def test_no_ray_process_outlives_the_driver(cluster_run: DriverRun) -> None:
    assert cluster_run.returncode == 0
    assert cluster_run.leftovers == []
