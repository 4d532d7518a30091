"""Hostile pack files, built by hand, and what reading them costs (time and peak memory).

    python fuzz/hostile.py            # a table: file, call, outcome, seconds, peak MB
    python fuzz/hostile.py --json     # the same as JSON lines

Each file is made to hurt one part of the reader: keys of 100,000 characters (every place
string would copy them), 60,000 references refused by ``allow``, ``$set``/``$dict`` members
whose hashes all collide, deep nesting, the largest ints and arrays the grammar takes,
numbers that do not fit, control characters, thousands of payload uses. Every call
(``load``, ``load`` with ``allow``, ``load(trust=True)``, ``describe``, and ``inspect``:
``describe`` plus the rendering ``specpack inspect`` prints) must return or raise a
``SpecPackError`` within 5 seconds and 200 MB. The peak is measured per call on Linux (the
kernel's high-water mark is reset before each call, ``/proc/self/clear_refs``); elsewhere it is
the process's peak so far. ``tests/core/files/test_files_cost.py`` runs this script.
``fuzz/fuzz_files.py`` mixes the same shapes into its mutations (:func:`shapes`).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: A multiple of 2**61 - 1: every int k * M hashes to 0 in CPython.
COLLIDE = 2**61 - 1
SECONDS = 5.0
PEAK_MB = 200.0


def _base() -> dict[str, Any]:
    """A valid by-reference CartPole manifest (no specpack needed to build it)."""
    return {
        "format": "specpack/1",
        "backend": "gymnasium",
        "id": "CartPole-v1",
        "entry_point": {"$ref": "gymnasium.envs.classic_control.cartpole:CartPoleEnv"},
        "kwargs": {},
        "spec": {"id": "CartPole-v1", "reward_threshold": 475.0},
        "layers": [
            {"class": {"$ref": "gymnasium.wrappers.common:TimeLimit"},
             "kwargs": {"max_episode_steps": 500}},
            {"class": {"$ref": "gymnasium.wrappers.common:OrderEnforcing"}, "kwargs": {}},
        ],
        "render_wrappers": "make",
        "fingerprint": None,
        "versions": {},
        "notes": [],
        "payloads": {},
    }


def _with(**fields: Any) -> bytes:
    data = _base()
    data.update(fields)
    return json.dumps(data, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _payload(data: bytes, kind: str = "object") -> tuple[str, dict[str, Any]]:
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    return digest, {"kind": kind, "name": "builtins.int", "python": "3.11", "size": len(data),
                    "digest": digest, "format": "cloudpickle", "note": "",
                    "data": base64.b64encode(data).decode("ascii")}


def _collide(n: int) -> list[Any]:
    return [{"$int": str(k * COLLIDE)} for k in range(1, n + 1)]


def _many_payloads() -> bytes:
    table = dict(_payload(b"\x80\x04K\x01." + str(i).encode()) for i in range(3000))
    return _with(kwargs={"x": [{"$object": k} for k in table]}, payloads=table)


def shapes() -> dict[str, Callable[[], bytes]]:
    """name -> a function building that hostile file's bytes."""
    d, entry = _payload(b"\x80\x04K\x01.")
    return {
        "huge key, 40k ints": lambda: _with(kwargs={"K" * 100_000: [0] * 40_000}),
        "huge key, 7k refs": lambda: _with(kwargs={"K" * 100_000: [
            {"$ref": "evil_mod:f"}] * 7_000}),
        "huge keys nested": lambda: _with(kwargs={"K" * 50_000: {"L" * 50_000: [
            {"$tuple": [0, {"$ref": "gymnasium.spaces:Box"}]}] * 5_000}}),
        "60k refused refs": lambda: _with(kwargs={"x": [{"$ref": "evil_mod:f"}] * 60_000}),
        "60k allowed refs": lambda: _with(kwargs={"x": [
            {"$ref": "gymnasium.spaces:Box"}] * 60_000}),
        "60k enums": lambda: _with(kwargs={"x": [
            {"$enum": "http:HTTPStatus", "name": "OK"}] * 60_000}),
        "$set of 60k colliding ints": lambda: _with(kwargs={"x": {"$set": _collide(60_000)}}),
        "$frozenset of 60k colliding tuples": lambda: _with(kwargs={"x": {"$frozenset": [
            {"$tuple": [v]} for v in _collide(60_000)]}}),
        "$dict of 60k colliding keys": lambda: _with(kwargs={"x": {"$dict": [
            [v, 0] for v in _collide(60_000)]}}),
        "$set of 60k equal members": lambda: _with(kwargs={"x": {"$set": [1] * 60_000}}),
        "deep lists": lambda: b"[" * 100_000 + b"]" * 100_000,
        "deep objects": lambda: b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        "deep $tuple (208)": lambda: _with(kwargs={"x": json.loads(
            '{"$tuple": [' * 208 + "1" + "]}" * 208)}),
        "deep $dict (300)": lambda: _with(kwargs={"x": json.loads(
            '{"$dict": [[1, ' * 300 + "1" + "]]}" * 300)}),
        "4,000,000-bit $int": lambda: _with(kwargs={"x": {"$int": "0x" + "f" * 1_000_000}}),
        "$int one hex digit too long": lambda: _with(kwargs={"x": {
            "$int": "0x" + "f" * 1_000_001}}),
        "50 decimal $ints of 4300 digits": lambda: _with(kwargs={"x": [
            {"$int": "9" * 4300}] * 50}),
        "int literal of 5000 digits": lambda: _with(kwargs={"x": 0}).replace(
            b'"x":0', b'"x":' + b"9" * 5000),
        "1e999999": lambda: _with(kwargs={"x": 0}).replace(b'"x":0', b'"x":1e999999'),
        "1e-999999": lambda: _with(kwargs={"x": 0}).replace(b'"x":0', b'"x":1e-999999'),
        "array shape 10**12": lambda: _with(kwargs={"x": {"$ndarray": {
            "dtype": "<f8", "shape": [10**6, 10**6], "values": []}}}),
        "array of 1M floats": lambda: _with(kwargs={"x": {"$ndarray": {
            "dtype": "<f8", "shape": [1_000_000], "values": [0.5] * 1_000_000}}}),
        "array 300 as <i1": lambda: _with(kwargs={"x": {"$ndarray": {
            "dtype": "|i1", "shape": [1], "values": [300]}}}),
        "control characters": lambda: _with(
            id="\x1b[2J\u202e", kwargs={"\x1b]0;t\x07": {"$ref": "m\x1b:f"}},
            notes=["\x1b[31m" * 1000]),
        "dunder and dotted refs": lambda: _with(kwargs={
            "a": {"$ref": "gymnasium.envs.classic_control.cartpole:gym.os.system"},
            "b": {"$ref": "gymnasium.envs.classic_control.cartpole:CartPoleEnv.__init__"},
            "c": {"$ref": "os:system"}, "d": {"$ref": "a..b:c"}}),
        "60k uses of one payload": lambda: _with(kwargs={"x": [{"$object": d}] * 60_000},
                                                 payloads={d: entry}),
        "3000 payloads": _many_payloads,
        "60k spec wrappers": lambda: _with(spec={"id": "X-v0", "additional_wrappers": {
            "$tuple": [{"$tuple": ["w", "evil_mod:W", None]}] * 60_000}}),
    }


def _calls(path: Path) -> list[tuple[str, Callable[[], Any]]]:
    import specpack
    from specpack._core._typedjson.walk import render, render_code, render_items
    from specpack.files import describe

    def inspect() -> Any:
        desc = describe(path)
        m = desc["manifest"]
        table = m["payloads"]
        lines = [render_code(m["entry_point"], table, full=True)[0]]
        for section in (m["kwargs"], m["spec"]):
            lines += [f"{k} = {render(v, table)}" for k, v in render_items(section, table)]
        for layer in m["layers"]:
            lines.append(render_code(layer["class"], table)[0])
            lines += [render(v, table) for _, v in render_items(layer["kwargs"], table)]
        return json.dumps(desc, ensure_ascii=True), lines

    return [
        ("load", lambda: specpack.load(path)),
        ("load allow", lambda: specpack.load(path, allow=["gymnasium", "http"])),
        ("load trust", lambda: specpack.load(path, trust=True)),
        ("describe", lambda: describe(path)),
        ("inspect", inspect),
    ]


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_mb(per_call: bool) -> float:
    if per_call:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return _peak_mb(False)


def measure(names: list[str] | None = None) -> list[dict[str, Any]]:
    """Build each hostile file and time every call on it; one row per (file, call).

    ``peak_mb`` is the peak resident memory during the call above the memory in use before
    it (the file's bytes and specpack's imports are not counted).
    """
    from specpack import SpecPackError

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hostile.specpack"
        for name, build in shapes().items():
            if names and name not in names:
                continue
            data = build()
            path.write_bytes(data)
            del data
            for label, call in _calls(path):
                before = _rss_mb()
                per_call = _reset_peak()
                start, cpu = time.perf_counter(), time.process_time()
                try:
                    result = call()
                    outcome = "ok"
                except SpecPackError as e:
                    outcome = f"{type(e).__name__}: {str(e)[:400]}"
                except BaseException as e:
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    outcome = f"BUG {type(e).__name__}: {str(e)[:200]}"
                seconds = time.perf_counter() - start
                cpu = time.process_time() - cpu
                peak = _peak_mb(per_call) - before
                result = None
                del result
                rows.append({"file": name, "size": path.stat().st_size, "call": label,
                             "outcome": outcome, "seconds": round(seconds, 3),
                             "cpu_seconds": round(cpu, 3),
                             "peak_mb": round(max(peak, 0.0), 1), "per_call_peak": per_call})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command line: measure and print; exit 1 if any call broke a limit or escaped."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    parser.add_argument("--only", action="append", help="only this file (repeatable)")
    ns = parser.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    rows = measure(ns.only)
    bad = [r for r in rows if r["outcome"].startswith("BUG") or r["seconds"] > SECONDS
           or r["peak_mb"] > PEAK_MB]
    for r in rows:
        if ns.json:
            print(json.dumps(r))
        else:
            print(f"{r['file'][:36]:36} {r['size']:>9} {r['call']:10} {r['seconds']:7.3f} s "
                  f"{r['peak_mb']:7.1f} MB  {r['outcome'][:70]}")
    if not ns.json:
        print(f"\n{len(rows)} calls; {len(bad)} over {SECONDS} s / {PEAK_MB} MB or escaped"
              + (f" (peak per call: {rows[0]['per_call_peak']})" if rows else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    raise SystemExit(main())
