"""The node's asset cache: where carried assets are written once, atomically, and found again.

Layout: ``<root>/<sha256>/<name>`` (``<root>``: :func:`cache_root`). An entry is written into a
temporary folder in ``<root>/<sha256>/`` (same filesystem) and renamed into place, so a worker
racing another one sees the whole entry or none; the loser of the race checks the winner's entry
and drops its own. An entry is trusted only after its digest is checked: once per process and
again whenever its files' size, mtime, ctime or inode changed (:func:`check_one`), so one altered
on disk since is noticed and written again.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import tempfile
import time

from ._assets_tree import Refused, digest_tree, listing, unpack
from ._text import size_text

__all__ = ["cache_root", "check_one", "place"]

_Signature = tuple[tuple[bytes, int, int, int, int, int], ...]
#: path -> (stat signature, (kind, sha256, size)) of the checks made in this process.
_TMP = ".tmp-"
_CHECKED: dict[str, tuple[_Signature, tuple[str, str, int]]] = {}


def cache_root() -> str:
    """The folder carried assets are written to: ``$SPECPACK_CACHE/assets``, else
    ``$XDG_CACHE_HOME/specpack/assets``, else ``~/.cache/specpack/assets``."""
    own = os.environ.get("SPECPACK_CACHE")
    if own:
        return os.path.join(os.path.abspath(own), "assets")
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "specpack", "assets")
    home = os.path.expanduser("~")
    if not os.path.isabs(home):  # no HOME and no passwd entry
        home = os.path.join(tempfile.gettempdir(), f"specpack-{os.getuid()}")
    return os.path.join(home, ".cache", "specpack", "assets")


def _signature(path: str) -> _Signature:
    def sig(name: bytes, st: os.stat_result) -> tuple[bytes, int, int, int, int, int]:
        return (name, st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    top = os.stat(path)
    if not stat.S_ISDIR(top.st_mode):
        return (sig(b"", top),)
    return (sig(b"", top), *(sig(e.name, e.st) for e in listing(path, inside_only=False)))


def check_one(path: str) -> tuple[str, str, int]:
    """``(kind, sha256, size)`` of the file or folder ``path``, hashed again only when its
    stat signature changed since the last check in this process."""
    try:
        before = _signature(path)
    except OSError as e:
        raise Refused(f"cannot read {path}: {e.strerror or e}") from e
    known = _CHECKED.get(path)
    if known is not None and known[0] == before:
        return known[1]
    found = digest_tree(path)
    try:
        if _signature(path) == before:
            _CHECKED[path] = (before, found)
    except OSError:
        pass
    return found


def _remember(path: str, found: tuple[str, str, int]) -> None:
    """Record the digest of an entry this process just wrote and checked (saves re-hashing it
    at the next ``make()`` here)."""
    try:
        _CHECKED[path] = (_signature(path), found)
    except (OSError, Refused):
        pass


def _sweep(parent: str) -> None:
    """Remove temporary folders a worker killed mid-write left in ``parent`` over an hour ago."""
    old = time.time() - 3600
    for entry in os.scandir(parent):
        try:
            if entry.name.startswith(_TMP) and entry.stat(follow_symlinks=False).st_mtime < old:
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            pass


def _cache_error(root: str, e: OSError, size: int) -> Refused:
    return Refused(f"the cache folder {root} cannot be written ({e.strerror or e}); set "
                   f"SPECPACK_CACHE to a writable folder with room for {size_text(size)}")


def _valid(final: str, kind: str, sha: str) -> bool:
    try:
        if os.path.islink(final):
            return False
        return check_one(final)[:2] == (kind, sha)
    except Refused:
        return False


def place(root: str, sha: str, name: str, kind: str, size: int, data: bytes) -> str:
    """The local path of the asset ``name`` with digest ``sha``: reused when already in the
    cache under ``root`` and intact, else checked, written and renamed into place.

    Raises :class:`Refused` when ``data`` does not hold what the asset declares (its size, its
    digest, or a folder archive that fails :func:`~._assets_tree.unpack`'s checks) and when the
    cache cannot be written.
    """
    parent = os.path.join(root, sha)
    final = os.path.join(parent, name)
    if os.path.lexists(final) and _valid(final, kind, sha):
        return final
    if kind == "file" and (len(data) != size or hashlib.sha256(data).hexdigest() != sha):
        raise Refused(f"its bytes do not match its declared size ({size:,}) and sha256 "
                      f"({sha}); the pack was altered or cut: capture it again")
    try:
        os.makedirs(parent, exist_ok=True)
        _sweep(parent)
        tmp = tempfile.mkdtemp(prefix=_TMP, dir=parent)
    except OSError as e:
        raise _cache_error(root, e, len(data)) from e
    try:
        staged = os.path.join(tmp, name)
        try:
            if kind == "file":
                with open(staged, "xb") as fh:
                    fh.write(data)
            else:
                os.mkdir(staged)
                unpack(data, staged)
        except OSError as e:
            raise _cache_error(root, e, len(data)) from e
        if kind == "dir" and digest_tree(staged)[1:] != (sha, size):
            raise Refused(f"its archive does not unpack to its declared sha256 ({sha}) and size "
                          f"({size:,} bytes); the pack was altered: capture it again")
        placed = _rename_into_place(staged, final, kind, sha, tmp)
        _remember(placed, (kind, sha, size))
        return placed
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _rename_into_place(staged: str, final: str, kind: str, sha: str, tmp: str) -> str:
    """Atomically move ``staged`` to ``final``; an intact entry a racing worker put there first
    wins, an altered one is moved aside (into ``tmp``, removed with it) and replaced."""
    for attempt in range(8):
        try:
            if kind == "file":
                os.replace(staged, final)  # atomic, also over an altered file
            else:
                os.rename(staged, final)  # fails when a non-empty folder is there
            return final
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR):
                raise Refused(f"cannot rename {staged} to {final} ({e.strerror or e}); set "
                              "SPECPACK_CACHE to a writable folder") from e
        if _valid(final, kind, sha):
            return final
        try:
            os.rename(final, os.path.join(tmp, f"stale-{attempt}"))
        except FileNotFoundError:
            pass  # another worker moved it aside first
        except OSError as e:
            raise Refused(f"the cache entry {final} is altered and cannot be replaced "
                          f"({e.strerror or e}); remove it") from e
    raise Refused(f"the cache entry {final} keeps changing while it is written; check what "
                  "else writes to the cache folder")
