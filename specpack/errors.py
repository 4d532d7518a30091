"""The exceptions and warnings specpack raises.

Every error specpack raises on bad input is a :class:`SpecPackError`. Each message names the thing
that was wrong (the env id, the kwarg path, the wrapper class, the file) and says how to fix it.
Errors are raised where the fault is known: in the parent at capture time whenever possible,
never as a bare traceback from a worker.
"""

from __future__ import annotations

__all__ = [
    "BackendUnavailableError",
    "BuildError",
    "CaptureError",
    "NotIdenticalError",
    "PackFormatError",
    "SignatureError",
    "SpecPackError",
    "UncarriableValueError",
    "UnexpectedKwargError",
    "UnknownEnvError",
    "UnrecordedArgumentsError",
    "UntrustedPackError",
    "VersionSkewWarning",
    "WorkerError",
]


class SpecPackError(Exception):
    """Base class of every error specpack raises on bad input or a failed rebuild."""


class CaptureError(SpecPackError, ValueError):
    """``capture`` was given something it cannot turn into a faithful pack."""


class UnknownEnvError(CaptureError, LookupError):
    """The env id is not in the registry (the message suggests the closest ids)."""


class UnexpectedKwargError(CaptureError, TypeError):
    """A kwarg the env constructor (or a wrapper) cannot take; the message suggests the name."""


class UncarriableValueError(CaptureError, TypeError):
    """A kwarg (or a value inside one) cannot cross a process boundary."""


class UnrecordedArgumentsError(CaptureError):
    """A live env or wrapper holds constructor arguments that were not recorded.

    Rebuilding it would silently fall back to defaults (the EzPickle gap), so capture refuses.
    """


class BackendUnavailableError(SpecPackError, ImportError):
    """The requested backend (``gymnasium`` or ``gym``) is not installed here."""


class BuildError(SpecPackError, RuntimeError):
    """``pack.make()`` could not build the env (its constructor raised, or code failed to load)."""


class WorkerError(SpecPackError, RuntimeError):
    """A worker process failed to rebuild a pack; carries the child's traceback text."""

    def __init__(self, message: str, child_traceback: str = "") -> None:
        super().__init__(message)
        self.child_traceback = child_traceback


class NotIdenticalError(SpecPackError, AssertionError):
    """``verify(check=True)`` found that a rebuild differs from the reference."""

    def __init__(self, message: str, differences: list[str] | None = None) -> None:
        super().__init__(message)
        self.differences = list(differences or [])


class PackFormatError(SpecPackError, ValueError):
    """A manifest or pack file is malformed (the message names the file and the field)."""


class UntrustedPackError(SpecPackError, PermissionError):
    """A pack file carries code by value and was neither trusted nor signed with a known key."""


class SignatureError(SpecPackError, PermissionError):
    """A pack file's signature is missing, made with another key, or the file was altered."""


class VersionSkewWarning(UserWarning):
    """A pack was captured under other versions of gymnasium/gym, numpy or the env's package."""
