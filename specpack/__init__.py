"""specpack: capture a Gymnasium/Gym environment once, rebuild it identically in any process.

``pack = specpack.capture("CustomAnt-v0")`` resolves the env where it is known (entry point,
kwargs, ``max_episode_steps``, the whole wrapper stack in true order), carries by value the code
a fresh interpreter could not import, pickles with plain ``pickle``, and ``pack.make()`` rebuilds
the same env in any worker: spawn, forkserver, a fresh ``python``, Ray, loky, SB3.

The public face is small and every piece of it loads on first use: ``import specpack`` costs
little next to ``import gymnasium``, and a worker that unpickles a pack and calls ``make()``
loads only the pack, its carried values and its backend (no worker protocol, file format or
verifier).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _pickled  # noqa: F401  (loads nothing; see its docstring)
from ._version import __version__
from .errors import (
    AssetError,
    BackendUnavailableError,
    BuildError,
    CaptureError,
    NotIdenticalError,
    PackFileError,
    PackFormatError,
    SignatureError,
    SpecPackError,
    UncarriableValueError,
    UnexpectedKwargError,
    UnknownEnvError,
    UnrecordedArgumentsError,
    UntrustedPackError,
    VersionSkewWarning,
    WorkerError,
)

if TYPE_CHECKING:
    from . import testing
    from ._audit import AuditReport, audit
    from ._capture import capture
    from ._verify.engine import diff, verify
    from ._verify.report import VerifyReport
    from .backends.recorders import register_recorder
    from .carry import Blob, CodeRef, EnumRef
    from .files.io import dump, load
    from .pack import Layer, SpecPack
    from .vector import make_vec

__all__ = [
    "AssetError",
    "AuditReport",
    "BackendUnavailableError",
    "Blob",
    "BuildError",
    "CaptureError",
    "CodeRef",
    "EnumRef",
    "Layer",
    "NotIdenticalError",
    "PackFileError",
    "PackFormatError",
    "SignatureError",
    "SpecPack",
    "SpecPackError",
    "UncarriableValueError",
    "UnexpectedKwargError",
    "UnknownEnvError",
    "UnrecordedArgumentsError",
    "UntrustedPackError",
    "VerifyReport",
    "VersionSkewWarning",
    "WorkerError",
    "__version__",
    "audit",
    "capture",
    "diff",
    "dump",
    "load",
    "make_vec",
    "register_recorder",
    "testing",
    "verify",
]

_LAZY = {
    "capture": ("_capture", "capture"),
    "SpecPack": ("pack", "SpecPack"),
    "Layer": ("pack", "Layer"),
    "Blob": ("carry", "Blob"),
    "CodeRef": ("carry", "CodeRef"),
    "EnumRef": ("carry", "EnumRef"),
    "register_recorder": ("backends.recorders", "register_recorder"),
    "diff": ("_verify.engine", "diff"),
    "verify": ("_verify.engine", "verify"),
    "VerifyReport": ("_verify.report", "VerifyReport"),
    "dump": ("files.io", "dump"),
    "load": ("files.io", "load"),
    "make_vec": ("vector", "make_vec"),
    "audit": ("_audit", "audit"),
    "AuditReport": ("_audit", "AuditReport"),
}


def __getattr__(name: str) -> Any:
    """Load the heavier public names on first use (keeps ``import specpack`` fast)."""
    import importlib

    if name in ("testing", "vector", "files", "ray"):
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'specpack' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
