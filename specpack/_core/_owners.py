"""Which installed distribution owns a file: a small index of top-level names, files on demand.

Every ``RECORD`` is read once for the top-level paths under which it put module files; one
distribution's file list is read only when a question falls under them, so a process asking
about gymnasium keeps gymnasium's paths, not torch's tens of thousands (nor do its workers)."""

from __future__ import annotations

import csv
import functools
import hashlib
import importlib.machinery
import importlib.metadata as md
import json
import os
from base64 import urlsafe_b64encode
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote, urlsplit

__all__ = ["owner_of_file", "owners_of_dir", "real_path"]

_SUFFIXES = tuple(importlib.machinery.all_suffixes())
#: Whether paths must be normalised beyond joining (Windows: ``\\`` and case).
_PLAIN_PATHS = os.sep == "/" and os.path.normcase("A") == "A"


def _norm(path: str) -> str:
    """``path`` absolute, normalised, case-folded where the file system folds case."""
    return os.path.normcase(os.path.normpath(os.path.abspath(path)))


def real_path(path: str) -> str:
    """``path`` with its links resolved, case-folded where the file system folds case."""
    return os.path.normcase(os.path.realpath(path))


class _Index:
    """``tops``: ``<site>/<first component>`` (or a file outside its folder) -> the distributions
    with a module file there; ``editables``: ``(project folder, top-level names, distribution)``."""

    def __init__(self) -> None:
        self.dists: list[Any] = list(md.distributions())
        self.tops: dict[str, tuple[int, ...]] = {}
        self.editables: list[tuple[str, frozenset[str] | None, int]] = []
        self._files: dict[int, frozenset[str]] = {}
        self._names: dict[int, tuple[str, str]] = {}
        for i, dist in enumerate(self.dists):
            for key in _tops(dist):
                self.tops[key] = (*self.tops.get(key, ()), i)
            if (root := _editable_root(dist)) is not None:
                tops = dist.read_text("top_level.txt")
                names = frozenset(filter(None, map(str.strip, tops.splitlines()))) if tops else None
                self.editables.append((root, names, i))
        self.editables.sort(key=lambda e: -len(e[0]))  # the innermost project first

    def files_of(self, i: int) -> frozenset[str]:
        """The module files distribution ``i`` installed, absolute (read once, when asked)."""
        if i not in self._files:
            base = _base(self.dists[i])
            self._files[i] = frozenset(
                base + rel if _is_plain(rel) else _norm(os.path.join(base, rel))
                for rel in _module_rows(self.dists[i]))
        return self._files[i]

    def listing(self, path: str) -> tuple[int, ...]:
        """The distributions whose ``RECORD`` lists the normalised ``path``, in install order."""
        held = {i for key in _self_and_parents(path) for i in self.tops.get(key, ())}
        return tuple(sorted(i for i in held if path in self.files_of(i)))

    def name_version(self, i: int) -> tuple[str, str]:
        """The name and version distribution ``i``'s metadata gives (read once, when asked)."""
        if i not in self._names:
            meta = self.dists[i].metadata
            self._names[i] = (str(meta["Name"]), str(meta["Version"]))
        return self._names[i]


@functools.lru_cache(maxsize=1)
def _index() -> _Index:
    return _Index()


def _self_and_parents(path: str) -> Iterator[str]:
    yield path
    while (parent := os.path.dirname(path)) != path:
        path = parent
        yield path


def _base(dist: Any) -> str:
    """The folder ``dist``'s ``RECORD`` paths are relative to, with a trailing separator."""
    base = _norm(str(dist.locate_file("")))
    return base if base.endswith(os.sep) else base + os.sep


def _record_lines(dist: Any) -> Iterator[str] | None:
    """``dist.read_text("RECORD").splitlines()``, or None; read a line at a time from a folder:
    a RECORD read whole (torch's: 1.5 MB) leaves its heap with the process and its forks."""
    folder = getattr(dist, "_path", None)
    if type(dist).read_text is md.PathDistribution.read_text and isinstance(folder, Path):
        try:  # what read_text opens, with the errors it answers None to
            stream = open(folder / "RECORD", encoding="utf-8")  # closed by _split_stream
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return None
        return _split_stream(stream)
    text = dist.read_text("RECORD")
    return None if text is None else iter(text.splitlines())


def _split_stream(stream: TextIO) -> Iterator[str]:
    with stream:
        for line in stream:  # universal newlines, as read_text; then what splitlines splits
            yield from line.splitlines()


def _module_rows(dist: Any) -> Iterator[str]:
    """The module files ``dist``'s ``RECORD`` lists, as written (relative to :func:`_base`)."""
    lines = _record_lines(dist)
    if lines is None:  # installed-files.txt, SOURCES.txt: rare, the slow general reader
        rows: Iterable[str] = (str(f) for f in dist.files or ())
    else:  # the fast path: RECORD as text, no PackagePath objects; a quoted path through csv
        rows = (line.partition(",")[0] if line[:1] != '"' else next(csv.reader([line]))[0]
                for line in lines)
    return (rel for rel in rows if rel.endswith(_SUFFIXES))


def _is_plain(rel: str) -> bool:
    """Whether ``base + rel`` is already the normalised path (no ``..``, ``.``, ``//``)."""
    return _PLAIN_PATHS and rel[:1] != "/" and "./" not in rel and "//" not in rel


def _tops(dist: Any) -> set[str]:
    """The keys of :attr:`_Index.tops` under which ``dist`` installed module files."""
    base = _base(dist)
    firsts: set[str] = set()
    out: set[str] = set()
    for rel in _module_rows(dist):
        if _is_plain(rel):
            firsts.add(rel.partition("/")[0])
            continue
        path = _norm(os.path.join(base, rel))
        out.add(base + path[len(base):].partition(os.sep)[0] if path.startswith(base) else path)
    out.update(base + first for first in firsts)
    return out


def _editable_root(dist: Any) -> str | None:
    try:
        info = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        return None
    if not (isinstance(info, dict) and isinstance(info.get("dir_info"), dict)
            and info["dir_info"].get("editable") and isinstance(info.get("url"), str)
            and urlsplit(info["url"]).scheme == "file"):
        return None
    path = unquote(urlsplit(info["url"]).path)
    if os.name == "nt" and path[:1] == "/" and path[2:3] == ":":
        path = path[1:]  # file:///C:/project
    return real_path(path)


@functools.lru_cache(maxsize=8192)
def owner_of_file(path: str, module: str) -> tuple[str, str, bool] | None:
    """``(distribution, version, editable)`` owning the file ``path`` of ``module``, or None."""
    index = _index()
    real = real_path(path)
    for candidate in dict.fromkeys((_norm(path), real)):
        if held := index.listing(candidate):
            i = held[0] if len(held) == 1 else _installed_copy(candidate, held)
            return (*index.name_version(i), False)
    top = module.partition(".")[0]
    for root, tops, i in index.editables:
        if real.startswith(root + os.sep) and (tops is None or top in tops):
            return (*index.name_version(i), True)
    return None


def _installed_copy(path: str, held: tuple[int, ...]) -> int:
    """Of several distributions that list ``path``, the one whose recorded digest matches
    the file on disk (the last one installed wrote it); the first when none or several do."""
    index = _index()
    try:
        with open(path, "rb") as fh:
            digest = urlsafe_b64encode(hashlib.sha256(fh.read()).digest()).rstrip(b"=").decode()
    except OSError:
        return held[0]
    matching = []
    for i in held:
        base = _base(index.dists[i])
        for row in csv.reader(_record_lines(index.dists[i]) or ()):
            if (len(row) > 1 and _norm(os.path.join(base, row[0])) == path
                    and row[1] == f"sha256={digest}"):
                matching.append(i)
    return matching[0] if len(matching) == 1 else held[0]


@functools.lru_cache(maxsize=1024)
def owners_of_dir(folder: str) -> frozenset[tuple[str, str]]:
    """``(name, version)`` of each distribution owning a module file inside ``folder`` (the
    portions of a namespace package), editable installs whose project holds it included."""
    index = _index()
    out: set[int] = set()
    for d in dict.fromkeys((_norm(folder), real_path(folder))):
        prefix = d + os.sep
        # A top-level path inside the folder holds a module file of each distribution it names.
        for key, held in index.tops.items():
            if key.startswith(prefix):
                out.update(held)
        # One the folder lies in (or is) may: those distributions' files say.
        for key in _self_and_parents(d):
            out.update(i for i in index.tops.get(key, ()) if i not in out and any(
                f.startswith(prefix) for f in index.files_of(i)))
        real = real_path(d)
        out.update(i for root, _, i in index.editables if real.startswith(root + os.sep))
    return frozenset(map(index.name_version, out))
