# stand-in: replaced at merge by helper A's module
"""Files an env is given (stand-in with the contract's names, for the wiring tests)."""

from __future__ import annotations

import hashlib
import os
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import AssetError, CaptureError

__all__ = ["DEFAULT_LIMIT", "Asset", "check_assets", "find_paths", "materialize", "read_asset",
           "remap"]

DEFAULT_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class Asset:
    """One file (or folder) the env is given."""

    path: str
    kind: Literal["file", "dir"]
    size: int
    sha256: str
    carried: bool
    data: bytes | None = field(default=None, repr=False, compare=False)


def _walk(value: Any) -> Any:
    if isinstance(value, (str, os.PathLike)):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _walk(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)


def find_paths(kwargs: Mapping[str, Any], defaults: Mapping[str, Any] = {}) -> list[str]:
    """The values naming an existing file or folder, absolute."""
    out: list[str] = []
    for value in [*kwargs.values(), *defaults.values()]:
        for v in _walk(value):
            try:
                p = os.fspath(v)
            except TypeError:
                continue
            if isinstance(p, str) and p and "\0" not in p and os.path.isfile(p):
                a = os.path.abspath(p)
                if a not in out:
                    out.append(a)
    return out


def read_asset(path: str | os.PathLike[str], *, carry: bool, limit: int = DEFAULT_LIMIT) -> Asset:
    """Read one file."""
    p = os.path.abspath(os.fspath(path))
    with open(p, "rb") as fh:
        data = fh.read()
    if carry and len(data) > limit:
        raise CaptureError(f"{p}: {len(data)} bytes, over the limit {limit}; max_asset_bytes=")
    return Asset(p, "file", len(data), hashlib.sha256(data).hexdigest(), carry,
                 data if carry else None)


def check_assets(assets: Sequence[Asset], *, label: str) -> None:
    """Not-carried assets: present with the same bytes."""
    for a in assets:
        if a.carried:
            continue
        try:
            with open(a.path, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            raise AssetError(f"{label}: {a.path} is missing here; capture(..., "
                             "self_contained=True) or copy the file there") from None
        if digest != a.sha256:
            raise AssetError(f"{label}: {a.path} holds other bytes (sha256 {digest}, "
                             f"captured {a.sha256})")


def materialize(assets: Sequence[Asset]) -> dict[str, str]:
    """Carried assets written to a content-addressed cache; {original: local}."""
    root = os.environ.get("SPECPACK_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "specpack", "assets")
    out = {}
    for a in assets:
        if not a.carried or a.data is None:
            out[a.path] = a.path
            continue
        d = os.path.join(root, a.sha256)
        target = os.path.join(d, os.path.basename(a.path))
        if not os.path.exists(target):
            os.makedirs(d, exist_ok=True)
            tmp = f"{target}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(a.data)
            os.replace(tmp, target)
        out[a.path] = target
    return out


def remap(value: Any, mapping: Mapping[str, str]) -> Any:
    """``value`` with mapped paths replaced (str stays str, Path stays Path)."""
    if isinstance(value, dict):
        return {k: remap(v, mapping) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(remap(v, mapping) for v in value)
    if isinstance(value, (str, pathlib.PurePath)):
        p = os.path.abspath(os.fspath(value)) if os.fspath(value) else ""
        if p in mapping and mapping[p] != p:
            return type(value)(mapping[p]) if isinstance(value, pathlib.PurePath) else mapping[p]
    return value
