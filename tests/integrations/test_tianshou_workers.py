"""Tianshou's subprocess vector envs rebuild a main-guard env from its pack under spawn and
forkserver, and ``specpack.adapters.tianshou`` builds no env in the parent, shared memory too.

Collected only with SPECPACK_CLIENT_TESTS=1 (tests/integrations/conftest.py): CI's clients venv.
Each script defines ``Walk`` inside its main guard and counts constructor calls per process.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clients_common import run_client

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def specpack_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_client("clients_tianshou.py", tmp_path_factory.mktemp("tianshou"), "specpack")


def _ok(case: dict) -> list:
    assert case["ok"], case
    return case["value"]


def test_tianshou_subproc_spawn_with_pack_make_gives_parents_rollouts_and_builds_nothing_here(
    specpack_run: dict,
) -> None:
    case = specpack_run["subproc_spawn"]
    assert _ok(case) == specpack_run["reference"]
    assert case["parent_builds"] == 0  # SubprocVectorEnv asks its workers for the spaces


def test_tianshou_shmem_forkserver_with_pack_make_works_but_builds_one_env_per_worker_here(
    specpack_run: dict,
) -> None:
    case = specpack_run["shmem_forkserver"]
    assert _ok(case) == specpack_run["reference"]
    # ShmemVectorEnv calls each factory in the parent to size its buffers.
    assert case["parent_builds"] == 2


@pytest.mark.parametrize("case", ["adapter_shmem_spawn", "adapter_shmem_forkserver"])
def test_tianshou_adapter_shared_memory_builds_no_env_in_the_parent(
    specpack_run: dict, case: str
) -> None:
    assert _ok(specpack_run[case]) == specpack_run["reference"]
    assert specpack_run[case]["parent_builds"] == 0


def test_tianshou_adapter_env_kwargs_record_the_spaces_once_for_all_workers(
    specpack_run: dict,
) -> None:
    case = specpack_run["adapter_kwargs_spawn"]
    assert _ok(case) == specpack_run["reference_kwargs"]
    assert specpack_run["reference_kwargs"] != specpack_run["reference"]
    assert case["parent_builds"] == 1  # kwargs may change the spaces: recorded once here


def test_tianshou_control_id_factory_fails_in_spawn_and_forkserver_workers(
    tmp_path: Path,
) -> None:
    """Without specpack, as Tianshou's docs show it: a factory of the id. Workers that did not
    run the main guard have no Walk-v0; the parent sees the pipe break."""
    out = run_client("clients_tianshou.py", tmp_path, "control")
    for name in ("subproc_spawn", "shmem_forkserver"):
        case = out[name]
        assert not case["ok"], case
        assert case["type"] in ("ConnectionResetError", "EOFError", "BrokenPipeError"), case
    assert out["stderr"].count("NameNotFound: Environment `Walk` doesn't exist") == 2
    assert out["shmem_forkserver"]["parent_builds"] == 1  # built here before the worker failed


def test_tianshou_adapter_refuses_bad_arguments_before_starting_workers() -> None:
    import specpack
    from specpack.adapters.tianshou import subproc_vector_env

    pack = specpack.capture("CartPole-v1", record_spaces=True)
    with pytest.raises(specpack.SpecPackError, match="num_envs=0 must be a positive int"):
        subproc_vector_env(pack, 0)
    with pytest.raises(specpack.SpecPackError, match="has 3 entries for num_envs=2"):
        subproc_vector_env(pack, 2, env_kwargs=[{}, {}, {}])
    with pytest.raises(specpack.SpecPackError, match="takes a SpecPack, got str"):
        subproc_vector_env("CartPole-v1", 2)  # type: ignore[arg-type]
