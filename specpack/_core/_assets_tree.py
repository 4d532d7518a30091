"""A file or folder as bytes: its canonical digest and specpack's own folder archive format.

A folder's digest (the same at capture, on a node and of an unpacked archive) is sha256 over
its entries sorted by name: kind, length-prefixed name and, for a file, size and sha256; no
mtimes or modes. The archive (why not tar: docs/how-it-works.md) puts each file's bytes there::

    b"specpack-folder-1\0"  then per entry:  kind (b"d" | b"f")  u32 name length  name
                                             (b"f" only:) u64 size  size bytes
    b"E"
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import stat
from contextlib import suppress
from typing import Literal, NamedTuple

__all__ = ["NEW_FILE", "LimitExceeded", "Refused", "ancestors", "carried_size", "inside",
           "kind_of", "listing", "makedirs_private", "scan", "unpack"]

_MAGIC = b"specpack-folder-1\0"
_END = b"E"
_CHUNK = 1 << 20
#: At most this many entries in one folder asset (a bound on work for a careless `assets=[~]`).
MAX_ENTRIES = 100_000
_MAX_NAME = 4096
_DISK = (errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT)
#: How a new file is opened for writing: never over an existing file or through a link.
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """A path cannot be read or unpacked as an asset (raised again as a :mod:`specpack` error)."""


class LimitExceeded(Refused):
    """A carried file or folder is over the limit (``carried``: its bytes in the pack)."""

    def __init__(self, path: str, size: int, carried: int, limit: int) -> None:
        super().__init__(path)
        self.path, self.size, self.carried, self.limit = path, size, carried, limit


class Entry(NamedTuple):
    """One entry of a folder: ``/``-separated name, kind (``b"d"``/``b"f"``), path, size, stat."""

    name: bytes
    kind: bytes
    path: str
    size: int
    st: os.stat_result


def kind_of(mode: int, other: str = "not a regular file or folder") -> str:
    """What a ``stat`` mode that is not a regular file's or folder's names (else ``other``)."""
    kinds = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
             stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}
    return kinds.get(stat.S_IFMT(mode), other)


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or inside it (``/a/b`` is not inside ``/a/bc``)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def listing(root: str, *, inside_only: bool) -> list[Entry]:
    """Every entry under the folder ``root``, sorted by name. Links are followed (a link outside
    refused when ``inside_only``); dangling links, loops, FIFOs, sockets and devices refused."""
    real_root = os.path.realpath(root)
    entries: list[Entry] = []
    stack: list[tuple[str, bytes, frozenset[str], str]] = [
        (root, b"", frozenset({real_root}), real_root)]
    while stack:
        folder, prefix, above, folder_real = stack.pop()
        try:
            with os.scandir(folder) as it:
                children = list(it)
        except OSError as e:
            raise Refused(f"cannot list {folder}: {e.strerror or e}") from e
        for child in children:
            name = prefix + os.fsencode(child.name)
            path = child.path
            try:
                st = os.stat(path)  # follows links: their target is what the env reads
            except OSError as e:
                what = "a dangling link" if child.is_symlink() else "unreadable"
                raise Refused(f"{path} is {what} ({e.strerror or e})") from e
            link = child.is_symlink()
            real = os.path.realpath(path) if link else os.path.join(folder_real, child.name)
            if link and inside_only and not inside(real, real_root):
                raise Refused(f"{path} is a link to {real}, outside the folder {root}: its target "
                              "would not travel; copy the file into the folder (or name the "
                              "target in assets=[...])")
            if stat.S_ISDIR(st.st_mode):
                if real in above:
                    raise Refused(f"{path} is a link loop (it points to {real}, a folder that "
                                  "contains it)")
                entries.append(Entry(name, b"d", path, 0, st))
                stack.append((path, name + b"/", above | {real}, real))
            elif stat.S_ISREG(st.st_mode):
                entries.append(Entry(name, b"f", path, st.st_size, st))
            else:
                raise Refused(f"{path} is {kind_of(st.st_mode)}; an asset folder may hold only "
                              "regular files and folders")
            if len(entries) > MAX_ENTRIES:
                raise Refused(f"{root} holds more than {MAX_ENTRIES:,} entries; name the folder "
                              "the env reads, not one above it")
    entries.sort(key=lambda e: e.name)
    return entries


def _read_file(path: str, size: int, sha: hashlib._Hash, out: list[bytes] | None) -> None:
    """Hash (and keep, when ``out`` is a list) the ``size`` bytes of ``path``; refused when it
    holds another count (a file that grew is noticed after ``size + 1`` bytes)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: a FIFO swapped in cannot hang the open
    except OSError as e:
        raise Refused(f"cannot read {path}: {e.strerror or e}") from e
    with os.fdopen(fd, "rb", buffering=0) as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise Refused(f"{path} is {kind_of(mode)}, not a regular file")
        total = 0
        while total <= size and (chunk := fh.read(min(_CHUNK, size + 1 - total))):
            sha.update(chunk)
            if out is not None:
                out.append(chunk)
            total += len(chunk)
    if total != size:
        raise Refused(f"{path} changed size while it was read; read it again when nothing "
                      "writes it")


def carried_size(path: str, size: int) -> int:
    """The bytes a pack carries for an asset at ``path`` whose data is ``size`` bytes."""
    return len(os.fsencode(path)) + size


def scan(path: str, *, carry: bool,
         limit: int) -> tuple[Literal["file", "dir"], str, int, bytes | None]:
    """``(kind, sha256, size, bytes to carry or None)`` of the file or folder ``path``, or
    :class:`LimitExceeded` before any file is read if it would carry over ``limit`` bytes."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise Refused(f"cannot read {path}: {e.strerror or e}") from e
    if stat.S_ISREG(st.st_mode):
        entries = None
        size = data_size = st.st_size
    elif stat.S_ISDIR(st.st_mode):
        entries = listing(path, inside_only=carry)
        size = sum(e.size for e in entries)
        data_size = len(_MAGIC) + len(_END) + sum(  # the archive's length, no file read
            5 + len(e.name) + (8 + e.size if e.kind == b"f" else 0) for e in entries)
    else:
        raise Refused(f"{path} is {kind_of(st.st_mode)}; an asset is a regular file or a folder")
    if carry and carried_size(path, data_size) > limit:
        raise LimitExceeded(path, size, carried_size(path, data_size), limit)
    if entries is None:
        sha = hashlib.sha256()
        out: list[bytes] | None = [] if carry else None
        _read_file(path, size, sha, out)
        return "file", sha.hexdigest(), size, None if out is None else b"".join(out)
    digest = hashlib.sha256(_MAGIC)
    parts: list[bytes] | None = [_MAGIC] if carry else None
    for entry in entries:
        head = entry.kind + len(entry.name).to_bytes(4, "big") + entry.name
        size8 = entry.size.to_bytes(8, "big") if entry.kind == b"f" else b""
        digest.update(head)
        if parts is not None:
            parts.append(head + size8)
        if entry.kind == b"f":
            sha = hashlib.sha256()
            _read_file(entry.path, entry.size, sha, parts)
            digest.update(size8 + sha.digest())
    data = None if parts is None else b"".join([*parts, _END])
    return "dir", digest.hexdigest(), size, data


def _parse(data: bytes) -> list[tuple[bytes, bytes, int, int]]:
    """The entries of the folder archive ``data`` as ``(kind, name, offset, size)``, checked:
    plain relative names, none twice, declared sizes that fit, nothing after the end mark."""
    if not data.startswith(_MAGIC):
        raise Refused("not a specpack folder archive (no header)")
    at = len(_MAGIC)
    entries: list[tuple[bytes, bytes, int, int]] = []
    seen: set[bytes] = set()
    while True:
        kind = data[at:at + 1]
        at += 1
        if kind == _END:
            break
        if not kind:
            raise Refused("the folder archive is cut short (no end mark)")
        if kind not in (b"d", b"f") or at + 4 > len(data):
            raise Refused(f"the folder archive is corrupt at byte {at - 1} (entry kind {kind!r})")
        n = int.from_bytes(data[at:at + 4], "big")
        name = data[at + 4:at + 4 + n]
        at += 4 + n
        if len(name) != n:
            raise Refused("the folder archive is cut short (in an entry name)")
        if (not name or len(name) > _MAX_NAME or b"\0" in name or b"\\" in name
                or any(p in (b"", b".", b"..") or len(p) > 255 for p in name.split(b"/"))):
            raise Refused(f"the archive names {name[:200]!r}: not a plain relative path "
                          "(absolute, empty, '.', '..', NUL, backslash or too long)")
        if name in seen:
            raise Refused(f"the folder archive names {name[:200]!r} twice")
        seen.add(name)
        if len(seen) > MAX_ENTRIES:
            raise Refused(f"the folder archive holds more than {MAX_ENTRIES:,} entries")
        size = 0
        if kind == b"f":
            if at + 8 > len(data):
                raise Refused("the folder archive is cut short (in a file size)")
            size = int.from_bytes(data[at:at + 8], "big")
            at += 8
            if size > len(data) - at:
                raise Refused(f"the folder archive declares {name[:200]!r} as {size} bytes; "
                              f"only {len(data) - at} remain")
        entries.append((kind, name, at, size))
        at += size
    if at != len(data):
        raise Refused(f"the folder archive has {len(data) - at} bytes after its end mark")
    return entries


def ancestors(path: str) -> list[str]:
    """The folders ``path`` is in, innermost first."""
    out: list[str] = []
    while (parent := os.path.dirname(path)) != path:
        out.append(parent)
        path = parent
    return out


def makedirs_private(path: str) -> None:
    """Create the missing folders of ``path`` (absolute), 0700; never through or over a link
    (``lexists``), and one a racing process made first is left for the caller to check."""
    missing = itertools.takewhile(lambda p: not os.path.lexists(p), [path, *ancestors(path)])
    for folder in reversed(list(missing)):
        with suppress(FileExistsError):
            os.mkdir(folder, 0o700)


def unpack(data: bytes, dest: str) -> None:
    """Write the folder archive ``data`` into the new, empty folder ``dest``: folders 0700, new
    files 0600 (``O_EXCL``). A bad archive: :class:`Refused`, part of it maybe written."""
    view = memoryview(data)
    for kind, name, at, size in _parse(data):
        target = os.path.join(dest, os.fsdecode(name))
        try:
            if kind == b"d":
                makedirs_private(target)
                if not stat.S_ISDIR(os.lstat(target).st_mode):
                    raise FileExistsError(errno.EEXIST, "not a folder", target)
                continue
            makedirs_private(os.path.dirname(target))
            with os.fdopen(os.open(target, NEW_FILE, 0o600), "wb") as fh:
                fh.write(view[at:at + size])
        except OSError as e:
            if e.errno in _DISK:  # the cache's fault, not the archive's: the caller says so
                raise
            raise Refused(f"the folder archive entry {name[:200]!r} cannot be written "
                          f"({e.strerror or e})") from e
