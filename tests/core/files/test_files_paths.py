"""Every function taking a path raises, for a path it cannot use, an error that is both a
``SpecPackError`` and the ``OSError`` ``open`` would raise (``errno`` and ``filename`` set),
and a mistyped keyword of those functions gets a did-you-mean."""

from __future__ import annotations

import errno
import pickle
import re
from pathlib import Path

import pytest

import specpack
from specpack import PackFileError, PackFormatError, SpecPackError
from specpack.files import describe, read_key


@pytest.fixture(scope="module")
def pack() -> specpack.SpecPack:
    return specpack.capture("CartPole-v1")


def _check(e: BaseException, kind: type[OSError], number: int, path: Path) -> None:
    assert isinstance(e, kind) and isinstance(e, PackFileError), type(e).__mro__
    assert isinstance(e, PackFormatError) and isinstance(e, SpecPackError)
    assert e.errno == number and e.filename == str(path), (e.errno, e.filename)
    assert str(e).startswith(str(path)) or str(path) in str(e), str(e)
    assert "[Errno" not in str(e)  # the message, not OSError's form


def test_load_and_describe_of_a_missing_file_raise_file_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pack"
    for call in (specpack.load, describe, read_key):
        with pytest.raises(FileNotFoundError) as info:
            call(missing)
        _check(info.value, FileNotFoundError, errno.ENOENT, missing)
    with pytest.raises(FileNotFoundError):
        specpack.load("nope.pack")  # the issue's own call, relative to the working directory


def test_load_of_a_directory_raises_is_a_directory(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError) as info:
        specpack.load(tmp_path)
    _check(info.value, IsADirectoryError, errno.EISDIR, tmp_path)
    assert "is a directory, not a pack file" in str(info.value)


def test_dump_into_a_missing_or_unwritable_directory_raises_the_os_error(
        tmp_path: Path, pack: specpack.SpecPack) -> None:
    target = tmp_path / "no_such_dir" / "x.pack"
    with pytest.raises(FileNotFoundError) as info:
        specpack.dump(pack, target)
    _check(info.value, FileNotFoundError, errno.ENOENT, target)
    # /sys is read-only for every user, root included.
    with pytest.raises(PermissionError) as denied:
        specpack.dump(pack, "/sys/specpack-test.pack")
    _check(denied.value, PermissionError, errno.EACCES, Path("/sys/specpack-test.pack"))
    assert "check the directory exists and is writable" in str(denied.value)


def test_a_file_error_keeps_errno_and_filename_through_pickle(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        specpack.load(tmp_path / "nope.pack")
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is type(info.value)
    assert (again.errno, again.filename, str(again)) == (
        info.value.errno, info.value.filename, str(info.value))


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda p, path: specpack.load(path, trsut=True),
         "load() got an unexpected keyword argument 'trsut'; did you mean 'trust'?"),
        (lambda p, path: specpack.load(path, alow=["x"]), "did you mean 'allow'?"),
        (lambda p, path: specpack.dump(p, path, kye=b"k" * 32), "did you mean 'key'?"),
        (lambda p, path: describe(path, keys=b"k"), "did you mean 'key'?"),
    ],
)
def test_a_mistyped_keyword_of_load_dump_describe_gets_a_did_you_mean(
        tmp_path: Path, pack: specpack.SpecPack, call, needle: str) -> None:
    path = tmp_path / "x.pack"
    specpack.dump(pack, path)
    with pytest.raises(TypeError, match=re.escape(needle)) as info:
        call(pack, path)
    assert isinstance(info.value, SpecPackError)

