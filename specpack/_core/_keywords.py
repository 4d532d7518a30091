"""Argument checks of specpack's public functions: keyword typos and flags that are not bools."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from ._errors import ArgumentTypeError, UnknownKeywordError
from ._text import short, unexpected_keywords

__all__ = ["check_flag", "checked_keywords"]

P = ParamSpec("P")
R = TypeVar("R")


def checked_keywords(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` refusing, with a did-you-mean, a keyword it does not take (unless ``**kwargs``)."""
    names = _keywords_of(fn)
    if names is None:
        return fn
    if names[:1] in (("self",), ("cls",)) and "." in fn.__qualname__:
        names = names[1:]  # a method's own first parameter is not a keyword to suggest
    accepted = frozenset(names)
    what = f"{fn.__qualname__}()"

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs and not accepted.issuperset(kwargs):
            unknown = [k for k in kwargs if k not in accepted]
            raise UnknownKeywordError(unexpected_keywords(what, unknown, names))
        return fn(*args, **kwargs)

    return call


def _keywords_of(fn: Callable[..., Any]) -> tuple[str, ...] | None:
    """The names ``fn`` takes by keyword, in order; None when it takes ``**kwargs``. Read from
    a plain function's code object: ``inspect.signature`` costs more than the rest of the import
    of the modules that decorate their methods at import, in every worker."""
    code = getattr(fn, "__code__", None)
    if code is not None and not hasattr(fn, "__wrapped__") and not hasattr(fn, "__signature__"):
        if code.co_flags & inspect.CO_VARKEYWORDS:
            return None
        first = code.co_posonlyargcount
        return tuple(code.co_varnames[first:code.co_argcount + code.co_kwonlyargcount])
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def check_flag(value: Any, name: str, where: str, *, optional: bool = False) -> None:
    """Refuse a flag that is not ``True`` or ``False`` (or ``None``, when ``optional``), naming
    the callee ``where``: ``load(path, trust="False")`` must not trust the file."""
    if value is True or value is False or (optional and value is None):
        return
    choices = [f"{name}={c}" for c in ("True", "False", "None")[:3 if optional else 2]]
    hint = (f" (a non-empty string such as {short(value)} is true in Python)"
            if isinstance(value, str) else "")
    raise ArgumentTypeError(f"{where} got {name}={short(value)} ({type(value).__name__}); {name} "
                            f"must be a bool{hint}: pass {', '.join(choices[:-1])} or "
                            f"{choices[-1]}")
