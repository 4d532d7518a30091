"""What a ``module:qualname`` reference names, resolved one attribute at a time.

The bottom of the carry stack, so a worker that loads a reference loads this and not the
capture-side machinery.
"""

from __future__ import annotations

import types
from typing import Any

__all__ = ["NotAName", "resolve_qualname"]


class NotAName(AttributeError):
    """A qualified name that steps through a module or a dunder attribute (refused)."""


def resolve_qualname(module: types.ModuleType, qualname: str) -> Any:
    """``module.<qualname>``, one attribute at a time, never stepping through a module (from
    ``gym.os`` a reference could reach any module the named one imports)."""
    obj: Any = module
    for part in qualname.split("."):
        if part.startswith("__") and part.endswith("__"):
            raise NotAName(f"{module.__name__}:{qualname}: {part!r} is not part of a name")
        obj = getattr(obj, part)
        if isinstance(obj, types.ModuleType):
            raise NotAName(
                f"{module.__name__}:{qualname} steps through the module {obj.__name__!r}; a "
                "reference must name a class or function by its own module"
            )
    return obj
