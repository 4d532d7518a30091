"""A live class or function made into a :class:`~.ref.CodeRef` here, at capture.

By reference when a fresh interpreter could import it under its name, by value (a witnessed
cloudpickle payload, with the sources of its code) otherwise; both cached per live object, a
by-value one while its witness holds. A ``functools.partial`` is :mod:`.bound`'s.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from .._errors import CaptureError
from .carried import PY
from .importable import MAIN_NAMES, fresh_importable, reference_of
from .payload import Witness, dumps_witnessed, forced_modules
from .ref import CodeRef
from .sources import located

__all__ = ["callable_ref", "payload_ref"]

_ref_cache: dict[Any, CodeRef] = {}
#: By-value CodeRefs of live objects, reused while the witness of their payload holds.
_value_cache: dict[Any, tuple[Any, Witness, CodeRef]] = {}


def callable_ref(obj: Any, by_value: bool | None, what: str) -> CodeRef:
    """The :class:`~.ref.CodeRef` for a class or function (not a partial).

    ``by_value=None`` decides by fresh importability; ``True``/``False`` force the choice
    (``False`` still needs a name to look the object up by). ``what`` names it in errors.
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
    if by_value:
        return payload_ref(obj, obj, what)
    if ref is None:
        raise CaptureError(
            f"the {what} {obj!r} has no importable name (it is a lambda, a closure or a "
            "local class); it can only travel by value: drop by_value=False"
        )
    out = CodeRef(ref[0], ref[1])
    object.__setattr__(out, "_obj", obj)
    with contextlib.suppress(TypeError):  # an unhashable callable
        _ref_cache[obj] = out
    return out


def payload_ref(obj: Any, named: Any, what: str) -> CodeRef:
    """``obj`` carried by value, named as ``named`` is (whose module, when it is loaded and not
    ``__main__``, is pickled by value too)."""
    modname = getattr(named, "__module__", None) or "__main__"
    qualname = (getattr(named, "__qualname__", None) or getattr(named, "__name__", None)
                or repr(named))
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
