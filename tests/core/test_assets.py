"""specpack._core._assets: the files an env is given, found, read, checked, carried and materialised.

Hostile archives, links, FIFOs, size limits, a cache that is read-only or full, an entry altered
on disk, and several spawn workers materialising the same asset at once (real processes).
"""

from __future__ import annotations

import collections
import hashlib
import multiprocessing
import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from specpack import AssetError, BuildError, CaptureError
from specpack._core._assets import Asset, check_assets, find_paths, materialize, read_asset, remap

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPECPACK_CACHE", str(cache))
    return cache


def _robot(folder: Path) -> Path:
    """A robot folder whose main XML includes a neighbour and a mesh in a subfolder."""
    (folder / "meshes").mkdir(parents=True)
    (folder / "robot.xml").write_text('<mujoco><include file="part.xml"/></mujoco>')
    (folder / "part.xml").write_text("<mujoco/>")
    (folder / "meshes" / "leg.stl").write_bytes(bytes(range(256)) * 40)
    return folder


def test_folder_digest_is_canonical_not_mtime_or_creation_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, names in ((a, ["x", "y", "sub/z"]), (b, ["sub/z", "y", "x"])):
        for name in names:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(name)
    os.utime(b / "x", (1, 1))
    assert read_asset(a, carry=False).sha256 == read_asset(b, carry=False).sha256
    assert read_asset(a, carry=True).data == read_asset(b, carry=True).data
    (b / "x").write_text("X")
    assert read_asset(a, carry=False).sha256 != read_asset(b, carry=False).sha256
    (b / "x").write_text("x")
    (b / "x").rename(b / "w")  # same bytes under another name: another folder
    assert read_asset(a, carry=False).sha256 != read_asset(b, carry=False).sha256


def test_find_paths_nested_relative_pathlike_and_never_words_folders_or_roots(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    robot = _robot(tmp_path / "robots")
    (tmp_path / "layout.json").write_text("{}")
    for word in ("rgb_array", "4x4", "human", "1.5"):
        (tmp_path / word).write_text("a file named like a word")
    kwargs = {"xml_file": "robots/robot.xml", "render_mode": "rgb_array", "root": "/",
              "here": ".", "maps": [{"layout": Path("layout.json")}, ("missing.json", 3)],
              "words": ["4x4", {"m": "human"}, ("1.5",)]}
    defaults = {"assets_dir": str(robot), "n": 3, "deep": [[[[str(robot / "part.xml")]]]]}
    assert find_paths(kwargs, defaults) == sorted(  # a folder counts only in assets=[...]
        [str(robot / "robot.xml"), str(robot / "part.xml"), str(tmp_path / "layout.json")])
    # written as a path, the same files count
    assert find_paths({"a": "./rgb_array", "b": Path("4x4"), "c": f"{tmp_path}/human"}) == sorted(
        [str(tmp_path / "rgb_array"), str(tmp_path / "4x4"), str(tmp_path / "human")])


def test_read_asset_over_the_limit_names_path_size_limit_and_the_fix(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * 5000)
    with pytest.raises(CaptureError) as e:
        read_asset(big, carry=True, limit=4096)
    carried = 5000 + len(os.fsencode(str(big)))  # its bytes and its path
    assert str(big) in str(e.value) and f"{carried:,} bytes: its 5,000 bytes" in str(e.value)
    assert "4,096 bytes" in str(e.value) and "max_asset_bytes=" in str(e.value)
    assert read_asset(big, carry=False, limit=4096).size == 5000  # not carried: no limit
    folder = _robot(tmp_path / "robot")
    with pytest.raises(CaptureError, match="max_asset_bytes="):
        read_asset(folder, carry=True, limit=1000)


def test_link_inside_is_carried_as_its_bytes_link_outside_refused_when_carried(
        tmp_path: Path) -> None:
    robot = _robot(tmp_path / "robot")
    (robot / "alias.xml").symlink_to("part.xml")
    (robot / "mesh_alias").symlink_to("meshes")
    outside = tmp_path / "shared.stl"
    outside.write_bytes(b"shared")
    asset = read_asset(robot, carry=True)
    out = Path(materialize([asset])[str(robot)])
    assert not (out / "alias.xml").is_symlink() and (out / "alias.xml").read_text() == "<mujoco/>"
    assert (out / "mesh_alias" / "leg.stl").read_bytes() == (robot / "meshes/leg.stl").read_bytes()
    (robot / "outside.stl").symlink_to(outside)
    with pytest.raises(CaptureError, match=r"outside the folder .*copy the file into"):
        read_asset(robot, carry=True)
    checked = read_asset(robot, carry=False)  # checked in place: the link is followed
    outside.write_bytes(b"changed")
    with pytest.raises(AssetError, match="differs"):
        check_assets([checked], label="CustomAnt-v0")


@pytest.mark.parametrize("make", ["fifo", "loop", "dangling"])
def test_fifo_link_loop_and_dangling_link_are_refused_without_hanging(
        tmp_path: Path, make: str) -> None:
    folder = _robot(tmp_path / "robot")
    if make == "fifo":
        os.mkfifo(folder / "pipe")
    elif make == "loop":
        (folder / "meshes" / "up").symlink_to("..")
    else:
        (folder / "gone.xml").symlink_to(tmp_path / "nowhere.xml")
    expected = {"fifo": "FIFO", "loop": "link loop", "dangling": "dangling link"}[make]
    # A dangling link is a path the system cannot find: a FileNotFoundError (and SpecPackError).
    error = FileNotFoundError if make == "dangling" else CaptureError
    for carry in (True, False):
        with pytest.raises(error, match=expected):
            read_asset(folder, carry=carry)
    if make == "fifo":
        with pytest.raises(CaptureError, match="FIFO"):
            read_asset(folder / "pipe", carry=True)


def test_check_assets_missing_names_path_and_fix_and_different_bytes_names_both_digests(
        tmp_path: Path) -> None:
    xml = tmp_path / "long_ant.xml"
    xml.write_text("<mujoco>new</mujoco>")
    asset = read_asset(xml, carry=False)
    check_assets([asset], label="CustomAnt-v0")
    xml.write_text("<mujoco>old</mujoco>")
    with pytest.raises(AssetError) as e:
        check_assets([asset], label="CustomAnt-v0")
    assert isinstance(e.value, BuildError) and asset.sha256 in str(e.value)
    assert hashlib.sha256(b"<mujoco>old</mujoco>").hexdigest() in str(e.value)
    xml.unlink()
    with pytest.raises(AssetError, match=r"long_ant.xml is missing on this node.*"
                                         r"self_contained=True"):
        materialize([asset], label="CustomAnt-v0")


def test_materialized_folder_keeps_its_layout_and_remap_points_inside_it(tmp_path: Path) -> None:
    robot = _robot(tmp_path / "robot")
    asset = read_asset(robot, carry=True)
    mapping = materialize([asset])
    local = Path(mapping[str(robot)])
    assert local.name == "robot" and asset.sha256 in str(local)
    assert read_asset(local, carry=False).sha256 == asset.sha256
    kwargs = {"xml_file": str(robot / "robot.xml"), "mesh": robot / "meshes" / "leg.stl"}
    new = remap(kwargs, mapping)
    assert new == {"xml_file": str(local / "robot.xml"), "mesh": local / "meshes" / "leg.stl"}
    assert type(new["xml_file"]) is str and isinstance(new["mesh"], pathlib.PosixPath)
    assert (local / "robot.xml").read_text().count("part.xml") and (local / "part.xml").exists()


def test_remap_keeps_types_respects_prefixes_and_the_relative_string_written(
        tmp_path: Path) -> None:
    point = collections.namedtuple("point", "a b")
    mapping = {"/a/b": "/cache/1/b", "/a/b/c.xml": "/cache/2/c.xml"}
    value = {"x": "/a/bc", "y": "/a/b/d.xml", "z": ["/a/b/c.xml", pathlib.PurePosixPath("/a/b")],
             "t": point("/a/b/", 1), "n": 1.0, "s": "human",
             "d": collections.defaultdict(list, {"k": "/a/b/e"})}
    new = remap(value, mapping)
    assert new == {  # the folder wins over a file inside it: c.xml keeps its neighbours
        "x": "/a/bc", "y": "/cache/1/b/d.xml",
        "z": ["/cache/1/b/c.xml", pathlib.PurePosixPath("/cache/1/b")],
        "t": point("/cache/1/b/", 1), "n": 1.0, "s": "human", "d": {"k": "/cache/1/b/e"}}
    assert type(new["t"]) is point and new["d"].default_factory is list
    assert value["d"]["k"] == "/a/b/e"  # a copy: the kwargs given are unchanged
    # written relative to the capture's folder; remapped from another current folder
    assert remap({"f": "b/d.xml"}, mapping, cwd="/a") == {"f": "/cache/1/b/d.xml"}
    assert remap({"f": "/a/bc/d.xml"}, {"/a/b": "/a/b"}) == {"f": "/a/bc/d.xml"}


def test_cached_entry_is_reused_and_one_altered_on_disk_is_written_again(tmp_path: Path) -> None:
    robot = _robot(tmp_path / "robot")
    xml = tmp_path / "ant.xml"
    xml.write_text("<mujoco/>")
    assets = [read_asset(robot, carry=True), read_asset(xml, carry=True)]
    first = materialize(assets)
    inode = os.stat(first[str(xml)]).st_ino
    assert materialize(assets) == first and os.stat(first[str(xml)]).st_ino == inode
    Path(first[str(xml)]).write_text("<mujoco>evil</mujoco>")
    (Path(first[str(robot)]) / "part.xml").write_text("tampered")
    (Path(first[str(robot)]) / "extra").write_text("added")
    assert materialize(assets) == first
    assert Path(first[str(xml)]).read_text() == "<mujoco/>"
    assert read_asset(first[str(robot)], carry=False).sha256 == assets[0].sha256


def _archive(*entries: tuple[bytes, bytes, bytes], end: bytes = b"E") -> bytes:
    out = [b"specpack-folder-1\0"]  # joined once: 100,001 entries appended one by one would
    for kind, name, data in entries:  # copy the growing archive each time (seconds per import)
        out += [kind, len(name).to_bytes(4, "big"), name]
        if kind == b"f":
            out += [len(data).to_bytes(8, "big"), data]
    return b"".join(out) + end


NOT_PLAIN = "not a plain relative path"
HOSTILE = {  # case: (archive, why it is refused)
    "absolute name": (b"", NOT_PLAIN),  # built in the test: a name under tmp_path
    "dot-dot": (_archive((b"f", b"../x", b"1")), NOT_PLAIN),
    "dot-dot inside": (_archive((b"d", b"a", b""), (b"f", b"a/../../x", b"1")), NOT_PLAIN),
    "backslash": (_archive((b"f", b"..\\x", b"1")), NOT_PLAIN),
    "empty component": (_archive((b"f", b"a//x", b"1")), NOT_PLAIN),
    "NUL in name": (_archive((b"f", b"x\0y", b"1")), NOT_PLAIN),
    "twice": (_archive((b"f", b"x", b"1"), (b"f", b"x", b"2")), "twice"),
    "file then folder": (_archive((b"f", b"x", b"1"), (b"f", b"x/y", b"2")), "cannot be written"),
    "size past the end": (_archive((b"f", b"x", b"1"))[:-2], "only 0 remain"),
    "cut in a name": (b"specpack-folder-1\0f" + (99).to_bytes(4, "big") + b"x", "cut short"),
    "no end mark": (_archive((b"f", b"x", b"1"), end=b""), "no end mark"),
    "bytes after the end": (_archive((b"f", b"x", b"1")) + b"junk", "after its end mark"),
    "no header": (b"PK\x03\x04" + _archive((b"f", b"x", b"1")), "no header"),
    "a tar archive": (b"", "no header"),  # built in the test: the format is not tar
    "device kind": (_archive((b"c", b"x", b"")), "entry kind"),
    "too many entries": (_archive(*((b"d", b"%d" % i, b"") for i in range(100_001))),
                         "more than 100,000 entries"),
    "huge declared size": (b"specpack-folder-1\0f" + (1).to_bytes(4, "big") + b"x"
                           + (2**62).to_bytes(8, "big") + b"1E", "only 2 remain"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_folder_archive_is_refused_and_writes_nothing_outside(
        tmp_path: Path, _cache: Path, case: str) -> None:
    data, why = HOSTILE[case]
    if case == "absolute name":
        data = _archive((b"f", os.fsencode(tmp_path / "x"), b"1"))
    elif case == "a tar archive":
        (tmp_path / "x.txt").write_text("1")
        with tarfile.open(tmp_path / "robot.tar", "w") as tar:
            tar.add(tmp_path / "x.txt", arcname="x")
        data = (tmp_path / "robot.tar").read_bytes()
        (tmp_path / "x.txt").unlink()
    sha = hashlib.sha256(data).hexdigest()
    asset = Asset(str(tmp_path / "robot"), "dir", 1, sha, True, data)
    with pytest.raises(AssetError, match="CustomAnt-v0: the carried asset") as e:
        materialize([asset], label="CustomAnt-v0")
    assert why in str(e.value)
    assert not (tmp_path / "x").exists() and not (_cache / "x").exists()
    assert not (_cache / "assets" / sha / "robot").exists()
    assert os.listdir(_cache / "assets" / sha) == []  # the temporary folder is gone


def test_archive_unpacking_to_another_digest_or_size_is_refused(tmp_path: Path) -> None:
    robot = _robot(tmp_path / "robot")
    good = read_asset(robot, carry=True)
    other = read_asset(_robot(tmp_path / "other") and (tmp_path / "other" / "meshes"), carry=True)
    forged = Asset(good.path, "dir", good.size, good.sha256, True, other.data)
    with pytest.raises(AssetError, match="does not unpack to its declared sha256"):
        materialize([forged])
    lying = Asset(good.path, "dir", good.size + 1, good.sha256, True, good.data)
    with pytest.raises(AssetError, match="declared sha256"):
        materialize([lying])
    file = Asset(str(tmp_path / "a.xml"), "file", 3, hashlib.sha256(b"abc").hexdigest(), True,
                 b"abd")
    with pytest.raises(AssetError, match="do not match its declared size"):
        materialize([file])
    bad_name = Asset("/", "file", 3, hashlib.sha256(b"abc").hexdigest(), True, b"abc")
    with pytest.raises(AssetError, match="malformed"):
        materialize([bad_name])


_IN_NAMESPACE = """
import os, sys
from specpack._core._assets import materialize, read_asset
from specpack._core._errors import AssetError
asset = read_asset(sys.argv[1], carry=True)
try:
    print("PATH", materialize([asset])[sys.argv[1]])
except AssetError as e:
    print("ERROR", e)
"""


def _in_mount_namespace(cache: Path, mount: str, asset: Path) -> str:
    """Run _IN_NAMESPACE in a fresh interpreter inside a private mount namespace where
    ``mount`` (shell) was run first; its output."""
    run = subprocess.run(
        ["unshare", "-m", "sh", "-c", f'{mount} && exec "$0" -c "$1" "$2"', sys.executable,
         _IN_NAMESPACE, str(asset)], capture_output=True, text=True, timeout=60,
        env={**os.environ, "SPECPACK_CACHE": str(cache), "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.parametrize("state", ["ro", "full"])
def test_read_only_or_full_cache_folder_raises_asset_error_naming_it_and_the_fix(
        tmp_path: Path, state: str) -> None:
    big = tmp_path / "ant.xml"
    big.write_bytes(os.urandom(200_000))
    cache = tmp_path / "mnt"
    cache.mkdir()
    out = _in_mount_namespace(cache, f"mount -t tmpfs -o size=64k tmpfs {cache}"
                              + (f" && mount -o remount,ro {cache}" if state == "ro" else ""), big)
    reason = "Read-only file system" if state == "ro" else "No space left on device"
    assert f"the cache folder {cache}/assets cannot be written ({reason})" in out
    assert "set SPECPACK_CACHE to a writable folder with room for 200.0 kB" in out


def test_read_only_cache_holding_the_entry_already_is_used_as_it_is(tmp_path: Path) -> None:
    xml = tmp_path / "ant.xml"
    xml.write_text("<mujoco/>")
    cache = tmp_path / "prefilled"
    sha = read_asset(xml, carry=False).sha256
    with pytest.MonkeyPatch.context() as m:
        m.setenv("SPECPACK_CACHE", str(cache))
        materialize([read_asset(xml, carry=True)])
    out = _in_mount_namespace(cache, f"mount --bind {cache} {cache} && "
                                     f"mount -o remount,bind,ro {cache}", xml)
    assert out == f"PATH {cache}/assets/{sha}/ant.xml\n"


def _materialize_at_once(barrier: Any, assets: list[Asset], out: Any) -> None:
    barrier.wait()
    out.put(materialize(assets))


def test_four_spawn_workers_materialize_one_asset_at_once_and_never_see_a_partial_file(
        tmp_path: Path, _cache: Path) -> None:
    robot = _robot(tmp_path / "robot")
    for i in range(40):
        (robot / f"part{i}.bin").write_bytes(os.urandom(100_000))
    big = tmp_path / "terrain.bin"
    big.write_bytes(os.urandom(8 << 20))
    assets = [read_asset(robot, carry=True), read_asset(big, carry=True)]
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(4), ctx.Queue()
    workers = [ctx.Process(target=_materialize_at_once, args=(barrier, assets, out))
               for _ in range(4)]
    for w in workers:
        w.start()
    final_file = _cache / "assets" / assets[1].sha256 / "terrain.bin"
    final_dir = _cache / "assets" / assets[0].sha256 / "robot"
    deadline = time.monotonic() + 120
    seen: set[tuple[int, int, int]] = set()  # (inode, size, mtime) of each version hashed
    while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
        try:
            st = final_file.stat()
        except FileNotFoundError:
            pass
        else:  # a file written in place would show new sizes or mtimes: each is hashed once
            if (st.st_ino, st.st_size, st.st_mtime_ns) not in seen:
                seen.add((st.st_ino, st.st_size, st.st_mtime_ns))
                assert hashlib.sha256(final_file.read_bytes()).hexdigest() == assets[1].sha256
        if final_dir.exists():
            assert len(list(final_dir.iterdir())) == len(list(robot.iterdir()))
        time.sleep(0.005)  # look often, but leave the cores to the workers
    results = [out.get(timeout=120) for _ in workers]
    for w in workers:
        w.join(30)
        assert w.exitcode == 0
    assert all(r == results[0] for r in results)
    assert results[0] == {str(robot): str(final_dir), str(big): str(final_file)}
    assert read_asset(final_dir, carry=False).sha256 == assets[0].sha256
    assert sorted(os.listdir(final_dir.parent)) == ["robot"]  # no temporary folder left
    assert sorted(os.listdir(final_file.parent)) == ["terrain.bin"]



def _tree(root: Path) -> list[tuple[bytes, bytes]]:
    """Every entry under ``root``: relative name (bytes) and ``b"dir"`` or the file's bytes."""
    top = os.fsencode(root)
    out = []
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(folder, name)
            body = b"dir" if name in dirs else Path(os.fsdecode(path)).read_bytes()
            out.append((os.path.relpath(path, top), body))
    return sorted(out)


def _awkward(folder: Path) -> Path:
    """A folder whose entries an archive must carry exactly: names that are not UTF-8, a name
    of over 1,800 bytes (over tar's 100 and 255), empty folders, an empty file, binary bytes."""
    top = os.fsencode(folder)
    os.makedirs(os.path.join(top, b"empty", b"inner"))
    os.mkdir(os.path.join(top, b"caf\xe9"))
    Path(os.fsdecode(os.path.join(top, b"caf\xe9", b"\xff\xfe.bin"))).write_bytes(bytes(range(256)))
    (folder / "été 日本.txt").write_text("utf-8 name")
    (folder / "zero").write_bytes(b"")
    deep = folder.joinpath(*(f"{i}" + "d" * 200 for i in range(8)))
    deep.mkdir(parents=True)
    (deep / ("f" * 255)).write_bytes(os.urandom(3000))
    return folder


def _build_from_pickle(blob: bytes, out: Any) -> None:
    pickle.loads(blob).make().close()
    out.put("built")


def test_awkward_folder_round_trips_exactly_through_a_pack_file_and_a_spawn_worker(
        tmp_path: Path, _cache: Path) -> None:
    import specpack

    folder = _awkward(tmp_path / "robot")
    want = _tree(folder)
    assert max(len(name) for name, _ in want) > 1800 and (b"empty/inner", b"dir") in want
    pack = specpack.capture("CartPole-v1", assets=[str(folder)], self_contained=True)
    (asset,) = pack.assets
    specpack.dump(pack, tmp_path / "env.specpack")
    loaded = specpack.load(tmp_path / "env.specpack")
    assert loaded.assets == pack.assets and loaded.assets[0].data == asset.data
    assert loaded.fingerprint == pack.fingerprint
    local = Path(materialize(loaded.assets)[str(folder)])
    assert _tree(local) == want
    shutil.rmtree(_cache)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    worker = ctx.Process(target=_build_from_pickle, args=(pickle.dumps(pack), out))
    worker.start()
    assert out.get(timeout=120) == "built"
    worker.join(30)
    assert worker.exitcode == 0
    assert _tree(_cache / "assets" / asset.sha256 / "robot") == want
