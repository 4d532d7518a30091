"""Exact parsing: a value that would change on the way in is refused, never coerced.

Numbers that overflow or underflow a float, array values their dtype cannot hold exactly,
``$int`` spellings other than the encoder's, sets and dicts whose members collapse or flood one
hash value. And the converse: whatever the encoder writes (ints up to the 4,000,000 bits a
pack carries, decimal up to 4,300 digits) is read back, whatever this interpreter's
``sys.set_int_max_str_digits``.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
import time
from collections.abc import Iterator
from typing import Any

import kwenvs
import numpy as np
import pytest
from _helpers import assert_same

import specpack
from specpack import PackFormatError, SpecPack
from specpack._core import _typedjson as typedjson
from specpack._core._typedjson.tags import read_json

COLLIDE = 2**61 - 1


def _manifest_with(value: Any) -> str:
    data = json.loads(specpack.capture("CartPole-v1").to_json())
    data["kwargs"] = {"x": value}
    return json.dumps(data)


def _refused(value: Any, reason: str) -> str:
    with pytest.raises(PackFormatError) as info:
        SpecPack.from_json(_manifest_with(value))
    assert reason in str(info.value), str(info.value)
    assert str(info.value).startswith("<manifest>: kwargs.x")
    return str(info.value)


@pytest.fixture
def int_str_limit() -> Iterator[None]:
    old = sys.get_int_max_str_digits()
    yield
    sys.set_int_max_str_digits(old)


# -- JSON numbers ------------------------------------------------------------------------


@pytest.mark.parametrize("literal, reason", [
    ("1e999999", "too large for a float"),
    ("-1e999999", "too large for a float"),
    ("1E400", "too large for a float"),
    ("1e-999999", "too small for a float"),
    ("2.5e-400", "too small for a float"),
    ("9" * 4301, "integer literal of 4301 digits"),
])
def test_json_numbers_a_float_or_int_would_change_are_refused(literal: str, reason: str) -> None:
    text = _manifest_with(0).replace('"x": 0', f'"x": {literal}')
    with pytest.raises(PackFormatError, match="invalid JSON") as info:
        SpecPack.from_json(text)
    assert reason in str(info.value)


def test_json_numbers_that_fit_are_read_exactly() -> None:
    assert read_json("[0.0, -0.0, 1e-300, 5e-324, 1.7976931348623157e308, 0e5, 12]") == [
        0.0, -0.0, 1e-300, 5e-324, 1.7976931348623157e308, 0.0, 12]
    assert math.copysign(1.0, read_json("-0.0")) == -1.0
    assert read_json("9" * 4300) == 10**4300 - 1


# -- $int --------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [
    "1_000_000_000_000_000_000", " 90071992547409930", "90071992547409930 ", "0X1FFFFFFFFFFFFF1",
    "0x1FFFFFFFFFFFFF1", "+-90071992547409930", "0x", "-", "", "\u0663" * 20, "0b1" + "0" * 60,
    "1e20", "0o7777777777777777777777",
])
def test_int_other_spellings_are_refused(body: str) -> None:
    _refused({"$int": body}, "is not an integer")


@pytest.mark.parametrize("value", [0, 1, -1, 2**53, -(2**53), 12345])
def test_int_within_2_53_must_be_a_plain_number(value: int) -> None:
    for body in (str(value), hex(value)):
        _refused({"$int": body}, "within ±2**53")
    assert typedjson.encode(value) == value  # control: the encoder writes it plain


@pytest.mark.parametrize("value", [2**53 + 1, -(2**53) - 1, 2**64 - 1, 7**6000, -(7**6000)],
                         ids=["2**53+1", "-2**53-1", "2**64-1", "7**6000", "-7**6000"])
def test_int_beyond_2_53_round_trips_in_the_encoders_spelling(value: int) -> None:
    node = typedjson.encode(value)
    assert type(node) is dict and set(node) == {"$int"}
    back = SpecPack.from_json(_manifest_with(node))._kwargs["x"]
    assert back == value and type(back) is int
    assert "+0x" not in _manifest_with(node)


def test_int_decimal_up_to_4300_digits_and_hex_beyond() -> None:
    assert typedjson.encode(10**4299)["$int"] == "1" + "0" * 4299
    assert typedjson.encode(10**4300)["$int"].startswith("0x")
    SpecPack.from_json(_manifest_with({"$int": "9" * 4300}))
    _refused({"$int": "9" * 4301}, "more than 4300 decimal digits")
    SpecPack.from_json(_manifest_with({"$int": "0x" + "f" * 1_000_000}))
    _refused({"$int": "0x" + "f" * 1_000_001}, "hex digits")
    _refused({"$int": "0x" + "f" * 2_000_000}, "characters")


def test_int_spelling_does_not_depend_on_the_interpreters_str_limit(int_str_limit: None) -> None:
    value = -(10**4299) - 7
    text = specpack.capture(kwenvs.KwCartPole, x=value).to_json()
    sys.set_int_max_str_digits(640)  # Python's lowest limit
    pack = specpack.capture(kwenvs.KwCartPole, x=value)
    assert pack.to_json() == text  # the same decimal spelling, so the same fingerprint
    assert SpecPack.from_json(text)._kwargs["x"] == value


@pytest.mark.parametrize("bits", [400_001, 4_000_000])
def test_largest_ints_a_pack_carries_round_trip_through_a_file(tmp_path: Any, bits: int) -> None:
    for value in (1 << (bits - 1), -((1 << bits) - 1)):
        pack = specpack.capture(kwenvs.KwCartPole, x=value)
        path = tmp_path / "big.specpack"
        specpack.dump(pack, path)
        start = time.thread_time()  # CPU time: load stretches the wall clock, not work
        loaded = specpack.load(path)
        assert time.thread_time() - start < 5
        assert loaded._kwargs["x"] == value and loaded.fingerprint == pack.fingerprint
    too_big = 1 << 4_000_000  # one bit more: refused at capture, and never written
    with pytest.raises(specpack.UncarriableValueError, match="4000000 bits"):
        specpack.capture(kwenvs.KwCartPole, x=too_big)
    with pytest.raises(PackFormatError, match="4000001 bits"):
        typedjson.encode(too_big)


def test_int_one_shifted_400000_round_trips(tmp_path: Any) -> None:
    value = 1 << 400_000
    pack = specpack.capture(kwenvs.KwCartPole, x=value)
    path = tmp_path / "p.specpack"
    specpack.dump(pack, path)
    assert specpack.load(path)._kwargs["x"] == value


# -- floats, complex -----------------------------------------------------------------------


@pytest.mark.parametrize("body", ["NaN", "Infinity", "1.5", "-nan", "+inf", "", "nan "])
def test_float_tag_holds_only_nan_inf_and_minus_inf(body: str) -> None:
    _refused({"$float": body}, "$float must be")


def test_complex_parts_must_be_exact_floats() -> None:
    _refused({"$complex": [2**53 + 1, 0]}, "no exact float value")
    _refused({"$complex": [True, 0]}, "expected a number")
    got = SpecPack.from_json(_manifest_with({"$complex": [1, {"$float": "-inf"}]}))._kwargs["x"]
    assert_same(got, complex(1.0, -math.inf))


def test_plain_non_finite_floats_handed_to_decode_are_refused() -> None:
    for bad in (math.nan, math.inf, [1.0, -math.inf]):
        with pytest.raises(PackFormatError, match=r"\$float"):
            typedjson.decode(bad)


# -- arrays ------------------------------------------------------------------------------


def _array(dtype: str, values: list[Any]) -> dict[str, Any]:
    return {"$ndarray": {"dtype": dtype, "shape": [len(values)], "values": values}}


@pytest.mark.parametrize("dtype, values, reason", [
    ("<i4", [1.5], "must be integers"),
    ("<i4", [1.0], "must be integers"),
    ("<i4", [True], "must be integers"),
    ("|i1", [300], "out of bounds"),
    ("|i1", [-129], "out of bounds"),
    ("<u8", [-1], "out of bounds"),
    ("<u8", [{"$int": str(2**64)}], "invalid array"),
    ("<f4", [1e300], "overflow"),
    ("<f4", [0.1], "does not fit dtype <f4 exactly"),
    ("<f2", [70000.0], "overflow"),
    ("<f8", [2**53 + 1], "does not fit dtype <f8 exactly"),
    ("|b1", [1], "true/false"),
    ("|b1", [0.0], "true/false"),
    ("<f8", [1.0, "2"], "must be numbers"),
    ("<i8", [{"$int": "12"}], "within ±2**53"),
])
def test_array_values_that_would_change_in_the_dtype_are_refused(
        dtype: str, values: list[Any], reason: str) -> None:
    _refused(_array(dtype, values), reason)


@pytest.mark.parametrize("dtype, values", [
    ("<f4", [0.5, -0.0, 0.10000000149011612, {"$float": "nan"}, {"$float": "-inf"}]),
    ("<f2", [65504.0, -0.0]),
    (">f8", [1, 2**53, 1e308]),
    ("<u8", [{"$int": str(2**64 - 1)}, 0]),
    ("|i1", [-128, 127]),
    ("|b1", [True, False]),
])
def test_array_values_the_dtype_holds_exactly_are_read(dtype: str, values: list[Any]) -> None:
    arr = SpecPack.from_json(_manifest_with(_array(dtype, values)))._kwargs["x"]
    assert arr.dtype == np.dtype(dtype)
    again = SpecPack.from_json(_manifest_with(typedjson.encode(arr)))._kwargs["x"]
    assert_same(again, arr)
    if dtype == "<f4":
        assert np.signbit(arr[1]) and np.isnan(arr[3])


def test_scalar_value_out_of_its_dtype_is_refused() -> None:
    _refused({"$npscalar": {"dtype": "|u1", "value": 256}}, "out of bounds")
    _refused({"$npscalar": {"dtype": "<f4", "value": 0.1}}, "exactly")


# -- sets and dicts ----------------------------------------------------------------------


def _timed(value: Any, reason: str) -> float:
    text = _manifest_with(value)
    start = time.thread_time()  # CPU time: load stretches the wall clock, not work
    _refused_text(text, reason)
    return time.thread_time() - start


def _refused_text(text: str, reason: str) -> None:
    with pytest.raises(PackFormatError, match="hash-collision flood") as info:
        SpecPack.from_json(text)
    assert reason in str(info.value)


@pytest.mark.parametrize("shape", ["$set", "$frozenset of tuples", "$dict"])
def test_60k_members_with_one_hash_are_refused_in_linear_time(shape: str) -> None:
    ints = [{"$int": str(k * COLLIDE)} for k in range(1, 60_001)]
    assert len({hash(k * COLLIDE) for k in range(1, 100)}) == 1  # they do collide
    value = {
        "$set": {"$set": ints},
        "$frozenset of tuples": {"$frozenset": [{"$tuple": [v]} for v in ints]},
        "$dict": {"$dict": [[v, 0] for v in ints]},
    }[shape]
    assert _timed(value, "60000") < 5


def test_a_few_colliding_members_are_fine() -> None:
    ints = [k * COLLIDE for k in range(1, 31)]
    node = typedjson.encode(set(ints))
    assert SpecPack.from_json(_manifest_with(node))._kwargs["x"] == set(ints)


@pytest.mark.parametrize("value, reason", [
    ({"$set": [1, 1]}, "equal members twice"),
    ({"$set": [1, 1.0]}, "equal members twice"),
    ({"$frozenset": [1, True]}, "equal members twice"),
    ({"$dict": [[1, "a"], [1.0, "b"]]}, "one key twice"),
    ({"$dict": [[{"$tuple": [1]}, "a"], [{"$tuple": [1]}, "b"]]}, "one key twice"),
])
def test_members_that_collapse_are_refused(value: Any, reason: str) -> None:
    _refused(value, reason)


@pytest.mark.parametrize("value", [{"$dict": []}, {"$dict": [["a", 1], ["b", 2]]}])
def test_dict_tag_with_plain_string_keys_is_refused(value: Any) -> None:
    _refused(value, "must be a plain JSON object")


def test_dict_tag_is_read_when_a_key_needs_it() -> None:
    node = {"$dict": [["a", 1], ["$ref", 2], [3, 4]]}
    assert SpecPack.from_json(_manifest_with(node))._kwargs["x"] == {"a": 1, "$ref": 2, 3: 4}
    nans = typedjson.encode({float("nan"), float("nan")})  # two nan objects: a set of two
    assert len(SpecPack.from_json(_manifest_with(nans))._kwargs["x"]) == 2


# -- errors ------------------------------------------------------------------------------


def test_decoding_errors_name_the_place_lazily_and_boundedly() -> None:
    key = "K" * 100_000
    value = {key: [0] * 40_000 + [{"$int": "1"}]}
    start = time.thread_time()  # CPU time: load stretches the wall clock, not work
    with pytest.raises(PackFormatError) as info:
        SpecPack.from_json(_manifest_with(value))
    assert time.thread_time() - start < 5
    text = str(info.value)
    assert len(text) < 1000 and "kwargs.x.KKKK" in text and "[40000]" in text


def test_memory_and_recursion_errors_while_decoding_become_pack_format_errors(
        monkeypatch: pytest.MonkeyPatch) -> None:
    decode_module = importlib.import_module("specpack._core._typedjson.decode")
    text = _manifest_with({"$tuple": [1]})
    for exc in (MemoryError, RecursionError, OverflowError):
        def boom(*args: Any, exc: type[BaseException] = exc) -> Any:
            raise exc()

        with monkeypatch.context() as m:
            m.setattr(decode_module.Decoder, "_sequence", boom)
            with pytest.raises(PackFormatError, match=rf"^<manifest>: .*{exc.__name__}"):
                SpecPack.from_json(text)
            with pytest.raises(PackFormatError, match=exc.__name__):
                typedjson.decode({"$tuple": [1]})
    assert SpecPack.from_json(text)._kwargs["x"] == (1,)  # control


@pytest.mark.parametrize("text", ["é\ud800", "\udfff😀 ünï", "\udcff\ud800", "ascii"])
def test_strings_with_lone_surrogates_and_non_ascii_round_trip(tmp_path: Any, text: str) -> None:
    pack = specpack.capture(kwenvs.KwCartPole, s=text, **{text: 1})
    path = tmp_path / "s.specpack"
    specpack.dump(pack, path)
    path.read_bytes().decode("utf-8")  # the file is UTF-8
    for again in (specpack.load(path), SpecPack.from_json(pack.to_json()),
                  SpecPack.from_json(pack.to_json().encode("utf-8"))):
        assert again._kwargs["s"] == text and again.fingerprint == pack.fingerprint
    if text.isascii() or ("\ud800" not in text and "\udfff" not in text):
        assert "\\u" not in pack.to_json()  # written as itself unless it cannot be


def test_a_surrogate_pair_as_two_code_points_is_not_written(tmp_path: Any) -> None:
    pack = specpack.capture(kwenvs.KwCartPole, s="\ud83d\ude00")  # JSON would read one char
    with pytest.raises(PackFormatError, match="surrogate pair"):
        specpack.dump(pack, tmp_path / "s.specpack")
    assert not list(tmp_path.iterdir())
