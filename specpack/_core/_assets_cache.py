"""The node's private asset cache: carried assets written once, atomically, and found again.

Entries ``<root>/<sha256>/<name>`` are renamed into place whole, trusted once their digest is
checked (again when their stat changes). All is the user's alone (0700/0600; what another user
could change is :class:`Unsafe`, a sticky ``/tmp`` above aside): no one can swap a checked file.
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
from contextlib import suppress

from ._assets_tree import NEW_FILE, Refused, ancestors, listing, makedirs_private, scan, unpack
from ._text import size_text

if sys.platform != "win32":  # no POSIX owners on Windows: _unsafe_why never reads them
    import pwd

__all__ = ["Unsafe", "cache_root", "check_one", "own_root", "place"]

_Signature = tuple[tuple[bytes, int, int, int, int, int], ...]
_TMP = ".tmp-"
#: path -> (stat signature, (kind, sha256, size)) of the checks made in this process.
_CHECKED: dict[str, tuple[_Signature, tuple[str, str, int]]] = {}


def cache_root() -> str:
    """The folder carried assets are written to: ``$SPECPACK_CACHE/assets``, else
    ``$XDG_CACHE_HOME/specpack/assets``, else ``~/.cache/specpack/assets``."""
    if own := os.environ.get("SPECPACK_CACHE"):
        return os.path.join(os.path.abspath(own), "assets")
    if (xdg := os.environ.get("XDG_CACHE_HOME")) and os.path.isabs(xdg):
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


def _unsafe_why(st: os.stat_result, *, sticky_ok: bool) -> str | None:
    """Why another user could change what ``st``'s file or folder holds (``None``: nobody can):
    owned by another user than root, or group/world-writable (unless ``sticky_ok`` and sticky)."""
    if sys.platform == "win32":  # no POSIX owners or modes to read
        return None
    if st.st_uid not in (os.getuid(), 0):
        try:
            owner = f"uid {st.st_uid} ({pwd.getpwuid(st.st_uid).pw_name})"
        except KeyError:
            owner = f"uid {st.st_uid}"
        return f"owned by {owner}, not by you"
    if stat.S_ISLNK(st.st_mode):
        return None  # a link's own mode means nothing; its folder and target are checked
    if st.st_mode & 0o022 and not (sticky_ok and stat.S_ISDIR(st.st_mode)
                                   and st.st_mode & stat.S_ISVTX):
        who = "everyone" if st.st_mode & 0o002 else "its group"
        return f"writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def own_root(root: str, need: int) -> None:
    """Create the cache folder ``root`` (0700) if missing; :class:`Unsafe` unless it is the
    user's alone, :class:`Refused` if it cannot be made (``need``: bytes, for the message)."""
    try:
        makedirs_private(root)
    except OSError as e:
        raise _cache_error(root, e, need) from e
    try:
        own = os.stat(root)  # through a link: the folder itself must be private
        if not stat.S_ISDIR(own.st_mode):
            raise Unsafe(f"the asset cache {root} is not a folder; {_OWN_FOLDER}")
        why = _unsafe_why(own, sticky_ok=False)
        if why is not None:
            raise Unsafe(f"the asset cache {root} is not yours alone: it is {why}, so another "
                         f"user could replace a checked file before the env opens it; "
                         f"{_OWN_FOLDER}")
        real = os.path.realpath(root)
        # every folder above, as written and as resolved: another user may not rename in them
        for path, st in [*((p, os.lstat(p)) for p in ancestors(root)),
                         *((p, os.stat(p)) for p in (real, *ancestors(real)))]:
            why = _unsafe_why(st, sticky_ok=path != real)
            if why is not None:
                raise Unsafe(f"the asset cache {root} is not yours alone: the folder {path} "
                             f"above it is {why}, so another user could put other files in "
                             f"its place; {_OWN_FOLDER}")
    except OSError as e:
        raise Refused(f"cannot read the cache folder {root}: {e.strerror or e}") from e


def _check_entry(parent: str, final: str) -> None:
    """Refuse (:class:`Unsafe`) ``<root>/<sha256>`` (``parent``) or its entry ``final``, all
    inside included, unless the user's alone (a racing worker's temporary is not looked at)."""
    found: list[tuple[str, os.stat_result]] = []
    # gone or unreadable: what was found is checked, the digest check decides the rest
    with suppress(OSError, Refused):
        found.append((parent, os.lstat(parent)))
        top = os.lstat(final)
        found.append((final, top))
        if stat.S_ISDIR(top.st_mode):
            found += [(e.path, e.st) for e in listing(final, inside_only=False)]
    for where, st in found:
        why = _unsafe_why(st, sticky_ok=False)
        if why is not None:
            raise Unsafe(f"the asset cache entry {where} is {why}, so another user could "
                         f"replace it after its digest is checked; remove it (make() writes it "
                         f"again, privately) or {_OWN_FOLDER}")


def _signature(path: str) -> _Signature:
    top = os.stat(path)
    entries = listing(path, inside_only=False) if stat.S_ISDIR(top.st_mode) else ()
    return tuple((name, st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                 for name, st in [(b"", top), *((e.name, e.st) for e in entries)])


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
    found = scan(path, carry=False, limit=0)[:3]
    with suppress(OSError):
        if _signature(path) == before:
            _CHECKED[path] = (before, found)
    return found


def _sweep(parent: str) -> None:
    """Remove temporary folders a worker killed mid-write left in ``parent`` over an hour ago."""
    old = time.time() - 3600
    for entry in os.scandir(parent):
        with suppress(OSError):
            if entry.name.startswith(_TMP) and entry.stat(follow_symlinks=False).st_mtime < old:
                shutil.rmtree(entry.path, ignore_errors=True)


def _cache_error(root: str, e: OSError, size: int) -> Refused:
    return Refused(f"the cache folder {root} cannot be written ({e.strerror or e}); set "
                   f"SPECPACK_CACHE to a writable folder with room for {size_text(size)}")


def _valid(final: str, kind: str, sha: str) -> bool:
    try:
        return not os.path.islink(final) and check_one(final)[:2] == (kind, sha)
    except Refused:
        return False


def place(root: str, sha: str, name: str, kind: str, size: int, data: bytes) -> str:
    """The local path of the asset ``name`` with digest ``sha``: reused when intact in the cache
    under ``root``, else checked, written and renamed into place (:class:`Refused` if it cannot)."""
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
                with os.fdopen(os.open(staged, NEW_FILE, 0o600), "wb") as fh:
                    fh.write(data)
            else:
                os.mkdir(staged, 0o700)
                unpack(data, staged)
        except OSError as e:
            raise _cache_error(root, e, len(data)) from e
        if kind == "dir" and scan(staged, carry=False, limit=0)[1:3] != (sha, size):
            raise Refused(f"its archive does not unpack to its declared sha256 ({sha}) and size "
                          f"({size:,} bytes); the pack was altered: capture it again")
        placed = _rename_into_place(staged, final, kind, sha, tmp)
        with suppress(OSError, Refused):  # saves re-hashing it at the next make() here
            _CHECKED[placed] = (_signature(placed), (kind, sha, size))
        return placed
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _rename_into_place(staged: str, final: str, kind: str, sha: str, tmp: str) -> str:
    """Atomically move ``staged`` to ``final``; an intact entry a racing worker put there first
    wins, an altered one is moved aside (into ``tmp``, removed with it) and replaced."""
    for attempt in range(8):
        try:  # replace: atomic, also over an altered file; rename fails over a non-empty folder
            (os.replace if kind == "file" else os.rename)(staged, final)
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
