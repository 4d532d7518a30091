"""Where capture turns code into a :class:`CodeRef`: :func:`code_ref` for a live class,
function or ``functools.partial``, :func:`code_ref_from_string` for a ``"module:attr"`` entry
point. By reference when a fresh interpreter could import it by name, by value otherwise
(docs/how-it-works.md, "By reference or by value").
"""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Any

from .._errors import CaptureError, capture_error_for
from .bound import partial_ref
from .callables import callable_ref
from .importable import MAIN_NAMES, fresh_importable, reference_of
from .names import resolve_qualname
from .ref import CodeRef, live_object, live_objects, witness_of

__all__ = ["CodeRef", "code_ref", "code_ref_from_string", "live_object", "live_objects",
           "reference_of", "witness_of"]

#: References made from entry-point strings, reused while the module object is the same and
#: the name still gives the same object (``importlib.reload`` keeps the module, not the class).
_string_cache: dict[tuple[str, bool | None], tuple[CodeRef, Any, Any]] = {}


def code_ref(obj: Any, *, by_value: bool | None = None, what: str = "entry point") -> CodeRef:
    """The :class:`CodeRef` for a class, a function or a ``functools.partial`` of one;
    ``by_value`` and ``what`` as in :func:`~.callables.callable_ref`."""
    if type(obj) is functools.partial:
        return partial_ref(obj, by_value, what)
    return callable_ref(obj, by_value, what)


def code_ref_from_string(entry: str, *, by_value: bool | None, what: str) -> tuple[CodeRef, Any]:
    """Resolve a ``"module:attr"`` entry point here and carry it: ``(CodeRef, the object)``
    (by reference, the string itself is the reference)."""
    modname, sep, attr = entry.partition(":")
    if not sep or not modname or not attr:
        raise CaptureError(
            f"the {what} {entry!r} is not of the form 'module:attr'; "
            "give a 'package.module:ClassName' string or the class itself"
        )
    if modname == "__mp_main__":
        modname = "__main__"
    key = (entry, by_value)
    hit = _string_cache.get(key)
    if hit is not None and sys.modules.get(modname) is hit[2] and _names(hit[2], attr, hit[1]):
        return hit[0], hit[1]
    try:
        mod = importlib.import_module(modname)
        obj = resolve_qualname(mod, attr)
    except Exception as e:
        raise capture_error_for(e)(
            f"cannot load the {what} {entry!r} ({type(e).__name__}: {e}); check the module "
            "is importable here and defines that name"
        ) from e
    if not callable(obj):
        raise CaptureError(
            f"the {what} {entry!r} resolves to {obj!r}, which is not callable; "
            "point it at an env class or a factory function"
        )
    if by_value is False or (
        by_value is None and modname not in MAIN_NAMES and fresh_importable(modname)
    ):
        if modname in MAIN_NAMES:
            raise CaptureError(
                f"the {what} {entry!r} lives in __main__, which a worker cannot import by name; "
                "drop by_value=False so it travels by value"
            )
        ref = CodeRef(modname, attr)
        object.__setattr__(ref, "_obj", obj)
        _string_cache[key] = (ref, obj, mod)
        return ref, obj
    return code_ref(obj, by_value=True, what=what), obj


def _names(mod: Any, qualname: str, obj: Any) -> bool:
    """Whether ``mod.<qualname>`` is ``obj`` right now (a plain name: one attribute lookup)."""
    try:
        if "." not in qualname:
            return getattr(mod, qualname) is obj
        return resolve_qualname(mod, qualname) is obj
    except AttributeError:
        return False
