"""A file or folder as bytes: its canonical digest and specpack's own folder archive format.

Used by :mod:`specpack._core._assets` (read at capture, checked and unpacked at ``make()``). Written
once here so that the digest computed at capture, the digest re-checked on a node and the digest
of an unpacked archive are the same function of the same canonical listing.

The digest of a folder is independent of mtimes, inode order and modes: sha256 over its entries
sorted by relative name (bytes), each entry written as its kind, its name (length-prefixed) and,
for a file, its size and the sha256 of its bytes. The archive is the same listing with each
file's bytes in place of its digest::

    b"specpack-folder-1\\0"  then per entry:  kind (b"d" | b"f")  u32 name length  name
                                             (b"f" only:) u64 size  size bytes
    b"E"

Unpacking trusts nothing in it: names are relative, without ``..``, ``.``, empty components,
NUL or backslash; no entry appears twice; declared sizes must fit in the data; nothing follows
the end mark; only folders and regular files are ever created (never a link or a device); and the
unpacked tree's digest must equal the one the pack declares.

Why not a tar archive (issue 30, measured on Python 3.11): a deterministic tar carries the same
folders exactly, but every check above stays ours. The ``"data"`` extraction filter (absent
before Python 3.10.12; bypasses fixed in 2025 patch releases) strips a leading ``/`` rather than
refusing it, and lets through ``.`` components, links inside the folder, duplicate names,
sparse members (a terabyte file from a few bytes), bytes after the end and any number of
entries; tar adds checks of its own (``"r:"``, or gzip/bz2/xz open transparently; chained
extended headers raise ``RecursionError``). Its 512-byte headers and padding make 1,000 files of
100 bytes 8.8 times larger (100,000 empty files: 51 MB instead of 1.9 MB), and reading 100,000
tar headers costs 5 to 10 times the CPU of reading ours, before any check.

Links inside a folder at capture: a link whose target stays inside the folder is carried as the
target's bytes (a regular file or a folder); a link pointing outside it is refused when the folder
is carried (its target would not travel) and followed when it is only checked; a dangling link,
a link loop, a FIFO, socket or device is refused.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass

__all__ = ["LimitExceeded", "Refused", "Scan", "archive_size", "carried_size", "digest_tree", "listing",
           "makedirs_private",
           "scan", "unpack"]

_MAGIC = b"specpack-folder-1\0"
_END = b"E"
_CHUNK = 1 << 20
#: At most this many entries in one folder asset (a bound on work for a careless `assets=[~]`).
MAX_ENTRIES = 100_000
_MAX_NAME = 4096
_DISK = (errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT)


class Refused(Exception):
    """A path cannot be read or unpacked as an asset; the message says what and why (callers
    raise it as :class:`~specpack.CaptureError` or :class:`~specpack.AssetError`)."""


@dataclass(frozen=True)
class Scan:
    """What reading a file or folder found: its kind, total size, sha256 (hex) and, when
    carried, its bytes (a folder: the archive)."""

    kind: str
    size: int
    sha256: str
    data: bytes | None


@dataclass(frozen=True)
class Entry:
    """One entry of a folder: relative name (bytes, ``/``-separated), kind (``b"d"`` or
    ``b"f"``), the path to read it from, its size and its ``os.stat`` (links followed)."""

    name: bytes
    kind: bytes
    path: str
    size: int
    st: os.stat_result


def _kind_of(mode: int) -> str:
    return next((what for test, what in ((stat.S_ISFIFO, "a FIFO (named pipe)"),
                                         (stat.S_ISCHR, "a character device"),
                                         (stat.S_ISBLK, "a block device"),
                                         (stat.S_ISSOCK, "a socket"))
                 if test(mode)), "not a regular file or folder")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def listing(root: str, *, inside_only: bool) -> list[Entry]:
    """Every entry under the folder ``root``, sorted by relative name (see the module text)."""
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
            if link and inside_only and not _inside(real, real_root):
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
                raise Refused(f"{path} is {_kind_of(st.st_mode)}; an asset folder may hold only "
                              "regular files and folders")
            if len(entries) > MAX_ENTRIES:
                raise Refused(f"{root} holds more than {MAX_ENTRIES:,} entries; name the folder "
                              "the env reads, not one above it")
    entries.sort(key=lambda e: e.name)
    return entries


def _read_file(path: str, size: int, sha: hashlib._Hash, out: list[bytes] | None) -> int:
    """Hash (and keep, when ``out`` is a list) the bytes of ``path``; the count read, at most
    ``size + 1`` (so a file that grew is noticed without reading all of it)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: a FIFO swapped in cannot hang the open
    except OSError as e:
        raise Refused(f"cannot read {path}: {e.strerror or e}") from e
    with os.fdopen(fd, "rb", buffering=0) as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise Refused(f"{path} is {_kind_of(mode)}, not a regular file")
        total = 0
        while total <= size:
            chunk = fh.read(min(_CHUNK, size + 1 - total))
            if not chunk:
                break
            sha.update(chunk)
            if out is not None:
                out.append(chunk)
            total += len(chunk)
    return total


def carried_size(path: str, size: int) -> int:
    """The bytes a pack carries for an asset at ``path`` whose carried data is ``size`` bytes:
    the data (a file's bytes; a folder's whole archive: every entry's name and header too) and
    the asset's own path."""
    return len(os.fsencode(path)) + size


def archive_size(entries: list[Entry]) -> int:
    """The length of the folder archive of ``entries`` (see the module text), without reading
    a file: the header, per entry its kind, name length, name (and a file's size and bytes),
    and the end mark."""
    return (len(_MAGIC) + len(_END)
            + sum(5 + len(e.name) + (8 + e.size if e.kind == b"f" else 0) for e in entries))


def scan(path: str, *, carry: bool, limit: int) -> Scan:
    """Read the file or folder ``path``: size, digest and (``carry``) the bytes to carry.

    When carried, every byte the pack will hold for it counts against ``limit``
    (:func:`carried_size`: the path, and a folder's names and entry headers besides the files'
    bytes); over it raises :class:`LimitExceeded` before any file is read.
    """
    try:
        st = os.stat(path)
    except OSError as e:
        raise Refused(f"cannot read {path}: {e.strerror or e}") from e
    if stat.S_ISREG(st.st_mode):
        if carry and carried_size(path, st.st_size) > limit:
            raise LimitExceeded(path, st.st_size, carried_size(path, st.st_size), limit)
        sha = hashlib.sha256()
        out: list[bytes] | None = [] if carry else None
        if _read_file(path, st.st_size, sha, out) != st.st_size:
            raise Refused(f"{path} changed size while it was read; read it again when nothing "
                          "writes it")
        return Scan("file", st.st_size, sha.hexdigest(), None if out is None else b"".join(out))
    if not stat.S_ISDIR(st.st_mode):
        raise Refused(f"{path} is {_kind_of(st.st_mode)}; an asset is a regular file or a folder")
    entries = listing(path, inside_only=carry)
    size = sum(e.size for e in entries)
    if carry and carried_size(path, archive_size(entries)) > limit:
        raise LimitExceeded(path, size, carried_size(path, archive_size(entries)), limit)
    digest = hashlib.sha256(_MAGIC)
    parts: list[bytes] | None = [_MAGIC] if carry else None
    for entry in entries:
        head = entry.kind + len(entry.name).to_bytes(4, "big") + entry.name
        digest.update(head)
        if parts is not None:
            parts.append(head)
        if entry.kind == b"f":
            sha = hashlib.sha256()
            if parts is not None:
                parts.append(entry.size.to_bytes(8, "big"))
            if _read_file(entry.path, entry.size, sha, parts) != entry.size:
                raise Refused(f"{entry.path} changed size while it was read; read it again "
                              "when nothing writes it")
            digest.update(entry.size.to_bytes(8, "big") + sha.digest())
    if parts is not None:
        parts.append(_END)
    return Scan("dir", size, digest.hexdigest(), None if parts is None else b"".join(parts))


class LimitExceeded(Refused):
    """A carried file or folder is larger than the limit: ``size`` bytes of content,
    ``carried`` bytes in the pack (names and headers included)."""

    def __init__(self, path: str, size: int, carried: int, limit: int) -> None:
        super().__init__(path)
        self.path, self.size, self.carried, self.limit = path, size, carried, limit


def digest_tree(path: str) -> tuple[str, str, int]:
    """``(kind, sha256, size)`` of the file or folder ``path`` as :func:`scan` computes them
    when checking (links outside a folder followed)."""
    found = scan(path, carry=False, limit=0)
    return found.kind, found.sha256, found.size


def _check_name(name: bytes) -> None:
    parts = name.split(b"/")
    if (not name or len(name) > _MAX_NAME or b"\0" in name or b"\\" in name
            or any(p in (b"", b".", b"..") or len(p) > 255 for p in parts)):
        raise Refused(f"the archive names {name[:200]!r}: not a plain relative path (absolute, "
                      "empty, '.', '..', NUL, backslash or too long)")


def _parse(data: bytes) -> list[tuple[bytes, bytes, int, int]]:
    """The entries of the folder archive ``data`` as ``(kind, name, offset, size)``, every
    check in the module text made before anything is written."""
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
        _check_name(name)
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


def makedirs_private(path: str) -> None:
    """Create the missing folders of ``path`` (absolute), each with mode 0700.

    Only names that do not exist at all are created (``lexists``: a symlink is never followed
    or replaced); one that a racing process made first is left as it is, for the caller to
    check like any existing folder (the cache checks ownership and mode; :func:`unpack` writes
    below it with ``O_EXCL``, which fails on anything but a folder).
    """
    missing = []
    while not os.path.lexists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass


def unpack(data: bytes, dest: str) -> None:
    """Write the folder archive ``data`` into the new, empty folder ``dest``.

    The whole archive is checked (:func:`_parse`) before anything is written; only folders
    (0700) and new regular files (0600) are created (``O_EXCL``: never through anything already
    there). A bad
    archive raises :class:`Refused`; ``dest`` may then hold part of it (the caller writes
    into a temporary folder and removes it). ``OSError`` for a full or read-only disk passes.
    """
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
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            with os.fdopen(os.open(target, flags, 0o600), "wb") as fh:
                fh.write(view[at:at + size])
        except OSError as e:
            if e.errno in _DISK:  # the cache's fault, not the archive's: the caller says so
                raise
            raise Refused(f"the folder archive entry {name[:200]!r} cannot be written "
                          f"({e.strerror or e})") from e
