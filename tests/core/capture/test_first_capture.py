"""A first capture (nothing memoised for the call) keeps every result and every check while it
skips what it need not redo: error texts are formatted only on an error, a library wrapper's
layer is shared only under the exact form of its kwargs, a parsed id and a versions record are
kept per process (pure functions of what cannot change), kwargs of scalars are not walked for
code, and an entry point string is re-checked against its module on every capture.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import gymnasium
import pytest
from _helpers import GYMNASIUM_0X
from gymnasium.envs.registration import WrapperSpec, register, registry

import specpack
from specpack import UnexpectedKwargError, UnknownEnvError
from specpack._core._backends._args import check_kwargs
from specpack._core._capture import _memo
from specpack._core._carry.code import code_ref_from_string
from specpack._core._carry.ref import CodeRef, iter_carried
from specpack._core._provenance import distribution_of
from specpack._core._versions import current_versions

CARTPOLE = "gymnasium.envs.classic_control.cartpole:CartPoleEnv"
# A gymnasium wrapper with two numeric kwargs (0.28/0.29 has no ClipReward).
CLIP, LOW, HIGH = ("NormalizeReward", "epsilon", "gamma") if GYMNASIUM_0X else (
    "ClipReward", "min_reward", "max_reward")


def _first(target: str, **kwargs: Any) -> specpack.SpecPack:
    """A capture that no memo of identical captures serves."""
    _memo.clear()
    return specpack.capture(target, **kwargs)


def _register_clipped(ids: list[str], name: str, low: Any, high: Any) -> str:
    registry.pop(name, None)
    wrapper = WrapperSpec(CLIP, f"gymnasium.wrappers:{CLIP}", {LOW: low, HIGH: high})
    register(name, entry_point=CARTPOLE, additional_wrappers=(wrapper,))
    ids.append(name)
    return name


def test_library_wrappers_with_equal_kwargs_of_other_types_get_their_own_layers(
    ids: list[str],
) -> None:
    ints = _first(_register_clipped(ids, "FirstInts-v0", 0, 1))
    floats = _first(_register_clipped(ids, "FirstFloats-v0", 0.0, 1.0))
    negzero = _first(_register_clipped(ids, "FirstNegZero-v0", -0.0, 1.0))
    got = [{k: (type(v), repr(v)) for k, v in p.layers[0].kwargs.items()}
           for p in (ints, floats, negzero)]
    assert got == [
        {LOW: (int, "0"), HIGH: (int, "1")},
        {LOW: (float, "0.0"), HIGH: (float, "1.0")},
        {LOW: (float, "-0.0"), HIGH: (float, "1.0")},
    ]
    assert ints.fingerprint != floats.fingerprint != negzero.fingerprint


def test_a_library_wrapper_layer_keeps_the_order_of_its_kwargs(ids: list[str]) -> None:
    first = _first(_register_clipped(ids, "FirstOrder-v0", 0.5, 1.5))
    registry.pop("FirstOrder-v1", None)
    wrapper = WrapperSpec(CLIP, f"gymnasium.wrappers:{CLIP}", {HIGH: 1.5, LOW: 0.5})
    register("FirstOrder-v1", entry_point=CARTPOLE, additional_wrappers=(wrapper,))
    ids.append("FirstOrder-v1")
    second = _first("FirstOrder-v1")
    assert list(first.layers[0].kwargs) == [LOW, HIGH]
    assert list(second.layers[0].kwargs) == [HIGH, LOW]
    assert first.layers[0] == second.layers[0]  # equal as values


def test_a_wrapper_kwarg_its_class_cannot_take_is_still_named_with_the_env(
    ids: list[str],
) -> None:
    registry.pop("FirstBadWrapper-v0", None)
    wrapper = WrapperSpec(CLIP, f"gymnasium.wrappers:{CLIP}", {"no_such_kwarg": 1})
    register("FirstBadWrapper-v0", entry_point=CARTPOLE, additional_wrappers=(wrapper,))
    ids.append("FirstBadWrapper-v0")
    with pytest.raises(UnexpectedKwargError,
                       match=f"the wrapper {CLIP} of 'FirstBadWrapper-v0'.*no_such_kwarg"):
        _first("FirstBadWrapper-v0")


def test_an_env_kwarg_its_entry_point_cannot_take_is_still_named_with_the_options() -> None:
    with pytest.raises(UnexpectedKwargError, match="the env 'CartPole-v1'") as e:
        _first("CartPole-v1", max_episode_step=3)
    assert "max_episode_steps" in str(e.value)


def test_check_kwargs_formats_its_texts_only_on_an_error() -> None:
    asked: list[str] = []

    def what() -> str:
        asked.append("what")
        return "the thing"

    def options() -> tuple[str, ...]:
        asked.append("options")
        return ("render_modes",)

    def target(render_mode: str | None = None) -> None: ...

    check_kwargs(target, {"render_mode": None}, what, options)
    assert asked == []
    with pytest.raises(UnexpectedKwargError, match="the thing") as e:
        check_kwargs(target, {"render_modes": None}, what, options)
    assert asked == ["what", "options"]
    assert "capture option" in str(e.value)


def test_an_outdated_version_is_warned_about_at_every_first_capture(ids: list[str]) -> None:
    for name in ("FirstOld-v0", "FirstOld-v1"):
        registry.pop(name, None)
        register(name, entry_point=CARTPOLE)
        ids.append(name)
    for _ in range(2):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            _first("FirstOld-v0")
        assert any("out of date" in str(w.message) for w in seen)


def test_a_malformed_id_is_refused_at_every_capture() -> None:
    for _ in range(2):
        with pytest.raises(UnknownEnvError, match="not an env id"):
            _first("Not An Id!")


def test_a_parsed_id_follows_the_registry_not_the_parse(ids: list[str]) -> None:
    registry.pop("FirstParsed-v0", None)
    register("FirstParsed-v0", entry_point=CARTPOLE, max_episode_steps=5)
    ids.append("FirstParsed-v0")
    assert _first("FirstParsed-v0").max_episode_steps == 5
    registry.pop("FirstParsed-v0")
    register("FirstParsed-v0", entry_point=CARTPOLE, max_episode_steps=7)
    assert _first("FirstParsed-v0").max_episode_steps == 7
    registry.pop("FirstParsed-v0")
    with pytest.raises(UnknownEnvError):
        _first("FirstParsed-v0")


def test_an_entry_point_string_follows_its_module_attribute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = importlib.import_module(CARTPOLE.partition(":")[0])
    original = module.CartPoleEnv
    ref, obj = code_ref_from_string(CARTPOLE, by_value=None, what="entry point")
    assert obj is original

    class Replaced(original):  # type: ignore[misc, valid-type]
        pass

    monkeypatch.setattr(module, "CartPoleEnv", Replaced)
    ref2, obj2 = code_ref_from_string(CARTPOLE, by_value=None, what="entry point")
    assert obj2 is Replaced
    assert ref2 == ref  # the same reference: the name is what travels


def test_iter_carried_skips_only_what_holds_no_code() -> None:
    ref = CodeRef("json", "dumps")
    assert iter_carried({}) == []
    assert iter_carried({"a": 1, "b": "x", "c": None, "d": 1.5, "e": b"", "f": 1j}) == []
    assert iter_carried({"a": 1, "fn": ref}) == [ref]
    assert iter_carried({ref: 1}) == [ref]
    assert iter_carried({"a": [1, (ref,)]}) == [ref]
    assert iter_carried([ref]) == [ref]


def test_the_versions_record_is_current_read_only_and_each_packs_own() -> None:
    pack = _first("CartPole-v1")
    env = distribution_of(CARTPOLE.partition(":")[0])
    assert env == ("gymnasium", gymnasium.__version__)
    record = current_versions("gymnasium", env)
    assert record == dict(pack.versions)
    assert pack.versions["gymnasium"] == gymnasium.__version__
    with pytest.raises(TypeError):
        pack.versions["gymnasium"] = "0"  # type: ignore[index]
    record["gymnasium"] = "0"  # a new dict each time: the cached record is not written
    assert current_versions("gymnasium", env) == dict(pack.versions)
    assert _first("CartPole-v1").versions["gymnasium"] == gymnasium.__version__


def test_a_first_capture_equals_a_memoised_one_and_rebuilds() -> None:
    first = _first("CartPole-v1")
    again = specpack.capture("CartPole-v1")
    assert again is first
    other = _first("CartPole-v1")
    assert other is not first and other == first
    assert other.requires == first.requires and dict(other.versions) == dict(first.versions)
    assert [layer.name for layer in other.layers] == ["TimeLimit", "OrderEnforcing",
                                                      "PassiveEnvChecker"]
    env = other.make()
    try:
        assert env.unwrapped.spec.id == "CartPole-v1"
    finally:
        env.close()
