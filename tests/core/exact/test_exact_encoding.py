"""The exact encoding's edges: what an attacker or a careless env could return.

A not-comparable part is never hidden by a digest; a set of strings encodes alike under every
hash seed (checked in fresh interpreters with different ``PYTHONHASHSEED``s); cycles, deep
nesting, huge ints and strings UTF-8 cannot carry all cross typed JSON; a lambda is encoded by
its code and closure.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

import numpy as np

from specpack._core._exact.exact import LIMIT, encode
from specpack._core._exact.nodes import DIGEST, NOT_COMPARABLE, equal, markers
from specpack._core._typedjson import decode
from specpack._core._typedjson import encode as typed
from specpack._tools._verify.compare import same, show


def crossed(value: Any) -> Any:
    """``encode(value)`` as the parent reads it from a worker (typed JSON both ways)."""
    return decode(json.loads(json.dumps(typed(encode(value)), allow_nan=False)))


def test_a_large_container_holding_an_unpicklable_value_is_not_comparable_not_a_digest() -> None:
    big = [float(i) for i in range(LIMIT)] + [threading.Lock()]
    node = encode(big)
    assert node[0] == NOT_COMPARABLE and "_thread.lock" in node[2]
    assert not equal(node, encode(big)) and not same(big, big)
    assert encode([float(i) for i in range(LIMIT)])[0] == DIGEST


def test_a_set_of_strings_encodes_alike_under_every_hash_seed() -> None:
    code = ("import json, sys; sys.path[:0] = sys.argv[1:]; "
            "from specpack._core._exact.exact import encode; "
            "print(json.dumps(encode({'alpha', 'beta', 'gamma', frozenset({'x', 'y'})})))")
    seen = set()
    for seed in ("1", "2", "3"):
        out = subprocess.run([sys.executable, "-c", code, *sys.path], capture_output=True,
                             text=True, check=True, timeout=60,
                             env={"PYTHONHASHSEED": seed, "PATH": ""})
        seen.add(out.stdout)
    assert len(seen) == 1


def test_cycles_deep_nesting_big_ints_and_surrogates_cross_typed_json_exactly() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert crossed(loop) == ["list", "list", [1, ["<cycle>", 1]]]
    deep: Any = 0
    for _ in range(500):
        deep = {"k": deep}
    node = crossed(deep)
    assert [m[2] for m in markers(node)] == ["nested more than 120 levels deep"]
    for value in (2**70, -(2**5000), "\ud800x", 1e-320, float("-inf"), -0.0):
        assert equal(crossed(value), encode(value)), value
    assert not equal(crossed(2**70), encode(2**70 + 1))
    assert show(crossed(2**70)) == str(2**70) and show(crossed("\ud800x")) == repr("\ud800x")


def test_a_lambda_is_encoded_by_its_code_and_closure() -> None:
    def scaled(k: float) -> Any:
        return lambda o: o * k

    assert equal(encode(scaled(2.0)), encode(scaled(2.0)))
    assert not equal(encode(scaled(2.0)), encode(scaled(3.0)))
    assert not equal(encode(lambda o: o + 1), encode(lambda o: o - 1))


def test_structured_and_object_arrays_and_numpy_scalars_keep_dtype_and_bits() -> None:
    rec = np.zeros(2, dtype=[("a", "<f4"), ("b", "<i2")])
    other = rec.copy()
    other["b"][1] = 1
    assert not equal(encode(rec), encode(other))
    assert not equal(encode(rec), encode(rec.astype([("a", "<f4"), ("c", "<i2")])))
    assert not equal(encode(np.float32(0.0)), encode(np.float32(-0.0)))
    assert equal(encode(np.float64("nan")), encode(np.float64("nan")))
    assert show(encode(np.float32(1.0000001))) == "np.float32(1.0000001)"
    assert not equal(encode(np.array([1, "a"], dtype=object)),
                     encode(np.array([1.0, "a"], dtype=object)))
