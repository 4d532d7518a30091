"""Registering a pack under an id (``pack.register``), and capture's reuse of an earlier pack
only while the registration it read is unchanged."""

from __future__ import annotations

from collections.abc import Iterator

import cli_edge_envs
import gymnasium
import pytest

import specpack
from specpack._core._errors import CaptureError


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    ids: list[str] = []
    yield ids
    for env_id in ids:
        gymnasium.registry.pop(env_id, None)


def test_a_pack_without_an_id_must_be_given_one_to_register() -> None:
    pack = specpack.capture(cli_edge_envs.Base)
    assert pack.id is None
    with pytest.raises(CaptureError, match=r"this pack has no id \(it was captured from a "
                       r"callable\); pass one: pack.register\('MyEnv-v0'\)"):
        pack.register()


def test_a_registered_pack_is_made_by_id_with_its_whole_stack(cleanup: list[str]) -> None:
    pack = specpack.capture("CartPole-v1", max_episode_steps=9)
    cleanup.append("SpecpackNine-v0")
    assert pack.register("SpecpackNine-v0") == "SpecpackNine-v0"
    assert pack.register("SpecpackNine-v0") == "SpecpackNine-v0"  # the same pack again: fine
    env = gymnasium.make("SpecpackNine-v0")
    try:
        # the pack's own stack, without a second checker, order enforcer or time limit
        assert [layer.name for layer in specpack.capture(env).layers] == [
            layer.name for layer in pack.layers] == [
            "TimeLimit", "OrderEnforcing", "PassiveEnvChecker"]
        assert pack.layers[0].kwargs["max_episode_steps"] == 9
    finally:
        env.close()


def test_an_id_taken_by_something_else_is_refused_naming_the_fix(cleanup: list[str]) -> None:
    with pytest.raises(CaptureError) as info:
        specpack.capture("CartPole-v1", max_episode_steps=9).register("CartPole-v1")
    text = str(info.value)
    assert text.startswith("'CartPole-v1' is already registered in gymnasium's registry (")
    assert "pass another id to pack.register(), or gymnasium.envs.registry.pop(id) first" in text
    cleanup.append("SpecpackTaken-v0")
    specpack.capture("CartPole-v1").register("SpecpackTaken-v0")
    with pytest.raises(CaptureError, match="'SpecpackTaken-v0' is already registered"):
        specpack.capture("CartPole-v1", max_episode_steps=3).register("SpecpackTaken-v0")


def test_a_malformed_id_is_named_with_what_ids_look_like() -> None:
    with pytest.raises(CaptureError, match=r"'Cart Pole-v1' is not an env id \(.*\); ids look "
                       r"like 'CartPole-v1'"):
        specpack.capture("Cart Pole-v1")


def test_capture_is_redone_when_the_entry_point_no_longer_resolves_to_the_same_object(
    cleanup: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cleanup.append("SpecpackSwapped-v0")
    gymnasium.register("SpecpackSwapped-v0", entry_point="cli_edge_envs:Talks")
    first = specpack.capture("SpecpackSwapped-v0")
    assert specpack.capture("SpecpackSwapped-v0") is first  # nothing changed: reused
    talks = cli_edge_envs.Talks
    monkeypatch.delattr(cli_edge_envs, "Talks")
    # The name is gone: as gymnasium.make would, capture fails here, naming it (no stale pack).
    with pytest.raises(CaptureError, match=r"'cli_edge_envs:Talks' \(AttributeError: module "
                       r"'cli_edge_envs' has no attribute 'Talks'\)"):
        specpack.capture("SpecpackSwapped-v0")

    class Talks(talks):  # type: ignore[misc,valid-type]
        pass

    monkeypatch.setattr(cli_edge_envs, "Talks", Talks, raising=False)
    swapped = specpack.capture("SpecpackSwapped-v0")  # another object under the name
    assert swapped is not first and swapped.make().unwrapped.__class__ is Talks
