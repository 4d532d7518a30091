"""Every global a pickle made by this specpack names: the functions that rebuild its values.

A pickle stores, for each object, the dotted path of a function to call when it is loaded.
Every specpack value reduces to one of the ``restore_*`` functions named here, called with
builtins (and other values that reduce the same way), so that a pickled pack names only
``specpack._pickled``, the one module whose ``__module__`` labels it keeps. Nothing here is
public API. ``restore_pack`` and ``restore_sources`` are the names a later version reads:
the first to refuse the pickle clearly, the second inside by-value payloads, which pack files
carry (:func:`specpack._core._carry.carried.loads_payload` also reads the path 0.3.0.dev0 gave it).

Each function is defined next to the class it rebuilds and labelled ``specpack._pickled.<name>``
there (:func:`specpack._core._restorer.restorer`), so that a class's ``__reduce__`` imports nothing
above it; this module, the top of the pickling story, hands out those very objects (``pickle``
checks identity when it saves a global). It loads them on first use, importing nothing
at load time: ``specpack/__init__`` imports it, so it is in ``sys.modules`` whenever a specpack
value exists and cloudpickle (Ray, SB3) saves the functions by reference, and a worker that
unpickles a pack without a seal never loads the sealing machinery.

What a new pickle of a pack names:

``restore_pack(format, state)``
    A :class:`~specpack.SpecPack` (its state: :meth:`SpecPack._state`).
``restore_layer``, ``restore_code_ref``, ``restore_blob``, ``restore_enum_ref``,
``restore_array``, ``restore_surface``, ``restore_asset``, ``restore_seal``
    A wrapper layer, a code reference, an object carried by value, an enum member named by a
    manifest, an exactly-typed array, a recorded surface, an asset, a seal (each when pickled
    on its own, or inside a pack's lowered kwargs).
``restore_sources``
    Named inside by-value payloads (cloudpickle bytes): code whose source files travel with it.
``restore_order``
    A pack's build order (:class:`specpack._core._build.Order`): what ``make_vec``'s and the
    adapters' spawn and forkserver workers are sent instead of the pack. It only ever travels
    from a process to the workers it starts, never into a file, so its layout is not a format.

A pickle is a message between processes of one specpack version (Ray, multiprocessing,
joblib): a pickled pack carries the specpack version that made it, and ``restore_pack`` refuses
a pickle of any other version or format with :class:`~specpack.PackFormatError` naming
``specpack.dump``/``specpack.load``, the stored format (every pack file ever written keeps
loading). There is no import hook: pickles of earlier releases that name removed module paths
(``specpack.pack._restore``, ``specpack.carry.code.CodeRef``, ...) fail to import them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what __getattr__ hands out, from where it is defined
    from ._core._assets import restore_asset
    from ._core._build import restore_order
    from ._core._carry.carried import restore_blob, restore_enum_ref
    from ._core._carry.ref import restore_code_ref
    from ._core._carry.sources import restore_sources
    from ._core._carry.tree import restore_array
    from ._core._layer import restore_layer
    from ._core._pack import restore_pack
    from ._core._sealed import restore_seal
    from ._core._surface import restore_surface

__all__ = [
    "restore_array",
    "restore_asset",
    "restore_blob",
    "restore_code_ref",
    "restore_enum_ref",
    "restore_layer",
    "restore_order",
    "restore_pack",
    "restore_seal",
    "restore_sources",
    "restore_surface",
]

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


def __getattr__(name: str) -> Any:
    """A ``restore_*`` function, from the module that defines it."""
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home, __package__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
