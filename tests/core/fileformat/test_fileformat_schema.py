"""Manifest fields of the wrong type are refused at load, naming the field's place (#13).

A hand-edited ``"max_episode_steps": "500"`` must not load and then fail (or misbehave) inside
gymnasium: it is a PackFormatError naming ``layers[0].kwargs.max_episode_steps``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _helpers import TIME_LIMIT_REF

import specpack
from specpack import PackFormatError, SpecPack


def _cartpole() -> dict[str, Any]:
    return json.loads(specpack.capture("CartPole-v1", max_episode_steps=20).to_json())


def test_time_limit_steps_as_a_string_names_the_layer_field(tmp_path: Path) -> None:
    data = _cartpole()
    assert data["layers"][0]["class"] == {"$ref": TIME_LIMIT_REF}
    data["layers"][0]["kwargs"]["max_episode_steps"] = "500"
    path = tmp_path / "edited.specpack"
    path.write_text(json.dumps(data))
    for call in (lambda: specpack.load(path), lambda: specpack.files.describe(path),
                 lambda: SpecPack.from_json(json.dumps(data))):
        with pytest.raises(PackFormatError) as info:
            call()
        assert ("layers[0].kwargs.max_episode_steps must be a positive int, got str '500'"
                in str(info.value)), str(info.value)
    data["layers"][0]["kwargs"]["max_episode_steps"] = 500  # control: an int loads
    assert SpecPack.from_json(json.dumps(data)).max_episode_steps == 500


@pytest.mark.parametrize("value", ["500", 0, -3, 1.5, True, None, {"$int": str(2**60)},
                                   {"$npscalar": {"dtype": "<i8", "value": 5}}])
def test_time_limit_steps_must_be_a_positive_int(value: Any) -> None:
    data = _cartpole()
    data["layers"][0]["kwargs"]["max_episode_steps"] = value
    try:
        SpecPack.from_json(json.dumps(data))
    except PackFormatError as e:
        assert "layers[0].kwargs.max_episode_steps must be a positive int" in str(e)
    else:
        assert value == {"$int": str(2**60)}  # a big int is an int


def test_order_enforcing_flag_must_be_a_bool() -> None:
    data = _cartpole()
    assert data["layers"][1]["class"]["$ref"].endswith(":OrderEnforcing")
    data["layers"][1]["kwargs"]["disable_render_order_enforcing"] = "no"
    with pytest.raises(PackFormatError,
                       match=r"layers\[1\]\.kwargs\.disable_render_order_enforcing must be "
                             "true or false"):
        SpecPack.from_json(json.dumps(data))


@pytest.mark.parametrize("field, value, expected", [
    ("id", 5, "a string"),
    ("id", None, "a string"),
    ("reward_threshold", "475", "a number or null"),
    ("reward_threshold", True, "a number or null"),
    ("nondeterministic", 1, "true or false"),
    ("max_episode_steps", "500", "an int or null"),
    ("max_episode_steps", 2.0, "an int or null"),
    ("order_enforce", "yes", "true or false"),
    ("disable_env_checker", None, "true or false"),
    ("entry_point", {"$ref": "math:tanh"}, "a string or null"),
    ("vector_entry_point", 3, "a string or null"),
    ("additional_wrappers", "W", "a tuple of (name, entry_point, kwargs)"),
    ("additional_wrappers", {"$tuple": [{"$tuple": ["W", "m:W"]}]}, "(name, entry_point"),
    ("additional_wrappers", {"$tuple": [{"$tuple": [1, "m:W", None]}]}, "a string"),
    ("additional_wrappers", {"$tuple": [{"$tuple": ["W", "m:W", 5]}]}, "string keys or null"),
])
def test_spec_fields_of_the_wrong_type_name_the_field(field: str, value: Any,
                                                      expected: str) -> None:
    data = _cartpole()
    data["spec"][field] = value
    with pytest.raises(PackFormatError) as info:
        SpecPack.from_json(json.dumps(data))
    text = str(info.value)
    assert f"spec.{field}" in text and expected in text, text


@pytest.mark.parametrize("field, value", [
    ("reward_threshold", 475), ("reward_threshold", None),
    ("reward_threshold", {"$npscalar": {"dtype": "<f4", "value": 0.5}}),
    ("max_episode_steps", None), ("max_episode_steps", 10), ("nondeterministic", True),
    ("entry_point", None), ("entry_point", "kwenvs:KwCartPole"),
    ("additional_wrappers", {"$tuple": [{"$tuple": ["W", "m:W", None]}]}),
    ("additional_wrappers", {"$tuple": [{"$tuple": ["W", "m:W", {"k": 1}]}]}),
])
def test_spec_fields_of_the_right_type_load(field: str, value: Any) -> None:
    data = _cartpole()
    data["spec"][field] = value
    pack = SpecPack.from_json(json.dumps(data))
    got = pack.spec[field]
    assert got == value or isinstance(got, (tuple, np.floating))


def test_captured_specs_pass_their_own_checks() -> None:
    for pack in (specpack.capture("CartPole-v1"), specpack.capture("kwenvs:KwCartPole-v0", a=1),
                 specpack.capture("CartPole-v1", max_episode_steps=7,
                                  disable_env_checker=False),
                 specpack.capture(specpack.capture("Pendulum-v1").make())):
        assert SpecPack.from_json(pack.to_json()) == pack
