"""Marks a function as a global of :mod:`specpack._pickled`, from the module that defines it.

A pickle names each object's rebuilder by its ``__module__`` and ``__qualname__``. Every
``restore_*`` function is defined next to the class it rebuilds (a low module, so that the
class's ``__reduce__`` imports nothing above it) and labelled here as
``specpack._pickled.<name>``; :mod:`specpack._pickled` re-exports the very same object, which
``pickle`` checks when it saves a global. So pickles name only ``specpack._pickled`` while every
import points down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["PICKLED", "restorer"]

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
