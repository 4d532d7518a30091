"""specpack.make_vec and pack.register: real worker processes, real failures, real preloads.

Scenarios that need a ``__main__`` guard (spawn/forkserver workers of envs registered there)
run as scripts in a fresh interpreter (tests/scripts/vec_*.py) that print JSON; the tests
assert on it.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from _helpers import SCRIPTS
from vec_envs import load_by_path, rollout, vec_rollout

import specpack
from specpack import CodeRef, SpecPack, SpecPackError, WorkerError
from specpack.adapters import worker_env_fn

TESTS = SCRIPTS
BARE_TRANSPORT_ERRORS = {"ConnectionResetError", "EOFError", "BrokenPipeError"}

pytestmark = pytest.mark.integration


def run_script(name: str, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    proc = subprocess.run(
        [sys.executable, str(TESTS / name), *args], cwd=tmp_path, capture_output=True,
        text=True, timeout=240, env={**os.environ, **(env or {})},
    )
    assert proc.returncode == 0, f"{name} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"{name} printed no JSON\n{proc.stdout}\n{proc.stderr}"
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def main_guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return run_script("vec_main_guard.py", tmp_path_factory.mktemp("main_guard"))


@pytest.fixture(scope="module")
def failures(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return run_script("vec_failures.py", tmp_path_factory.mktemp("failures"))


@pytest.fixture(scope="module")
def file_pack() -> SpecPack:
    mod = load_by_path()
    return specpack.capture(mod.CounterEnv, k=2.0, max_episode_steps=6)


# -- envs registered in the main guard ---------------------------------------------------------


@pytest.mark.parametrize("env_id", ["VecMain-v0", "VecFile-v0"])
def test_control_id_based_make_vec_fails_in_spawn_and_forkserver_workers(
    main_guard: Any, env_id: str
) -> None:
    res = main_guard[env_id]
    for ctx in ("spawn", "forkserver"):
        control = res["control"][ctx]
        assert control["outcome"] != "ok", (ctx, control)
        assert control["type"] in BARE_TRANSPORT_ERRORS, (ctx, control)


@pytest.mark.parametrize("env_id", ["VecMain-v0", "VecFile-v0"])
@pytest.mark.parametrize("ctx", ["fork", "spawn", "forkserver"])
def test_make_vec_workers_rebuild_env_registered_in_main_guard(
    main_guard: Any, env_id: str, ctx: str
) -> None:
    res = main_guard[env_id]
    assert res["by_value"] is True
    assert res["async"][ctx] == res["sync"]
    # max_episode_steps (4 and 5) truncate within the 9 steps: autoreset happened too.
    assert len(res["sync"]) == 10


@pytest.mark.parametrize("env_id", ["VecMain-v0", "VecFile-v0"])
def test_reset_seed_s_seeds_sub_env_i_with_s_plus_i(main_guard: Any, env_id: str) -> None:
    res = main_guard[env_id]
    assert res["single"] == res["sync"][0]


@pytest.mark.parametrize("env_id", ["VecMain-v0", "VecFile-v0"])
def test_make_vec_seed_applies_to_first_reset_without_seed(main_guard: Any, env_id: str) -> None:
    res = main_guard[env_id]
    assert res["seeded_first_reset"] == res["sync"][0]
    assert res["sync_seeded_first_reset"] == res["sync"][0]
    assert res["seeded_second_reset_differs"] is True


@pytest.mark.parametrize("env_id", ["VecMain-v0", "VecFile-v0"])
def test_pack_register_in_spawn_worker_makes_id_usable_there(
    main_guard: Any, env_id: str
) -> None:
    reg = main_guard[env_id]["register_in_spawn"]
    assert "NameNotFound" in reg["before"]  # control: the id is unknown in the worker
    assert reg["first"] == reg["again"] == env_id  # idempotent
    assert reg["spec_id"] == env_id
    assert reg["rollout"] == main_guard[env_id]["parent_rollout"]


# -- failing workers -----------------------------------------------------------------------------


@pytest.mark.parametrize("ctx", ["fork", "spawn", "forkserver"])
def test_worker_constructor_error_reaches_parent_as_worker_error(failures: Any, ctx: str) -> None:
    got = failures["raises"][ctx]
    assert got["type"] == "WorkerError" and got["is_specpack_error"], got
    assert "vec-boom: FailsInWorker refuses to start" in got["message"]
    assert "Traceback (most recent call last)" in got["message"]
    assert "vec-boom" in got["child_traceback"] and "ValueError" in got["child_traceback"]
    control = failures["control_raises"][ctx]  # plain AsyncVectorEnv([pack.make] * 2)
    assert control["type"] in BARE_TRANSPORT_ERRORS and not control["is_specpack_error"]
    assert "vec-boom" not in control["message"]


@pytest.mark.parametrize("ctx", ["spawn", "forkserver"])
def test_worker_import_error_reaches_parent_as_worker_error(failures: Any, ctx: str) -> None:
    got = failures["import"][ctx]
    assert got["type"] == "WorkerError", got
    assert "vec-import-boom" in got["message"] and "vec-import-boom" in got["child_traceback"]
    control = failures["control_import"][ctx]
    assert control["type"] in BARE_TRANSPORT_ERRORS and "vec-import-boom" not in control["message"]


@pytest.mark.parametrize("ctx", ["fork", "spawn", "forkserver"])
def test_worker_that_dies_silently_is_reported_with_exit_code(failures: Any, ctx: str) -> None:
    got = failures["dies"][ctx]
    assert got["type"] == "WorkerError", got
    assert "exited with code 3" in got["message"]  # its death, not the start timeout


@pytest.mark.parametrize("ctx", ["fork", "spawn", "forkserver"])
def test_worker_that_hangs_is_reported_after_start_timeout(failures: Any, ctx: str) -> None:
    got = failures["hangs"][ctx]
    assert got["type"] == "WorkerError", got
    assert "did not finish building the env within 1.5 s" in got["message"]
    assert got["seconds"] > 1.4  # not before the start timeout


def test_constructor_error_in_parent_is_build_error() -> None:
    def broken() -> gym.Env[Any, Any]:
        raise RuntimeError("parent-side boom")

    pack = specpack.capture(broken)
    for mode in ("sync", "async"):
        with pytest.raises(SpecPackError, match="parent-side boom"):
            specpack.make_vec(pack, 2, mode, **({"context": "fork"} if mode == "async" else {}))


# -- in-process checks -------------------------------------------------------------------------


def test_fork_make_vec_equals_sync_and_single_envs(file_pack: SpecPack) -> None:
    sync = vec_rollout(specpack.make_vec(file_pack, 3, "sync"), steps=8)
    fork = vec_rollout(specpack.make_vec(file_pack, 3, context="fork"), steps=8)
    assert fork == sync
    singles = [np.asarray(file_pack.make().reset(seed=11 + i)[0]).round(6).tolist()
               for i in range(3)]
    assert np.allclose(sync[0], singles)


@pytest.mark.parametrize("ctx", ["fork", "spawn"])
def test_make_vec_workers_freeze_what_they_loaded_and_built(file_pack: SpecPack,
                                                            ctx: str) -> None:
    before = gc.get_freeze_count()
    venv = specpack.make_vec(file_pack, 2, context=ctx)
    try:
        states = venv.call("gc_now")
    finally:
        venv.close()
    # Each worker's GC stays on (the env's own cycles are still collected), and skips the
    # objects the worker had loaded and built by its start report.
    assert all(on and frozen > 10_000 for on, frozen in states), states
    assert gc.get_freeze_count() == before  # the parent is left as it was


BLAS = "OPENBLAS_THREAD_TIMEOUT"


def test_spawn_workers_get_a_short_blas_spin_unless_the_environment_names_one(
        file_pack: SpecPack, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BLAS, raising=False)  # the suite's conftest sets it for every child
    for ctx, seen in (("spawn", ("4", "4")), ("fork", (None, None))):
        venv = specpack.make_vec(file_pack, 2, context=ctx)
        try:
            assert venv.call("getenv", BLAS) == seen, ctx  # a fork worker is no new interpreter
        finally:
            venv.close()
        assert BLAS not in os.environ  # this process's environment is as it was
    monkeypatch.setenv(BLAS, "9")  # the user's own setting wins, in the workers too
    venv = specpack.make_vec(file_pack, 2, context="spawn")
    try:
        assert venv.call("getenv", BLAS) == ("9", "9")
    finally:
        venv.close()
    assert os.environ[BLAS] == "9"


def test_the_short_spin_is_in_this_process_only_while_workers_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BLAS, raising=False)
    pack = specpack.capture(load_by_path().WaitsForGo, folder=str(tmp_path))
    seen: list[str | None] = []

    def release() -> None:  # once both workers are building, make_vec waits for their reports
        for _ in range(12_000):
            if len(list(tmp_path.glob("started.*"))) == 2:
                seen.append(os.environ.get(BLAS))
                break
            time.sleep(0.01)
        (tmp_path / "go").touch()

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    venv = specpack.make_vec(pack, 2, context="spawn")
    try:
        thread.join()
        assert seen == [None]  # gone from this process's environment while the builds ran
        assert venv.call("getenv", BLAS) == ("4", "4")
    finally:
        venv.close()


def test_other_libraries_workers_keep_their_gc_as_it_was(file_pack: SpecPack) -> None:
    # A factory given to another library's workers reports nothing and freezes nothing:
    # those processes are not ours.
    venv = gym.vector.AsyncVectorEnv([worker_env_fn(file_pack)] * 2, context="spawn")
    try:
        assert venv.call("gc_now") == ((True, 0), (True, 0))
    finally:
        venv.close()


def test_make_vec_returns_gymnasium_vector_envs_with_the_pack(file_pack: SpecPack) -> None:
    venv = specpack.make_vec(file_pack, 2, context="fork")
    try:
        assert isinstance(venv, gym.vector.AsyncVectorEnv)
        assert venv.pack is file_pack  # type: ignore[attr-defined]
        assert venv.single_observation_space == file_pack.make().observation_space
    finally:
        venv.close()
    sync = specpack.make_vec(file_pack, 2, "sync")
    assert isinstance(sync, gym.vector.SyncVectorEnv)
    sync.close()


def test_env_kwargs_and_vector_kwargs_pass_through(file_pack: SpecPack) -> None:
    venv = specpack.make_vec(file_pack, 2, context="fork", env_kwargs={"k": 0.0},
                             shared_memory=False)
    try:
        obs, _ = venv.reset(seed=0)
        assert np.all(obs == 0.0)  # k=0 zeroes the observations
        assert venv.shared_memory is False
        assert venv.get_attr("k") == (0.0, 0.0)
    finally:
        venv.close()
    sync = specpack.make_vec(file_pack, 2, "sync", env_kwargs={"k": 0.0}, copy=False)
    assert sync.get_attr("k") == (0.0, 0.0) and sync.copy is False
    sync.close()


def test_make_vec_captures_a_non_pack_target() -> None:
    venv = specpack.make_vec("CartPole-v1", 2, "sync", seed=1)
    obs, _ = venv.reset()
    expected = [gym.make("CartPole-v1").reset(seed=1 + i)[0] for i in range(2)]
    assert np.array_equal(obs, np.stack(expected))
    venv.close()


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((0,), {}, "num_envs=0 must be a positive int"),
        ((True,), {}, "num_envs=True"),
        ((2, "parallel"), {}, "vectorization_mode='parallel' is not supported"),
        ((2,), {"context": "threads"}, "context='threads' is not a multiprocessing start method"),
        ((2, "sync"), {"context": "spawn"}, "only applies to vectorization_mode='async'"),
        ((2,), {"shared_memroy": False},
         "unexpected keyword argument 'shared_memroy'; did you mean 'shared_memory'?"),
        ((2,), {"vectorisation_mode": "sync"},
         "did you mean make_vec's parameter 'vectorization_mode'?"),
        ((2, "sync"), {"daemon": True}, "unexpected keyword argument 'daemon'"),
        ((2,), {"seed": "0"}, "seed='0' must be an int"),
        ((2,), {"start_timeout": 0}, "start_timeout=0 must be a positive"),
    ],
)
def test_bad_make_vec_arguments_raise_specpack_error_in_parent(
    file_pack: SpecPack, args: tuple[Any, ...], kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(SpecPackError, match=match):
        specpack.make_vec(file_pack, *args, **kwargs)


def test_legacy_gym_pack_is_refused_with_a_clear_error() -> None:
    pack = SpecPack(
        backend="gym", id="LegacyThing-v0", entry_point=CodeRef("legacy_pkg", "Thing"),
        _kwargs={}, spec={}, layers=(), auto_render=False, versions={},
    )
    with pytest.raises(SpecPackError, match=r"backend='gym'.*gym\.vector\.AsyncVectorEnv"):
        specpack.make_vec(pack, 2)


def test_worker_error_is_a_specpack_error() -> None:
    assert issubclass(WorkerError, SpecPackError)


# -- pack.register in this process -------------------------------------------------------------


def test_pack_register_is_idempotent_and_refuses_taken_ids(file_pack: SpecPack) -> None:
    env_id = "VecRegisterTest-v0"
    try:
        assert file_pack.register(env_id) == env_id
        assert file_pack.register(env_id) == env_id  # same pack again: no-op
        other = specpack.capture(load_by_path().CounterEnv, k=9.0)
        with pytest.raises(SpecPackError, match="already registered"):
            other.register(env_id)
        assert rollout(gym.make(env_id)) == rollout(file_pack.make())
    finally:
        gym.envs.registration.registry.pop(env_id, None)


# -- forkserver preload ------------------------------------------------------------------------

_PRELOAD_PROBE = r"""
import json, multiprocessing, multiprocessing.forkserver, os, sys
os.environ.pop("OPENBLAS_THREAD_TIMEOUT", None)  # the suite's conftest sets it for every child
multiprocessing.get_context("forkserver").set_forkserver_preload(["json", "__main__"])
import specpack, vec_envs
pack = specpack.capture(vec_envs.CounterEnv)
assert not pack.entry_point.by_value
mode = sys.argv[1]
if mode == "late":
    multiprocessing.forkserver.ensure_running()   # started before make_vec: too late
venv = specpack.make_vec(pack, 2, context="forkserver", preload=(mode != "off"))
print(json.dumps({
    "import_pids": list(venv.get_attr("import_pid")),
    "worker_pids": [p.pid for p in venv.processes],
    "frozen": list(venv.get_attr("gc_frozen")),
    "blas": list(venv.call("getenv", "OPENBLAS_THREAD_TIMEOUT")),
    "parent_blas": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
    "preload": multiprocessing.forkserver._forkserver._preload_modules,
}))
venv.close()
"""


def _probe(mode: str, tmp_path: Path) -> Any:
    proc = subprocess.run(
        [sys.executable, "-c", _PRELOAD_PROBE, mode], cwd=tmp_path, capture_output=True,
        text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(TESTS)},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_forkserver_workers_inherit_preloaded_entry_module(tmp_path: Path) -> None:
    got = _probe("on", tmp_path)
    # The env's module was imported once, in the forkserver, not in each worker.
    assert all(ip not in got["worker_pids"] for ip in got["import_pids"])
    assert len(set(got["import_pids"])) == 1
    preload = got["preload"]
    assert preload[:2] == ["json", "__main__"]  # the user's list is kept, in front
    for mod in ("gymnasium", "numpy", "cloudpickle", "specpack", "vec_envs"):
        assert mod in preload
    assert preload.count("__main__") == 1
    # imported last, it froze what the server imported: no worker's GC walks (and copies) it
    assert preload[-1] == "specpack._core._vector._frozen"
    assert min(got["frozen"]) > 10_000
    # the server make_vec started is a fresh interpreter with a short BLAS spin; its workers
    # inherit the setting, and this process's environment is as it was
    assert got["blas"] == ["4", "4"] and got["parent_blas"] is None


def test_preload_false_leaves_forkserver_preload_alone(tmp_path: Path) -> None:
    got = _probe("off", tmp_path)
    assert got["preload"] == ["json", "__main__"]
    assert got["frozen"] == [0, 0]
    assert got["import_pids"] == got["worker_pids"]  # each worker imported the module itself


def test_forkserver_started_before_make_vec_gets_no_preload(tmp_path: Path) -> None:
    got = _probe("late", tmp_path)  # documented: the preload list is read when it starts
    assert got["import_pids"] == got["worker_pids"]
    assert got["blas"] == [None, None]  # a server started by someone else keeps its environment


def test_forkserver_modules_lists_by_reference_code_only(file_pack: SpecPack) -> None:
    from specpack.vector import forkserver_modules

    mods = forkserver_modules(file_pack, specpack.capture("CartPole-v1"))
    assert "gymnasium.envs.classic_control.cartpole" in mods
    assert "gymnasium.wrappers.common" in mods  # TimeLimit, OrderEnforcing, ...
    # what a forkserver child imports to unpickle its pipes and gymnasium's error queue
    assert {"multiprocessing.popen_forkserver", "multiprocessing.queues"} <= set(mods)
    assert not any(m.startswith("specpack_vec_file_envs") for m in mods)  # by value
    assert "__main__" not in mods and "__mp_main__" not in mods


def test_the_freezing_module_stays_last_in_the_preload_list_whatever_joins_later(
        tmp_path: Path) -> None:
    # the pack's list first, then the user's modules
    code = ("import json, specpack; from specpack.vector import warm_forkserver\n"
            "warm_forkserver(specpack.capture('CartPole-v1'))\n"
            "print(json.dumps(warm_forkserver(modules=['json'])))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    preload = json.loads(proc.stdout.strip().splitlines()[-1])
    assert preload[-1] == "specpack._core._vector._frozen" and "json" in preload
    assert preload.count("specpack._core._vector._frozen") == 1
