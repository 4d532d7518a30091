"""Which installed distribution owns a file: one read of every ``RECORD``, once per process.

The map from module files (``.py``, ``.pyc``, extension modules) to the distributions that
installed them is built on the first question (the ``RECORD`` files are read as text, no
``PackagePath`` objects: a few tens of ms for a hundred distributions) and kept for the
process. A file two distributions list goes to the one whose recorded digest matches the file
on disk. An editable install (``direct_url.json`` with ``dir_info.editable``) owns the files in
its project folder whose top-level package it installs (``top_level.txt``; any, without one).
:mod:`specpack._provenance` is the only user.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import importlib.machinery
import json
import os
from base64 import urlsafe_b64encode
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
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


@dataclass(frozen=True)
class _Editable:
    root: str
    tops: frozenset[str] | None
    dist: int


class _FileMap:
    """Every file each installed distribution owns (one read of every ``RECORD``)."""

    def __init__(self) -> None:
        import importlib.metadata as md  # lazy: ~20 ms of import a worker rarely needs

        self.dists: list[Any] = list(md.distributions())
        self.files: dict[str, tuple[int, ...]] = {}
        self.editables: list[_Editable] = []
        self._names: dict[int, tuple[str, str]] = {}
        for i, dist in enumerate(self.dists):
            for path in _owned_files(dist):
                held = self.files.get(path)
                self.files[path] = (i,) if held is None else (*held, i) if i not in held else held
            root = _editable_root(dist)
            if root is not None:
                tops = dist.read_text("top_level.txt")
                names = frozenset(t.strip() for t in tops.splitlines() if t.strip()) if tops \
                    else None
                self.editables.append(_Editable(root, names, i))
        self.editables.sort(key=lambda e: -len(e.root))  # the innermost project first

    def name_version(self, i: int) -> tuple[str, str]:
        """The name and version distribution ``i``'s metadata gives (read once, when asked)."""
        found = self._names.get(i)
        if found is None:
            meta = self.dists[i].metadata
            found = self._names[i] = (str(meta["Name"]), str(meta["Version"]))
        return found


@functools.lru_cache(maxsize=1)
def _files() -> _FileMap:
    return _FileMap()


def _owned_files(dist: Any) -> Iterator[str]:
    """The module files (``.py``, ``.pyc``, extension modules) ``dist`` installed, absolute."""
    base = _norm(str(dist.locate_file("")))
    record = dist.read_text("RECORD")
    if record is None:  # installed-files.txt, SOURCES.txt: rare, the slow general reader
        rows: Iterable[str] = (str(f) for f in dist.files or ())
    else:  # the fast path: RECORD as text, no PackagePath objects; a quoted path through csv
        rows = (line.partition(",")[0] if line[:1] != '"' else next(csv.reader([line]))[0]
                for line in record.splitlines())
    for rel in rows:
        if rel.endswith(_SUFFIXES):
            if _PLAIN_PATHS and rel[:1] != "/" and "./" not in rel and "//" not in rel:
                yield f"{base}/{rel}"
            else:  # absolute (RECORD allows it), ../bin/x, or Windows: the general way
                yield _norm(os.path.join(base, rel))


def _editable_root(dist: Any) -> str | None:
    try:
        info = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        return None
    if not (isinstance(info, dict) and isinstance(info.get("dir_info"), dict)
            and info["dir_info"].get("editable") and isinstance(info.get("url"), str)):
        return None
    url = urlsplit(info["url"])
    if url.scheme != "file":
        return None
    path = unquote(url.path)
    if os.name == "nt" and path[:1] == "/" and path[2:3] == ":":
        path = path[1:]  # file:///C:/project
    return real_path(path)


@functools.lru_cache(maxsize=8192)
def owner_of_file(path: str, module: str) -> tuple[str, str, bool] | None:
    """``(distribution, version, editable)`` owning the file ``path`` of ``module``, or None."""
    fm = _files()
    for candidate in dict.fromkeys((_norm(path), real_path(path))):
        held = fm.files.get(candidate)
        if held:
            i = held[0] if len(held) == 1 else _installed_copy(candidate, held)
            return (*fm.name_version(i), False)
    real = real_path(path)
    top = module.partition(".")[0]
    for e in fm.editables:
        if real.startswith(e.root + os.sep) and (e.tops is None or top in e.tops):
            return (*fm.name_version(e.dist), True)
    return None


def _installed_copy(path: str, held: tuple[int, ...]) -> int:
    """Of several distributions that list ``path``, the one whose recorded digest matches
    the file on disk (the last one installed wrote it); the first when none or several do."""
    fm = _files()
    try:
        with open(path, "rb") as fh:
            digest = urlsafe_b64encode(hashlib.sha256(fh.read()).digest()).rstrip(b"=").decode()
    except OSError:
        return held[0]
    matching = []
    for i in held:
        dist = fm.dists[i]
        base = _norm(str(dist.locate_file("")))
        for row in csv.reader((dist.read_text("RECORD") or "").splitlines()):
            if (len(row) > 1 and _norm(os.path.join(base, row[0])) == path
                    and row[1] == f"sha256={digest}"):
                matching.append(i)
    return matching[0] if len(matching) == 1 else held[0]


def owners_of_dir(folder: str) -> frozenset[tuple[str, str]]:
    """``(name, version)`` of each distribution owning a module file inside ``folder`` (the
    portions of a namespace package), editable installs whose project holds it included."""
    fm = _files()
    return frozenset(fm.name_version(i) for i in _owners_of_dir(folder))


@functools.lru_cache(maxsize=1024)
def _owners_of_dir(folder: str) -> frozenset[int]:
    fm = _files()
    out: set[int] = set()
    for d in dict.fromkeys((_norm(folder), real_path(folder))):
        prefix = d + os.sep
        for path, held in fm.files.items():
            if path.startswith(prefix):
                out.update(held)
        real = real_path(d)
        out.update(e.dist for e in fm.editables if real.startswith(e.root + os.sep))
    return frozenset(out)
