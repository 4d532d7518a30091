"""The typed JSON manifest: exact round trips (JSON and pickle), stable fingerprints, and a
decoder that turns every malformed manifest into a PackFormatError.

The property tests draw kwargs trees of every type the manifest carries; together they run
2,300 examples (see the ``max_examples`` of each). ``assert_same`` is the strict comparison
used throughout: same types at every level, floats compared by their encoded form (so ``-0.0``
stays ``-0.0`` and ``nan`` matches ``nan``), arrays by dtype (with byte order), shape and
values.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import enum
import fractions
import http
import json
import math
import os
import pickle
import re
import sys
import warnings
from typing import Any

import gymnasium
import kwenvs
import numpy as np
import pytest
from _helpers import assert_same
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import specpack
from specpack import Blob, CodeRef, EnumRef, PackFormatError, SpecPack, SpecPackError
from specpack._core import _typedjson as typedjson

PROPERTY = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)


# -- strict comparison ------------------------------------------------------------------------


def same_encoding(a: SpecPack, b: SpecPack) -> None:
    assert a.fingerprint == b.fingerprint


# -- strategies -------------------------------------------------------------------------------


class Colour(enum.Enum):
    """An enum of a module a fresh interpreter cannot import: it travels by value."""

    RED = 1
    GREEN = 2


class KwEnv(CartPoleEnv):
    """CartPole taking any kwargs: a vessel for kwargs of every kind (travels by value)."""

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        super().__init__(render_mode=render_mode)


def _double(x: float) -> float:
    """A function of this (non-importable) module: it travels by value."""
    return 2 * x


_BY_VALUE = specpack.capture(KwEnv, f=_double)._kwargs["f"]
assert _BY_VALUE.by_value
_BLOB = specpack.capture(KwEnv, o=fractions.Fraction(2, 3))._kwargs["o"]
assert type(_BLOB) is Blob

NATIVE_SCALARS = ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1",
                  "c8", "c16"]
ARRAY_DTYPES = ["<f4", ">f4", "<f8", ">f8", "<f2", "|i1", "<i2", ">i4", "<i8", "|u1", ">u2",
                "<u4", ">u8", "|b1", "<c8", ">c16", "<U3", "|S2", "<M8[s]", ">m8[ms]",
                [("a", "<i4"), ("b", ">f8")]]

floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [-0.0, 0.0, math.nan, -math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308])
big_ints = st.integers() | st.integers(min_value=-(2**300), max_value=2**300) | st.sampled_from(
    [2**53, 2**53 + 1, -(2**53) - 1, 2**63, 2**64 - 1])
texts = st.text(max_size=6) | st.sampled_from(["$ref", "$tuple", "$", "name", "ünï", ""])
np_scalars = st.sampled_from(NATIVE_SCALARS).flatmap(
    lambda d: hnp.from_dtype(np.dtype(d)).map(np.dtype(d).type))
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
arrays = (
    st.sampled_from(ARRAY_DTYPES).flatmap(lambda d: hnp.arrays(np.dtype(d), shapes))
    | st.lists(st.floats(), max_size=4).map(lambda v: np.array(v, dtype=np.longdouble))
    | st.binary(min_size=6, max_size=6).map(lambda b: np.frombuffer(b, dtype="|V3").copy())
)
enums = st.sampled_from([http.HTTPStatus.OK, http.HTTPStatus.NOT_FOUND, re.IGNORECASE,
                         re.IGNORECASE | re.MULTILINE, re.RegexFlag(0), Colour.RED])
code = st.sampled_from([math.sqrt, os.path.join, collections.OrderedDict, np.float32,
                        gymnasium.spaces.Box, _BY_VALUE, _double, json.dumps])
objects = st.sampled_from([fractions.Fraction(1, 3), decimal.Decimal("1.10"),
                           datetime.date(2024, 2, 29), collections.OrderedDict(a=1),
                           collections.Counter("aab"), _BLOB])
hashable_leaves = (st.none() | st.booleans() | big_ints
                   | st.floats(allow_nan=False) | texts | st.binary(max_size=4)
                   | st.sampled_from([http.HTTPStatus.OK, re.IGNORECASE, -0.0])
                   | st.complex_numbers(allow_nan=False, max_magnitude=1e6))
hashables = st.recursive(
    hashable_leaves,
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=4,
)
leaves = (st.none() | st.booleans() | big_ints | floats | texts | st.binary(max_size=6)
          | st.complex_numbers() | np_scalars | arrays | enums | code | objects)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.sets(hashables, max_size=3)
        | st.frozensets(hashables, max_size=3)
        | st.dictionaries(texts, inner, max_size=3)
        | st.dictionaries(hashables, inner, max_size=3)
    )


trees = st.recursive(leaves, _containers, max_leaves=12)
kwargs_trees = st.dictionaries(st.text(max_size=5), trees, max_size=4)


# -- property tests: 1000 + 600 + 200 + 500 = 2300 examples ----------------------------------


@settings(PROPERTY, max_examples=400)
@given(kwargs=kwargs_trees)
def test_json_round_trip_keeps_fingerprint_values_and_types(kwargs: dict[str, Any]) -> None:
    pack = specpack.capture(KwEnv, **kwargs)
    text = pack.to_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    again = SpecPack.from_json(text, trust=True)
    assert again.fingerprint == pack.fingerprint
    assert_same(again._kwargs, pack._kwargs, "lowered kwargs")
    assert_same(dict(again.kwargs), dict(pack.kwargs), "kwargs")
    assert again.to_json() == text


@settings(PROPERTY, max_examples=300)
@given(kwargs=kwargs_trees)
def test_pickle_round_trip_keeps_fingerprint_values_and_types(kwargs: dict[str, Any]) -> None:
    pack = specpack.capture(KwEnv, **kwargs)
    for p in (pack, SpecPack.from_json(pack.to_json(), trust=True)):
        again = pickle.loads(pickle.dumps(p))
        assert again.fingerprint == pack.fingerprint
        assert_same(again._kwargs, pack._kwargs, "lowered kwargs")
        assert_same(dict(again.kwargs), dict(pack.kwargs), "kwargs")


@settings(PROPERTY, max_examples=200)
@given(kwargs=kwargs_trees)
def test_value_encoding_is_stable_under_decode(kwargs: dict[str, Any]) -> None:
    lowered = specpack.capture(KwEnv, **kwargs)._kwargs
    payloads: dict[str, Any] = {}
    node = typedjson.encode(lowered, payloads)
    back = typedjson.decode(json.loads(json.dumps(node)), payloads)
    assert_same(back, lowered)
    assert typedjson.encode(back, canonical=True) == typedjson.encode(lowered,
                                                                          canonical=True)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                          allow_infinity=False) | texts,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(texts, inner, max_size=3)
        | st.builds(lambda tag, body: {tag: body},
                    st.sampled_from(["$int", "$float", "$bytes", "$complex", "$tuple", "$set",
                                     "$frozenset", "$dict", "$ndarray", "$npscalar", "$enum",
                                     "$ref", "$code", "$object", "$nope"]), inner)
    ),
    max_leaves=10,
)


@settings(PROPERTY, max_examples=500)
@given(kwargs=json_values, layers=json_values, entry=json_values)
def test_arbitrary_json_in_a_manifest_decodes_or_raises_pack_format_error(
    kwargs: Any, layers: Any, entry: Any
) -> None:
    data = json.loads(specpack.capture("CartPole-v1").to_json())
    data["kwargs"] = {"k": kwargs}
    data["layers"] = [{"class": entry, "kwargs": {"v": layers}}]
    try:
        pack = SpecPack.from_json(json.dumps(data), trust=True)
    except PackFormatError:
        return
    assert SpecPack.from_json(pack.to_json(), trust=True).fingerprint == pack.fingerprint


# -- the types, one by one --------------------------------------------------------------------


EXAMPLES = {
    "none": None,
    "true": True,
    "big int": 2**100,
    "negative big int": -(2**64) - 5,
    "int beyond str conversion": 7**6000,
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "-0.0": -0.0,
    "str": "ünïcode \n \x00",
    "bytes": b"\x00\xff\x7f",
    "tuple": (1, (2.0, "3")),
    "list": [1, [2]],
    "set": {1, "a", (2, 3)},
    "frozenset": frozenset({b"x", None}),
    "dict with non-str keys": {1: "int", (1, 2): "tuple", None: "none", 2.5: "float",
                               frozenset({1}): "fs", False: "bool"},
    "dict with $-keys": {"$ref": "os:system", "$x": 1},
    "float32 array": np.arange(6, dtype=np.float32).reshape(2, 3),
    "big-endian array": np.array([[1.5, -0.0, np.nan]], dtype=">f8"),
    "uint64 array": np.array([2**64 - 1, 0], dtype="<u8"),
    "0-d array": np.array(3, dtype=np.int16),
    "empty array": np.zeros((0, 4), dtype=np.float32),
    "fortran array": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    "str array": np.array(["ab", "c"]),
    "structured array": np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", ">f8")]),
    "complex array": np.array([1 + 2j], dtype=np.complex64),
    "longdouble array": np.array([0.1], dtype=np.longdouble),
    "float32 scalar": np.float32(0.1),
    "int64 scalar": np.int64(-3),
    "uint64 scalar": np.uint64(2**64 - 1),
    "bool scalar": np.bool_(False),
    "datetime scalar": np.datetime64("2020-01-01T12:00"),
    "float16 nan scalar": np.float16("nan"),
    "enum member": http.HTTPStatus.NOT_FOUND,
    "flag combination": re.IGNORECASE | re.MULTILINE,
    "class by reference": collections.OrderedDict,
    "function by reference": math.sqrt,
    "numpy class by reference": np.float32,
    "function by value": _double,
    "object by value": fractions.Fraction(1, 3),
    "local enum by value": Colour.GREEN,
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_each_manifest_type_round_trips_exactly(name: str) -> None:
    value = EXAMPLES[name]
    pack = specpack.capture(KwEnv, x=value)
    again = SpecPack.from_json(pack.to_json(), trust=True)
    assert again.fingerprint == pack.fingerprint
    assert_same(again._kwargs, pack._kwargs)
    got = again.kwargs["x"]
    assert_same(got, pack.kwargs["x"])
    assert_same(pickle.loads(pickle.dumps(again)).kwargs["x"], got)
    if value is not _double:  # by-value code comes back as a copy rebuilt from its payload
        assert_same(got, value)


def test_minus_zero_and_nan_survive_with_their_identity() -> None:
    pack = specpack.capture(KwEnv, z=-0.0, n=math.nan, a=np.array([-0.0, np.nan]))
    got = SpecPack.from_json(pack.to_json(), trust=True).kwargs
    assert math.copysign(1.0, got["z"]) == -1.0
    assert math.isnan(got["n"])
    assert math.copysign(1.0, float(got["a"][0])) == -1.0 and np.isnan(got["a"][1])
    # nan != nan, so compare through the encoded form (what the fingerprint hashes)
    assert typedjson.encode(got["n"]) == {"$float": "nan"}


def test_types_that_compare_equal_still_get_different_fingerprints() -> None:
    fps = {name: specpack.capture(KwEnv, x=v).fingerprint for name, v in {
        "int 1": 1, "float 1.0": 1.0, "True": True, "float32 1": np.float32(1),
        "0.0": 0.0, "-0.0": -0.0, "tuple": (1,), "list": [1], "set": {1},
        "frozenset": frozenset({1}), "f4 array": np.ones(2, "<f4"),
        "f8 array": np.ones(2, "<f8"), ">f4 array": np.ones(2, ">f4"),
        "(2,1) array": np.ones((2, 1), "<f4"),
    }.items()}
    assert len(set(fps.values())) == len(fps), fps


def test_fingerprint_ignores_insertion_order_of_dicts() -> None:
    a = specpack.capture(KwEnv, x={1: "a", 2: "b"}, y={"p": 1, "q": 2})
    b = specpack.capture(KwEnv, y={"q": 2, "p": 1}, x={2: "b", 1: "a"})
    assert a.fingerprint == b.fingerprint


def test_decoding_keeps_references_lazy() -> None:
    pack = specpack.capture(KwEnv, s=http.HTTPStatus.OK, f=math.sqrt, g=_double,
                            o=fractions.Fraction(1, 2))
    again = SpecPack.from_json(pack.to_json(), trust=True)
    kw = again._kwargs
    assert type(kw["s"]) is EnumRef
    assert type(kw["f"]) is CodeRef and not kw["f"].by_value and kw["f"]._obj is None
    assert type(kw["g"]) is CodeRef and kw["g"].by_value and kw["g"]._obj is None
    assert type(kw["o"]) is Blob


def test_manifest_marks_payloads_as_code_with_size_and_digest() -> None:
    data = json.loads(specpack.capture(kwenvs.KwCartPole, g=_double).to_json())
    [(digest, entry)] = data["payloads"].items()
    assert data["kwargs"]["g"] == {"$code": digest}
    assert entry["kind"] == "code" and entry["name"].endswith(":_double")
    assert entry["size"] > 0 and entry["digest"] == digest and "executes" in entry["note"]


# -- hand edits and version records -----------------------------------------------------------


def _cartpole_manifest() -> dict[str, Any]:
    return json.loads(specpack.capture("CartPole-v1", max_episode_steps=20).to_json())


def test_hand_edited_manifest_is_accepted_and_fingerprinted_anew() -> None:
    data = _cartpole_manifest()
    data["layers"][0]["kwargs"]["max_episode_steps"] = 7
    pack = SpecPack.from_json(json.dumps(data), trust=True)
    assert pack.max_episode_steps == 7
    assert pack.fingerprint != data["fingerprint"]
    del data["fingerprint"], data["notes"]
    assert SpecPack.from_json(json.dumps(data), trust=True).max_episode_steps == 7


def test_edited_gymnasium_version_warns_version_skew_on_make() -> None:
    data = _cartpole_manifest()
    with warnings.catch_warnings():
        warnings.simplefilter("error", specpack.VersionSkewWarning)
        SpecPack.from_json(json.dumps(data), trust=True).make().close()  # control: no warning
    data["versions"]["gymnasium"] = "0.99.0"
    pack = SpecPack.from_json(json.dumps(data), trust=True)
    with pytest.warns(specpack.VersionSkewWarning) as record:
        pack.make().close()
    text = str(record[0].message)
    assert "0.99.0" in text and gymnasium.__version__ in text


def test_edited_python_version_of_by_value_code_raises_a_clear_error() -> None:
    class OnlyHere(gymnasium.Env):  # local: travels by value, loaded by no other test
        observation_space = gymnasium.spaces.Discrete(2)
        action_space = gymnasium.spaces.Discrete(2)

    data = json.loads(specpack.capture(OnlyHere).to_json())
    [entry] = data["payloads"].values()
    assert entry["python"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    entry["python"] = "3.2"
    pack = SpecPack.from_json(json.dumps(data), trust=True)
    with pytest.raises(specpack.BuildError, match=r"Python 3\.2.*Python 3\.\d+"):
        pack.make()


# -- malformed manifests ----------------------------------------------------------------------


def _edit(path: str, value: Any) -> str:
    data = _cartpole_manifest()
    node: Any = data
    keys = path.split("/")
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    last = keys[-1]
    if value is _DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return json.dumps(data)


_DELETE = object()
_BAD_A = {"$ndarray": {"dtype": "<f4", "shape": [2], "values": [1.0]}}

MALFORMED = {
    "empty": ("", "empty manifest"),
    "blank": ("  \n\t ", "empty manifest"),
    "not json": ("{not json", "invalid JSON"),
    "json list": ("[1, 2]", "JSON object"),
    "json string": ('"specpack"', "JSON object"),
    "NaN literal": ('{"format": NaN}', "non-standard JSON constant NaN"),
    "duplicate key": ('{"format": "specpack/1", "format": "specpack/1"}', "duplicate key"),
    "deep nesting": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "deep object nesting": ('{"a":' * 50_000 + "1" + "}" * 50_000, "nested"),
    "future format": (_edit("format", "specpack/2"), "unknown format version 'specpack/2'"),
    "foreign format": (_edit("format", "other/1"), "not a specpack manifest"),
    "missing kwargs": (_edit("kwargs", _DELETE), "missing field 'kwargs'"),
    "kwargs a list": (_edit("kwargs", []), "field 'kwargs' must be a JSON object"),
    "unknown field": (_edit("extra", 1), "unknown field"),
    "bad backend": (_edit("backend", "torch"), "unknown backend"),
    "id a number": (_edit("id", 3), "field 'id' must be a string"),
    "versions not strings": (_edit("versions/numpy", 2), "version strings"),
    "notes not strings": (_edit("notes", [1]), "notes"),
    "unknown tag": (_edit("kwargs/x", {"$eval": "1"}), "unknown type tag '$eval'"),
    "two tags": (_edit("kwargs/x", {"$int": "1", "$float": "nan"}), "more than one type tag"),
    "bad $int": (_edit("kwargs/x", {"$int": "12a"}), "is not an integer"),
    "bad $float": (_edit("kwargs/x", {"$float": "1.5"}), "$float must be"),
    "bad base64": (_edit("kwargs/x", {"$bytes": "!!"}), "invalid base64"),
    "$tuple not list": (_edit("kwargs/x", {"$tuple": 3}), "$tuple must hold a list"),
    "unhashable set item": (_edit("kwargs/x", {"$set": [[1]]}), "not hashable"),
    "unhashable dict key": (_edit("kwargs/x", {"$dict": [[[1], 2]]}), "not hashable"),
    "bad dict pair": (_edit("kwargs/x", {"$dict": [[1]]}), "[key, value] pairs"),
    "bad $ref": (_edit("entry_point", {"$ref": "os.system"}), "not of the form"),
    "relative $ref": (_edit("entry_point", {"$ref": ".evil:x"}), "not of the form"),
    "entry not code": (_edit("entry_point", {"$tuple": []}), "entry_point must be a $ref"),
    "unknown payload": (_edit("entry_point", {"$code": "sha256:" + "0" * 64}),
                        "not in the payloads table"),
    "payload bad digest": (_edit("payloads", {"sha256:" + "0" * 64: {
        "kind": "code", "name": "m:f", "data": "AAAA"}}), "payload was altered"),
    "payload bad key": (_edit("payloads", {"x": {}}), "64 hex digits"),
    "object array": (_edit("kwargs/x", {"$ndarray": {"dtype": "|O", "shape": [1],
                                                     "base64": "AAAAAAAAAAA="}}),
                     "object arrays"),
    "array value count": (_edit("kwargs/x", _BAD_A), "expected a list of 2 values"),
    "array missing dtype": (_edit("kwargs/x", {"$ndarray": {"shape": [0], "values": []}}),
                            "needs a 'dtype'"),
    "array bad dtype": (_edit("kwargs/x", {"$ndarray": {"dtype": "<zz", "shape": [0],
                                                        "values": []}}), "invalid dtype"),
    "array huge shape": (_edit("kwargs/x", {"$ndarray": {"dtype": "<f8", "shape": [10**9, 10**9],
                                                         "values": []}}), "too large"),
    "array negative shape": (_edit("kwargs/x", {"$ndarray": {"dtype": "<f8", "shape": [-1],
                                                             "values": []}}), "invalid shape"),
    "array wrong byte count": (_edit("kwargs/x", {"$ndarray": {"dtype": "<U2", "shape": [1],
                                                               "base64": "AAAA"}}),
                               "expected 8"),
    "array text values": (_edit("kwargs/x", {"$ndarray": {"dtype": "<f4", "shape": [1],
                                                          "values": ["1"]}}), "numbers"),
    "layer shape": (_edit("layers/0", {"class": {"$ref": "a:B"}}), "'class' and 'kwargs'"),
    "deep tuple nesting": (
        _edit("kwargs/x", json.loads('{"$tuple": [' * 300 + "1" + "]}" * 300)), "nested"),
    "enum without name": (_edit("kwargs/x", {"$enum": "http:HTTPStatus"}), "'name' string"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_manifest_raises_pack_format_error_naming_the_reason(name: str) -> None:
    text, reason = MALFORMED[name]
    with pytest.raises(PackFormatError) as info:
        SpecPack.from_json(text, trust=True)
    assert reason in str(info.value)
    assert str(info.value).startswith("<manifest>")


def test_from_json_refuses_bytes_that_are_not_utf8() -> None:
    with pytest.raises(PackFormatError, match="not UTF-8"):
        SpecPack.from_json(b"\xff\xfe{}", trust=True)


def test_manifest_errors_are_spec_pack_errors() -> None:
    assert issubclass(PackFormatError, SpecPackError)


def test_allow_refuses_modules_outside_the_list_before_import() -> None:
    text = _edit("kwargs/x", {"$ref": "no_such_pkg_xyz.mod:fn"})
    with pytest.raises(specpack.UntrustedPackError,
                       match=r"kwargs\.x = no_such_pkg_xyz\.mod:fn.*'no_such_pkg_xyz'"):
        SpecPack.from_json(text, allow=["gymnasium"], trust=True)
    pack = SpecPack.from_json(text, allow=["gymnasium", "no_such_pkg_xyz"], trust=True)
    assert pack._kwargs["x"] == CodeRef("no_such_pkg_xyz.mod", "fn")
    with pytest.raises(specpack.UntrustedPackError, match="entry_point"):
        SpecPack.from_json(text, allow="no_such_pkg_xyz", trust=True)  # a str is one module name


def test_the_depth_limit_holds_for_scalars_at_the_bottom_of_a_deep_list() -> None:
    from specpack._core._typedjson.tags import MAX_DEPTH

    def nested(levels: int, leaf: Any) -> Any:
        node = leaf
        for _ in range(levels):
            node = [node]
        return node

    for leaf in ("s", 1, True, None, 1.5):
        assert typedjson.decode(nested(MAX_DEPTH, leaf), source="test") == nested(MAX_DEPTH, leaf)
        with pytest.raises(PackFormatError, match=f"nested more than {MAX_DEPTH} levels deep"):
            typedjson.decode(nested(MAX_DEPTH + 1, leaf), source="test")
