"""What ``capture`` refuses: an id that is not registered, a kwarg the constructor does not
take, a value that cannot cross a process boundary, arguments a live env did not record.

Public (``specpack.UnknownEnvError``, ...), and told so when they are made (``__module__`` is
``specpack``: tracebacks and pickles name them where users import them). They live apart from
:mod:`specpack._errors` because making an exception class costs about 0.1 M instructions at
import, and a worker that unpickles a pack and builds it raises none of them: this module loads
with capture (or on first use of one of the names), not with ``import specpack``.
"""

from __future__ import annotations

from gymnasium import error as _gym_error

from ._errors import CaptureError
from ._restorer import claim

__all__ = [
    "DeprecatedEnvError",
    "UncarriableValueError",
    "UnexpectedKwargError",
    "UnknownEnvError",
    "UnknownEnvNameError",
    "UnknownEnvVersionError",
    "UnknownNamespaceError",
    "UnrecordedArgumentsError",
]


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


class UnexpectedKwargError(CaptureError, TypeError):
    """A kwarg the env constructor (or a wrapper) cannot take; the message suggests the name."""


class UncarriableValueError(CaptureError, TypeError):
    """A kwarg (or a value inside one) cannot cross a process boundary."""


class UnrecordedArgumentsError(CaptureError):
    """A live env or wrapper holds constructor arguments that were not recorded.

    Rebuilding it would silently fall back to defaults (the EzPickle gap), so capture refuses.
    """


claim("specpack", globals())  # made public: specpack.UnknownEnvError, in tracebacks too
