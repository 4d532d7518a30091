"""TorchRL's ParallelEnv rebuilds a main-guard env from its pack under spawn, and
``specpack.adapters.torchrl.parallel_env`` builds no env in the parent while keeping the
shared-memory buffers.

Collected only with SPECPACK_CLIENT_TESTS=1 (tests/integrations/conftest.py): CI's clients venv.
The reference is a SerialEnv in the parent, seeded and driven alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clients_common import run_client

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def specpack_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_client("clients_torchrl.py", tmp_path_factory.mktemp("torchrl"), "specpack")


@pytest.mark.parametrize(("case", "parent_builds", "buffers"), [
    # EnvCreator builds (and steps) one env; ParallelEnv then builds one more to check it.
    ("envcreator_spawn", 2, True),
    # A plain creator: ParallelEnv builds one to read its metadata.
    ("env_fn_spawn", 1, True),
    # The adapter: the metadata comes from the pack's recorded spaces.
    ("adapter_spawn", 0, True),
    # TorchRL's own way: metadata from the workers, without shared buffers.
    ("from_workers_spawn", 0, False),
])
def test_torchrl_parallel_env_gives_parents_rollouts_with_counted_parent_builds(
    specpack_run: dict, case: str, parent_builds: int, buffers: bool
) -> None:
    got = specpack_run[case]
    assert got["ok"], got
    assert got["value"]["obs"] == specpack_run["reference"]["obs"]
    assert got["value"]["reward"] == specpack_run["reference"]["reward"]
    assert got["parent_builds"] == parent_builds
    assert got["value"]["use_buffers"] is buffers


def test_torchrl_control_envcreator_of_gymenv_id_fails_in_spawn_workers(tmp_path: Path) -> None:
    """Without specpack, as TorchRL's docs show it: EnvCreator(lambda: GymEnv(id))."""
    out = run_client("clients_torchrl.py", tmp_path, "control")
    case = out["parallel_spawn"]
    assert not case["ok"], case
    assert out["stderr"].count("NameNotFound: Environment `Walk` doesn't exist") == 2
    assert case["parent_builds"] == 2  # it built and stepped here before the workers failed


def test_torchrl_adapter_refuses_what_it_cannot_honour() -> None:
    import specpack
    from specpack.adapters.torchrl import env_fn, parallel_env

    pack = specpack.capture("CartPole-v1", record_spaces=True)
    with pytest.raises(specpack.SpecPackError, match="create_env_kwargs is not taken here"):
        parallel_env(pack, 2, create_env_kwargs={"x": 1})
    with pytest.raises(specpack.SpecPackError, match=r"SerialEnv\(1, specpack"):
        parallel_env(pack, 1, serial_for_single=True)
    with pytest.raises(specpack.SpecPackError, match="num_workers=0"):
        parallel_env(pack, 0)
    with pytest.raises(specpack.SpecPackError, match="takes no arguments"):
        env_fn(pack)(max_episode_steps=3)


def test_torchrl_adapter_worker_refuses_specs_unlike_the_recorded_ones(
    specpack_run: dict,
) -> None:
    """A parallel_env creator called in a worker checks the TorchRL specs against those its
    parent allocated buffers for: an env with a reward_space (which the recorded spaces do not
    show) is refused, naming the key and TorchRL's own way out."""
    message = specpack_run["reward_space_mismatch"]
    assert message.startswith("SpecPackError: pack "), message
    assert "reward" in message and "metadata_from_workers=True" in message
