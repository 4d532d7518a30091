"""Where an object says it lives: the module name pickles, reprs and tracebacks show.

:func:`restorer` marks a function as a global of :mod:`specpack._pickled`, from the module
that defines it; :func:`claim` tells a class or function re-exported by a public module
(``specpack``, ``specpack.vector``, ...) that it lives there, as in httpx: reprs, tracebacks,
``help()`` and pickles of the class itself say ``specpack.SpecPack``, not
``specpack._core._pack.SpecPack``. Both only set ``__module__``, and nothing else does; this module
imports nothing of specpack, so any module may use them.

A pickle names each object's rebuilder by its ``__module__`` and ``__qualname__``. Every
``restore_*`` function is defined next to the class it rebuilds (a low module, so that the
class's ``__reduce__`` imports nothing above it) and labelled here as
``specpack._pickled.<name>``; :mod:`specpack._pickled` re-exports the very same object, which
``pickle`` checks when it saves a global. So pickles name only ``specpack._pickled`` while every
import points down.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

__all__ = ["PICKLED", "claim", "restorer"]

#: The one module every global of a new specpack pickle names.
PICKLED = "specpack._pickled"

_F = TypeVar("_F", bound=Callable[..., Any])


def restorer(function: _F) -> _F:
    """Label ``function`` as ``specpack._pickled.<its name>`` (returned unchanged otherwise).

    Parameters
    ----------
    function
        A module-level rebuilder that :mod:`specpack._pickled` re-exports under its own name.
    """
    function.__module__ = PICKLED
    function.__qualname__ = function.__name__
    return function


def _private(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "specpack" and any(part.startswith("_") for part in parts[1:])


def claim(face: str, namespace: Mapping[str, Any], names: Iterable[str] | None = None) -> None:
    """Set ``__module__`` to ``face`` on each class or function ``face`` re-exports.

    Parameters
    ----------
    face
        The public module's name (``"specpack"``).
    namespace
        Where the names are bound (the public module's ``globals()``).
    names
        The names to claim; ``namespace["__all__"]`` when None. Only classes and functions
        defined in a private specpack module under that very name are changed: a name
        defined in a public module, or already claimed by another public module, keeps its
        home (pickle must find ``face.<qualname>``).
    """
    for name in namespace.get("__all__", ()) if names is None else names:
        obj = namespace.get(name)
        if not (isinstance(obj, type) or isinstance(obj, types.FunctionType)):
            continue
        module = getattr(obj, "__module__", None)
        if isinstance(module, str) and _private(module) and obj.__qualname__ == name:
            obj.__module__ = face
