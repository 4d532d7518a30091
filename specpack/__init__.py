"""specpack: capture a Gymnasium/Gym environment once, rebuild it identically in any process.

``pack = specpack.capture("CustomAnt-v0")`` records the env where it is known, pickles with
plain ``pickle``, and ``pack.make()`` rebuilds the same env in any worker. Every public name
loads on first use, so a worker that unpickles a pack loads only what building it needs.
"""

from __future__ import annotations

import gc as _gc
import importlib
import sys
from typing import TYPE_CHECKING, Any

# The cyclic GC pauses while this package's imports run (gymnasium and numpy, when they are not
# loaded yet): every object an import makes stays alive, so the collections it would trigger
# find nothing (~11 ms of a fresh interpreter's start: verify's children, a forkserver).
_collecting = _gc.isenabled()
_gc.disable()
try:
    # Loaded first, as every gymnasium program does: a worker that imported numpy and specpack's
    # core before it measured 25-30 ms more CPU (benchmarks/bench_import.py).
    import gymnasium  # noqa: F401

    from . import _pickled  # noqa: F401  (loads nothing; see its docstring)
    from ._core._errors import (
        ArgumentTypeError,
        AssetError,
        BackendUnavailableError,
        BuildArithmeticError,
        BuildAttributeError,
        BuildDependencyError,
        BuildError,
        BuildGymnasiumError,
        BuildImportError,
        BuildLookupError,
        BuildNotImplementedError,
        BuildTypeError,
        BuildValueError,
        CaptureError,
        DeprecatedEnvError,
        NotIdenticalError,
        PackFileError,
        PackFileNotFoundError,
        PackFormatError,
        PackIsADirectoryError,
        PackPermissionError,
        SignatureError,
        SpecPackError,
        UncarriableValueError,
        UnexpectedKwargError,
        UnknownEnvError,
        UnknownEnvNameError,
        UnknownEnvVersionError,
        UnknownKeywordError,
        UnknownNamespaceError,
        UnrecordedArgumentsError,
        UntrustedPackError,
        VersionSkewWarning,
        WorkerError,
    )
    from ._core._restorer import claim
    from ._core._version import __version__
finally:
    if _collecting:
        _gc.enable()

if TYPE_CHECKING:
    from . import testing
    from ._core._assets import Asset
    from ._core._backends.recorders import register_recorder
    from ._core._capture import capture
    from ._core._carry import Blob, CodeRef, EnumRef
    from ._core._files import dump, load
    from ._core._pack import Layer, SpecPack
    from ._core._sealed import Seal
    from ._tools._audit.api import audit
    from ._tools._audit.report import AuditReport, Finding
    from ._tools._seal import check, seal
    from ._tools._verify.engine import diff, verify
    from ._tools._verify.report import CheckReport, VerifyReport
    from .vector import make_vec

__all__ = ["ArgumentTypeError", "Asset", "AssetError", "AuditReport", "BackendUnavailableError",
           "Blob", "BuildArithmeticError", "BuildAttributeError", "BuildDependencyError",
           "BuildError", "BuildGymnasiumError", "BuildImportError", "BuildLookupError",
           "BuildNotImplementedError", "BuildTypeError", "BuildValueError", "CaptureError",
           "CheckReport", "CodeRef", "DeprecatedEnvError", "EnumRef", "Finding", "Layer",
           "NotIdenticalError", "PackFileError", "PackFileNotFoundError", "PackFormatError",
           "PackIsADirectoryError", "PackPermissionError", "Seal", "SignatureError", "SpecPack",
           "SpecPackError", "UncarriableValueError", "UnexpectedKwargError", "UnknownEnvError",
           "UnknownEnvNameError", "UnknownEnvVersionError", "UnknownKeywordError",
           "UnknownNamespaceError", "UnrecordedArgumentsError", "UntrustedPackError",
           "VerifyReport", "VersionSkewWarning", "WorkerError", "__version__", "audit", "capture",
           "check", "diff", "dump", "load", "make_vec", "register_recorder", "seal", "testing",
           "verify"]

#: The module each public name is loaded from on first use.
_LAZY = {name: module for module, names in {
    "specpack._core._capture": ("capture",),
    "specpack._core._pack": ("SpecPack", "Layer"),
    "specpack._core._carry": ("Blob", "CodeRef", "EnumRef"),
    "specpack._core._assets": ("Asset",),
    "specpack._core._sealed": ("Seal",),
    "specpack._core._backends.recorders": ("register_recorder",),
    "specpack._tools._verify.engine": ("diff", "verify"),
    "specpack._tools._seal": ("seal", "check"),
    "specpack._tools._verify.report": ("VerifyReport", "CheckReport"),
    "specpack.files": ("dump", "load"),
    "specpack.vector": ("make_vec",),
    "specpack._tools._audit.api": ("audit",),
    "specpack._tools._audit.report": ("AuditReport", "Finding"),
}.items() for name in names}

#: The public modules that load on first use as attributes (``specpack.vector.make_vec``).
_SUBMODULES = ("testing", "vector", "files", "ray", "adapters")

claim(__name__, globals())  # the errors: tracebacks say specpack.BuildError


def _bind_loaded() -> None:
    """Bind and claim every lazy name whose module is already imported (no import), so a class
    that ``capture`` or an unpickle loaded reports ``specpack`` from the first name used."""
    ready = {name: value for name, module in _LAZY.items() if name not in globals()
             and (value := getattr(sys.modules.get(module), name, None)) is not None}
    globals().update(ready)
    claim(__name__, globals(), ready)


def __getattr__(name: str) -> Any:
    """Load the heavier public names on first use (keeps ``import specpack`` fast), each told it
    lives here unless a public module (``specpack.vector``, ``specpack.files``) claimed it."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        _bind_loaded()
        return value
    raise AttributeError(f"module 'specpack' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
