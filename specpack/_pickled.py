"""STUB of decl22's specpack/_pickled.py (line22 only): replace it with decl22's at merge.

line22's legacy finder (:mod:`specpack._public`) reads :data:`LEGACY_NAMES` from here:
old pickle path -> the object it now names.
"""

from __future__ import annotations

from typing import Any

from ._surface import Surface
from .carry.carried import Blob, EnumRef
from .carry.code import CodeRef
from .carry.values import _rebuild_array
from .layer import Layer
from .pack import SpecPack, _restore

__all__ = ["LEGACY_NAMES"]

#: Every module path + name that a pickle made by an earlier specpack names.
LEGACY_NAMES: dict[str, Any] = {
    "specpack.pack._restore": _restore,  # 0.1.0, 0.2.0
    "specpack.pack.SpecPack": SpecPack,
    "specpack.pack.Layer": Layer,  # 0.1.0
    "specpack.layer.Layer": Layer,
    "specpack.carry.code.CodeRef": CodeRef,  # 0.2.0
    "specpack.carry.carried.Blob": Blob,
    "specpack.carry.carried.EnumRef": EnumRef,
    "specpack.carry.values.Blob": Blob,  # 0.2.0
    "specpack.carry.values.EnumRef": EnumRef,  # 0.2.0
    "specpack.carry.values._rebuild_array": _rebuild_array,  # 0.2.0
    "specpack._carry.CodeRef": CodeRef,  # 0.1.0
    "specpack._values.Blob": Blob,  # 0.1.0
    "specpack._values.EnumRef": EnumRef,  # 0.1.0
    "specpack._values._rebuild_array": _rebuild_array,  # 0.1.0
    "specpack._surface.Surface": Surface,
}
