"""The files an env is given: found at capture, checked or carried, materialised at ``make()``.

**Which kwarg values count as files** (one rule, :func:`path_of` and :func:`counts_as_file`,
applied the same way at capture and at ``make()``, to values nested in lists, tuples, sets and
dict values too):

* a ``pathlib`` path (``pathlib.Path``, ``PurePosixPath``...: an ``os.PathLike`` capture can
  read without running the object's code), or a ``str`` *written as a path*: absolute,
  starting with ``~``, ``./`` or ``../``, holding a path separator, or ending in a file
  extension (a dot and 1-8 letters or digits, not all digits: ``robot.xml``, not ``1.5``);
* AND naming an existing regular file (a folder counts only when it, or a folder above it,
  is named in ``capture(assets=[...])``).

``"rgb_array"``, ``"4x4"``, ``"human"`` and ``"1.5"`` never count, whatever files the current
folder holds. Where the rule cannot tell (a file named ``"layout"`` with no extension, an
``os.PathLike`` of another class), the user names the file: ``capture(assets=["layout"])``
records it, and then a str kwarg naming exactly that path counts too (as does ``"./layout"``
or ``Path("layout")`` without naming it).

``capture`` reads each counted file (:func:`read_asset`): its size and sha256, and its bytes
when the pack is self-contained. A counted relative path is made absolute *at capture*, so
``pack.kwargs`` shows the very value the env is given. At ``make()`` a file that is not carried
must be there with the same bytes (:func:`check_assets`) and its kwarg is passed unchanged; a
carried one is written once per node into a content-addressed cache (:func:`materialize`) and
only the kwargs naming a carried asset are rewritten to point there (:func:`remap`), keeping a
carried folder's layout so an XML's ``<include file="part.xml">`` still finds its neighbour.
Nothing else is ever rewritten.

The cache folder is ``$SPECPACK_CACHE/assets`` when that variable is set, else
``$XDG_CACHE_HOME/specpack/assets``, else ``~/.cache/specpack/assets``; each asset lives at
``<cache>/<sha256>/<name>``. The cache is the user's alone (created 0700, refused when another
user owns it or can write to it: :mod:`._assets_cache`). Digests, links and the folder archive:
see :mod:`._assets_tree`. A worker building a pack without assets loads none of the three
modules (the build imports this one only for a pack that has assets).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import pathlib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from ._assets_cache import Unsafe, cache_root, check_one, own_root, place
from ._assets_tree import LimitExceeded, Refused, scan
from ._errors import AssetError, CaptureError, file_error_for
from ._restorer import restorer
from ._text import size_text

__all__ = ["DEFAULT_LIMIT", "Asset", "carried_bytes", "check_assets", "counts_as_file", "find_paths", "materialize",
           "path_of", "read_asset", "remap", "written_as_path"]

#: The most bytes one capture's carried assets may add to a pack, paths and names included
#: (``capture(max_asset_bytes=...)``).
DEFAULT_LIMIT = 64 * 1024 * 1024
#: Paths nested deeper than this in kwargs are not looked at (by find_paths and remap alike).
_MAX_DEPTH = 32
_SHA = re.compile(r"[0-9a-f]{64}")


@dataclasses.dataclass(frozen=True, slots=True)
class Asset:
    """A file or folder an env reads, as captured. Immutable; compared and hashed by every
    field but ``data``.

    Parameters
    ----------
    path: absolute path, as the user named it (resolved against the capture's cwd, ``~``
        expanded; links not resolved).
    kind: ``"file"`` or ``"dir"``.
    size: bytes (a folder: the sum of its files).
    sha256: hex digest of the file, or of the folder's canonical listing (names, sizes and
        each file's digest; not mtimes or modes).
    carried: whether the bytes travel in the pack.
    data: the bytes when carried (a folder: specpack's own archive format); not compared.
    """

    path: str
    kind: Literal["file", "dir"]
    size: int
    sha256: str
    carried: bool
    data: bytes | None = dataclasses.field(default=None, compare=False, repr=False)

    def state(self) -> tuple[Any, ...]:
        """The asset as builtins (a pickled pack's form)."""
        return (self.path, self.kind, self.size, self.sha256, self.carried, self.data)

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_asset, (self.state(),))

    @classmethod
    def from_state(cls, state: tuple[Any, ...]) -> Asset:
        """The asset :meth:`state` gave."""
        path, kind, size, sha256, carried, data = state
        return cls(path=path, kind=kind, size=size, sha256=sha256, carried=carried, data=data)


@restorer
def restore_asset(state: tuple[Any, ...]) -> Asset:
    """A pickled :class:`Asset` (its :meth:`~Asset.state` tuple)."""
    return Asset.from_state(state)


def _resolve(value: Any, cwd: str | None = None) -> str | None:
    """The absolute, normalised path a str or ``os.PathLike`` names, whatever its form (``None``
    for other values, and for ``""``, ``"."``, ``".."``, NUL, over 4096 characters and bytes
    paths). ``~`` is expanded; relative paths are joined to ``cwd`` (default: the current folder)."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, os.PathLike):
        try:
            text = os.fspath(value)
        except Exception:  # noqa: BLE001 - a user PathLike may raise
            return None
        if not isinstance(text, str):
            return None
    else:
        return None
    if text in ("", ".", "..") or "\0" in text or len(text) > 4096:
        return None
    text = os.path.expanduser(text)
    return os.path.normpath(os.path.join(os.getcwd() if cwd is None else cwd, text))


#: A file extension as the rule reads one: a dot and 1-8 letters or digits, not all digits.
_EXTENSION = re.compile(r"\.(?![0-9]+\Z)[A-Za-z0-9]{1,8}\Z")
#: The characters besides ``/`` that separate folders in a path written here (Windows: ``\\``).
_OTHER_SEPARATORS = "".join(sorted({os.sep, os.altsep or "/"} - {"/"}))


def written_as_path(text: str) -> bool:
    """Whether the string ``text`` is written as a path (the first half of the module's rule):
    absolute, starting with ``~``, ``./`` or ``../``, holding a path separator, or ending in a
    file extension (a dot and 1-8 letters or digits, not all digits). No file is looked at."""
    if "/" in text or text[:1] == "~":  # ./ ../ and POSIX absolute paths hold a "/"
        return True
    if _OTHER_SEPARATORS and (any(c in text for c in _OTHER_SEPARATORS) or os.path.isabs(text)):
        return True
    dot = text.rfind(".")
    return dot >= 0 and _EXTENSION.match(text, dot) is not None


def path_of(value: Any, cwd: str | None = None) -> str | None:
    """The absolute path ``value`` names when it is written as a path, else ``None``.

    A ``str`` counts when :func:`written_as_path`; an ``os.PathLike`` (``pathlib.Path``) always
    does. Relative paths are joined to ``cwd`` (default: the current folder), ``~`` is expanded.
    """
    if isinstance(value, str) and not written_as_path(value):
        return None
    return _resolve(value, cwd)


def _under(path: str, folders: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``folders`` or inside one (``/a/b`` is not inside ``/a/bc``)."""
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def counts_as_file(value: Any, named: Iterable[str] = (), cwd: str | None = None) -> str | None:
    """The absolute path ``value`` names when it counts as a file by the module's rule, else
    ``None``.

    ``named`` are the absolute paths named in ``capture(assets=[...])``. A value counts when it
    is written as a path (:func:`path_of`) and names an existing regular file, or a folder
    that is, or is inside, a named one; or when it is a str that names exactly a named path (the
    user said it is a file: ``assets=["layout"]`` with ``data_file="layout"``).
    """
    path = path_of(value, cwd)
    if path is None:
        if not named or not isinstance(value, str):
            return None
        path = _resolve(value, cwd)
        return path if path is not None and path in set(named) else None
    if os.path.dirname(path) == path:  # a filesystem root never counts
        return None
    if os.path.isfile(path) or (_under(path, named) and os.path.isdir(path)):
        return path
    return None


def _children(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    return []


def find_paths(kwargs: Mapping[str, Any], defaults: Mapping[str, Any] = {}) -> list[str]:
    """The absolute paths of the files named in ``kwargs`` and ``defaults`` by values that count
    as files (the module's rule: :func:`counts_as_file`).

    Values nested in lists, tuples, sets and dict values count too, up to 32 levels deep.
    Relative paths are resolved against the current folder, ``~`` is expanded. Folders are
    never found here (name them in ``assets=[...]``). Sorted, no duplicates.

    Parameters
    ----------
    kwargs: the env's kwargs as given.
    defaults: the entry point's parameter defaults.
    """
    found: set[str] = set()
    stack: list[tuple[Any, int]] = [(v, 0) for v in (*kwargs.values(), *defaults.values())]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (str, os.PathLike)):
            path = counts_as_file(value)
            if path is not None:
                found.add(path)
        elif depth < _MAX_DEPTH:
            stack.extend((c, depth + 1) for c in _children(value))
    return sorted(found)


def read_asset(path: str | os.PathLike[str], *, carry: bool, limit: int = DEFAULT_LIMIT) -> Asset:
    """Read the file or folder ``path`` into an :class:`Asset` (its bytes too when ``carry``).

    Raises :class:`~specpack.CaptureError` naming the path and the fix when it is not
    a regular file or folder, holds a FIFO/device or a link loop, (carried) holds a link to
    outside itself, or (carried) would make the pack carry more than ``limit`` bytes for it
    (:func:`carried_bytes`: its path, and a folder's every name and entry header, count too); a path the operating system
    refuses (missing, a dangling link, not permitted) raises the
    :class:`~specpack.PackFileError` of that ``OSError`` (``FileNotFoundError``...).

    Parameters
    ----------
    path: the file or folder (relative: against the current folder).
    carry: keep the bytes (a self-contained pack).
    limit: the most bytes a carried asset may add to a pack (``capture(max_asset_bytes=...)``).
    """
    absolute = _resolve(path)
    if absolute is None:
        raise CaptureError(f"the asset {path!r} is not a path to a file or folder; name it as "
                           "a str or pathlib.Path")
    try:
        found = scan(absolute, carry=carry, limit=limit)
    except LimitExceeded as e:
        what = (f"its {e.size:,} bytes and its path"
                if e.size + len(os.fsencode(e.path)) == e.carried
                else f"its files' {e.size:,} bytes, and every name and entry header in it and "
                     "its path")
        raise CaptureError(
            f"the asset {e.path} would carry {size_text(e.carried)} ({e.carried:,} bytes: "
            f"{what}), over the limit of {size_text(e.limit)} ({e.limit:,} bytes) for carried "
            f"assets; pass capture(..., max_asset_bytes={max(e.carried, 1) * 2}) to carry it, "
            "or keep it on every node (self_contained=False)") from None
    except Refused as e:
        message = f"the asset {absolute} cannot be read: {e}"
        cause = e.__cause__
        if isinstance(cause, OSError):  # missing, a directory, not permitted: an OSError too
            raise file_error_for(cause, message, cause.filename or absolute) from None
        raise CaptureError(message) from None
    kind: Literal["file", "dir"] = "file" if found.kind == "file" else "dir"
    return Asset(absolute, kind, found.size, found.sha256, carry, found.data)


def carried_bytes(asset: Asset) -> int:
    """Every byte a pack carries for ``asset``: its path and its data (a folder's archive holds
    every name and entry header); 0 when it is not carried. ``max_asset_bytes`` bounds their
    sum over a pack's assets."""
    if not asset.carried or asset.data is None:
        return 0
    return len(os.fsencode(asset.path)) + len(asset.data)


#: The other fix for a file missing or different on a node, as Python and the command line say
#: it (``specpack capture`` has no option to carry files).
_CARRY_IN_PYTHON = "or capture(..., self_contained=True) so the pack carries it"
_CARRY_ON_CLI = ("or capture it again with specpack capture ... --self-contained so the pack file "
                 "carries it")


def check_assets(assets: Sequence[Asset], *, label: str) -> None:
    """Check that every asset that is not carried is on this node with its captured bytes.

    Raises :class:`~specpack.AssetError` naming the path and the fix when one is
    missing, and both digests when its bytes differ: a pack never builds with another file.
    Repeated checks in one process re-hash only what changed on disk (size, mtime, ctime, inode).

    Parameters
    ----------
    assets: the pack's assets (carried ones are skipped: :func:`materialize` checks those).
    label: the pack's name for messages (its env id).
    """
    for asset in assets:
        if asset.carried:
            continue
        if not os.path.lexists(asset.path):
            raise AssetError(
                f"{label}: the asset {asset.path} is missing on this node; copy the same "
                f"{asset.kind} there (sha256 {asset.sha256}),",
                python=_CARRY_IN_PYTHON, cli=_CARRY_ON_CLI)
        try:
            kind, sha, size = check_one(asset.path)
        except Refused as e:
            raise AssetError(f"{label}: the asset {asset.path} cannot be checked: {e}") from None
        if kind != asset.kind or sha != asset.sha256:
            raise AssetError(
                f"{label}: the asset {asset.path} differs from the captured one: sha256 {sha} "
                f"({kind}, {size:,} bytes) here, {asset.sha256} ({asset.kind}, "
                f"{asset.size:,} bytes) captured; put the captured {asset.kind} there,",
                python=_CARRY_IN_PYTHON, cli=_CARRY_ON_CLI)


def materialize(assets: Sequence[Asset], *, label: str = "the pack") -> dict[str, str]:
    """Write the carried assets into this node's cache (once) and say where each one is.

    Each carried asset lands at ``<cache>/<sha256>/<its name>``: written into a temporary
    folder beside it and renamed into place, so a concurrent worker sees it whole or not at
    all; an entry already there is reused when its digest is right, and replaced when it was
    altered. Not-carried assets are checked (:func:`check_assets`) and map to themselves.

    Returns ``{asset.path: local path}`` for every asset. Raises
    :class:`~specpack.AssetError` for a carried asset whose bytes are missing or corrupt
    (an archive that names paths outside itself, links, wrong sizes, a digest that does not
    match), for a cache folder that cannot be written (read-only, full): set
    ``SPECPACK_CACHE`` to a writable folder, and for a cache that is not the user's alone
    (the cache folder or an entry owned by another user, or writable by a group or by
    everyone; a folder above it that another user could rename): set ``SPECPACK_CACHE`` to
    a folder of your own. The path returned is inside that private cache, so the file the env
    opens is the one whose digest was just checked.

    Parameters
    ----------
    assets: the pack's assets.
    label: the pack's name for messages (its env id).
    """
    check_assets(assets, label=label)
    mapping: dict[str, str] = {}
    root = cache_root()
    if any(a.carried for a in assets):
        try:
            own_root(root, sum(a.size for a in assets if a.carried))
        except Unsafe as e:
            raise AssetError(f"{label}: {e}") from None
        except Refused as e:
            raise AssetError(f"{label}: the carried assets cannot be materialised: {e}") from None
    for asset in assets:
        if not asset.carried:
            mapping[asset.path] = asset.path
            continue
        name = os.path.basename(asset.path)
        if (asset.data is None or not _SHA.fullmatch(asset.sha256) or name in ("", ".", "..")
                or "\0" in name or asset.kind not in ("file", "dir")):
            raise AssetError(f"{label}: the carried asset {asset.path!r} is malformed (no bytes, "
                             "a bad digest or name); capture the pack again")
        try:
            mapping[asset.path] = place(root, asset.sha256, name, asset.kind, asset.size,
                                        asset.data)
        except Unsafe as e:
            raise AssetError(f"{label}: {e}") from None
        except Refused as e:
            raise AssetError(f"{label}: the carried asset {asset.path} cannot be "
                             f"materialised: {e}") from None
    return mapping


def remap(value: Any, mapping: Mapping[str, str], *, cwd: str | None = None) -> Any:
    """A copy of ``value`` (kwargs) with every path that is, or lies inside, a *carried* asset
    replaced by its local path; nothing else is changed.

    Only a value written as a path (the module's rule, :func:`path_of`) is looked at: a word
    such as ``"rgb_array"`` is never a path here, whatever files the current folder holds. A
    mapping to itself (an asset that is not carried) changes nothing: the kwarg reaches the env
    as written. A path inside a mapped folder keeps its place in it (``<dir>/robot.xml`` ->
    ``<local dir>/robot.xml``), and the outermost mapped folder wins, so a file that was also
    an asset of its own still has its neighbours beside it (an XML's ``<include>``); ``/a/b``
    never matches inside ``/a/bc``. A str stays a str, a ``pathlib.PurePath`` keeps its class,
    another ``os.PathLike`` becomes a str. Lists, tuples (named ones too), sets and dicts (and
    their subclasses, through ``copy.copy``) are copied; dict keys and other values are kept.

    Parameters
    ----------
    value: the kwargs (or any value in them).
    mapping: ``{asset path: local path}`` from :func:`materialize`.
    cwd: the folder relative paths in ``value`` were written against: the capture's current
        folder (default: this process's). Capture makes counted relative paths absolute, so
        this matters only for packs written by earlier versions.
    """
    keys = sorted((os.path.normpath(k), v) for k, v in mapping.items()
                  if os.path.normpath(k) != os.path.normpath(v))  # outermost first
    return _remap(value, keys, cwd, 0) if keys else value


def _remap(value: Any, keys: list[tuple[str, str]], cwd: str | None, depth: int) -> Any:
    path = path_of(value, cwd)
    if path is not None:
        for key, local in keys:
            if path == key or path.startswith(key.rstrip(os.sep) + os.sep):
                return _replace(value, path, local + path[len(key):] if path != key else local)
        return value
    if depth >= _MAX_DEPTH or not isinstance(value, (dict, list, tuple, set, frozenset)):
        return value
    if isinstance(value, dict):
        items = {k: _remap(v, keys, cwd, depth + 1) for k, v in value.items()}
        if type(value) is dict:
            return items
        copied = copy.copy(value)
        copied.update(items)
        return copied
    parts = [_remap(v, keys, cwd, depth + 1) for v in value]
    if type(value) in (list, tuple, set, frozenset):
        return type(value)(parts)
    if isinstance(value, tuple):
        return type(value)(*parts) if hasattr(value, "_fields") else type(value)(parts)
    new = copy.copy(value)
    if isinstance(new, list):
        new[:] = parts
    elif isinstance(new, set):
        new.clear()
        new.update(parts)
    else:  # a frozenset subclass
        new = type(value)(parts)
    return new


def _replace(value: Any, path: str, new: str) -> Any:
    """``new`` in the type of ``value`` (the original itself when nothing changes)."""
    text = os.fspath(value)
    if new == path:
        return value
    if text.endswith(os.sep) and not new.endswith(os.sep):
        new += os.sep
    return type(value)(new) if isinstance(value, pathlib.PurePath) else new
