"""Where an object says it lives: :func:`restorer` labels a rebuilder
``specpack._pickled.<name>``, so that pickles name only that module; :func:`claim` gives a public
module's re-exports its name (``specpack.SpecPack``) for pickles, reprs and tracebacks."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

__all__ = ["PICKLED", "claim", "restorer"]

#: The one module every global of a new specpack pickle names.
PICKLED = "specpack._pickled"

_F = TypeVar("_F", bound=Callable[..., Any])


def restorer(function: _F) -> _F:
    """Label the module-level rebuilder ``function`` as ``specpack._pickled.<its name>``."""
    function.__module__ = PICKLED
    function.__qualname__ = function.__name__
    return function


def claim(face: str, namespace: Mapping[str, Any], names: Iterable[str] | None = None) -> None:
    """Set ``__module__`` to ``face`` on each class or function the public module ``face``
    re-exports (``names``, else its ``__all__``), if defined in a private specpack module under
    that very name: another keeps its home (pickle must find ``face.<name>``)."""
    for name in namespace.get("__all__", ()) if names is None else names:
        obj = namespace.get(name)
        if not isinstance(obj, (type, types.FunctionType)):
            continue
        parts = str(getattr(obj, "__module__", "")).split(".")
        private = parts[0] == "specpack" and any(part.startswith("_") for part in parts[1:])
        if private and obj.__qualname__ == name:
            obj.__module__ = face
