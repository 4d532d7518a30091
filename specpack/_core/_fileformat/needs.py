"""The manifest form of what a pack needs where it is built: ``requires``, ``assets``, ``seal``
(optional fields, absent when empty and in older files). A carried asset's ``data`` is checked
against its size and sha256 here; nothing is written to disk until ``make()``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping
from typing import Any

from .._assets import Asset
from .._errors import PackFormatError
from .._sealed import Seal
from .._text import printable, short

__all__ = ["needs_from_json", "needs_to_json"]

_HEX64 = re.compile("[0-9a-f]{64}")

#: A PEP 508 distribution name (ASCII: under IGNORECASE alone, ``[A-Z]`` would match the
#: Kelvin sign and the long s).
_NAME = re.compile(r"[A-Z0-9](?:[A-Z0-9._-]*[A-Z0-9])?", re.IGNORECASE | re.ASCII)

#: A version as PEP 440 accepts it (its appendix's pattern, without the surrounding
#: whitespace), so that ``pip install name==version`` names one release.
_VERSION = re.compile(r"""
    v?
    (?:[0-9]+!)?                                        # epoch
    [0-9]+(?:\.[0-9]+)*                                 # release
    (?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?      # pre-release
    (?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?        # post-release
    (?:[-_.]?dev[-_.]?[0-9]*)?                           # development release
    (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?                  # local version
""", re.IGNORECASE | re.ASCII | re.VERBOSE)


def needs_to_json(requires: Mapping[str, str], assets: tuple[Asset, ...],
                  seal: Any) -> dict[str, Any]:
    """The manifest fields of a pack's ``requires``, ``assets`` and seal (empty ones left out)."""
    out: dict[str, Any] = {}
    if requires:
        out["requires"] = dict(requires)
    if assets:
        out["assets"] = [_asset_json(a) for a in assets]
    if seal is not None:
        out["seal"] = _listed(seal.to_data())
    return out


def _asset_json(a: Asset) -> dict[str, Any]:
    item: dict[str, Any] = {"path": a.path, "kind": a.kind, "size": a.size, "sha256": a.sha256,
                            "carried": a.carried}
    if a.carried and a.data is not None:
        item["data"] = base64.b64encode(a.data).decode("ascii")
    return item


def needs_from_json(data: Mapping[str, Any], source: str
                    ) -> tuple[dict[str, str], tuple[Asset, ...], Any]:
    """``requires``, assets and seal of a parsed manifest; PackFormatError naming the field."""
    requires = data.get("requires", {})
    if type(requires) is not dict or not all(
            type(k) is str and type(v) is str for k, v in requires.items()):
        raise PackFormatError(f"{source}: field 'requires' must map distribution names to "
                              "version strings")
    for name, version in requires.items():
        _check_requirement(name, version, source)
    items = data.get("assets", [])
    if type(items) is not list:
        raise PackFormatError(f"{source}: field 'assets' must be a list")
    assets = tuple(_asset(item, f"{source}: assets[{i}]") for i, item in enumerate(items))
    seal = None
    if "seal" in data:
        try:
            seal = Seal.from_data(data["seal"])
        except PackFormatError as e:
            raise PackFormatError(f"{source}: seal: {e}") from None
    return dict(requires), assets, seal


def _check_requirement(name: str, version: str, source: str) -> None:
    """Refuse a ``requires`` entry that is not a PEP 508 name and a PEP 440 version: it goes
    into a suggested ``pip install name==version``, where ``--extra-index-url=...`` would be
    an option, not a distribution."""
    if not _NAME.fullmatch(name):
        raise PackFormatError(
            f"{source}: field 'requires' holds {printable(short(name))}, which is not a "
            "distribution name (PEP 508: ASCII letters, digits, '.', '_' and '-', beginning "
            "and ending with a letter or digit); the file is refused")
    if not _VERSION.fullmatch(version):
        raise PackFormatError(
            f"{source}: field 'requires' gives {printable(short(name))} the version "
            f"{printable(short(version))}, which is not a version (PEP 440, such as '1.4.0'); "
            "the file is refused")


def _asset(item: Any, where: str) -> Asset:
    fields = {"path", "kind", "size", "sha256", "carried", "data"}
    if type(item) is not dict or not set(item) <= fields or not fields - {"data"} <= set(item):
        raise PackFormatError(f"{where}: an asset is an object with path, kind, size, sha256, "
                              "carried (and data when carried)")
    path, kind, size, sha, carried = (item[k] for k in ("path", "kind", "size", "sha256",
                                                          "carried"))
    if type(path) is not str or not path or "\0" in path:
        raise PackFormatError(f"{where}: 'path' must be a non-empty string")
    if kind not in ("file", "dir"):
        raise PackFormatError(f"{where}: 'kind' must be 'file' or 'dir'")
    if type(size) is not int or size < 0:
        raise PackFormatError(f"{where}: 'size' must be a non-negative int")
    if type(sha) is not str or not _HEX64.fullmatch(sha):
        raise PackFormatError(f"{where}: 'sha256' must be 64 lowercase hex digits")
    if type(carried) is not bool:
        raise PackFormatError(f"{where}: 'carried' must be true or false")
    raw = None
    if carried:
        if type(item.get("data")) is not str:
            raise PackFormatError(f"{where}: a carried asset holds its bytes in 'data' "
                                  "(base64)")
        try:
            raw = base64.b64decode(item["data"].encode("ascii"), validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise PackFormatError(f"{where}: 'data' is not valid base64") from None
        if kind == "file" and (len(raw) != size or hashlib.sha256(raw).hexdigest() != sha):
            raise PackFormatError(f"{where}: 'data' does not hash to its sha256 {sha[:12]}: "
                                  "the asset was altered")
    elif "data" in item:
        raise PackFormatError(f"{where}: an asset that is not carried holds no 'data'")
    return Asset(path=path, kind=kind, size=size, sha256=sha, carried=carried, data=raw)


def _listed(value: Any) -> Any:
    """``value`` with its tuples as lists (a manifest is plain JSON)."""
    if isinstance(value, (list, tuple)):
        return [_listed(v) for v in value]
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    return value

