"""One pack, many threads; joblib (threads and loky) and ProcessPoolExecutor(spawn).

A pack is immutable, so one pack can be made concurrently from many threads. The pool
scenarios need a real ``__main__`` guard and run as a script (tests/scripts/vec_pools.py).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from _helpers import SCRIPTS
from joblib import Parallel, delayed
from vec_envs import load_by_path, rollout

import specpack
from specpack import SpecPack

TESTS = SCRIPTS
N_THREADS = 32

pytestmark = pytest.mark.integration


def _fresh_file_pack() -> SpecPack:
    """A pack whose by-value class has never been loaded in this process's pack objects."""
    mod = load_by_path()
    pack = specpack.capture(mod.CounterEnv, k=1.5, max_episode_steps=7)
    assert pack.entry_point.by_value
    return pickle.loads(pickle.dumps(pack))  # a fresh CodeRef: first load happens in a thread


@pytest.mark.parametrize("which", ["file-loaded by value", "CartPole by reference"])
def test_32_threads_make_one_pack_and_roll_out_like_sequential(which: str) -> None:
    if which.startswith("file"):
        pack = _fresh_file_pack()
    else:
        pack = pickle.loads(pickle.dumps(specpack.capture("CartPole-v1")))
    barrier = threading.Barrier(N_THREADS)
    classes: list[type] = []

    def job(seed: int) -> list[list[float]]:
        barrier.wait()  # all threads make() at once
        env = pack.make()
        classes.append(type(env.unwrapped))
        return rollout(env, steps=15, seed=seed)

    with ThreadPoolExecutor(N_THREADS) as pool:
        threaded = list(pool.map(job, range(N_THREADS)))
    sequential = [rollout(pack.make(), steps=15, seed=s) for s in range(N_THREADS)]
    assert threaded == sequential
    assert len(set(classes)) == 1  # by-value code is loaded once, shared by every thread


def test_joblib_threading_backend_rollouts_equal_sequential() -> None:
    pack = _fresh_file_pack()

    def job(seed: int) -> list[list[float]]:
        return rollout(pack.make(), steps=10, seed=seed)

    threaded = Parallel(n_jobs=8, backend="threading")(delayed(job)(s) for s in range(16))
    assert threaded == [job(s) for s in range(16)]


@pytest.fixture(scope="module")
def pools(tmp_path_factory: pytest.TempPathFactory) -> Any:
    proc = subprocess.run(
        [sys.executable, str(TESTS / "vec_pools.py")], cwd=tmp_path_factory.mktemp("pools"),
        capture_output=True, text=True, timeout=240, env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("env_id", ["PoolMain-v0", "PoolFile-v0"])
def test_joblib_loky_workers_rebuild_env_registered_in_main_guard(pools: Any, env_id: str) -> None:
    res = pools[env_id]
    assert res["loky"] == res["parent"]
    for control in res["loky_control"]:  # the id is unknown in a loky worker
        assert isinstance(control, str) and control.startswith("NameNotFound"), control


@pytest.mark.parametrize("env_id", ["PoolMain-v0", "PoolFile-v0"])
def test_spawn_process_pool_rebuilds_env_registered_in_main_guard(pools: Any, env_id: str) -> None:
    res = pools[env_id]
    assert res["spawn_pool"] == res["parent"]
    for control in res["spawn_pool_control"]:
        assert isinstance(control, str) and control.startswith("NameNotFound"), control
