"""Carrying code across a process boundary: by reference or by value.

A class or function is kept **by reference** (``"module:qualname"``) when a fresh interpreter
started from the same installation could import it under that name (see
:mod:`specpack._core._carry.importable`), and **by value** (a cloudpickle payload made at capture time)
when it could not: code defined in ``__main__``, in a module loaded from a file path, in a
module found only through a runtime ``sys.path`` entry, local classes, lambdas and closures.

This module is where capture turns code into a :class:`CodeRef` (the value itself lives in
:mod:`.ref`): :func:`code_ref` for a live object, a ``functools.partial`` included
(:mod:`.bound`), and :func:`code_ref_from_string` for a ``"module:attr"`` entry point.
``specpack._core._carry.code.CodeRef`` is also the name pickles made by specpack 0.2.0 give the class.
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
from .payload import portable_dumps
from .ref import CodeRef, code_ref_from_state, live_object, live_objects, witness_of

__all__ = ["CodeRef", "code_ref", "code_ref_from_state", "code_ref_from_string", "live_object",
           "live_objects", "portable_dumps", "reference_of", "resolve_qualname", "witness_of"]


def code_ref(obj: Any, *, by_value: bool | None = None, what: str = "entry point") -> CodeRef:
    """The :class:`CodeRef` for a class or function, deciding by reference vs by value.

    ``by_value=None`` decides by fresh importability; ``True``/``False`` force the choice
    (``False`` still needs a name under which the object can be looked up). A
    ``functools.partial`` travels as the function it wraps plus its arguments
    (:func:`.bound.partial_ref`).

    Parameters
    ----------
    obj
        A class, a function or a ``functools.partial`` of one.
    by_value
        ``None``, ``True`` or ``False``, as above.
    what
        How errors name the object (``"entry point"``, ``"wrapper"``).
    """
    if type(obj) is functools.partial:
        return partial_ref(obj, by_value, what)
    return callable_ref(obj, by_value, what)


def code_ref_from_string(entry: str, *, by_value: bool | None, what: str) -> tuple[CodeRef, Any]:
    """Resolve a ``"module:attr"`` entry point here, in the parent, and carry it.

    Parameters
    ----------
    entry
        ``"package.module:Name"`` (a dotted name after the colon reaches into classes).
    by_value
        As in :func:`code_ref`; a string kept by reference is the reference itself.
    what
        How errors name the entry point.

    Returns
    -------
    tuple
        The :class:`CodeRef` and the object it resolved to here.
    """
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
        # The string itself is the reference a fresh interpreter will resolve.
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


#: References made from entry-point strings, reused while the module object is the same and
#: the name still gives the same object (``importlib.reload`` keeps the module, not the class).
_string_cache: dict[tuple[str, bool | None], tuple[CodeRef, Any, Any]] = {}


def _names(mod: Any, qualname: str, obj: Any) -> bool:
    """Whether ``mod.<qualname>`` is ``obj`` right now (``obj`` was resolved from this
    ``qualname`` once: a plain name is one attribute lookup)."""
    try:
        if "." not in qualname:
            return getattr(mod, qualname) is obj
        return resolve_qualname(mod, qualname) is obj
    except AttributeError:
        return False
