"""The node's asset cache: where carried assets are written once, atomically, and found again.

Layout: ``<root>/<sha256>/<name>`` (``<root>``: :func:`cache_root`). An entry is written into a
temporary folder in ``<root>/<sha256>/`` (same filesystem) and renamed into place, so a worker
racing another one sees the whole entry or none; the loser of the race checks the winner's entry
and drops its own. An entry is trusted only after its digest is checked: once per process and
again whenever its files' size, mtime, ctime or inode changed (:func:`check_one`), so one altered
on disk since is noticed and written again.

**The cache is the user's alone** (:func:`own_root`), so the file the env opens is the one
whose digest was checked: nobody else can replace it in between. Missing folders on the way to
``<root>`` are created 0700, entries are written 0700 (folders) and 0600 (files). An existing
``<root>`` or entry owned by another user (root excepted) or writable by its group or by
everyone is refused (:class:`Unsafe`, raised as :class:`~specpack.AssetError`), and so is a
folder above ``<root>`` that another user could rename things in: owned by another user, or
writable by a group or everyone without the sticky bit (``/tmp``'s ``1777`` is fine; a
``/tmp/specpack`` another user created first is not).
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import time

from ._assets_tree import Refused, digest_tree, listing, makedirs_private, unpack
from ._text import size_text

if sys.platform != "win32":  # no POSIX owners on Windows: _owner is never called there
    import pwd

__all__ = ["Unsafe", "cache_root", "check_one", "own_root", "place"]

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


class Unsafe(Refused):
    """The cache is not the user's alone; the message names the folder, why, and the fix."""


#: The fix every :class:`Unsafe` message ends with.
_OWN_FOLDER = ("set SPECPACK_CACHE to a folder of your own that only you can write (e.g. "
               "mkdir -m 700 \"$HOME/.cache/specpack-own\" and export SPECPACK_CACHE=that "
               "folder)")


def _owner(uid: int) -> str:
    """``uid`` and its user name (for a refusal's message; only called where ``os.getuid``
    exists, so never on Windows, which has no ``pwd``)."""
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _unsafe_why(st: os.stat_result, *, sticky_ok: bool) -> str | None:
    """Why a folder or file with ``st`` lets another user change what is in it (``None``: it
    does not): owned by someone else than this user or root, or writable by its group or by
    everyone (a folder with the sticky bit only when ``sticky_ok``)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: no POSIX owners or modes to read
        return None
    if st.st_uid not in (getuid(), 0):
        return f"owned by {_owner(st.st_uid)}, not by you"
    if stat.S_ISLNK(st.st_mode):
        return None  # a link's own mode means nothing; its folder and target are checked
    if st.st_mode & 0o022 and not (sticky_ok and stat.S_ISDIR(st.st_mode)
                                   and st.st_mode & stat.S_ISVTX):
        who = "everyone" if st.st_mode & 0o002 else "its group"
        return f"writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _ancestors(path: str) -> list[str]:
    out: list[str] = []
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return out
        out.append(parent)
        path = parent


def own_root(root: str, need: int) -> None:
    """Create the cache folder ``root`` (0700) if missing, and refuse it unless it is the
    user's alone (see the module text).

    Raises :class:`Unsafe` naming the folder, why, and the fix; :class:`Refused` when it cannot
    be created (``need``: the bytes about to be written, for the message).
    """
    try:
        makedirs_private(root)
    except OSError as e:
        raise _cache_error(root, e, need) from e
    try:
        own = os.lstat(root)
        if stat.S_ISLNK(own.st_mode):
            own = os.stat(root)  # a link to the folder: the folder itself must be private
        if not stat.S_ISDIR(own.st_mode):
            raise Unsafe(f"the asset cache {root} is not a folder; {_OWN_FOLDER}")
        why = _unsafe_why(own, sticky_ok=False)
        if why is not None:
            raise Unsafe(f"the asset cache {root} is not yours alone: it is {why}, so another "
                         f"user could replace a checked file before the env opens it; "
                         f"{_OWN_FOLDER}")
        real = os.path.realpath(root)
        # every folder above, as written and as resolved: another user may not rename in them
        for path, st in [*((p, os.lstat(p)) for p in _ancestors(root)),
                         *((p, os.stat(p)) for p in (real, *_ancestors(real)))]:
            why = _unsafe_why(st, sticky_ok=path != real)
            if why is not None:
                raise Unsafe(f"the asset cache {root} is not yours alone: the folder {path} "
                             f"above it is {why}, so another user could put other files in "
                             f"its place; {_OWN_FOLDER}")
    except OSError as e:
        raise Refused(f"cannot read the cache folder {root}: {e.strerror or e}") from e


def _check_entry(parent: str, final: str) -> None:
    """Refuse (:class:`Unsafe`) the entry folder ``parent`` (``<root>/<sha256>``) or the entry
    ``final`` in it (and everything inside a folder entry) when not the user's alone. Other
    names in ``parent`` (a racing worker's temporary folder) are not looked at."""
    found: list[tuple[str, os.stat_result]] = []
    try:
        found.append((parent, os.lstat(parent)))
        top = os.lstat(final)
        found.append((final, top))
        if stat.S_ISDIR(top.st_mode):
            found += [(e.path, e.st) for e in listing(final, inside_only=False)]
    except (OSError, Refused):
        pass  # gone or unreadable: what was found is checked, the digest check decides the rest
    for where, st in found:
        why = _unsafe_why(st, sticky_ok=False)
        if why is not None:
            raise Unsafe(f"the asset cache entry {where} is {why}, so another user could "
                         f"replace it after its digest is checked; remove it (make() writes it "
                         f"again, privately) or {_OWN_FOLDER}")


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
    if os.path.lexists(parent):
        _check_entry(parent, final)
        if os.path.lexists(final) and _valid(final, kind, sha):
            return final
    if kind == "file" and (len(data) != size or hashlib.sha256(data).hexdigest() != sha):
        raise Refused(f"its bytes do not match its declared size ({size:,}) and sha256 "
                      f"({sha}); the pack was altered or cut: capture it again")
    try:
        makedirs_private(parent)
        _sweep(parent)
        tmp = tempfile.mkdtemp(prefix=_TMP, dir=parent)
    except OSError as e:
        raise _cache_error(root, e, len(data)) from e
    try:
        staged = os.path.join(tmp, name)
        try:
            if kind == "file":
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
                with os.fdopen(os.open(staged, flags, 0o600), "wb") as fh:
                    fh.write(data)
            else:
                os.mkdir(staged, 0o700)
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
