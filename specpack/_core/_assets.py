"""The files an env is given: found at capture, checked or carried, materialised at ``make()``.

A kwarg counts as a file (:func:`counts_as_file`, nested values too) when it is a ``pathlib``
path or a str written as a path (:func:`written_as_path`) naming an existing regular file, or a
folder named in ``capture(assets=[...])``. The rule and the cache: docs/another-machine.md.
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
from ._assets_tree import LimitExceeded, Refused, carried_size, inside, scan
from ._errors import AssetError, CaptureError, file_error_for
from ._restorer import restorer
from ._text import size_text

__all__ = ["DEFAULT_LIMIT", "Asset", "carried_bytes", "check_assets", "counts_as_file",
           "find_paths", "materialize", "path_of", "read_asset", "remap", "written_as_path"]

#: The most bytes one capture's carried assets may add to a pack (``max_asset_bytes``).
DEFAULT_LIMIT = 64 * 1024 * 1024
#: Paths nested deeper than this in kwargs are not looked at (by find_paths and remap alike).
_MAX_DEPTH = 32
_SHA = re.compile(r"[0-9a-f]{64}")
#: A file extension as the rule reads one: a dot and 1-8 letters or digits, not all digits.
_EXTENSION = re.compile(r"\.(?![0-9]+\Z)[A-Za-z0-9]{1,8}\Z")
#: The characters besides ``/`` that separate folders in a path written here (Windows: ``\\``).
_OTHER_SEPARATORS = "".join(sorted({os.sep, os.altsep or "/"} - {"/"}))


@dataclasses.dataclass(frozen=True, slots=True)
class Asset:
    """A file or folder an env reads, as captured; immutable, compared and hashed without ``data``.

    Parameters
    ----------
    path: the path as named, made absolute against the capture's cwd (``~`` expanded, links kept).
    kind: ``"file"`` or ``"dir"``.
    size: bytes (a folder: the sum of its files).
    sha256: hex digest of the file, or of the folder's canonical listing (names, sizes, digests).
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
        return cls(*state)


@restorer
def restore_asset(state: tuple[Any, ...]) -> Asset:
    """A pickled :class:`Asset` (its :meth:`~Asset.state` tuple)."""
    return Asset.from_state(state)


def _resolve(value: Any, cwd: str | None = None) -> str | None:
    """The absolute, normalised path a str or ``os.PathLike`` names, else ``None``."""
    if not isinstance(value, str) and isinstance(value, os.PathLike):
        try:
            value = os.fspath(value)
        except Exception:  # noqa: BLE001 - a user PathLike may raise
            return None
    if not isinstance(value, str) or value in ("", ".", "..") or "\0" in value or len(value) > 4096:
        return None
    text = os.path.expanduser(value)
    return os.path.normpath(os.path.join(os.getcwd() if cwd is None else cwd, text))


def written_as_path(text: str) -> bool:
    """Whether ``text`` is written as a path: absolute, starting with ``~``, ``./`` or ``../``,
    holding a path separator, or ending in a file extension. No file is looked at."""
    if "/" in text or text[:1] == "~":  # ./ ../ and POSIX absolute paths hold a "/"
        return True
    if _OTHER_SEPARATORS and (any(c in text for c in _OTHER_SEPARATORS) or os.path.isabs(text)):
        return True
    dot = text.rfind(".")
    return dot >= 0 and _EXTENSION.match(text, dot) is not None


def path_of(value: Any, cwd: str | None = None) -> str | None:
    """The absolute path ``value`` names if written as a path (any ``os.PathLike``), else None."""
    return None if isinstance(value, str) and not written_as_path(value) else _resolve(value, cwd)


def counts_as_file(value: Any, named: Iterable[str] = ()) -> str | None:
    """The absolute path ``value`` names when :func:`path_of` gives an existing file or a folder
    in ``named`` (the paths of ``capture(assets=[...])``), or a str names one of ``named``."""
    path = path_of(value)
    if path is None:
        path = _resolve(value) if named and isinstance(value, str) else None
        return path if path is not None and path in set(named) else None
    if os.path.dirname(path) != path and (  # a filesystem root never counts
            os.path.isfile(path) or (any(inside(path, f) for f in named) and os.path.isdir(path))):
        return path
    return None


def find_paths(kwargs: Mapping[str, Any], defaults: Mapping[str, Any] = {}) -> list[str]:
    """The sorted absolute paths of the files named in ``kwargs`` and ``defaults``, nested too."""
    found: set[str] = set()
    stack: list[tuple[Any, int]] = [(v, 0) for v in (*kwargs.values(), *defaults.values())]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (str, os.PathLike)):
            path = counts_as_file(value)
            if path is not None:
                found.add(path)
        elif depth < _MAX_DEPTH and isinstance(value, (Mapping, list, tuple, set, frozenset)):
            children = value.values() if isinstance(value, Mapping) else value
            stack.extend((c, depth + 1) for c in children)
    return sorted(found)


def read_asset(path: str | os.PathLike[str], *, carry: bool, limit: int = DEFAULT_LIMIT) -> Asset:
    """Read the file or folder ``path`` into an :class:`Asset` (its bytes too when ``carry``, at
    most ``limit``); else :class:`~specpack.CaptureError`, or an ``OSError``'s ``PackFileError``."""
    absolute = _resolve(path)
    if absolute is None:
        raise CaptureError(f"the asset {path!r} is not a path to a file or folder; name it as "
                           "a str or pathlib.Path")
    try:
        kind, sha256, size, data = scan(absolute, carry=carry, limit=limit)
    except LimitExceeded as e:
        what = (f"its {e.size:,} bytes and its path" if carried_size(e.path, e.size) == e.carried
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
    return Asset(absolute, kind, size, sha256, carry, data)


def carried_bytes(asset: Asset) -> int:
    """Every byte a pack carries for ``asset`` (what ``max_asset_bytes`` bounds)."""
    if not asset.carried or asset.data is None:
        return 0
    return carried_size(asset.path, len(asset.data))


#: The other fix for a file missing or different on a node, in Python and on the CLI.
_CARRY = {"python": "or capture(..., self_contained=True) so the pack carries it",
          "cli": "or capture it again with specpack capture ... --self-contained so the pack file "
                 "carries it"}


def check_assets(assets: Sequence[Asset], *, label: str) -> None:
    """Raise :class:`~specpack.AssetError` unless every asset not carried is here with its
    captured bytes (re-hashed only when its stat changed)."""
    for asset in assets:
        if asset.carried:
            continue
        if not os.path.lexists(asset.path):
            raise AssetError(f"{label}: the asset {asset.path} is missing on this node; copy the "
                             f"same {asset.kind} there (sha256 {asset.sha256}),", **_CARRY)
        try:
            kind, sha, size = check_one(asset.path)
        except Refused as e:
            raise AssetError(f"{label}: the asset {asset.path} cannot be checked: {e}") from None
        if kind != asset.kind or sha != asset.sha256:
            raise AssetError(f"{label}: the asset {asset.path} differs from the captured one: "
                             f"sha256 {sha} ({kind}, {size:,} bytes) here, {asset.sha256} "
                             f"({asset.kind}, {asset.size:,} bytes) captured; put the captured "
                             f"{asset.kind} there,", **_CARRY)


def materialize(assets: Sequence[Asset], *, label: str = "the pack") -> dict[str, str]:
    """``{asset.path: local path}``: a carried asset written once into this node's private
    cache (:mod:`._assets_cache`), one not carried checked and mapped to itself. Raises
    :class:`~specpack.AssetError` for corrupt bytes or a cache unwritable or not private."""
    check_assets(assets, label=label)
    mapping: dict[str, str] = {}
    root = cache_root()
    what = "the carried assets"
    try:
        if any(a.carried for a in assets):
            own_root(root, sum(a.size for a in assets if a.carried))
        for asset in assets:
            if not asset.carried:
                mapping[asset.path] = asset.path
                continue
            name = os.path.basename(asset.path)
            if (asset.data is None or not _SHA.fullmatch(asset.sha256) or name in ("", ".", "..")
                    or "\0" in name or asset.kind not in ("file", "dir")):
                raise AssetError(f"{label}: the carried asset {asset.path!r} is malformed (no "
                                 "bytes, a bad digest or name); capture the pack again")
            what = f"the carried asset {asset.path}"
            mapping[asset.path] = place(root, asset.sha256, name, asset.kind, asset.size,
                                        asset.data)
    except Unsafe as e:
        raise AssetError(f"{label}: {e}") from None
    except Refused as e:
        raise AssetError(f"{label}: {what} cannot be materialised: {e}") from None
    return mapping


def remap(value: Any, mapping: Mapping[str, str], *, cwd: str | None = None) -> Any:
    """A copy of the kwargs ``value`` with each path (:func:`path_of`) in a carried asset of
    ``mapping`` (:func:`materialize`'s) made its local one; the outermost folder wins, so a file
    keeps its neighbours (an XML's ``<include>``). ``cwd``: relative paths' base (old packs)."""
    keys = sorted((os.path.normpath(k), v) for k, v in mapping.items()
                  if os.path.normpath(k) != os.path.normpath(v))  # outermost first
    return _remap(value, keys, cwd, 0) if keys else value


def _remap(value: Any, keys: list[tuple[str, str]], cwd: str | None, depth: int) -> Any:
    path = path_of(value, cwd)
    if path is not None:
        for key, local in keys:
            if inside(path, key):
                moved = local + path[len(key):]
                if moved == path:
                    return value
                if os.fspath(value).endswith(os.sep) and not moved.endswith(os.sep):
                    moved += os.sep
                return type(value)(moved) if isinstance(value, pathlib.PurePath) else moved
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
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*parts)  # a namedtuple
    if type(value) in (list, set) or isinstance(value, (tuple, frozenset)):
        return type(value)(parts)
    new = copy.copy(value)  # a list or set subclass: its other state kept
    if isinstance(new, list):
        new[:] = parts
    else:
        new.clear()
        new.update(parts)
    return new
