"""Where capture turns code into a :class:`CodeRef`: :func:`code_ref` for a live class, function
or ``functools.partial``, :func:`code_ref_from_string` for a ``"module:attr"`` entry point
(docs/how-it-works.md, "By reference or by value")."""

from __future__ import annotations

import functools
import importlib
import sys
import types
from typing import Any

from .._errors import CaptureError, capture_error_for
from .allowlist import resolve_qualname
from .importable import MAIN_NAMES, fresh_importable, reference_of
from .ref import CodeRef, live_object, live_objects, witness_of
from .values import callable_ref, lower, lower_mapping, payload_ref

__all__ = ["CodeRef", "code_ref", "code_ref_from_string", "known_ref_from_string", "live_object",
           "live_objects", "reference_of", "witness_of"]

#: References made from entry-point strings, reused while the module object is the same and
#: the name still gives the same object (``importlib.reload`` keeps the module, not the class).
_string_cache: dict[tuple[str, bool | None], tuple[CodeRef, Any, types.ModuleType]] = {}


def code_ref(obj: Any, *, by_value: bool | None = None, what: str = "entry point") -> CodeRef:
    """The :class:`CodeRef` for a class, a function or a ``functools.partial`` (``by_value``,
    ``what``: see :func:`~.values.callable_ref`). A partial is its function's reference bound to
    its lowered arguments; by value as a whole when its function has no importable name or it has
    attributes of its own (``partial.metadata``, which ``gymnasium.make`` reads)."""
    if type(obj) is not functools.partial:
        return callable_ref(obj, by_value, what)
    func = obj.func
    ref = reference_of(func)
    extra = sorted(map(str, vars(obj)))  # attributes set on the partial (``.metadata``...)
    if by_value is False and (ref is None or extra):
        why = (f"has attributes ({', '.join(extra)}) a reference would lose" if ref is not None
               else f"wraps {func!r}, which has no importable name (a lambda, a closure or a "
               "local class)")
        raise CaptureError(f"the {what} is a functools.partial that {why}; it can only travel "
                           "by value: drop by_value=False")
    if by_value or ref is None or extra or (by_value is None and not fresh_importable(ref[0])):
        return payload_ref(obj, func, what)  # named as its function, whose module goes too
    label = f"partial of {ref[0]}:{ref[1]}"
    args = lower(tuple(obj.args), f"the {what} ({label}) args", by_value)
    keywords, _ = lower_mapping(dict(obj.keywords), what, f"({label}) keyword", by_value)
    out = CodeRef(ref[0], ref[1], bound=(args, keywords))
    out._set(_obj=obj)
    return out


def known_ref_from_string(entry: str, by_value: bool | None) -> tuple[CodeRef, Any] | None:
    """:func:`code_ref_from_string`'s answer for ``entry`` if it made one by reference that is
    still true (the same module object in ``sys.modules``, the name giving the same object);
    else None, and nothing is imported: a miss is resolved in full."""
    hit = _string_cache.get((entry, by_value))
    if hit is None:
        return None
    modname, _, attr = entry.partition(":")
    if sys.modules.get("__main__" if modname == "__mp_main__" else modname) is not hit[2]:
        return None
    try:  # a plain name: one attribute lookup (no contextlib: capture's hot path)
        found = getattr(hit[2], attr) if "." not in attr else resolve_qualname(hit[2], attr)
    except AttributeError:
        return None
    return (hit[0], hit[1]) if found is hit[1] else None


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
    known = known_ref_from_string(entry, by_value)
    if known is not None:
        return known
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
    if by_value is False or (by_value is None and fresh_importable(modname)):
        if modname in MAIN_NAMES:
            raise CaptureError(
                f"the {what} {entry!r} lives in __main__, which a worker cannot import by name; "
                "drop by_value=False so it travels by value"
            )
        ref = CodeRef(modname, attr)
        ref._set(_obj=obj)
        _string_cache[(entry, by_value)] = (ref, obj, mod)
        return ref, obj
    return code_ref(obj, by_value=True, what=what), obj
