"""The exceptions and warnings specpack raises.

Every error specpack raises on bad input is a :class:`SpecPackError`. Each message names the thing
that was wrong (the env id, the kwarg path, the wrapper class, the file) and says how to fix it.
Errors are raised where the fault is known: in the parent at capture time whenever possible,
never as a bare traceback from a worker.
"""

from __future__ import annotations

from gymnasium import error as _gym_error

__all__ = [
    "AssetError",
    "BackendUnavailableError",
    "BuildError",
    "CaptureError",
    "DeprecatedEnvError",
    "NotIdenticalError",
    "PackFormatError",
    "SignatureError",
    "SpecPackError",
    "UncarriableValueError",
    "UnexpectedKwargError",
    "UnknownEnvError",
    "UnknownEnvNameError",
    "UnknownEnvVersionError",
    "UnknownNamespaceError",
    "UnrecordedArgumentsError",
    "UntrustedPackError",
    "VersionSkewWarning",
    "WorkerError",
    "build_error_for",
    "capture_error_for",
]


class SpecPackError(Exception):
    """Base class of every error specpack raises on bad input or a failed rebuild."""


class CaptureError(SpecPackError, ValueError):
    """``capture`` was given something it cannot turn into a faithful pack."""


class UnknownEnvError(CaptureError, LookupError):
    """The env id is not in the registry (the message suggests the closest ids).

    Raised as the subclass matching the error ``gymnasium.make`` would raise for the same id
    (:class:`UnknownEnvNameError`, ...), so code that catches gymnasium's errors keeps working.
    """


class UnknownNamespaceError(UnknownEnvError, _gym_error.NamespaceNotFound):
    """No env is registered in that namespace (``gymnasium.error.NamespaceNotFound``)."""


class UnknownEnvNameError(UnknownEnvError, _gym_error.NameNotFound):
    """No env of that name is registered (``gymnasium.error.NameNotFound``)."""


class UnknownEnvVersionError(UnknownEnvError, _gym_error.VersionNotFound):
    """The name is registered, not that version (``gymnasium.error.VersionNotFound``)."""


class DeprecatedEnvError(UnknownEnvError, _gym_error.DeprecatedEnv):
    """The version is deprecated: a newer one exists (``gymnasium.error.DeprecatedEnv``)."""


class _CaptureDependencyError(CaptureError, _gym_error.DependencyNotInstalled):
    """Importing the entry point needs a dependency that is not installed here."""


class _CaptureImportError(CaptureError, ImportError):
    """The entry point's module cannot be imported here."""


class _CaptureModuleNotFoundError(_CaptureImportError, ModuleNotFoundError):
    """The entry point's module (or a ``"module:Env-v0"`` id's) is not installed here."""


class _CaptureAttributeError(CaptureError, AttributeError):
    """The entry point's module has no such name."""


class _CaptureTypeError(CaptureError, TypeError):
    """``capture`` was given something that is not an env id, spec, class, factory or env."""


def capture_error_for(cause: BaseException) -> type[CaptureError]:
    """The :class:`CaptureError` to raise when loading an entry point failed with ``cause``:
    also of the type ``gymnasium.make`` lets through for it, so code catching that still works."""
    if isinstance(cause, _gym_error.DependencyNotInstalled):
        return _CaptureDependencyError
    if isinstance(cause, ModuleNotFoundError):
        return _CaptureModuleNotFoundError
    if isinstance(cause, ImportError):
        return _CaptureImportError
    if isinstance(cause, AttributeError):
        return _CaptureAttributeError
    return CaptureError


class UnexpectedKwargError(CaptureError, TypeError):
    """A kwarg the env constructor (or a wrapper) cannot take; the message suggests the name."""


class _OldRenderAPIError(UnexpectedKwargError, _gym_error.Error):
    """``render_mode='human'`` for an env that renders only through the old API: as
    ``gymnasium.make`` says it (an ``UnexpectedKwargError`` and a ``gymnasium.error.Error``)."""


class UncarriableValueError(CaptureError, TypeError):
    """A kwarg (or a value inside one) cannot cross a process boundary."""


class UnrecordedArgumentsError(CaptureError):
    """A live env or wrapper holds constructor arguments that were not recorded.

    Rebuilding it would silently fall back to defaults (the EzPickle gap), so capture refuses.
    """


class BackendUnavailableError(SpecPackError, ImportError):
    """The requested backend (``gymnasium`` or ``gym``) is not installed here."""


class BuildError(SpecPackError, RuntimeError):
    """``pack.make()`` could not build the env (its constructor raised, or code failed to load).

    When the constructor raised, that exception is the ``__cause__``, and the error is raised
    as the subclass that is also an instance of its type where that is safe
    (:func:`build_error_for`): a ``TypeError`` from the constructor is caught by
    ``except TypeError`` as it would be around ``gymnasium.make``.
    """


class AssetError(BuildError):
    """A file the pack needs is missing or differs on this node, or a carried one cannot be
    materialised (its bytes are corrupt, or the cache folder cannot be written).

    Raised by ``make()`` before the env is built, naming the path and the fix (carry the file
    with ``capture(..., self_contained=True)``, or put the same file there).
    """


class BuildTypeError(BuildError, TypeError):
    """The constructor raised a ``TypeError``."""


class BuildValueError(BuildError, ValueError):
    """The constructor raised a ``ValueError``."""


class BuildAttributeError(BuildError, AttributeError):
    """The constructor raised an ``AttributeError``."""


class BuildLookupError(BuildError, LookupError):
    """The constructor raised a ``LookupError`` (``KeyError``, ``IndexError``)."""


class BuildImportError(BuildError, ImportError):
    """The constructor raised an ``ImportError``."""


class BuildArithmeticError(BuildError, ArithmeticError):
    """The constructor raised an ``ArithmeticError`` (``ZeroDivisionError``, ...)."""


class BuildNotImplementedError(BuildError, NotImplementedError):
    """The constructor raised a ``NotImplementedError``."""


class BuildDependencyError(BuildError, _gym_error.DependencyNotInstalled):
    """The constructor raised ``gymnasium.error.DependencyNotInstalled``."""


class BuildGymnasiumError(BuildError, _gym_error.Error):
    """The constructor raised another ``gymnasium.error.Error``."""


#: Most specific first: the first base the cause is an instance of decides.
_BUILD_ERRORS: tuple[tuple[type[BaseException], type[BuildError]], ...] = (
    (_gym_error.DependencyNotInstalled, BuildDependencyError),
    (_gym_error.Error, BuildGymnasiumError),
    (TypeError, BuildTypeError),
    (ValueError, BuildValueError),
    (AttributeError, BuildAttributeError),
    (LookupError, BuildLookupError),
    (ImportError, BuildImportError),
    (ArithmeticError, BuildArithmeticError),
    (NotImplementedError, BuildNotImplementedError),
)


def build_error_for(cause: BaseException) -> type[BuildError]:
    """The :class:`BuildError` subclass to raise for a constructor failure ``cause``."""
    for base, cls in _BUILD_ERRORS:
        if isinstance(cause, base):
            return cls
    return BuildError


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
