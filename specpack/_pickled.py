"""Every global a pickle made by this specpack names: the functions that rebuild its values.

A pickle stores, for each object, the dotted path of a function to call when it is loaded.
Every specpack value reduces to one of the ``restore_*`` functions named here, called with
builtins (and other values that reduce the same way), so that a pickled pack names only
``specpack._pickled``: the classes can move between modules without breaking a pickle made
before the move. Nothing here is public API; the names are a file format.

Each function is defined next to the class it rebuilds and labelled ``specpack._pickled.<name>``
there (:func:`specpack._restorer.restorer`), so that a class's ``__reduce__`` imports nothing
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
    A pack's build order (:class:`specpack._build.Order`): what ``make_vec``'s and the
    adapters' spawn and forkserver workers are sent instead of the pack. It only ever travels
    from a process to the workers it starts, never into a file, so its layout is not a format.

Pickles made by earlier releases name other paths; they stay importable and are listed in
:data:`LEGACY_NAMES` (old dotted path -> the object that answers it today), which a module
rename must keep answering:

- specpack 0.1.0 (pack format 1): ``specpack.pack._restore``, ``specpack.pack.Layer``,
  ``specpack._carry.CodeRef``, ``specpack._values.Blob``, ``specpack._values.EnumRef``,
  ``specpack._values._rebuild_array``;
- specpack 0.2.0 to 0.3.0.dev0 before this module (formats 2 and 3): the same
  ``specpack.pack._restore``, ``specpack.layer.Layer``, ``specpack.carry.code.CodeRef``,
  ``specpack.carry.values.Blob``, ``specpack.carry.values.EnumRef`` (0.2.0),
  ``specpack.carry.carried.Blob``, ``specpack.carry.carried.EnumRef``,
  ``specpack.carry.values._rebuild_array``, ``specpack._surface.Surface``;
- inside by-value payloads: ``specpack.carry.sources.restore_sources``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what __getattr__ hands out, from where it is defined
    from ._assets import restore_asset
    from ._build import restore_order
    from ._carry.carried import restore_blob, restore_enum_ref
    from ._carry.ref import restore_code_ref
    from ._carry.sources import restore_sources
    from ._carry.tree import restore_array
    from ._layer import restore_layer
    from ._pack import restore_pack
    from ._sealed import restore_seal
    from ._surface import restore_surface

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

#: Where each global is defined (a module of this package, relative to it).
_HOMES = {
    "restore_array": "._carry.tree",
    "restore_asset": "._assets",
    "restore_blob": "._carry.carried",
    "restore_code_ref": "._carry.ref",
    "restore_enum_ref": "._carry.carried",
    "restore_layer": "._layer",
    "restore_order": "._build",
    "restore_pack": "._pack",
    "restore_seal": "._sealed",  # the value only: no sealing machinery
    "restore_sources": "._carry.sources",
    "restore_surface": "._surface",
}


def _legacy() -> dict[str, Any]:
    from . import _carry, _values
    from . import _pack as pack
    from ._carry import carried, ref, sources, tree
    from ._layer import Layer
    from ._surface import Surface

    return {
        # specpack 0.1.0 (pack format 1: the state holds these objects)
        "specpack.pack._restore": pack._restore,
        "specpack.pack.Layer": pack.Layer,
        "specpack._carry.CodeRef": _carry.CodeRef,
        "specpack._values.Blob": _values.Blob,
        "specpack._values.EnumRef": _values.EnumRef,
        "specpack._values._rebuild_array": _values._rebuild_array,
        # specpack 0.2.0 up to 0.3.0.dev0 before this module (formats 2 and 3)
        "specpack.layer.Layer": Layer,
        "specpack.carry.code.CodeRef": ref.CodeRef,
        "specpack.carry.carried.Blob": carried.Blob,
        "specpack.carry.carried.EnumRef": carried.EnumRef,
        "specpack.carry.values.Blob": carried.Blob,
        "specpack.carry.values.EnumRef": carried.EnumRef,
        "specpack.carry.values._rebuild_array": tree.exact_array,
        "specpack._surface.Surface": Surface,
        # inside by-value payloads (cloudpickle bytes in a pack or a pack file)
        "specpack.carry.sources.restore_sources": sources.restore_sources,
    }


def __getattr__(name: str) -> Any:
    """A ``restore_*`` function (from the module that defines it), or ``LEGACY_NAMES``."""
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home, __package__), name)
        globals()[name] = value
        return value
    if name == "LEGACY_NAMES":
        return _legacy()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, "LEGACY_NAMES"])
