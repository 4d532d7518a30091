"""Every exception and warning specpack raises (docs/errors.md); :mod:`specpack` claims them.

Where a cause had a type of its own, the error is also of that type (a *twin*: ``except
TypeError`` around ``gymnasium.make`` keeps working); the ``*_error_for`` functions pick it.
"""

from __future__ import annotations

import errno as _errno
import os
from typing import Any, Literal, TypeVar

from gymnasium import error as _gym_error

__all__ = [
    "ArgumentTypeError", "AssetError", "BackendUnavailableError", "BuildArithmeticError",
    "BuildAttributeError", "BuildDependencyError", "BuildError", "BuildGymnasiumError",
    "BuildImportError", "BuildLookupError", "BuildNotImplementedError", "BuildTypeError",
    "BuildValueError", "CaptureError", "DeprecatedEnvError", "NotIdenticalError",
    "PackFileError", "PackFileNotFoundError", "PackFormatError", "PackIsADirectoryError",
    "PackPermissionError", "SignatureError", "SpecPackError", "UncarriableValueError",
    "UnexpectedKwargError", "UnknownEnvError", "UnknownEnvNameError", "UnknownEnvVersionError",
    "UnknownKeywordError", "UnknownNamespaceError", "UnrecordedArgumentsError",
    "UntrustedPackError", "VersionSkewWarning", "WorkerError", "build_error_for",
    "capture_error_for", "file_error_for",
]

class SpecPackError(Exception):
    """Base class of every error specpack raises on bad input or a failed rebuild.

    A fix that depends on where the error is read is given per surface: ``python`` (joined to
    the message: ``str(error)`` says it) and ``cli`` (printed by the command line instead).
    :attr:`problem` is the message without a fix; :meth:`for_surface`, the text a surface reads.

    Parameters
    ----------
    *args
        As for ``Exception``; the first is the message (the problem, without its fix).
    python, cli
        The fix in Python (``"pass trust=True ..."``) and on the command line (``"add --trust
        ..."``); either may be omitted (that surface reads the message alone).
    """

    def __init__(self, *args: object, python: str | None = None, cli: str | None = None) -> None:
        self.problem = str(args[0]) if args else ""
        self.fixes: dict[str, str] = {k: v for k, v in (("python", python), ("cli", cli)) if v}
        if args and python:
            args = (_join(self.problem, python), *args[1:])
        super().__init__(*args)

    def for_surface(self, surface: Literal["python", "cli"]) -> str:
        """The message with the fix for ``surface`` (``str(self)`` when it has none)."""
        fix = self.fixes.get(surface)
        return _join(self.problem, fix) if fix else str(self)


def _join(problem: str, fix: str) -> str:
    """``problem`` and its ``fix`` as one message, the fix after a space."""
    return f"{problem.rstrip()} {fix.strip()}" if problem.strip() else fix.strip()


class CaptureError(SpecPackError, ValueError):
    """``capture`` was given something it cannot turn into a faithful pack."""


class UnknownKeywordError(SpecPackError, TypeError):
    """A specpack function got a keyword it does not take; the message suggests the name."""


class BackendUnavailableError(SpecPackError, ImportError):
    """The requested backend (``gymnasium`` or ``gym``) is not installed here."""


class BuildError(SpecPackError, RuntimeError):
    """``pack.make()`` could not build the env (its constructor raised, or code failed to load).

    The constructor's exception is the ``__cause__``; the error is also of its type where safe
    (:func:`build_error_for`), so ``except TypeError`` works as around ``gymnasium.make``."""


class AssetError(BuildError):
    """A file the pack needs is missing or differs on this node, or a carried one cannot be
    materialised; raised by ``make()`` before the build, naming the path and the fix."""


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
    """A pack file or manifest is malformed, or a pickled pack is from another specpack version."""


class PackFileError(PackFormatError, OSError):
    """A pack or key file could not be read or written: missing, a directory, not permitted.

    Also the system's ``OSError`` (:attr:`errno`, :attr:`filename`, :attr:`strerror`), so
    ``except OSError`` around ``specpack.load(path)`` works as around ``open(path)``."""

    __str__ = BaseException.__str__  # the message, not OSError's "[Errno 2] ..." form

    def __reduce__(self) -> Any:  # OSError's fields are not in __dict__: pickle them too
        fields = {"errno": self.errno, "strerror": self.strerror, "filename": self.filename}
        return type(self), self.args, {**self.__dict__, **fields}


class UntrustedPackError(SpecPackError, PermissionError):
    """A pack file carries code by value and was neither trusted nor signed with a known key."""


class SignatureError(SpecPackError, PermissionError):
    """A pack file's signature is missing, made with another key, or the file was altered."""


class VersionSkewWarning(UserWarning):
    """A pack was captured under other versions of gymnasium/gym, numpy or the env's package."""


class UnknownEnvError(CaptureError, LookupError):
    """The env id is not in the registry (the message suggests the closest ids); raised as the
    subclass that is also the error ``gymnasium.make`` raises (:class:`UnknownEnvNameError`...)."""


class UnknownNamespaceError(UnknownEnvError, _gym_error.NamespaceNotFound):
    """No env is registered in that namespace (``gymnasium.error.NamespaceNotFound``)."""


class UnknownEnvNameError(UnknownEnvError, _gym_error.NameNotFound):
    """No env of that name is registered (``gymnasium.error.NameNotFound``)."""


class UnknownEnvVersionError(UnknownEnvError, _gym_error.VersionNotFound):
    """The name is registered, not that version (``gymnasium.error.VersionNotFound``)."""


class DeprecatedEnvError(UnknownEnvError, _gym_error.DeprecatedEnv):
    """The version is deprecated: a newer one exists (``gymnasium.error.DeprecatedEnv``)."""


class UnexpectedKwargError(CaptureError, TypeError):
    """A kwarg the env constructor (or a wrapper) cannot take; the message suggests the name."""


class UncarriableValueError(CaptureError, TypeError):
    """A kwarg (or a value inside one) cannot cross a process boundary."""


class UnrecordedArgumentsError(CaptureError):
    """A live env or wrapper holds unrecorded arguments: a rebuild would silently use defaults."""


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


class ArgumentTypeError(SpecPackError, TypeError):
    """A specpack function got an argument of the wrong type: a flag not ``True`` or ``False``
    (``load(path, trust="False")``), or not a :class:`~specpack.SpecPack` where a pack is needed
    (``verify("CartPole-v1")``). The message names the argument and what to pass instead."""


_E = TypeVar("_E", bound=SpecPackError)


def _twin(cause: BaseException, default: type[_E], *twins: type[_E]) -> type[_E]:
    """Of ``twins`` (most specific first), the first whose second base (the type it twins) is
    one of ``cause``'s types; else ``default``."""
    return next((cls for cls in twins if isinstance(cause, cls.__bases__[1])), default)


def capture_error_for(cause: BaseException) -> type[CaptureError]:
    """The :class:`CaptureError` for an entry point that failed to load with ``cause``: also
    of the type ``gymnasium.make`` lets through for it."""
    return _twin(cause, CaptureError, _CaptureDependencyError, _CaptureModuleNotFoundError,
                 _CaptureImportError, _CaptureAttributeError)


class _OldRenderAPIError(UnexpectedKwargError, _gym_error.Error):
    """``render_mode='human'`` for an env rendering only through the old API (a gymnasium Error)."""


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


def build_error_for(cause: BaseException) -> type[BuildError]:
    """The :class:`BuildError` subclass to raise for a constructor failure ``cause``."""
    return _twin(cause, BuildError, BuildDependencyError, BuildGymnasiumError, BuildTypeError,
                 BuildValueError, BuildAttributeError, BuildLookupError, BuildImportError,
                 BuildArithmeticError, BuildNotImplementedError)


class PackFileNotFoundError(PackFileError, FileNotFoundError):
    """The path does not exist (also a ``FileNotFoundError``)."""


class PackIsADirectoryError(PackFileError, IsADirectoryError):
    """The path is a directory, not a pack file (also an ``IsADirectoryError``)."""


class PackPermissionError(PackFileError, PermissionError):
    """The path may not be read or written here (also a ``PermissionError``)."""


class ProtocolError(SpecPackError):
    """A frame that is not a well-formed typed-JSON message (a broken or hostile child)."""


class RolloutError(SpecPackError):
    """The env raised during ``specpack run``'s rollout (the message names method and step)."""


def file_error_for(cause: OSError | int, message: str, filename: str,
                   **fixes: str) -> PackFileError:
    """The :class:`PackFileError` with ``message`` (and ``python=``/``cli=`` ``fixes``) for an
    ``OSError``, or an ``errno`` number (``errno.EISDIR``), on ``filename``."""
    if isinstance(cause, int):
        text = os.strerror(cause) if cause in _errno.errorcode else "error"
        cause = OSError(cause, text, filename)
    cls = _twin(cause, PackFileError, PackFileNotFoundError, PackIsADirectoryError,
                PackPermissionError)
    error = cls(message, **fixes)
    error.errno = cause.errno
    error.strerror = cause.strerror
    error.filename = filename
    return error
