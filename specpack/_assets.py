"""The files an env is given: found at capture, checked or carried, materialised at ``make()``.

``capture`` looks through the kwargs (and the entry point's defaults) for strings and
``os.PathLike`` values naming an existing file or folder (:func:`find_paths`) and reads each
(:func:`read_asset`): its size and sha256, and its bytes when the pack is self-contained. At
``make()`` a file that is not carried must be there with the same bytes (:func:`check_assets`);
a carried one is written once per node into a content-addressed cache (:func:`materialize`), and
the kwargs are rewritten to point there (:func:`remap`), keeping a carried folder's layout so an
XML's ``<include file="part.xml">`` still finds its neighbour.

The cache folder is ``$SPECPACK_CACHE/assets`` when that variable is set, else
``$XDG_CACHE_HOME/specpack/assets``, else ``~/.cache/specpack/assets``; each asset lives at
``<cache>/<sha256>/<name>``. Digests, links and the folder archive: see :mod:`._assets_tree`; the cache and the tree load
when an asset is read, checked or written (a pack without assets never loads them).
"""

from __future__ import annotations

import copy
import os
import pathlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ._errors import AssetError, CaptureError
from ._restorer import restorer

__all__ = ["DEFAULT_LIMIT", "Asset", "check_assets", "find_paths", "materialize",
           "read_asset", "remap"]

#: The largest total of carried bytes one asset may have (``capture(max_asset_bytes=...)``).
DEFAULT_LIMIT = 64 * 1024 * 1024
#: Paths nested deeper than this in kwargs are not looked at (by find_paths and remap alike).
_MAX_DEPTH = 32
_SHA = re.compile(r"[0-9a-f]{64}")


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

    # Written out rather than made with ``@dataclass(frozen=True)``: every worker that builds
    # a pack imports this module, and a dataclass's generated methods cost ~0.7 ms of import.
    path: str
    kind: Literal["file", "dir"]
    size: int
    sha256: str
    carried: bool
    data: bytes | None

    def __init__(self, path: str, kind: Literal["file", "dir"], size: int, sha256: str,
                 carried: bool, data: bytes | None = None) -> None:
        self.__dict__.update(path=path, kind=kind, size=size, sha256=sha256, carried=carried,
                             data=data)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Asset is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Asset is immutable (cannot delete {name!r})")

    def _key(self) -> tuple[Any, ...]:
        return (self.path, self.kind, self.size, self.sha256, self.carried)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Asset)
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Asset(path={self.path!r}, kind={self.kind!r}, size={self.size!r}, "
                f"sha256={self.sha256!r}, carried={self.carried!r})")

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


def _absolute(value: Any, cwd: str | None = None) -> str | None:
    """The absolute, normalised path a str or ``os.PathLike`` names (``None`` for other values,
    and for ``""``, ``"."``, ``".."`` and bytes paths)."""
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


def _children(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    return []


def find_paths(kwargs: Mapping[str, Any], defaults: Mapping[str, Any] = {}) -> list[str]:
    """The absolute paths of the existing files and folders named in ``kwargs`` and ``defaults``.

    A value counts when it is a str or ``os.PathLike`` (also inside lists, tuples, sets and
    dict values, up to 32 levels deep) naming an existing regular file or folder; relative
    paths are resolved against the current folder, ``~`` is expanded. ``""``, ``"."``, ``".."``
    and filesystem roots never count (carrying ``/`` is never what was meant). Sorted, no
    duplicates.

    Parameters
    ----------
    kwargs: the env's kwargs as given.
    defaults: the entry point's parameter defaults (``inspect.signature``).
    """
    found: set[str] = set()
    stack: list[tuple[Any, int]] = [(v, 0) for v in (*kwargs.values(), *defaults.values())]
    while stack:
        value, depth = stack.pop()
        path = _absolute(value)
        if path is not None:
            if os.path.dirname(path) != path and (os.path.isfile(path) or os.path.isdir(path)):
                found.add(path)
        elif depth < _MAX_DEPTH:
            stack.extend((c, depth + 1) for c in _children(value))
    return sorted(found)


def read_asset(path: str | os.PathLike[str], *, carry: bool, limit: int = DEFAULT_LIMIT) -> Asset:
    """Read the file or folder ``path`` into an :class:`Asset` (its bytes too when ``carry``).

    Raises :class:`~specpack.CaptureError` naming the path and the fix when it is not
    a regular file or folder, holds a FIFO/device or a link loop, (carried) holds a link to
    outside itself, or (carried) is larger than ``limit`` bytes; a path the operating system
    refuses (missing, a dangling link, not permitted) raises the
    :class:`~specpack.PackFileError` of that ``OSError`` (``FileNotFoundError``...).

    Parameters
    ----------
    path: the file or folder (relative: against the current folder).
    carry: keep the bytes (a self-contained pack).
    limit: the most bytes a carried asset may hold (``capture(max_asset_bytes=...)``).
    """
    from ._assets_tree import LimitExceeded, Refused, scan  # lazy: only capture reads assets
    from ._text import size_text

    absolute = _absolute(path)
    if absolute is None:
        raise CaptureError(f"the asset {path!r} is not a path to a file or folder; name it as "
                           "a str or pathlib.Path")
    try:
        found = scan(absolute, carry=carry, limit=limit)
    except LimitExceeded as e:
        raise CaptureError(
            f"the asset {e.path} holds {size_text(e.size)} ({e.size:,} bytes), over the limit "
            f"of {size_text(e.limit)} ({e.limit:,} bytes) for carried files; pass "
            f"capture(..., max_asset_bytes={max(e.size, 1) * 2}) to carry it, or keep it on "
            "every node (self_contained=False)") from None
    except Refused as e:
        message = f"the asset {absolute} cannot be read: {e}"
        cause = e.__cause__
        if isinstance(cause, OSError):  # missing, a directory, not permitted: an OSError too
            from ._error_twins import file_error_for  # loads on a failure

            raise file_error_for(cause, message, cause.filename or absolute) from None
        raise CaptureError(message) from None
    kind: Literal["file", "dir"] = "file" if found.kind == "file" else "dir"
    return Asset(absolute, kind, found.size, found.sha256, carry, found.data)


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
    from ._assets_cache import check_one
    from ._assets_tree import Refused

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
    match) and for a cache folder that cannot be written (read-only, full): set
    ``SPECPACK_CACHE`` to a writable folder.

    Parameters
    ----------
    assets: the pack's assets.
    label: the pack's name for messages (its env id).
    """
    from ._assets_cache import cache_root, place
    from ._assets_tree import Refused

    check_assets(assets, label=label)
    mapping: dict[str, str] = {}
    root = cache_root()
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
        except Refused as e:
            raise AssetError(f"{label}: the carried asset {asset.path} cannot be "
                             f"materialised: {e}") from None
    return mapping


def remap(value: Any, mapping: Mapping[str, str], *, cwd: str | None = None) -> Any:
    """A copy of ``value`` (kwargs) with every path that is, or lies inside, a mapped asset
    replaced by its local path.

    A path inside a mapped folder keeps its place in it (``<dir>/robot.xml`` ->
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
        folder (default: this process's), so the string the user wrote is still recognised on
        a node whose current folder differs.
    """
    keys = sorted((os.path.normpath(k), v) for k, v in mapping.items())  # outermost first
    return _remap(value, keys, cwd, 0)


def _remap(value: Any, keys: list[tuple[str, str]], cwd: str | None, depth: int) -> Any:
    path = _absolute(value, cwd)
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
    if new == path and os.path.isabs(text):
        return value
    if text.endswith(os.sep) and not new.endswith(os.sep):
        new += os.sep
    return type(value)(new) if isinstance(value, pathlib.PurePath) else new
