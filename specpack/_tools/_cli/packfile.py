"""Reading what the commands are given: key files, pack files, and ``--import`` modules."""

from __future__ import annotations

import argparse
import errno
from pathlib import Path
from typing import TYPE_CHECKING

from ..._core._build import order_of
from ..._core._errors import file_error_for
from ...files import load
from ...files import read_key as read
from .._imports import import_targets

if TYPE_CHECKING:
    from ..._core._pack import SpecPack

__all__ = ["check_file", "load_pack", "preflight", "read_key", "run_imports"]


def run_imports(ns: argparse.Namespace) -> list[str]:
    """Import the ``--import`` modules (see :func:`specpack._tools._imports.import_targets`)."""
    names: list[str] = list(getattr(ns, "imports", None) or [])
    return import_targets(names) if names else []


def read_key(path: str | None) -> bytes | None:
    """The HMAC key in ``--key-file PATH``: the file's bytes, exactly (``files.read_key``)."""
    return None if path is None else read(path)


def check_file(path: str) -> None:
    """A pack file argument must be an existing file (a clear message before any parsing)."""
    p = Path(path)
    if not p.exists():
        raise file_error_for(errno.ENOENT, f"{path}: no such file", path)
    if p.is_dir():
        raise file_error_for(errno.EISDIR, f"{path}: is a directory, not a pack file", path)


def load_pack(ns: argparse.Namespace) -> SpecPack:
    """Load ``ns.file`` with ``--trust``, ``--key-file`` and ``--allow`` (nothing is built)."""
    check_file(ns.file)
    return load(ns.file, trust=bool(ns.trust), key=read_key(ns.key_file), allow=ns.allow)


def preflight(pack: SpecPack) -> None:
    """What a build checks before running env code (distributions, the pack's files), done now:
    what the user can fix is a one-line error (exit code 2), not a worker's traceback."""
    order_of(pack).prepare({})
