"""The errors that are also of the type of what they wrap, loaded when one is raised.

A constructor that raises ``TypeError`` makes ``make()`` raise :class:`BuildTypeError`, both a
:class:`~specpack.BuildError` and a ``TypeError``, so ``except TypeError`` around ``make()``
works as around ``gymnasium.make``; loading an entry point that fails with
``ModuleNotFoundError`` makes ``capture`` raise a :class:`~specpack.CaptureError` that is also a
``ModuleNotFoundError``; a pack file that does not exist gives a
:class:`~specpack.PackFileError` that is also a ``FileNotFoundError``. The ``*_error_for``
functions pick the class for a cause.

They live apart from :mod:`specpack._errors` because making an exception class costs about
0.1 M instructions at import (a few hundred times a plain function's), and a worker that
unpickles a pack and builds it raises none of these: this module loads on the first failure.
"""

from __future__ import annotations

import errno as _errno

from gymnasium import error as _gym_error

from ._capture_errors import UnexpectedKwargError
from ._errors import BuildError, CaptureError, PackFileError, SpecPackError
from ._restorer import claim

__all__ = [
    "ArgumentTypeError",
    "BuildArithmeticError",
    "BuildAttributeError",
    "BuildDependencyError",
    "BuildGymnasiumError",
    "BuildImportError",
    "BuildLookupError",
    "BuildNotImplementedError",
    "BuildTypeError",
    "BuildValueError",
    "PackFileNotFoundError",
    "PackIsADirectoryError",
    "PackPermissionError",
    "build_error_for",
    "capture_error_for",
    "file_error_for",
]


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
    """A specpack function got an argument of the wrong type: a flag that is not ``True`` or
    ``False`` (``load(path, trust="False")``), or something else than a
    :class:`~specpack.SpecPack` where a pack is needed (``verify("CartPole-v1")``). The message
    names the argument and what to pass instead."""


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


class _OldRenderAPIError(UnexpectedKwargError, _gym_error.Error):
    """``render_mode='human'`` for an env that renders only through the old API: as
    ``gymnasium.make`` says it (an ``UnexpectedKwargError`` and a ``gymnasium.error.Error``)."""


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


class PackFileNotFoundError(PackFileError, FileNotFoundError):
    """The path does not exist (also a ``FileNotFoundError``)."""


class PackIsADirectoryError(PackFileError, IsADirectoryError):
    """The path is a directory, not a pack file (also an ``IsADirectoryError``)."""


class PackPermissionError(PackFileError, PermissionError):
    """The path may not be read or written here (also a ``PermissionError``)."""


#: Most specific first.
_FILE_ERRORS: tuple[tuple[type[OSError], type[PackFileError]], ...] = (
    (FileNotFoundError, PackFileNotFoundError),
    (IsADirectoryError, PackIsADirectoryError),
    (PermissionError, PackPermissionError),
)


def file_error_for(cause: OSError | int, message: str, filename: str,
                   **fixes: str) -> PackFileError:
    """The :class:`PackFileError` for an ``OSError`` (or an ``errno`` number) on ``filename``.

    Parameters
    ----------
    cause
        The operating system's error, or the ``errno`` to report (e.g. ``errno.EISDIR``).
    message
        The message: what could not be done to which file, and why.
    filename
        The path, as ``OSError.filename`` holds it.
    **fixes
        ``python=``/``cli=`` fixes, as for :class:`SpecPackError`.
    """
    if isinstance(cause, int):
        cause = OSError(cause, _errno_text(cause), filename)
    cls = next((sub for base, sub in _FILE_ERRORS if isinstance(cause, base)), PackFileError)
    error = cls(message, **fixes)
    error.errno = cause.errno
    error.strerror = cause.strerror
    error.filename = filename
    return error


def _errno_text(number: int) -> str:
    import os

    return os.strerror(number) if number in _errno.errorcode else "error"


#: The public classes of this module: users import them from ``specpack`` (tracebacks and
#: pickles say ``specpack.BuildTypeError``). The private twins of capture's errors are shown
#: as the public base users catch (``specpack._text.public_name``).
PUBLIC = ("ArgumentTypeError", "BuildArithmeticError", "BuildAttributeError",
          "BuildDependencyError", "BuildGymnasiumError", "BuildImportError", "BuildLookupError",
          "BuildNotImplementedError", "BuildTypeError", "BuildValueError",
          "PackFileNotFoundError", "PackIsADirectoryError", "PackPermissionError")

claim("specpack", globals(), PUBLIC)
