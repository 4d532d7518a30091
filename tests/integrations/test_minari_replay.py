"""A Minari dataset collected from a main-guard env is replayed in a fresh interpreter from the
pack stored in its metadata (``specpack.adapters.minari``); Minari's own
``recover_environment()`` cannot rebuild that env there.

Collected only with SPECPACK_CLIENT_TESTS=1 (tests/integrations/conftest.py): CI's clients venv.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from clients_common import run_client

pytestmark = pytest.mark.integration

DATASET = "walk/fixed-v0"


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("minari")
    env = {"MINARI_DATASETS_PATH": str(root / "datasets"), "CLIENTS_KEY": secrets.token_hex(32)}
    out = run_client("clients_minari_collect.py", root, DATASET, extra_env=env)
    return {"env": env, "root": root, "seen": out["observations"],
            "entry_point": out["env_spec_entry_point"]}


def _replay(collected: dict, tmp_path: Path, mode: str) -> dict:
    return run_client("clients_minari_replay.py", tmp_path, DATASET, mode,
                      extra_env=collected["env"])


def test_minari_dataset_replays_from_its_pack_in_a_fresh_interpreter(
    collected: dict, tmp_path: Path
) -> None:
    out = _replay(collected, tmp_path, "specpack")
    assert out["stored"] == collected["seen"]  # what the collector saw is what Minari stored
    case = out["recover"]
    assert case["ok"], case
    assert case["value"] == out["stored"]  # the recovered env replays the data exactly


def test_minari_stored_pack_is_signed_and_refused_without_its_key(
    collected: dict, tmp_path: Path
) -> None:
    out = _replay(collected, tmp_path, "specpack")
    assert out["unsigned"].startswith("UntrustedPackError: dataset 'walk/fixed-v0' metadata"), \
        out["unsigned"]
    assert "code __main__:Walk at entry_point" in out["unsigned"]
    assert out["other_key"].startswith("SignatureError: "), out["other_key"]
    assert "signed with another key" in out["other_key"]


def test_minari_control_recover_environment_fails_in_a_fresh_interpreter(
    collected: dict, tmp_path: Path
) -> None:
    """Without specpack: Minari's own recovery, gymnasium.make of the stored EnvSpec."""
    assert collected["entry_point"] == "__main__:Walk"
    out = _replay(collected, tmp_path, "control")
    case = out["recover"]
    assert not case["ok"], case
    assert case["error"] == "AttributeError: module '__main__' has no attribute 'Walk'"


def test_minari_adapter_refuses_a_dataset_without_a_pack_and_a_pack_of_other_spaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gymnasium as gym
    import minari

    import specpack
    from specpack.adapters.minari import attach, recover_environment

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    env = minari.DataCollector(gym.make("CartPole-v1"))
    env.reset(seed=0)
    for _ in range(3):
        env.step(0)
    dataset = env.create_dataset(dataset_id="cartpole/bare-v0", algorithm_name="none",
                                 description="three steps")
    env.close()
    with pytest.raises(specpack.SpecPackError, match=r"holds no specpack manifest.*attach\("):
        recover_environment(dataset)
    other = specpack.capture("MountainCar-v0", record_spaces=True)
    with pytest.raises(specpack.SpecPackError, match="is not the dataset's"):
        attach(dataset, other)
    with pytest.raises(specpack.SpecPackError, match=r"expected a minari\.MinariDataset"):
        attach(object(), other)
    pack = specpack.capture("CartPole-v1", record_spaces=True)
    attach(dataset, pack)  # by reference only: no key needed to recover it
    again = recover_environment(minari.load_dataset("cartpole/bare-v0"))
    assert again.spec is not None and again.spec.id == "CartPole-v1"
    again.close()
