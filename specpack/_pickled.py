"""Every global a pickle made by this specpack names: the ``restore_*`` functions (not public).

Each is defined next to the class it rebuilds, labelled ``specpack._pickled.<name>``
(:func:`specpack._core._restorer.restorer`) and handed out here on first use: importing
nothing, this module is always loaded, so cloudpickle saves them by reference.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Where each global is defined (a module of the core, relative to this package).
_HOMES = {
    "restore_array": "._core._carry.tree",
    "restore_asset": "._core._assets",
    "restore_blob": "._core._carry.carried",
    "restore_code_ref": "._core._carry.ref",
    "restore_enum_ref": "._core._carry.carried",
    "restore_layer": "._core._layer",
    "restore_order": "._core._build",
    "restore_pack": "._core._pack",
    "restore_seal": "._core._sealed",  # the value only: no sealing machinery
    "restore_sources": "._core._carry.sources",
    "restore_surface": "._core._surface",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """A ``restore_*`` function, from the module that defines it."""
    if (home := _HOMES.get(name)) is not None:
        value = getattr(importlib.import_module(home, __package__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
