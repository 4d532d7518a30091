"""Pack files: the manifest schema (:mod:`.manifest`), signatures (:mod:`.signed`), the
trust policy (:mod:`.trust`) and reading and writing files (:mod:`.io`).

``dump``, ``load``, ``describe`` and ``read_key`` are loaded on first use: the pack module
imports the schema, trust and signature modules, and :mod:`.io` imports the pack module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .io import describe, dump, load, read_key
    from .signed import key_id

__all__ = ["describe", "dump", "key_id", "load", "read_key"]


def __getattr__(name: str) -> Any:
    """``dump``/``load``/``describe``/``read_key`` from :mod:`.io`, loaded on first use."""
    if name in __all__:
        from . import io

        value = getattr(io, name)  # key_id too: io imports it from .signed
        globals()[name] = value
        return value
    raise AttributeError(f"module 'specpack.files' has no attribute {name!r}")
