"""Hostile pack files are refused or loaded cheaply, and exactly.

A hostile file is refused (or loaded) in under 5 s of CPU and 200 MB, and only a
``SpecPackError`` escapes. Each call is measured in a fresh interpreter under ``RLIMIT_AS`` of
1 GB: CPU time with ``process_time`` (load stretches wall time, not work; a call that blocks is
stopped at 60 s), memory as the growth of ``ru_maxrss`` during the call; a ``MemoryError``
or a crash is a failure. Lenient parsing (non-finite numbers, fractional values in integer
arrays, ``int()``'s extras) is refused with ``PackFormatError``; what ``dump`` writes, ``load``
reads back equal; ``--key-file`` means the same key bytes as ``key=``; ``inspect --json``
prints no raw control characters.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _helpers import run_python

import specpack
from specpack import PackFormatError, SpecPack, SpecPackError

TESTS = Path(__file__).resolve().parents[2]
FIXTURES = TESTS / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import trustenvs  # noqa: E402

pytestmark = pytest.mark.integration

#: Address-space limit of the measuring interpreter, and the bounds every call must meet.
AS_LIMIT = 1 << 30
MAX_SECONDS = 5.0  # of CPU: these calls take at most ~0.9 s of it under coverage
MAX_GROWTH_MB = 200.0

HARNESS = r'''
import contextlib, io, json, resource, sys, time
limit, call, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import specpack, specpack._tools._cli, specpack.files


def run():
    if call == "load":
        return specpack.load(path)
    if call == "load-allow":
        return specpack.load(path, allow=["gymnasium"])
    if call == "describe":
        return specpack.files.describe(path)
    if call == "inspect":
        return specpack._tools._cli.main(["inspect", path])
    if call == "inspect-json":
        return specpack._tools._cli.main(["inspect", "--json", path])
    raise SystemExit("unknown call " + call)


before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out, err = io.StringIO(), io.StringIO()
error = result = None
start = time.process_time()
try:
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        result = run()
except BaseException as e:
    error = e
elapsed = time.process_time() - start
grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
stderr = err.getvalue()
out = err = None
print(json.dumps({
    "elapsed": elapsed,
    "grew_mb": grew,
    "error": None if error is None else type(error).__module__ + "." + type(error).__qualname__,
    "specpack_error": isinstance(error, specpack.SpecPackError),
    "untrusted": isinstance(error, specpack.UntrustedPackError),
    "message": "" if error is None else str(error)[:400],
    "exit": result if type(result) is int else None,
    "stderr": stderr[-1000:],
}))
'''


def _measure(call: str, path: Path, cwd: Path) -> dict[str, Any]:
    """Run ``call`` on ``path`` in a fresh, memory-limited interpreter; its measurements."""
    try:
        proc = run_python(["-c", HARNESS, str(AS_LIMIT), call, str(path)], cwd=cwd, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{call} of {path.name} ran for more than 60 s (the bound is "
                    f"{MAX_SECONDS:g} s of CPU)")
    assert proc.returncode == 0, (
        f"the interpreter running {call} of {path.name} crashed (exit {proc.returncode}):\n"
        f"{proc.stderr[-3000:]}"
    )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _assert_bounded(r: dict[str, Any], call: str) -> None:
    assert r["error"] is None or r["specpack_error"], (
        f"{call} raised {r['error']} (only SpecPackError may escape): {r['message']}")
    if call.startswith("inspect"):  # the CLI turns any error into exit 2 and one line
        assert r["exit"] in (0, 2) and "unexpected" not in r["stderr"], r
    assert r["elapsed"] < MAX_SECONDS, f"{call} took {r['elapsed']:.1f} s of CPU"
    assert r["grew_mb"] < MAX_GROWTH_MB, f"{call} grew the peak memory by {r['grew_mb']:.0f} MB"


def _cartpole_manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(specpack.capture("CartPole-v1").to_json())
    return data


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


# -- reading a file costs what the file holds ---------------------------------------------


@pytest.mark.parametrize("call", ["load", "describe", "inspect"])
def test_a_small_pack_file_reads_under_a_1_gb_address_space_limit(
        tmp_path: Path, call: str) -> None:
    path = tmp_path / "cartpole.specpack"
    specpack.dump(specpack.capture("CartPole-v1"), path)
    r = _measure(call, path, tmp_path)
    assert r["error"] is None and r["exit"] in (None, 0), r
    _assert_bounded(r, call)


# -- 8. a long key over a long list -------------------------------------------------------


@pytest.mark.parametrize("call", ["load", "load-allow", "describe", "inspect", "inspect-json"])
def test_manifest_with_a_100000_char_kwarg_key_over_40000_items_is_cheap_to_read(
        tmp_path: Path, call: str) -> None:
    data = _cartpole_manifest()
    data["kwargs"] = {"K" * 100_000: [0] * 40_000}
    path = _write(tmp_path / "longkey.specpack", data)
    assert 150_000 < path.stat().st_size < 300_000
    _assert_bounded(_measure(call, path, tmp_path), call)


# -- 9. many refused references ---------------------------------------------------------


def test_60000_refs_outside_allow_are_refused_within_5_seconds(tmp_path: Path) -> None:
    data = _cartpole_manifest()
    data["kwargs"] = {"refs": [{"$ref": f"evil_mod_{i}:f{i}"} for i in range(60_000)]}
    path = _write(tmp_path / "refs.specpack", data)
    r = _measure("load-allow", path, tmp_path)
    _assert_bounded(r, "load-allow")
    assert r["untrusted"], r


# -- 10. hash-colliding ints ------------------------------------------------------------

_M61 = 2**61 - 1  # CPython hashes ints modulo 2**61 - 1: every multiple hashes to 0


@pytest.mark.parametrize("tag", ["$set", "$frozenset", "$dict"])
def test_60000_hash_colliding_int_keys_are_refused_or_loaded_within_5_seconds(
        tmp_path: Path, tag: str) -> None:
    ints = [k * _M61 for k in range(1, 60_001)]
    assert len({hash(i) for i in ints}) == 1 and min(ints) > 2**53
    nodes = [{"$int": str(i)} for i in ints]
    body = [[n, 0] for n in nodes] if tag == "$dict" else nodes
    data = _cartpole_manifest()
    data["kwargs"] = {"x": {tag: body}}
    path = _write(tmp_path / "collide.specpack", data)
    _assert_bounded(_measure("load", path, tmp_path), "load")


# -- 11. the same key through key= and --key-file ---------------------------------------


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "specpack", *args], cwd=cwd, timeout=120,
                          capture_output=True, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    return subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode("utf-8", "surrogateescape"),
                                       proc.stderr.decode("utf-8", "surrogateescape"))


def test_key_file_holding_the_raw_key_bytes_verifies_what_key_signed(tmp_path: Path) -> None:
    key = b" " + secrets.token_bytes(31) + b"\n"  # whitespace is part of this key
    pack = specpack.capture("CartPole-v1", max_episode_steps=20)
    path = tmp_path / "signed.specpack"
    specpack.dump(pack, path, key=key)
    assert specpack.load(path, key=key) == pack
    (tmp_path / "key.bin").write_bytes(key)
    (tmp_path / "other.bin").write_bytes(b" " + secrets.token_bytes(31) + b"\n")
    wrong = _cli(["inspect", str(path), "--key-file", "other.bin"], tmp_path)
    assert wrong.returncode == 2, wrong.stdout + wrong.stderr  # control: keys are checked
    inspect = _cli(["inspect", str(path), "--key-file", "key.bin"], tmp_path)
    assert inspect.returncode == 0, inspect.stdout + inspect.stderr
    signature = next(ln for ln in inspect.stdout.splitlines() if ln.startswith("signature"))
    assert signature.split()[1] == "valid", signature
    verify = _cli(["verify", str(path), "--key-file", "key.bin", "--steps", "5"], tmp_path)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_key_file_is_read_whole_up_to_1_mib_and_a_larger_one_is_refused(tmp_path: Path) -> None:
    # The first MiB of a longer key file used to be taken as the key, silently: a file signed
    # with the file's bytes as key= did not load with --key-file.
    from specpack.files import read_key

    pack = specpack.capture("CartPole-v1", max_episode_steps=20)
    full = secrets.token_bytes(1 << 20)  # exactly the most a key holds
    (tmp_path / "full.key").write_bytes(full)
    assert read_key(tmp_path / "full.key") == full
    specpack.dump(pack, tmp_path / "full.specpack", key=full)
    ok = _cli(["inspect", "full.specpack", "--key-file", "full.key"], tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "signature valid" in " ".join(ok.stdout.split()), ok.stdout

    longer = full + b"tail"
    (tmp_path / "long.key").write_bytes(longer)
    with pytest.raises(specpack.SignatureError, match="holds more than 1,048,576 bytes"):
        read_key(tmp_path / "long.key")
    with pytest.raises(specpack.SignatureError, match="more than the 1,048,576"):
        specpack.dump(pack, tmp_path / "long.specpack", key=longer)
    refused = _cli(["inspect", "full.specpack", "--key-file", "long.key"], tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "long.key: the key file holds more than 1,048,576 bytes" in refused.stderr
    assert "Traceback" not in refused.stderr


# -- 11b. requires: distribution names and versions only --------------------------------


@pytest.mark.parametrize(("name", "version", "shown"), [
    ("--extra-index-url=https://evil.example/simple", "1", "'--extra-index-url=https://evil"),
    ("numpy; rm -rf ~", "1", "'numpy; rm -rf ~'"),
    ("gym\nINJECTED", "1", "'gym\\nINJECTED'"),
    ("numpy", "1.0 --index-url=https://evil.example", "the version '1.0 --index-url"),
    ("numpy", ">=1", "the version '>=1'"),
    ("numpy", "", "the version ''"),
])
def test_a_requires_entry_that_is_not_a_name_and_version_is_refused_at_load(
        tmp_path: Path, name: str, version: str, shown: str) -> None:
    data = _cartpole_manifest()
    data["requires"] = {"gymnasium": "1.0.0", name: version}
    path = _write(tmp_path / "requires.specpack", data)
    with pytest.raises(PackFormatError) as info:
        specpack.load(path)
    msg = str(info.value)
    assert "field 'requires'" in msg and shown in msg, msg
    assert "\n" not in msg
    proc = _cli(["inspect", str(path)], tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "field 'requires'" in proc.stderr and "pip install" not in proc.stdout + proc.stderr


def test_pep_440_versions_and_pep_508_names_load(tmp_path: Path) -> None:
    data = _cartpole_manifest()
    data["requires"] = {"gymnasium": "1.0.0", "torch": "2.13.0+cpu", "zope.interface": "6.0",
                        "my_pkg-x": "1!2.0rc1.post2.dev3", "a": "0"}
    path = _write(tmp_path / "requires.specpack", data)
    assert specpack.load(path).requires["torch"] == "2.13.0+cpu"


# -- 12. huge ints: what dump writes, load reads -----------------------------------------


def test_dump_of_a_400000_bit_int_kwarg_loads_back_equal_or_is_refused(tmp_path: Path) -> None:
    big = 1 << 400_000
    path = tmp_path / "big.specpack"
    try:
        pack = specpack.capture(trustenvs.Plain, by_value=False, big=big)
        specpack.dump(pack, path)
    except SpecPackError:
        return  # refusing to capture or write it is fine; writing what cannot be read is not
    loaded = specpack.load(path)
    assert loaded.kwargs["big"] == big
    assert loaded.fingerprint == pack.fingerprint


# -- 13. lenient parsing ------------------------------------------------------------------

LENIENT = {
    "number 1e999999 (inf)": "1e999999",
    "number -1e999999 (-inf)": "-1e999999",
    "complex part 1e999999": '{"$complex": [1e999999, 0.0]}',
    "<i4 array value 1.5": '{"$ndarray": {"dtype": "<i4", "shape": [1], "values": [1.5]}}',
    "<i4 scalar value 1.5": '{"$npscalar": {"dtype": "<i4", "value": 1.5}}',
    "$int 1_000": '{"$int": "1_000"}',
    "$int ' 1000'": '{"$int": " 1000"}',
    "$int 1_000_000_000_000_000_000": '{"$int": "1_000_000_000_000_000_000"}',
    "$int ' 10000000000000000000'": '{"$int": " 10000000000000000000"}',
    "$int '10000000000000000000\\n'": '{"$int": "10000000000000000000\\n"}',
}


@pytest.mark.parametrize("node", list(LENIENT.values()), ids=list(LENIENT))
def test_lenient_manifest_values_are_refused_with_pack_format_error(
        tmp_path: Path, node: str) -> None:
    data = _cartpole_manifest()
    data["kwargs"] = {"x": "__NODE__"}
    text = json.dumps(data).replace('"__NODE__"', node)
    assert json.loads(text)["kwargs"]["x"] is not None  # well-formed JSON
    path = tmp_path / "lenient.specpack"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PackFormatError):
        got = specpack.load(path)
        pytest.fail(f"load accepted {node} as {got.kwargs['x']!r}")
    with pytest.raises(PackFormatError):
        SpecPack.from_json(text)


# -- 14. control characters in inspect --json ----------------------------------------------


def test_inspect_json_prints_no_raw_c1_or_bidi_control_characters(tmp_path: Path) -> None:
    data = _cartpole_manifest()
    data["id"] = "Cart\u009b31mPole\u202e-v1"
    data["kwargs"] = {"k\u009b2J\u202eey": 1}
    path = _write(tmp_path / "controls.specpack", data)
    for args in (["inspect", str(path)], ["inspect", "--json", str(path)]):
        proc = _cli(args, tmp_path)
        assert proc.returncode == 0, proc.stderr
        raw = sorted({hex(ord(c)) for c in proc.stdout if not c.isprintable() and c != "\n"})
        assert not raw, f"`specpack {' '.join(args[:-1])}` printed raw {raw}"
        assert "Pole" in proc.stdout


# -- 20. only a regular file is read --------------------------------------------------------


@pytest.mark.parametrize("call", ["load", "describe", "inspect"])
def test_a_fifo_at_the_path_is_refused_at_once_not_waited_on(tmp_path: Path, call: str) -> None:
    fifo = tmp_path / "pipe.specpack"
    os.mkfifo(fifo)  # nobody ever writes to it: a reader that opens it blocks forever
    r = _measure(call, fifo, tmp_path)  # a fresh interpreter, killed after 60 s
    _assert_bounded(r, call)
    if call == "inspect":
        assert r["exit"] == 2, r
        said = r["stderr"]
    else:
        assert r["error"] == "specpack.PackFormatError", r
        said = r["message"]
    assert "is a FIFO (named pipe), not a pack file" in said, r


def test_python_m_specpack_inspect_of_a_fifo_exits_with_the_reason(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.specpack"
    os.mkfifo(fifo)
    proc = run_python(["-m", "specpack", "inspect", str(fifo)], cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "is a FIFO (named pipe)" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("kind", ["directory", "character device", "socket"])
def test_load_and_describe_refuse_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    import socket

    path: str | Path = tmp_path / "thing"
    sock = None
    if kind == "directory":
        Path(path).mkdir()
    elif kind == "character device":
        path = os.devnull
    else:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    try:
        for call in (specpack.load, specpack.files.describe):
            with pytest.raises(PackFormatError, match=f"is a {kind}, not a pack file"):
                call(path)
    finally:
        if sock is not None:
            sock.close()
    with pytest.raises(PackFormatError, match="no such file"):  # unchanged
        specpack.load(tmp_path / "missing.specpack")
