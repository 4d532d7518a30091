"""specpack: capture a Gymnasium/Gym environment once, rebuild it identically in any process.

``pack = specpack.capture("CustomAnt-v0")`` resolves the env where it is known (entry point,
kwargs, ``max_episode_steps``, the whole wrapper stack in true order), carries by value the code
a fresh interpreter could not import, pickles with plain ``pickle``, and ``pack.make()`` rebuilds
the same env in any worker: spawn, forkserver, a fresh ``python``, Ray, loky, SB3.

The public face is small; heavier pieces (files, vector envs, audit) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from .capture import capture
from .errors import (
    BackendUnavailableError,
    BuildError,
    CaptureError,
    NotIdenticalError,
    PackFormatError,
    SignatureError,
    SpecPackError,
    UncarriableValueError,
    UnknownEnvError,
    UnrecordedArgumentsError,
    UntrustedPackError,
    VersionSkewWarning,
    WorkerError,
)
from .pack import Layer, SpecPack

if TYPE_CHECKING:
    from . import testing
    from ._audit import AuditReport, audit
    from .files import dump, load
    from .vector import make_vec
    from .verify import VerifyReport, diff

__all__ = [
    "AuditReport",
    "BackendUnavailableError",
    "BuildError",
    "CaptureError",
    "Layer",
    "NotIdenticalError",
    "PackFormatError",
    "SignatureError",
    "SpecPack",
    "SpecPackError",
    "UncarriableValueError",
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
    "testing",
]

_LAZY = {
    "diff": ("verify", "diff"),
    "VerifyReport": ("verify", "VerifyReport"),
    "dump": ("files", "dump"),
    "load": ("files", "load"),
    "make_vec": ("vector", "make_vec"),
    "audit": ("_audit", "audit"),
    "AuditReport": ("_audit", "AuditReport"),
}


def __getattr__(name: str) -> Any:
    """Load the heavier public names on first use (keeps ``import specpack`` fast)."""
    import importlib

    if name == "testing":
        return importlib.import_module(".testing", __name__)
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'specpack' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
