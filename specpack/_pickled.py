"""Every global a pickle made by this specpack names: the functions that rebuild its values.

A pickle stores, for each object, the dotted path of a function to call when it is loaded.
Every specpack value reduces to one of the ``restore_*`` functions of this module, called with
builtins (and other values that reduce the same way), so that a pickled pack names only
``specpack._pickled``: the classes can move between modules without breaking a pickle made
before the move. Nothing here is public API; the names are a file format.

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

from typing import TYPE_CHECKING, Any

from ._assets import Asset
from ._surface import Surface
from .carry.carried import Blob, EnumRef
from .carry.ref import CodeRef
from .carry.sources import restore_sources as _relabelled
from .carry.tree import exact_array
from .layer import Layer

if TYPE_CHECKING:
    import numpy as np

    from ._seal import Seal
    from .pack import SpecPack

__all__ = [
    "restore_array",
    "restore_asset",
    "restore_blob",
    "restore_code_ref",
    "restore_enum_ref",
    "restore_layer",
    "restore_pack",
    "restore_seal",
    "restore_sources",
    "restore_surface",
]


def restore_pack(fmt: int, state: tuple[Any, ...]) -> SpecPack:
    """A pickled pack: ``state`` in layout ``fmt`` (1, 2 or 3; see ``specpack._state.FORMAT_VERSION``)."""
    from ._state import from_state  # lazy: the state module imports this one

    return from_state(fmt, state)


def restore_layer(cls: CodeRef, kwargs: dict[str, Any]) -> Layer:
    """A pickled :class:`~specpack.layer.Layer`: its class and lowered kwargs."""
    return Layer(cls, kwargs)


def restore_code_ref(*args: Any) -> CodeRef:
    """A pickled :class:`~specpack.carry.CodeRef`: its constructor's positional arguments."""
    return CodeRef(*args)


def restore_blob(payload: bytes, type_name: str, python: str) -> Blob:
    """A pickled :class:`~specpack.carry.carried.Blob` (an object carried by value)."""
    return Blob(payload, type_name, python)


def restore_enum_ref(module: str, qualname: str, member: str,
                     allow: tuple[str, ...] | None = None) -> EnumRef:
    """A pickled :class:`~specpack.carry.carried.EnumRef` (an enum member, not yet imported)."""
    return EnumRef(module, qualname, member, allow)


def restore_array(dtype: np.dtype[Any], shape: tuple[int, ...], data: bytes) -> Any:
    """A pickled lowered array: read-only, exactly ``dtype`` (byte order kept) and ``shape``."""
    return exact_array(dtype, shape, data)


def restore_surface(observation_space: Any, action_space: Any, metadata: dict[str, Any],
                    render_mode: str | None) -> Surface:
    """A pickled :class:`~specpack._surface.Surface` (spaces, metadata, render mode)."""
    return Surface(observation_space, action_space, metadata, render_mode)


def restore_asset(state: tuple[Any, ...]) -> Asset:
    """A pickled :class:`~specpack._assets.Asset` (its :meth:`~Asset.state` tuple)."""
    return Asset.from_state(state)


def restore_seal(data: dict[str, Any]) -> Seal:
    """A pickled :class:`~specpack._seal.Seal` (its :meth:`~Seal.to_data` dict, checked)."""
    from ._seal import Seal  # lazy: the sealing machinery is not needed to build

    return Seal.from_data(data)


def restore_sources(obj: Any, files: dict[tuple[str, int], str], sources: dict[str, str]) -> Any:
    """By-value code whose source files travel with it (named inside cloudpickle payloads)."""
    return _relabelled(obj, files, sources)


def _legacy() -> dict[str, Any]:
    from . import _carry, _values, pack
    from .carry import carried, ref, sources, tree

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
    """``LEGACY_NAMES``, built on first use (it imports the pack module)."""
    if name == "LEGACY_NAMES":
        return _legacy()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
