"""Fuzz specpack's file reader with mutated and truncated real pack files.

    python fuzz/fuzz_files.py                 # 20,000 cases, seed 0
    python fuzz/fuzz_files.py --cases 100000 --seed 3

Each case takes one of the golden pack files of ``tests/golden/`` (an unsigned by-reference
file, an unsigned file with by-value code, a signed file), mutates it (bit flips, byte
edits, truncation, splicing, injected tokens and deep nesting, or an edit of the parsed JSON
that is re-signed with the right key so it reaches the manifest checks behind the
signature), writes it to disk and calls ``load(path)``, ``load(path, trust=True)``,
``load(path, key=...)``, ``load(path, trust=True, allow=[...])`` and ``describe(path)``. A
loaded pack is also fingerprinted and its manifest written and read back (any failure there
is a bug too). Nothing is ever built (``make()`` is not called).

Besides blind edits, the JSON edits put in the hostile shapes of ``fuzz/hostile.py`` at a
size that keeps each call fast: keys of 100,000 characters, sets and dicts whose members all
share one hash, hundreds of references, references that try to walk around ``allow`` (through
modules, dunders, dotted names), control characters, ``$int`` spellings and numbers that do
not fit.

The contract: every call returns or raises a ``SpecPackError`` within a CPU second; anything else
is a bug and is printed with the mutation that caused it (``--slow`` sets the time limit). The
script prints the counts per outcome and per mutation kind, and exits 1 if there was any bug
or slow call. ``tests/core/files/test_files.py`` runs 2,000+ cases of the same fuzzer in the test
suite.
"""

from __future__ import annotations

import argparse
import base64
import collections
import importlib.util
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden"
OTHER_KEY = b"a key nobody signed with"
#: What the golden files name by reference (so intact files load under it).
ALLOW = ["gymnasium", "http", "re", "collections", "math", "numpy"]


def golden_key() -> bytes:
    """The test key the golden signed file was made with (read from its maker script)."""
    spec = importlib.util.spec_from_file_location("golden_maker", GOLDEN / "make_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return bytes(module.GOLDEN_KEY)


def load_seeds(key: bytes) -> list[tuple[str, bytes, bytes | None]]:
    """``(name, file bytes, signing key or None)`` for every golden pack file."""
    seeds = []
    for path in sorted(GOLDEN.glob("*.specpack")):
        data = path.read_bytes()
        seeds.append((path.name, data, key if data.startswith(b"specpack-signed/") else None))
    if not seeds:
        raise SystemExit(f"no seed files in {GOLDEN}: run tests/golden/make_golden.py")
    return seeds


# -- mutations --------------------------------------------------------------------------------

TOKENS = [
    b"NaN", b"Infinity", b"-", b"1e999", b"9" * 5000, b"\x00", b"\xff\xfe", b"\\ud800",
    b"1e999999", b"-1e999999", b"1e-999999", b"-0", b"1E400", b"9" * 4301, b"0.0e0",
    b'"\\u001b[2J"', b'"\\u202e"', b"\x1b[31m", b'{"$int": "1_0"}', b'{"$int": "0X10"}',
    b'"$ref"', b'"$code"', b'{"$int": "0x' + b"f" * 300 + b'"}', b"[" * 100_000,
    b'{"a":' * 50_000, b"]" * 10, b"}" * 10, b'"', b"\\", b",", b":", b"null", b"true",
    b"\xef\xbb\xbf", b"specpack-signed/1 ", b"\n",
]


def _deep(n: int, tag: str | None) -> Any:
    node: Any = 1
    for _ in range(n):
        node = {tag: [node]} if tag else [node]
    return node


#: A multiple of 2**61 - 1: the ints k * COLLIDE all hash to 0.
COLLIDE = 2**61 - 1
#: References that try to walk around ``allow`` (through modules, dunders, dotted names).
SNEAKY_REFS = [
    "gymnasium.envs.classic_control.cartpole:gym.os.system",
    "gymnasium.envs.classic_control.cartpole:np.os.system",
    "gymnasium.envs.classic_control.cartpole:gym.make",
    "gymnasium.envs.classic_control.cartpole:CartPoleEnv.__init__.__globals__",
    "gymnasium:__builtins__", "builtins:eval", "os:system", "a..b:c", ".x:y", "x:", ":x",
    "x:y.", "\x1b[2J:x", "gymnasium.wrappers.common:TimeLimit", "evil_mod:f",
]
ODD_INTS = ["0X10", "+0x10", " 1", "1_000", "0x", "-", "\u0663", "9007199254740993", "5",
            "-9007199254740992", "0x" + "f" * 1_000_001, "9" * 4301, "+" + "9" * 20,
            "-0x20000000000001", "00009007199254740993", "0xFF"]
CONTROL = ["\x1b[2J", "\x1b]0;title\x07", "\u202e", "\x00", "\ud800", "\x9b31m", "\r\n"]


def hostile_values(rng: random.Random) -> Any:
    """A value of one of the hostile shapes (``fuzz/hostile.py``), scaled to stay fast."""
    n = rng.choice([10, 40, 200, 2000])
    collide = [{"$int": str(k * COLLIDE)} for k in range(1, n + 1)]
    choices: list[Callable[[], Any]] = [
        lambda: {"K" * rng.choice([1000, 100_000]): [0] * n},
        lambda: {"K" * 50_000: [{"$ref": rng.choice(SNEAKY_REFS)}] * n},
        lambda: {"$set": collide}, lambda: {"$frozenset": [{"$tuple": [v]} for v in collide]},
        lambda: {"$dict": [[v, 0] for v in collide]}, lambda: {"$set": [1] * n},
        lambda: {"$dict": [["a", 1]]}, lambda: {"$dict": []},
        lambda: [{"$ref": rng.choice(SNEAKY_REFS)}] * n,
        lambda: {"$ref": rng.choice(SNEAKY_REFS)},
        lambda: {"$enum": rng.choice(SNEAKY_REFS), "name": rng.choice(CONTROL)},
        lambda: {"$int": rng.choice(ODD_INTS)},
        lambda: {rng.choice(CONTROL): rng.choice(CONTROL)},
        lambda: {"$tuple": ["w", rng.choice(SNEAKY_REFS), None]},
        lambda: {"$ndarray": {"dtype": rng.choice(["<i4", "|i1", "<f4", "|b1", "<u8", "<f2"]),
                              "shape": [1], "values": [rng.choice(
                                  [1.5, 300, 1e300, 1, True, -1, 2**64, 65504.0, 0.1, -0.0])]}},
    ]
    return rng.choice(choices)()


def interesting_values(rng: random.Random, digests: list[str]) -> Any:
    """A JSON value chosen to confuse the manifest decoder."""
    if rng.random() < 0.3:
        return hostile_values(rng)
    digest = rng.choice(digests) if digests else "sha256:" + "0" * 64
    choices: list[Callable[[], Any]] = [
        lambda: None, lambda: True, lambda: 0, lambda: -1, lambda: 2**64, lambda: 10**400,
        lambda: 1e308, lambda: -0.0, lambda: "", lambda: "x", lambda: "$ref", lambda: [],
        lambda: {}, lambda: {"$int": "9" * 4000}, lambda: {"$int": "0x" + "f" * 500},
        lambda: {"$int": "1_0"}, lambda: {"$float": "nan"}, lambda: {"$float": "NaN"},
        lambda: {"$bytes": "!!"}, lambda: {"$bytes": base64.b64encode(b"ok").decode()},
        lambda: {"$complex": [1, {"$float": "inf"}]}, lambda: {"$complex": [1]},
        lambda: {"$tuple": 1}, lambda: {"$set": [[1]]}, lambda: {"$set": [1, 1.0, True]},
        lambda: {"$frozenset": [{"$tuple": [1, 2]}]}, lambda: {"$dict": [[[], 1]]},
        lambda: {"$dict": [[{"$tuple": []}, 1], [None, 2]]}, lambda: {"$dict": [1]},
        lambda: {"$ndarray": {"dtype": "<f4", "shape": [10**12], "values": []}},
        lambda: {"$ndarray": {"dtype": "<f4", "shape": [2, 0], "values": []}},
        lambda: {"$ndarray": {"dtype": "|O", "shape": [1], "base64": "AAAAAAAAAAA="}},
        lambda: {"$ndarray": {"dtype": [["a", "<i4", [2]]], "shape": [1],
                              "base64": "AAAAAAAAAAA="}},
        lambda: {"$ndarray": {"dtype": "<U99999999999", "shape": [1], "base64": ""}},
        lambda: {"$ndarray": {"dtype": "<i1", "shape": [1], "values": [1000]}},
        lambda: {"$ndarray": {"dtype": "<u8", "shape": [1], "values": [{"$int": "-1"}]}},
        lambda: {"$ndarray": {"dtype": None, "shape": [1], "values": [1]}},
        lambda: {"$npscalar": {"dtype": "<M8[s]", "value": 1}},
        lambda: {"$npscalar": {"dtype": "<f8", "value": "x"}},
        lambda: {"$npscalar": {"dtype": "<V0", "base64": ""}},
        lambda: {"$enum": "os:environ", "name": "PATH"}, lambda: {"$enum": "a:b"},
        lambda: {"$ref": "os:system"}, lambda: {"$ref": ":"}, lambda: {"$ref": "a..b:c"},
        lambda: {"$code": digest}, lambda: {"$object": digest},
        lambda: {"$code": "sha256:" + "0" * 64}, lambda: {"$nope": 1},
        lambda: {"$tuple": [], "$set": []}, lambda: {"$enum": "http:HTTPStatus", "name": 1},
        lambda: _deep(rng.randrange(50, 400), None),
        lambda: _deep(rng.randrange(50, 400), "$tuple"),
        lambda: _deep(rng.randrange(50, 250), "$set"),
    ]
    return rng.choice(choices)()


def _nodes(data: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) slot in parsed JSON (iteratively)."""
    slots: list[tuple[Any, Any]] = []
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                slots.append((node, k))
                stack.append(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                slots.append((node, i))
                stack.append(v)
    return slots


def _split_signed(data: bytes) -> tuple[bytes, bytes]:
    if data.startswith(b"specpack-signed/"):
        head, _, rest = data.partition(b"\n")
        return head + b"\n", rest
    return b"", data


def _resign(manifest: bytes, key: bytes) -> bytes:
    from specpack._core._fileformat.signed import sign as _sign

    return _sign(key, manifest)


def json_mutation(data: bytes, rng: random.Random, key: bytes | None) -> tuple[str, bytes]:
    """Edit the parsed manifest (replace/delete/rename/insert a node) and write it back."""
    head, body = _split_signed(data)
    doc = json.loads(body)
    digests = list(doc.get("payloads", {}))
    slots = _nodes(doc)
    container, slot = rng.choice(slots)
    op = rng.choice(["replace", "replace", "replace", "delete", "rename", "insert", "wrap",
                     "retag"])
    if op == "replace":
        container[slot] = interesting_values(rng, digests)
    elif op == "delete":
        del container[slot]
    elif op == "rename" and isinstance(container, dict):
        container[rng.choice(["$ref", "$tuple", "kind", "data", "x", "format", ""])] = \
            container.pop(slot)
    elif op == "insert":
        target = container[slot]
        if isinstance(target, dict):
            target[rng.choice(["$ref", "$int", "name", "extra", "$dict", "entry_point",
                               "vector_entry_point", "additional_wrappers",
                               "max_episode_steps", rng.choice(CONTROL)])] = \
                interesting_values(rng, digests)
        elif isinstance(target, list):
            target.insert(rng.randrange(len(target) + 1), interesting_values(rng, digests))
        else:
            container[slot] = [target, interesting_values(rng, digests)]
    elif op == "wrap":
        container[slot] = {rng.choice(["$tuple", "$set", "$dict", "$ndarray", "$code",
                                       "$enum"]): container[slot]}
    else:  # retag / rename on a list: swap a tag name everywhere
        text = json.dumps(doc)
        tags = ["$tuple", "$set", "$frozenset", "$dict", "$ref", "$code", "$object", "$int",
                "$float", "$bytes", "$ndarray", "$npscalar", "$enum", "$complex"]
        a, b = rng.sample(tags, 2)
        doc = json.loads(text.replace(f'"{a}"', f'"{b}"'))
    indent = rng.choice([None, 2, 0])
    try:
        body = json.dumps(doc, indent=indent, ensure_ascii=rng.random() < 0.5).encode(
            "utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return f"json-{op}-unwritable", data
    if head and key is not None and rng.random() < 0.7:
        return f"json-{op}-resigned", _resign(body, key)
    return f"json-{op}", head + body


def byte_mutation(data: bytes, rng: random.Random, others: list[bytes]) -> tuple[str, bytes]:
    """A structure-blind edit of the file bytes."""
    n = len(data)
    op = rng.choice(["flip", "flip", "set", "delete", "insert", "truncate", "truncate",
                     "duplicate", "splice", "token", "token", "random", "header"])
    b = bytearray(data)
    i = rng.randrange(n) if n else 0
    if op == "flip" and n:
        for _ in range(rng.choice([1, 1, 1, 2, 8])):
            j = rng.randrange(n)
            b[j] ^= 1 << rng.randrange(8)
    elif op == "set" and n:
        b[i] = rng.randrange(256)
    elif op == "delete" and n:
        del b[i:i + rng.choice([1, 1, 2, 16, 256])]
    elif op == "insert":
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 2, 16])))
    elif op == "truncate":
        del b[rng.randrange(n + 1):]
    elif op == "duplicate" and n:
        j = rng.randrange(i, n + 1)
        b[j:j] = data[i:j][:4096]
    elif op == "splice" and others:
        other = rng.choice(others)
        b = bytearray(data[:i] + other[rng.randrange(len(other) + 1):])
    elif op == "token":
        b[i:i] = rng.choice(TOKENS)
    elif op == "random":
        b = bytearray(rng.randbytes(rng.choice([0, 1, 7, 100, 3000])))
    elif op == "header":
        head, body = _split_signed(data)
        b = bytearray(body if head else b"specpack-signed/1 alg=hmac-sha256 key-id=" +
                      b"0" * 16 + b" sig=" + b"0" * 64 + b"\n" + body)
    return f"bytes-{op}", bytes(b)


def mutate(data: bytes, rng: random.Random, key: bytes | None,
           others: list[bytes]) -> tuple[str, bytes]:
    """One mutated file: 40% edits of the parsed JSON, 60% byte-level edits."""
    if rng.random() < 0.4:
        try:
            return json_mutation(data, rng, key)
        except (ValueError, IndexError):
            pass
    return byte_mutation(data, rng, others)


# -- running ----------------------------------------------------------------------------------


def rewrite(path: Path, data: bytes) -> None:
    """Put ``data`` in ``path`` in place (overwrite, then cut to size).

    Much faster than ``write_bytes`` on filesystems where truncating to zero is slow
    (ext4 with ``discard``), which matters at tens of thousands of cases.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _calls(path: Path, key: bytes | None) -> list[tuple[str, Callable[[], Any]]]:
    from specpack.files import describe, load

    return [
        ("load", lambda: load(path)),
        ("load-allow", lambda: load(path, trust=True, allow=ALLOW)),
        ("load-trust", lambda: load(path, trust=True)),
        ("load-key", lambda: load(path, key=key or OTHER_KEY)),
        ("describe", lambda: describe(path, key=key)),
    ]


class _RoundTripBug(Exception):
    """A file loaded, but the pack then failed to fingerprint or to round-trip its manifest."""


def _exercise(result: Any) -> None:
    from specpack import SpecPack

    if isinstance(result, SpecPack):
        again = SpecPack.from_json(result.to_json(), trust=True)
        if again.fingerprint != result.fingerprint:
            raise AssertionError("the fingerprint changed across a manifest round trip")


def run(cases: int, seed: int = 0, *, workdir: str | None = None,
        verbose: bool = False, slow: float = 1.0) -> dict[str, Any]:
    """Run ``cases`` mutated files; returns counts, the bugs found and the slow calls.

    A bug is any exception but a ``SpecPackError``; a slow call is one over ``slow`` seconds
    of CPU time.
    Both lists should stay empty.
    """
    from specpack import SpecPackError

    key = golden_key()
    seeds = load_seeds(key)
    others = [d for _, d, _ in seeds]
    rng = random.Random(seed)
    outcomes: collections.Counter[str] = collections.Counter()
    kinds: collections.Counter[str] = collections.Counter()
    bugs: list[str] = []
    slow_calls: list[str] = []
    slowest = (0.0, "")
    start_all = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        path = Path(tmp) / "case.specpack"
        calls = {name: _calls(path, k) for name, _, k in seeds}
        for case in range(cases):
            name, data, k = seeds[case % len(seeds)]
            kind, mutated = mutate(data, rng, k, others)
            kinds[kind] += 1
            rewrite(path, mutated)
            for label, call in calls[name]:
                start = time.thread_time()  # CPU: load stretches the wall clock, not work
                try:
                    result = call()
                    try:
                        _exercise(result)
                    except BaseException as e:  # a loaded pack must fingerprint and re-read
                        if isinstance(e, KeyboardInterrupt):
                            raise
                        raise _RoundTripBug(f"{type(e).__name__}: {e}") from e
                    outcomes[f"{label}: loaded"] += 1
                except SpecPackError as e:
                    outcomes[f"{label}: {type(e).__name__}"] += 1
                except BaseException as e:  # the fuzzer's whole point: anything else is a bug
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    outcomes[f"{label}: BUG {type(e).__name__}"] += 1
                    bugs.append(f"case {case} ({name}, {kind}) {label}: {type(e).__name__}: "
                                f"{str(e)[:300]}")
                elapsed = time.thread_time() - start
                if elapsed > slowest[0]:
                    slowest = (elapsed, f"case {case} ({name}, {kind}) {label}")
                if elapsed > slow:
                    slow_calls.append(f"case {case} ({name}, {kind}) {label}: "
                                      f"{elapsed:.2f} s")
            if verbose and case and case % 5000 == 0:
                print(f"  {case} cases...", flush=True)
    return {"cases": cases, "outcomes": dict(outcomes), "kinds": dict(kinds), "bugs": bugs,
            "slow": slow_calls, "slowest": slowest, "calls": sum(outcomes.values()),
            "seconds": time.perf_counter() - start_all}


def main(argv: list[str] | None = None) -> int:
    """Command line: run the fuzzer and print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slow", type=float, default=1.0,
                        help="report calls over this many seconds (default 1)")
    ns = parser.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    report = run(ns.cases, ns.seed, verbose=True, slow=ns.slow)
    print(f"{report['cases']} mutated files, {report['calls']} calls, "
          f"{report['seconds']:.1f} s (slowest call {report['slowest'][0] * 1000:.0f} ms: "
          f"{report['slowest'][1]})")
    print("\noutcomes (call: result):")
    for k, v in sorted(report["outcomes"].items()):
        print(f"  {v:8d}  {k}")
    print("\nmutations:")
    for k, v in sorted(report["kinds"].items()):
        print(f"  {v:8d}  {k}")
    if report["slow"]:
        print(f"\n{len(report['slow'])} calls over {ns.slow} s:")
        for line in report["slow"][:50]:
            print("  " + line)
    if report["bugs"]:
        print(f"\n{len(report['bugs'])} BUGS (not a SpecPackError):")
        for line in report["bugs"][:50]:
            print("  " + line)
    if report["bugs"] or report["slow"]:
        return 1
    print(f"\nno bugs: every call returned or raised a SpecPackError within {ns.slow} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
