"""A kwarg reaches the env exactly as captured; which kwargs count as files; the cache is private.

The rule (specpack._core._assets' docstring, docs/another-machine.md): a value counts as a file when
it is a pathlib path or a str written as a path (absolute, ``~``, ``./``, ``../``, a separator,
or a file extension) AND names an existing regular file. ``"rgb_array"`` and ``"4x4"`` never
count, whatever the working directory holds; counted relative paths are made absolute at
capture (``pack.kwargs`` shows them); ``make()`` rewrites only carried assets.

The end-to-end cases run in fresh interpreters and spawn workers in a folder holding files
named ``rgb_array``, ``4x4`` and ``human`` (the reported bug: such a folder turned
``render_mode="rgb_array"`` into ``"/cwd/rgb_array"`` at ``make()``).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import pickle
import stat
import sys
import textwrap
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from _helpers import run_python

import specpack
from specpack._core import _assets, _capture, _needs
from specpack._core._assets import (
    Asset,
    carried_bytes,
    counts_as_file,
    materialize,
    read_asset,
    written_as_path,
)
from specpack._core._needs import absolute_kwargs, entry_defaults

#: A tiny env reading the first byte of the file it is given (importable from the test folder).
ENV_MODULE = '''
import gymnasium
import numpy as np


class FileEnv(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(0, 255, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, data_file, others=()):
        self.data_file = data_file
        self.others = others
        with open(data_file, "rb") as fh:
            self.value = float(fh.read()[0])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([self.value], np.float32), {}

    def step(self, action):
        return np.array([self.value], np.float32), 0.0, True, False, {}
'''

#: Captures in the folder holding the word files, then builds each pack here and in a spawn
#: worker; prints one JSON line.
WORDS_SCRIPT = '''
import json, multiprocessing, os, pickle, sys, warnings
import specpack

SELF = sys.argv[1] == "carried"


def built(blob):
    pack = pickle.loads(blob)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")  # gymnasium warns of a render_mode it does not know
        cart = pack[0].make()
        lake = pack[1].make()
    return [cart.unwrapped.render_mode, ["".join(map(bytes.decode, r)) for r in lake.unwrapped.desc],
            lake.unwrapped.render_mode, [str(w.message) for w in seen if "render" in str(w.message)]]


if __name__ == "__main__":
    assert sorted(os.listdir(".")) == ["4x4", "human", "rgb_array", "words.py"], os.listdir(".")
    cart = specpack.capture("CartPole-v1", render_mode="rgb_array", self_contained=SELF)
    lake = specpack.capture("FrozenLake-v1", map_name="4x4", render_mode="human",
                            self_contained=SELF)
    blob = pickle.dumps((cart, lake))
    out = {"kwargs": [dict(cart.kwargs), dict(lake.kwargs)],
           "assets": [len(cart.assets), len(lake.assets)], "here": built(blob)}
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        out["spawn"] = pool.apply(built, (blob,))
    print(json.dumps(out))
'''


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private asset cache per test (never the user's own)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPECPACK_CACHE", str(cache))
    return cache


@pytest.fixture
def word_folder(tmp_path: Path) -> Path:
    """A working folder holding files named like the plain words kwargs take."""
    here = tmp_path / "cwd"
    here.mkdir()
    for word in ("rgb_array", "4x4", "human"):
        (here / word).write_text("a file that happens to be named like a word\n")
    return here


@pytest.mark.parametrize("mode", ["checked", "carried"])
def test_a_word_kwarg_reaches_the_env_exactly_whatever_files_the_cwd_holds(
        word_folder: Path, tmp_path: Path, mode: str) -> None:
    """Fails on 1161eb9: make() built render_mode='<cwd>/rgb_array' and raised
    KeyError '<cwd>/4x4' for FrozenLake, while pack.kwargs said the plain words."""
    (word_folder / "words.py").write_text(WORDS_SCRIPT)
    env = {**os.environ, "SPECPACK_CACHE": str(tmp_path / "cache")}
    done = run_python(["words.py", mode], cwd=word_folder, env=env)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["kwargs"] == [{"render_mode": "rgb_array"},
                             {"map_name": "4x4", "render_mode": "human"}]
    assert got["assets"] == [0, 0]  # no word is taken for a file
    four_by_four = ["SFFF", "FHFH", "FFFH", "HFFG"]
    for where in ("here", "spawn"):
        assert got[where] == ["rgb_array", four_by_four, "human", []], where


FILE_SCRIPT = '''
import json, multiprocessing, os, pickle, shutil, sys
from pathlib import Path
import specpack
from fileenv import FileEnv


def first(blob):
    env = pickle.loads(blob).make()
    return [env.unwrapped.value, str(env.unwrapped.data_file), list(env.unwrapped.others)]


def build(blob):
    try:
        return first(blob)
    except specpack.AssetError as e:
        return "AssetError: " + str(e)


if __name__ == "__main__":
    out = {}
    spawn = multiprocessing.get_context("spawn").Pool(1)
    for name, given in (("str", "robot.xml"), ("dot", "./rgb_array"), ("path", Path("robot.xml"))):
        pack = specpack.capture(FileEnv, data_file=given, others=["maps/level.json", "4x4"])
        blob = pickle.dumps(pack)
        out[name] = {"kwargs": {k: str(v) for k, v in pack.kwargs.items() if k == "data_file"},
                     "others": list(pack.kwargs["others"]),
                     "assets": sorted(a.path for a in pack.assets),
                     "here": first(blob), "spawn": spawn.apply(build, (blob,))}
    carried = pickle.dumps(specpack.capture(FileEnv, data_file="robot.xml", self_contained=True))
    checked = pickle.dumps(specpack.capture(FileEnv, data_file="robot.xml"))
    Path("robot.xml").write_bytes(b"Zother bytes at the captured path")
    out["changed"] = {"checked": spawn.apply(build, (checked,)),
                      "carried": spawn.apply(build, (carried,))}
    spawn.close()
    print(json.dumps(out))
'''


def test_a_file_written_as_a_path_is_found_made_absolute_checked_and_carried(
        word_folder: Path, tmp_path: Path) -> None:
    """robot.xml (an extension), ./rgb_array and Path(...) count; a nested relative path is
    made absolute at capture (1161eb9 left nested ones relative in pack.kwargs); "4x4" nested
    beside it is left as it is."""
    (word_folder / "fileenv.py").write_text(ENV_MODULE)
    (word_folder / "robot.xml").write_bytes(b"Robot")
    (word_folder / "maps").mkdir()
    (word_folder / "maps" / "level.json").write_text("{}")
    (word_folder / "files.py").write_text(FILE_SCRIPT)
    env = {**os.environ, "SPECPACK_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(word_folder), os.environ.get("PYTHONPATH", "")])}
    done = run_python(["files.py"], cwd=word_folder, env=env)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    robot, level = str(word_folder / "robot.xml"), str(word_folder / "maps" / "level.json")
    word = str(word_folder / "rgb_array")
    for name, path, byte in (("str", robot, "R"), ("dot", word, "a"), ("path", robot, "R")):
        case = got[name]
        assert case["kwargs"] == {"data_file": path}, name
        assert case["others"] == [level, "4x4"], name  # nested: absolute; the word: as given
        assert case["assets"] == sorted([path, level]), name
        assert case["here"] == case["spawn"] == [ord(byte), path, [level, "4x4"]], name
    assert got["changed"]["checked"].startswith("AssetError: ")
    assert "differs from the captured one" in got["changed"]["checked"]
    value, local, _ = got["changed"]["carried"]  # the carried copy, from the private cache
    assert value == ord("R") and local.startswith(str(tmp_path / "cache"))


# --- the rule, one function -------------------------------------------------------------------

@pytest.mark.parametrize(("text", "counts"), [
    ("rgb_array", False), ("4x4", False), ("human", False), ("1.5", False), ("v1.0", False),
    ("CartPole-v1", False), ("x.", False), ("", False), ("3.14159265", False),
    ("robot.xml", True), ("a.tar.gz", True), ("level.JSON", True), ("./rgb_array", True),
    ("../4x4", True), ("~/robot", True), ("~", True), ("/abs/human", True), ("maps/4x4", True),
    ("name.abcdefgh", True), ("name.abcdefghi", False), ("0.5x", True),
])
def test_which_strings_are_written_as_a_path(text: str, counts: bool) -> None:
    assert written_as_path(text) is counts


def test_a_value_counts_only_when_written_as_a_path_and_naming_a_regular_file(
        word_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(word_folder)
    (word_folder / "robots").mkdir()
    (word_folder / "robots" / "robot.xml").write_text("<mujoco/>")
    assert [counts_as_file(w) for w in ("rgb_array", "4x4", "human")] == [None] * 3
    assert counts_as_file("./4x4") == str(word_folder / "4x4")
    assert counts_as_file(Path("human")) == str(word_folder / "human")
    assert counts_as_file("robots/robot.xml") == str(word_folder / "robots" / "robot.xml")
    assert counts_as_file("missing.xml") is None and counts_as_file("/") is None
    assert counts_as_file("./robots") is None  # a folder: only when named in assets=[...]
    named = [str(word_folder / "robots")]
    assert counts_as_file("./robots", named) == named[0]
    assert counts_as_file(7) is None and counts_as_file(b"robot.xml") is None


class FirstByteEnv(gymnasium.Env):  # type: ignore[type-arg]
    """Observes the first byte of the file it is given."""

    observation_space = gymnasium.spaces.Box(0, 255, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, data_file: str) -> None:
        self.data_file = data_file
        with open(data_file, "rb") as fh:
            self.value = fh.read()[0]


def test_a_file_the_rule_cannot_tell_counts_once_named_in_assets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "layout").write_bytes(b"Layout")
    plain = specpack.capture(FirstByteEnv, data_file="layout")  # no extension, no separator
    assert plain.assets == () and plain.kwargs["data_file"] == "layout"
    named = specpack.capture(FirstByteEnv, data_file="layout", assets=["layout"],
                             self_contained=True)
    assert named.kwargs["data_file"] == str(tmp_path / "layout")  # what the env is given
    assert [a.path for a in named.assets] == [str(tmp_path / "layout")]
    (tmp_path / "layout").unlink()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    env = named.make()
    assert env.unwrapped.value == ord("L")
    assert env.unwrapped.data_file.startswith(str(tmp_path / "cache" / "assets"))


def test_nested_relative_paths_are_made_absolute_at_capture_and_shown_in_pack_kwargs(
        word_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails on 1161eb9: only top-level relative paths were made absolute (nested ones were
    rewritten at make() instead, unseen in pack.kwargs)."""
    monkeypatch.chdir(word_folder)
    (word_folder / "level.json").write_text("{}")
    lowered = {"maps": ["level.json", "4x4", {"deep": ("./human", 3)}], "mode": "rgb_array",
               "same": [1, 2], "abs": str(word_folder / "level.json")}
    out = absolute_kwargs(lowered)
    assert out == {"maps": [str(word_folder / "level.json"), "4x4",
                            {"deep": (str(word_folder / "human"), 3)}]}
    assert lowered["maps"][0] == "level.json"  # a copy
    pack = specpack.capture("CartPole-v1", render_mode="rgb_array")
    assert dict(pack.kwargs) == {"render_mode": "rgb_array"} and pack.assets == ()


# --- issue 32: nothing is scanned unless a kwarg could name a file ---------------------------

def test_a_capture_with_no_path_like_kwarg_reads_no_signature_and_scans_nothing(
        word_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts work, not time. Fails on 1161eb9: every capture read the entry point's
    signature (``inspect.signature``) and ran the file scan."""
    monkeypatch.chdir(word_folder)
    calls: list[str] = []
    real_signature = inspect.signature

    def counted_signature(obj: Any, *args: Any, **kwargs: Any) -> inspect.Signature:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("specpack._core._needs") or caller.startswith("specpack._core._assets"):
            calls.append(f"signature from {caller}")
        return real_signature(obj, *args, **kwargs)

    def counted(name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(inspect, "signature", counted_signature)
    monkeypatch.setattr(_needs, "find_assets", counted("find_assets", _needs.find_assets))
    monkeypatch.setattr(_needs, "find_paths", counted("find_paths", _needs.find_paths))
    monkeypatch.setattr(_needs, "read_asset", counted("read_asset", _needs.read_asset))
    for target, kwargs in (("CartPole-v1", {"render_mode": "rgb_array"}),
                           ("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False}),
                           ("CartPole-v1", {})):
        _capture._memo.clear()
        _needs._defaults_memo.clear()  # the first capture of the entry point in a process
        specpack.capture(target, **kwargs)
    assert calls == []
    specpack.capture("CartPole-v1", render_mode="./rgb_array")  # written as a path: looked at
    assert "find_assets" in calls


def test_entry_defaults_without_signature_agree_with_inspect(tmp_path: Path) -> None:
    data = str(tmp_path / "data.bin")
    rel = "relative.xml"

    def fn(a, b=data, /, c=rel, d=data, *, e=data, f=3):  # type: ignore[no-untyped-def]
        """b is positional-only: not passable by keyword, so never an asset kwarg."""

    class Env:
        def __init__(self, x=data, y=None, *, z=Path(data)) -> None:  # type: ignore[no-untyped-def]
            pass

    class Child(Env):
        pass

    class WithNew:
        def __new__(cls, q=data):  # type: ignore[no-untyped-def]
            return super().__new__(cls)

    part = functools.partial(fn, 1, d="/other/x.bin")
    for entry in (fn, Env, Child, WithNew, part, object, len):
        expected = {p.name: p.default for p in _signature_params(entry)
                    if isinstance(p.default, (str, os.PathLike))
                    and os.path.isabs(os.fspath(p.default))}
        assert entry_defaults(entry, {}) == expected, entry
    assert entry_defaults(Env, {"x": "given"}) == {"z": Path(data)}
    Env.__init__.__defaults__ = ("/changed/x.xml", None)  # read again, not from the memo
    assert entry_defaults(Env, {})["x"] == "/changed/x.xml"


def _signature_params(entry: Any) -> list[inspect.Parameter]:
    try:
        params = inspect.signature(entry).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p for p in params if p.default is not p.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


# --- max_asset_bytes: every byte carried ------------------------------------------------------

def test_max_asset_bytes_counts_names_and_entry_headers_of_a_folder_of_empty_files(
        tmp_path: Path) -> None:
    """Fails on 1161eb9: only file contents counted, so 3,000 empty files with long names
    (about 600 kB of names) went through a 64 KiB limit."""
    folder = tmp_path / "levels"
    folder.mkdir()
    for i in range(3000):
        (folder / f"{i:04d}-{'n' * 190}").touch()
    with pytest.raises(specpack.CaptureError) as e:
        specpack.capture("CartPole-v1", assets=[folder], self_contained=True,
                         max_asset_bytes=64 * 1024)
    message = str(e.value)
    assert str(folder) in message and "every name and entry header" in message
    assert "65,536 bytes" in message and "max_asset_bytes=" in message
    pack = specpack.capture("CartPole-v1", assets=[folder], self_contained=True,
                            max_asset_bytes=1 << 20)
    [asset] = pack.assets
    assert asset.size == 0 and carried_bytes(asset) > 3000 * 190  # names are what it carries
    assert carried_bytes(asset) <= 1 << 20
    # exactly at the limit passes; one byte under it does not
    exact = carried_bytes(asset)
    specpack.capture("CartPole-v1", assets=[folder], self_contained=True, max_asset_bytes=exact)
    with pytest.raises(specpack.CaptureError):
        specpack.capture("CartPole-v1", assets=[folder], self_contained=True,
                         max_asset_bytes=exact - 1)


def test_max_asset_bytes_bounds_the_sum_over_every_carried_asset(tmp_path: Path) -> None:
    files = []
    for name in ("a.bin", "b.bin"):
        (tmp_path / name).write_bytes(b"x" * 600)
        files.append(tmp_path / name)
    one = carried_bytes(read_asset(files[0], carry=True))
    with pytest.raises(specpack.CaptureError, match="max_asset_bytes"):
        specpack.capture("CartPole-v1", assets=files, self_contained=True,
                         max_asset_bytes=2 * one - 1)
    pack = specpack.capture("CartPole-v1", assets=files, self_contained=True,
                            max_asset_bytes=2 * one)
    assert sum(carried_bytes(a) for a in pack.assets) == 2 * one


# --- the asset cache is the user's alone ------------------------------------------------------

as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="giving a folder to another user needs root")
NOBODY = 65534


def _carried(tmp_path: Path) -> Asset:
    xml = tmp_path / "ant.xml"
    xml.write_text("<mujoco/>")
    return read_asset(xml, carry=True)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_cache_is_created_0700_and_its_entries_are_not_writable_by_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECPACK_CACHE", str(tmp_path / "new" / "specpack"))
    old = os.umask(0)  # the most permissive umask: the modes are specpack's own
    try:
        folder = tmp_path / "robot"
        (folder / "meshes").mkdir(parents=True)
        (folder / "meshes" / "leg.stl").write_bytes(b"solid")
        assets = [_carried(tmp_path), read_asset(folder, carry=True)]
        mapping = materialize(assets)
    finally:
        os.umask(old)
    root = tmp_path / "new" / "specpack" / "assets"
    for created in (tmp_path / "new", tmp_path / "new" / "specpack", root,
                    root / assets[0].sha256, Path(mapping[str(folder)]),
                    Path(mapping[str(folder)]) / "meshes"):
        assert _mode(created) == 0o700, created
    for written in (Path(mapping[assets[0].path]), Path(mapping[str(folder)]) / "meshes" / "leg.stl"):
        assert _mode(written) == 0o600, written


@pytest.mark.parametrize("mode", [0o770, 0o777, 0o1777, 0o720])
def test_a_cache_folder_others_can_write_is_refused_naming_it_and_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int) -> None:
    root = tmp_path / "shared" / "assets"
    root.mkdir(parents=True)
    root.chmod(mode)
    monkeypatch.setenv("SPECPACK_CACHE", str(tmp_path / "shared"))
    with pytest.raises(specpack.AssetError) as e:
        materialize([_carried(tmp_path)], label="CustomAnt-v0")
    message = str(e.value)
    assert message.startswith("CustomAnt-v0: the asset cache ")
    assert str(root) in message and "writable by" in message
    assert "set SPECPACK_CACHE to a folder of your own" in message
    assert os.listdir(root) == []  # nothing written into it


def test_a_folder_above_the_cache_others_can_rename_in_is_refused_sticky_tmp_is_fine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    above = tmp_path / "group"
    above.mkdir()
    above.chmod(0o775)
    monkeypatch.setenv("SPECPACK_CACHE", str(above / "mine"))
    with pytest.raises(specpack.AssetError, match=f"the folder {above} above it is writable by "
                                                  "its group"):
        materialize([_carried(tmp_path)])
    above.chmod(0o1777)  # like /tmp: others cannot rename what is ours in it
    asset = _carried(tmp_path)
    assert materialize([asset])[asset.path].startswith(str(above / "mine" / "assets"))


@as_root
def test_a_cache_owned_by_another_user_is_refused_in_a_fresh_interpreter(
        tmp_path: Path) -> None:
    """Fails on 1161eb9: a cache folder another user made first (or owns) was used."""
    xml = tmp_path / "ant.xml"
    xml.write_text("<mujoco/>")
    pack = specpack.capture("CartPole-v1", assets=[xml], self_contained=True)
    (tmp_path / "pack.pkl").write_bytes(pickle.dumps(pack))
    script = textwrap.dedent(f"""
        import pickle, specpack
        pack = pickle.load(open({str(tmp_path / "pack.pkl")!r}, "rb"))
        try:
            pack.make()
            print("BUILT")
        except specpack.AssetError as e:
            print("AssetError:", e)
    """)
    results = {}
    for case in ("root", "above"):
        base = tmp_path / case
        root = base / "assets"
        root.mkdir(parents=True)
        os.chown(root if case == "root" else base, NOBODY, NOBODY)
        done = run_python(["-c", script], cwd=tmp_path,
                          env={**os.environ, "SPECPACK_CACHE": str(base)})
        assert done.returncode == 0, done.stderr
        results[case] = done.stdout
    assert "AssetError:" in results["root"] and f"{tmp_path / 'root' / 'assets'}" in results["root"]
    assert f"owned by uid {NOBODY}" in results["root"] and "not by you" in results["root"]
    assert f"the folder {tmp_path / 'above'} above it is owned by uid {NOBODY}" in results["above"]
    for out in results.values():
        assert "set SPECPACK_CACHE to a folder of your own" in out and "BUILT" not in out


@as_root
def test_a_cache_entry_owned_by_another_user_or_writable_by_others_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECPACK_CACHE", str(tmp_path / "cache"))
    asset = _carried(tmp_path)
    local = Path(materialize([asset])[asset.path])
    os.chown(local, NOBODY, NOBODY)
    with pytest.raises(specpack.AssetError, match=f"entry {local} is owned by uid {NOBODY}"):
        materialize([asset])
    os.chown(local, 0, 0)
    local.chmod(0o666)
    with pytest.raises(specpack.AssetError, match="writable by everyone") as e:
        materialize([asset])
    assert "remove it" in str(e.value)
    local.chmod(0o600)
    assert materialize([asset]) == {asset.path: str(local)}
    assert hashlib.sha256(local.read_bytes()).hexdigest() == asset.sha256


def test_a_not_carried_asset_maps_to_itself_and_remap_leaves_its_kwarg_as_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rgb_array").write_text("x")
    checked = read_asset(tmp_path / "rgb_array", carry=False)
    mapping = materialize([checked])
    assert mapping == {checked.path: checked.path}
    kwargs = {"render_mode": "rgb_array", "f": "./rgb_array", "g": ["rgb_array"]}
    assert _assets.remap(kwargs, mapping) == kwargs
    carried = read_asset(tmp_path / "rgb_array", carry=True)
    local = materialize([carried])[carried.path]
    # carried: a value written as a path is remapped; the word is still never a path
    assert _assets.remap(kwargs, {carried.path: local}) == {
        "render_mode": "rgb_array", "f": local, "g": ["rgb_array"]}
