"""Which envs an audit covers (targets against the registry) and how a failure where the env is
registered becomes a verdict (timeouts, chained import errors, unreadable signatures)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import gymnasium
import pytest

from specpack._core._errors import SpecPackError, UnknownEnvError
from specpack._tools._audit.classify import (
    Overtime,
    failure,
    guard,
    missing_package,
    time_limit,
    unset_required,
)
from specpack._tools._audit.select import entry_of, select
from specpack._tools._audit.vector_job import NUM_ENVS, sub_envs

MODULE = '''
import gymnasium


class Thing(gymnasium.Env):
    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)


gymnasium.register("{name}/Thing-v0", entry_point="{name}:Thing")
gymnasium.register("{name}/Other-v0", entry_point="{name}:Thing", kwargs={{}})
'''


@pytest.fixture
def unimported_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module that registers two envs when it is imported (and is not imported yet)."""
    name = f"specpack_select_{tmp_path.name.replace('-', '_').lower()}"
    (tmp_path / f"{name}.py").write_text(MODULE.format(name=name))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for env_id in [k for k in gymnasium.registry if k.startswith(f"{name}/")]:
        del gymnasium.registry[env_id]
    monkeypatch.delitem(sys.modules, name, raising=False)


def test_a_module_prefix_that_matches_nothing_yet_is_imported_to_register_its_envs(
    unimported_package: str,
) -> None:
    name = unimported_package
    assert not any(k.startswith(f"{name}/") for k in gymnasium.registry)
    assert select([name]) == [f"{name}/Thing-v0", f"{name}/Other-v0"]
    # a namespace selects the same, and an id given twice is listed once
    assert select([f"{name}/", f"{name}/Thing-v0"]) == [f"{name}/Thing-v0", f"{name}/Other-v0"]


def test_no_target_is_the_whole_registry() -> None:
    assert select([]) == list(gymnasium.registry)


def test_a_target_that_is_no_module_and_matches_nothing_names_the_fix() -> None:
    with pytest.raises(UnknownEnvError) as info:
        select(["CartPol-v1"])
    text = str(info.value)
    assert "audit target 'CartPol-v1' matches no registered env" in text
    # Per surface (issue 23): Python names imports=[...], the command line --import MODULE.
    assert "CartPole-v1" in text and "imports=[...]" in text and "--import" not in text
    assert "--import MODULE" in info.value.for_surface("cli")
    with pytest.raises(UnknownEnvError, match="'no_such_module_for_specpack' matches no"):
        select(["no_such_module_for_specpack"])


@pytest.mark.parametrize("target", ["", None, 3])
def test_a_target_must_be_a_non_empty_string(target: object) -> None:
    with pytest.raises(SpecPackError, match=f"audit target {target!r} must be a non-empty string"):
        select([target])  # type: ignore[list-item]


def test_entry_of_gives_the_loaded_entry_point_or_none() -> None:
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    entry, kwargs = entry_of("CartPole-v1")  # type: ignore[misc]
    assert entry is CartPoleEnv and kwargs == {}
    assert entry_of("NoSuchEnv-v0") is None


def make_vector(num_envs: int, flag: bool = True) -> None:
    """A vector entry point (never called here)."""


def test_entry_of_a_vector_only_id_is_its_vector_creator_given_num_envs() -> None:
    gymnasium.register("SpecpackVecOnly-v0", vector_entry_point=make_vector,
                       kwargs={"flag": False})
    gymnasium.register("SpecpackBroken-v0", entry_point="no_such_module_x:Env")
    try:
        assert entry_of("SpecpackVecOnly-v0") == (make_vector, {"flag": False, "num_envs": None})
        assert entry_of("SpecpackBroken-v0") is None
    finally:
        del gymnasium.registry["SpecpackVecOnly-v0"], gymnasium.registry["SpecpackBroken-v0"]


# -- classify -------------------------------------------------------------------------------------


def test_overtime_here_is_a_timeout_naming_the_limit() -> None:
    assert failure(Overtime(), "capturing it", 2.5) == {
        "status": "timeout", "reason": "capturing it here did not finish within 2.5 s"}


def test_guard_turns_an_exception_into_a_failure_and_lets_ctrl_c_through() -> None:
    assert guard("building it", 10, lambda: {"ok": 1}) == {"ok": 1}

    def boom() -> dict[str, int]:
        raise ValueError("bad level")

    failed = guard("building it", 10, boom)["failed"]
    assert failed["status"] == "capture_error"
    assert failed["reason"] == "building it failed: ValueError: bad level"

    def interrupted() -> dict[str, int]:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        guard("building it", 10, interrupted)


def test_off_the_main_thread_the_time_limit_cannot_interrupt_and_does_not_try() -> None:
    done: list[bool] = []

    def work() -> None:
        with time_limit(0.001):
            done.append(True)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert done == [True]


def test_a_missing_module_with_an_unusual_message_is_named_by_the_module() -> None:
    exc = ModuleNotFoundError("the simulator backend is unavailable",
                              name="specpack_absent_backend.core")
    assert missing_package(exc) == "specpack_absent_backend"
    # a module of an installed package that fails to import is not a missing dependency
    broken = ModuleNotFoundError("oops", name="gymnasium.no_such_submodule")
    assert missing_package(broken) is None


def test_the_required_parameters_of_an_unreadable_signature_are_unknown() -> None:
    assert unset_required(type, {}) == []

    def entry(env_name: str, *, seed: int, level: int = 1) -> None: ...

    assert unset_required(entry, {"seed": 1}) == ["env_name"]


# -- how many sub-envs a vector-only id is audited with -------------------------------------------


def picks_its_own(num_envs: int | None = None) -> None:
    """A vector creator that picks its own count (Meta-World's benchmarks)."""


def takes_any(num_envs: int, seed: int = 0) -> None:
    """A vector creator that builds as many sub-envs as it is asked for."""


def test_a_vector_creator_that_picks_its_own_count_is_not_given_one() -> None:
    ids = {
        "SpecpackOwnCount-v0": picks_its_own,
        "SpecpackAnyCount-v0": takes_any,
        "SpecpackNoSignature-v0": type,
        "SpecpackUnloadable-v0": "no_such_module_y:make",
        "SpecpackByName-v0": f"{__name__}:picks_its_own",
    }
    for env_id, creator in ids.items():
        gymnasium.register(env_id, vector_entry_point=creator)
    try:
        assert sub_envs("SpecpackOwnCount-v0") is None
        assert sub_envs("SpecpackByName-v0") is None
        assert sub_envs("SpecpackAnyCount-v0") == NUM_ENVS == 2
        assert sub_envs("SpecpackNoSignature-v0") == NUM_ENVS
        assert sub_envs("SpecpackUnloadable-v0") == NUM_ENVS
        assert sub_envs("NoSuchVectorEnv-v0") == NUM_ENVS
    finally:
        for env_id in ids:
            del gymnasium.registry[env_id]
