"""A ``functools.partial`` carried as its function (a :class:`~.ref.CodeRef`, by reference when
a fresh interpreter can import it) plus its arguments, each lowered like an env kwarg.

Env packages register ids as ``entry_point=partial(make, variant=...)``. A partial whose
function has no importable name, or that has attributes of its own (``partial.metadata``,
which ``gymnasium.make`` reads), travels by value as a whole. Bound methods are not reduced.
"""

from __future__ import annotations

import functools
from typing import Any

from .._errors import CaptureError
from .callables import payload_ref
from .importable import fresh_importable, reference_of
from .ref import CodeRef
from .values import lower, lower_mapping

__all__ = ["partial_ref"]


def partial_ref(obj: functools.partial[Any], by_value: bool | None, what: str) -> CodeRef:
    """The :class:`~.ref.CodeRef` of a partial of exactly type ``functools.partial``;
    ``by_value`` and ``what`` as in :func:`~.code.code_ref`."""
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
    object.__setattr__(out, "_obj", obj)
    return out
