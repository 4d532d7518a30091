"""The typed-JSON grammar's one tag table, and the walkers that read it.

``references`` and ``payload_uses`` find what ``allow`` and ``inspect`` report, in linear time
with places built only when asked; ``render`` is the Python-like text ``specpack inspect``
prints (its expected outputs below are the CLI's former renderer's, kept exactly).
"""

from __future__ import annotations

import base64
import fractions
import hashlib
import http
import json
import math
import time
from typing import Any

import numpy as np
import pytest

from specpack._core import _typedjson as typedjson
from specpack._core._carry.values import lower
from specpack._core._typedjson.decode import Decoder
from specpack._core._typedjson.tags import TAGS, tag_of
from specpack._core._typedjson.walk import (
    path_text,
    payload_uses,
    references,
    render,
    render_code,
    render_items,
)

A, B, C = "sha256:" + "a" * 64, "sha256:" + "b" * 64, "sha256:" + "c" * 64
PAYLOADS = {A: {"kind": "code", "name": "__main__:MyEnv", "python": "3.11", "size": 12345},
            B: {"kind": "object", "name": "fractions.Fraction", "python": "3.11", "size": 45}}


def _tags_in(node: Any) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            found.update(k for k in n if k.startswith("$"))
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)
    return found


# -- one tag table -----------------------------------------------------------------------

SAMPLES = {
    "$int": {"$int": str(2**60)},
    "$float": {"$float": "nan"},
    "$bytes": {"$bytes": "AP8="},
    "$complex": {"$complex": [1.0, 2.0]},
    "$tuple": {"$tuple": [1, {"$ref": "math:tanh"}]},
    "$set": {"$set": [1, {"$tuple": [2]}]},
    "$frozenset": {"$frozenset": [1]},
    "$dict": {"$dict": [[1, {"$ref": "math:tanh"}]]},
    "$ndarray": {"$ndarray": {"dtype": "<f4", "shape": [1], "values": [0.5]}},
    "$npscalar": {"$npscalar": {"dtype": "<i2", "value": 3}},
    "$enum": {"$enum": "http:HTTPStatus", "name": "OK"},
    "$ref": {"$ref": "math:tanh"},
    "$code": {"$code": A},
    "$object": {"$object": B},
}


def test_every_tag_has_a_sample_and_the_encoder_writes_only_table_tags() -> None:
    assert set(SAMPLES) == set(TAGS)
    value = {1: (b"x", 1j, {2, 3}, frozenset(), np.ones(2, "<f4"), np.float32(1), 2**70,
                 math.inf, http.HTTPStatus.OK, math.tanh, lambda: 1, fractions.Fraction(1, 3),
                 [None])}
    assert _tags_in(typedjson.encode(lower(value, "x"))) == set(TAGS)


@pytest.mark.parametrize("name", sorted(TAGS))
def test_every_tag_is_decoded_rendered_and_walked_from_the_table(name: str) -> None:
    node = SAMPLES[name]
    table = {A: {"kind": "code", "name": "m:f", "python": "3.11", "data": "AAAA"},
             B: {"kind": "object", "name": "t", "python": "3.11", "data": "AAAA"}}
    raw = base64.b64decode("AAAA")
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    if name in ("$code", "$object"):
        node = {name: digest}
        table = {digest: {"kind": "code" if name == "$code" else "object", "name": "m:f",
                          "python": "3.11", "data": "AAAA"}}
    value = Decoder(table, "<test>").value(node, "x")
    assert value is not None
    text = render(node, table)
    assert not text.startswith('{"$'), text  # rendered by its kind, not shown as raw JSON
    refs = list(references(node, "x"))
    uses = payload_uses(node, "x")
    assert bool(refs) == ("math:tanh" in json.dumps(node) or name == "$enum")
    assert bool(uses) == (name in ("$code", "$object"))


def test_tag_of_finds_the_one_dollar_key() -> None:
    assert tag_of({"a": 1}) is None
    assert tag_of({"$enum": "m:E", "name": "A"}) == "$enum"
    with pytest.raises(ValueError, match="more than one type tag"):
        tag_of({"$tuple": [], "$set": []})


# -- references and payload uses ---------------------------------------------------------


def test_references_follow_the_grammar_in_document_order() -> None:
    node = {
        "a": {"$ref": "m1:f"},
        "b": {"$tuple": [{"$enum": "m2:E", "name": "X"}, {"$set": [{"$ref": "m3:g"}]}]},
        "c": {"$dict": [[{"$ref": "m4:k"}, {"$ref": "m5:v"}]]},
        "d": {"$ndarray": {"dtype": "<f4", "shape": [0], "values": [], "x": {"$ref": "no:1"}}},
        "e": {"$bytes": {"$ref": "no:2"}},
        "f": {"$unknown": {"$ref": "m6:u"}},
        "g": [{"$ref": 5}, {"$ref": "m7:h"}],
    }
    found = list(references(node, "kwargs"))
    assert [(f.where, f.module, f.qualname) for f in found] == [
        ("kwargs.a", "m1", "f"), ("kwargs.b[0]", "m2", "E"), ("kwargs.b[1][0]", "m3", "g"),
        ("kwargs.c[0][0]", "m4", "k"), ("kwargs.c[0][1]", "m5", "v"),
        ("kwargs.f.$unknown", "m6", "u"), ("kwargs.g[1]", "m7", "h")]
    assert found[1].member == "X" and found[1].tag == "$enum"
    where, module, qualname = found[0]  # the walk interface's triple
    assert (where, module, qualname) == ("kwargs.a", "m1", "f")


def test_places_are_built_lazily_and_bounded() -> None:
    key = "K" * 100_000
    node = {key: [{"$ref": "m:f"}] * 40_000}
    start = time.thread_time()  # CPU time: load stretches the wall clock, not work
    found = list(references(node, "kwargs"))
    assert time.thread_time() - start < 2
    assert len(found) == 40_000 and all(type(f.at) is tuple for f in found)
    text = found[-1].where
    assert len(text) <= 300 and text.startswith("kwargs.KKK") and text.endswith("[39999]")
    assert path_text(((("r", "\x1b[2J"), 3), "k"), escape=True) == "r.\\x1b[2J[3].k"
    assert path_text(((("r", "\x1b[2J"), 3), "k"), escape=False) == "r.\x1b[2J[3].k"


def test_payload_uses_lists_every_place_of_each_digest() -> None:
    node = {"a": {"$code": A}, "b": {"$tuple": [{"$object": B}, {"$code": A}]},
            "c": {"$code": 5}}
    uses = payload_uses(node, "kwargs")
    assert {d: [f.where for f in fs] for d, fs in uses.items()} == {
        A: ["kwargs.a", "kwargs.b[1]"], B: ["kwargs.b[0]"]}


# -- rendering ---------------------------------------------------------------------------

RENDERED = [
    (None,
     'None'),
    (True,
     'True'),
    (1.5,
     '1.5'),
    ("a'b",
     '"a\'b"'),
    ([1, [2, 'x']],
     "[1, [2, 'x']]"),
    ({'a': 1, 'b': [None]},
     "{'a': 1, 'b': [None]}"),
    ({'$int': '0xffffffffffffffffffff'},
     '0xffffffffffffffffffff'),
    ({'$float': '-inf'},
     '-inf'),
    ({'$bytes': 'AP8='},
     "b'\\x00\\xff'"),
    ({'$bytes': 'eA==' * 20},
     '<bytes: invalid base64>'),
    ({'$bytes': '!!'},
     '<bytes: invalid base64>'),
    ({'$complex': [1.0, {'$float': 'nan'}]},
     'complex(1.0, nan)'),
    ({'$complex': [1]},
     '{"$complex": [1]}'),
    ({'$tuple': [1]},
     '(1,)'),
    ({'$tuple': []},
     '()'),
    ({'$tuple': [1, {'$tuple': [2]}]},
     '(1, (2,))'),
    ({'$tuple': 3},
     '{"$tuple": 3}'),
    ({'$set': []},
     'set()'),
    ({'$set': [1, 2]},
     '{1, 2}'),
    ({'$frozenset': []},
     'frozenset()'),
    ({'$frozenset': [{'$bytes': 'eA=='}]},
     "frozenset({b'x'})"),
    ({'$dict': [[1, 'one'], [{'$tuple': [0, 1]}, 'edge'], [1]]},
     "{1: 'one', (0, 1): 'edge'}"),
    ({'$ndarray': {'dtype': '<f4', 'shape': [2, 4], 'values': [0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]}},
     'array(dtype <f4, shape (2, 4), [0.5, 1.0, 2.0, 3.0, 4.0, 5.0, ...])'),
    ({'$ndarray': {'dtype': '<U2', 'shape': [1], 'base64': 'AAAA'}},
     'array(dtype <U2, shape (1,))'),
    ({'$npscalar': {'dtype': '<f4', 'value': 0.25}},
     'numpy <f4 scalar 0.25'),
    ({'$npscalar': {'dtype': '<c8', 'base64': 'AAAAAAAAAAA='}},
     "numpy <c8 scalar '?'"),
    ({'$enum': 'http:HTTPStatus', 'name': 'OK'},
     'http:HTTPStatus.OK'),
    ({'$ref': 'math:tanh'},
     '<math:tanh>'),
    ({'$code': A},
     '<code __main__:MyEnv by value, 12.3 kB>'),
    ({'$object': B},
     '<object fractions.Fraction by value, 45 bytes>'),
    ({'$object': C},
     '<object by value ' + C + '>'),
    ({'$nope': [1, 2]},
     '{"$nope": [1, 2]}'),
    ({'$tuple': [1], '$set': [2]},
     '(1,)'),
    (json.loads("[" * 25 + "1" + "]" * 25),
     '[[[[[[[[[[[[[[[[[[[[[...]]]]]]]]]]]]]]]]]]]]]'),
    ('x' * 300,
     "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."),
    ({'k': {'$ref': 'a.b:C.D'}, '\x1b': '\u202e'},
     "{'k': <a.b:C.D>, '\\x1b': '\\u202e'}"),
]


@pytest.mark.parametrize("node, text", RENDERED)
def test_render_gives_the_inspect_text(node: Any, text: str) -> None:
    assert render(node, PAYLOADS) == text


def test_render_code_and_items_name_code_and_keys() -> None:
    assert render_code({"$ref": "pkg.mod:Env"}, PAYLOADS) == ("Env", "pkg.mod, by reference")
    assert render_code({"$ref": "pkg.mod:Env"}, PAYLOADS, full=True) == (
        "pkg.mod:Env", "by reference")
    by_value = f"by value: 12.3 kB of cloudpickle for Python 3.11, {A}"
    assert render_code({"$code": A}, PAYLOADS) == ("MyEnv", by_value)
    assert render_code({"$code": A}, PAYLOADS, full=True) == ("__main__:MyEnv", by_value)
    assert render_code({"$code": C}, PAYLOADS) == (
        "?", f"by value: {C}, payload missing from the file")
    assert render_code({"$tuple": [1]}, PAYLOADS) == ("(1,)", "?")
    assert render_items({"$dict": [[1, 2], [{"$tuple": []}, 3]]}) == [("1", 2), ("()", 3)]
    assert render_items({"a": 1}) == [("a", 1)]


def test_render_cost_is_bounded_by_its_limit() -> None:
    node = {"K" * 100_000: [[0] * 1000] * 1000}
    start = time.thread_time()  # CPU time: load stretches the wall clock, not work
    text = render(node, None)
    assert time.thread_time() - start < 0.1
    assert len(text) == 200 and text.endswith("...")
    assert render([1, 2, 3], None, limit=5) == "[1..."
