"""A live class or function made into a :class:`~.ref.CodeRef` here, at capture.

By reference when a fresh interpreter of this installation could import it under its name
(:func:`~.importable.fresh_importable`), by value otherwise: a cloudpickle payload taken now
(:func:`~.payload.dumps_witnessed`), with the sources of the code it holds
(:func:`~.sources.located`). Both kinds are cached per live object, a by-value one while the
witness of its payload holds. A ``functools.partial`` is not handled here: it travels as its
function plus lowered arguments (:mod:`.bound`), and :func:`specpack._core._carry.code.code_ref`
dispatches.
"""

from __future__ import annotations

import sys
from typing import Any

from .._errors import CaptureError
from .importable import MAIN_NAMES, fresh_importable, reference_of
from .payload import Witness, dumps_witnessed, forced_modules
from .ref import PY, CodeRef
from .sources import located

__all__ = ["callable_ref", "payload_ref"]

_ref_cache: dict[Any, CodeRef] = {}


def callable_ref(obj: Any, by_value: bool | None, what: str) -> CodeRef:
    """The :class:`~.ref.CodeRef` for a class or function (not a partial), by reference or by value.

    Parameters
    ----------
    obj
        The class or function.
    by_value
        ``None`` decides by fresh importability; ``True``/``False`` force the choice
        (``False`` still needs a name under which the object can be looked up).
    what
        How errors name the object (``"entry point"``, ``"callable kwargs['fn']"``).
    """
    if by_value is None:
        try:
            cached = _ref_cache.get(obj)
        except TypeError:  # unhashable callable
            cached = None
        if cached is not None and cached._obj is obj:
            return cached
    ref = reference_of(obj)
    if by_value is None:
        by_value = ref is None or not fresh_importable(ref[0])
    if not by_value:
        if ref is None:
            raise CaptureError(
                f"the {what} {obj!r} has no importable name (it is a lambda, a closure or a "
                "local class); it can only travel by value: drop by_value=False"
            )
        out = CodeRef(ref[0], ref[1])
        object.__setattr__(out, "_obj", obj)
        try:
            _ref_cache[obj] = out
        except TypeError:
            pass
        return out
    return payload_ref(obj, getattr(obj, "__module__", None) or "__main__",
                        getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
                        or repr(obj), what)


def payload_ref(obj: Any, modname: Any, qualname: Any, what: str) -> CodeRef:
    """``obj`` carried by value, named ``modname:qualname`` (whose module, when it is loaded
    and not ``__main__``, is pickled by value too)."""
    force: set[str] = set()
    if isinstance(modname, str) and modname not in MAIN_NAMES and modname in sys.modules:
        force.add(modname)
    key = (id(obj), modname, qualname, forced_modules())
    hit = _value_cache.get(key)
    if hit is not None and hit[0] is obj and hit[1].holds():
        return hit[2]
    try:
        payload, witness = dumps_witnessed(located(obj), force_modules=force)
    except Exception as e:
        raise CaptureError(
            f"the {what} {modname}:{qualname} cannot be carried by value "
            f"({type(e).__name__}: {e}); move it to an importable module"
        ) from e
    out = CodeRef(str(modname), str(qualname), payload, PY)
    object.__setattr__(out, "_witness", witness)
    object.__setattr__(out, "_live", obj)  # what was pickled; never what load() returns
    if witness is not None:
        if len(_value_cache) > 256:
            _value_cache.clear()
        _value_cache[key] = (obj, witness, out)
    return out


#: By-value CodeRefs of live objects, reused while the witness of their payload holds (the
#: object, and everything cloudpickle read from it, unchanged: see :mod:`.payload`).
_value_cache: dict[Any, tuple[Any, Witness, CodeRef]] = {}
