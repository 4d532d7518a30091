"""The exceptions and warnings specpack raises.

Every error specpack raises on bad input is a :class:`SpecPackError`. Each message names the thing
that was wrong (the env id, the kwarg path, the wrapper class, the file) and says how to fix it.
Errors are raised where the fault is known: in the parent at capture time whenever possible,
never as a bare traceback from a worker.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = [
    "AssetError",
    "BackendUnavailableError",
    "BuildError",
    "CaptureError",
    "NotIdenticalError",
    "PackFileError",
    "PackFormatError",
    "SignatureError",
    "SpecPackError",
    "UnknownKeywordError",
    "UntrustedPackError",
    "VersionSkewWarning",
    "WorkerError",
]

#: Where a message is read: from Python (``str(error)``) or on the ``specpack`` command line.
Surface = Literal["python", "cli"]


class SpecPackError(Exception):
    """Base class of every error specpack raises on bad input or a failed rebuild.

    An error whose fix depends on where it is read carries that fix per surface: ``python``
    (joined to the message, so ``str(error)`` and tracebacks say it) and ``cli`` (what the
    ``specpack`` command line prints instead, naming its flags). The message without a fix is
    :attr:`problem`; :meth:`for_surface` gives the whole text as one surface reads it.

    Parameters
    ----------
    *args
        As for ``Exception``; the first is the message (the problem, without its fix).
    python, cli
        The fix as said in Python (``"pass trust=True ..."``) and on the command line
        (``"add --trust ..."``). Either may be omitted: that surface reads the message alone.
    """

    def __init__(self, *args: object, python: str | None = None, cli: str | None = None) -> None:
        self.problem = str(args[0]) if args else ""
        self.fixes: dict[str, str] = {}
        if python:
            self.fixes["python"] = python
        if cli:
            self.fixes["cli"] = cli
        if args and python:
            args = (_join(self.problem, python), *args[1:])
        super().__init__(*args)

    def for_surface(self, surface: Surface) -> str:
        """The message with the fix for ``surface`` (``str(self)`` when it has none)."""
        fix = self.fixes.get(surface)
        return _join(self.problem, fix) if fix else str(self)


def _join(problem: str, fix: str) -> str:
    """``problem`` and its ``fix`` as one message (the fix after a space; the problem's own
    punctuation decides how they read together)."""
    return f"{problem.rstrip()} {fix.strip()}" if problem.strip() else fix.strip()


class CaptureError(SpecPackError, ValueError):
    """``capture`` was given something it cannot turn into a faithful pack."""


class UnknownKeywordError(SpecPackError, TypeError):
    """A specpack function or option got a keyword argument it does not take (``make_vec(...,
    shared_memroy=False)``, ``load(path, trsut=True)``); the message suggests the name."""


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


class PackFileError(PackFormatError, OSError):
    """A pack or key file could not be read or written: missing, a directory, not permitted.

    Also the ``OSError`` the operating system gave (:attr:`errno`, :attr:`filename`,
    :attr:`strerror` set from it), so ``except OSError`` (or ``FileNotFoundError``...) around
    ``specpack.load(path)`` works as around ``open(path)``. Made by :func:`file_error_for`.
    """

    __str__ = BaseException.__str__  # the message, not OSError's "[Errno 2] ..." form

    def __reduce__(self) -> Any:
        # OSError's fields are not in __dict__: keep them across pickling.
        state = dict(self.__dict__, errno=self.errno, strerror=self.strerror,
                     filename=self.filename)
        return type(self), self.args, state


class UntrustedPackError(SpecPackError, PermissionError):
    """A pack file carries code by value and was neither trusted nor signed with a known key."""


class SignatureError(SpecPackError, PermissionError):
    """A pack file's signature is missing, made with another key, or the file was altered."""


class VersionSkewWarning(UserWarning):
    """A pack was captured under other versions of gymnasium/gym, numpy or the env's package."""
