"""Every boolean flag of the public functions is a bool exactly (``load(path, trust="False")``
used to trust the file), and ``verify`` takes a SpecPack, naming ``capture`` for anything else
(``verify("CartPole-v1")`` used to fail with an AttributeError from inside the engine)."""

from __future__ import annotations

import re
from typing import Any

import gymnasium
import pytest

import specpack

BAD = ["False", "no", "", 1, 0, None, 1.0]


def _refused(info: pytest.ExceptionInfo[BaseException], flag: str) -> None:
    assert isinstance(info.value, TypeError) and isinstance(info.value, specpack.SpecPackError)
    assert type(info.value).__name__ == "ArgumentTypeError"
    assert isinstance(info.value, specpack.ArgumentTypeError)
    assert f"{flag} must be a bool" in str(info.value)
    assert (f"pass {flag}=True or {flag}=False" in str(info.value)
            or f"pass {flag}=True, {flag}=False or {flag}=None" in str(info.value))


@pytest.fixture(scope="module")
def signed_by_value(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A pack file carrying code by value: only trust=True (or a key) loads it."""
    pack = specpack.capture(lambda: gymnasium.make("CartPole-v1").unwrapped)
    path = tmp_path_factory.mktemp("flags") / "byvalue.pack"
    specpack.dump(pack, path)
    return str(path)


@pytest.mark.parametrize("value", BAD, ids=repr)
def test_load_refuses_a_trust_that_is_not_a_bool(signed_by_value: str, value: object) -> None:
    with pytest.raises(TypeError) as info:
        specpack.load(signed_by_value, trust=value)
    _refused(info, "trust")
    assert str(info.value).startswith("specpack.load() got trust=")


def test_a_string_flag_is_told_it_would_be_true() -> None:
    with pytest.raises(specpack.ArgumentTypeError, match=re.escape(
            "a non-empty string such as 'False' is true in Python")):
        specpack.load("nowhere.pack", trust="False")


def test_from_json_refuses_a_trust_that_is_not_a_bool(signed_by_value: str) -> None:
    with open(signed_by_value, "rb") as fh:
        raw = fh.read()
    for value in ("no", 1):
        with pytest.raises(TypeError) as info:
            specpack.SpecPack.from_json(raw, trust=value)  # type: ignore[arg-type]
        _refused(info, "trust")
    assert specpack.SpecPack.from_json(raw, trust=True).label  # the control


@pytest.mark.parametrize("flag", ["record_spaces", "self_contained"])
@pytest.mark.parametrize("value", ["True", 1, None], ids=repr)
def test_capture_refuses_a_flag_that_is_not_a_bool(flag: str, value: object) -> None:
    with pytest.raises(TypeError) as info:
        specpack.capture("CartPole-v1", **{flag: value})
    _refused(info, flag)


@pytest.mark.parametrize("flag", ["disable_env_checker", "by_value", "autoreset",
                                  "apply_api_compatibility"])
def test_capture_refuses_an_optional_flag_that_is_neither_bool_nor_none(flag: str) -> None:
    with pytest.raises(TypeError) as info:
        specpack.capture("CartPole-v1", **{flag: "yes"})
    _refused(info, flag)
    assert f"{flag}=False or {flag}=None" in str(info.value)


def test_capture_takes_true_false_and_none() -> None:
    pack = specpack.capture("CartPole-v1", disable_env_checker=True, by_value=None,
                            record_spaces=False, self_contained=False)
    assert "PassiveEnvChecker" not in str(pack.make())


def test_verify_refuses_a_check_flag_that_is_not_a_bool() -> None:
    pack = specpack.capture("CartPole-v1")
    with pytest.raises(TypeError) as info:
        specpack.verify(pack, check="yes")
    _refused(info, "check")
    with pytest.raises(TypeError) as info:
        specpack.verify(pack, check=1)
    _refused(info, "check")


def test_make_vec_refuses_a_preload_that_is_not_a_bool() -> None:
    with pytest.raises(TypeError) as info:
        specpack.make_vec(specpack.capture("CartPole-v1"), 2, "sync", preload="no")
    _refused(info, "preload")


@pytest.mark.parametrize("target", ["CartPole-v1", "live", "class", None],
                         ids=["id", "live env", "class", "None"])
def test_verify_takes_a_spec_pack_and_names_capture_for_anything_else(target: object) -> None:
    if target == "live":
        target = gymnasium.make("CartPole-v1")
        example = "specpack.verify(specpack.capture(env))"
    elif target == "class":
        from gymnasium.envs.classic_control import CartPoleEnv

        target = CartPoleEnv
        example = "specpack.verify(specpack.capture(CartPoleEnv))"
    elif target is None:
        example = "specpack.verify(specpack.capture(...))"
    else:
        example = "specpack.verify(specpack.capture('CartPole-v1'))"
    with pytest.raises(TypeError) as info:
        specpack.verify(target)  # type: ignore[arg-type]
    assert isinstance(info.value, specpack.ArgumentTypeError)
    msg = str(info.value)
    assert msg.startswith("specpack.verify takes a SpecPack, got "), msg
    assert f"capture it first: {example}" in msg


@pytest.mark.parametrize("call", [
    lambda pack: __import__("specpack.adapters.tianshou", fromlist=["x"]).subproc_vector_env(
        pack, 2, share_memory="False"),
    lambda pack: __import__("specpack.adapters.supersuit", fromlist=["x"]).supersuit_vec(
        pack, 1, black_death=1),
], ids=["tianshou share_memory", "supersuit black_death"])
def test_the_adapters_flags_are_bools_too(call: Any) -> None:
    # Checked before the library is imported: the refusal needs neither Tianshou nor SuperSuit.
    with pytest.raises(specpack.ArgumentTypeError, match="must be a bool"):
        call(specpack.capture("CartPole-v1"))


# (here, not in tests/core/capture: the gymnasium 1.0/0.29/0.28 venvs run it and have no
# MuJoCo, where a skip would fail CI)
def test_a_real_mujoco_ant_gets_the_same_refusal():
    with pytest.raises(specpack.UnexpectedKwargError, match=re.escape(
            "'record_space', a near miss of the capture option 'record_spaces'. The env "
            "'Ant-v5' (gymnasium.envs.mujoco.ant_v5:AntEnv) takes **kwargs")):
        specpack.capture("Ant-v5", record_space=True)
    assert specpack.capture("Ant-v5", frame_skip=5).kwargs == {"frame_skip": 5}  # the control
