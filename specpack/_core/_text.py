"""Text for messages: bounded reprs, escaped names, one-line and full exception text. A huge
value must not flood a message, a failing ``__repr__`` must not turn one error into another,
and a hostile file's names must not carry terminal escapes (C0/C1 controls, bidi overrides)."""

from __future__ import annotations

import difflib
import importlib
import re
import sys
import traceback
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["format_exception", "one_line", "printable", "public_name", "public_names", "short",
           "size_text", "suggest", "unexpected_keywords"]


def short(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters; never raises, never builds a huge string."""
    if type(value) is int and value.bit_length() > 4 * limit:
        return f"<int of {(value.bit_length() + 3) // 4} hex digits>"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - repr of user objects may fail
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


def printable(text: str, limit: int = 200) -> str:
    """``text`` capped at ``limit``, each non-``isprintable`` character (controls, line breaks,
    bidi marks) escaped: one line, left to right; how a file's or env's text reaches a terminal."""
    if len(text) > limit:
        text = text[:limit] + "..."
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def public_name(cls: type) -> str:
    """The name of ``cls`` as users know it: for specpack's the first of its MRO ``specpack``
    exports (``_CaptureTypeError``: ``CaptureError``), else the first public one of its MRO."""
    if str(getattr(cls, "__module__", "")).startswith("specpack"):
        for base in cls.__mro__:
            if _exported(base):
                return base.__name__
    return next((b.__name__ for b in cls.__mro__ if not b.__name__.startswith("_")), cls.__name__)


def _exported(cls: type) -> bool:
    """Whether ``specpack`` (when loaded) exports ``cls`` under its own name."""
    root = sys.modules.get("specpack")
    if root is None or cls.__name__ not in getattr(root, "__all__", ()):
        return False
    try:
        return getattr(root, cls.__name__) is cls
    except Exception:  # noqa: BLE001 - a lazy name that fails to load is not this class
        return False


#: A dotted name inside specpack's private modules (``specpack._core._errors.BuildTypeError``).
_PRIVATE_PATH = re.compile(r"\bspecpack((?:\.[A-Za-z_]\w*)*\._\w+(?:\.[A-Za-z_]\w*)*)"
                           r"\.([A-Za-z_]\w*)\b")


def public_names(text: str) -> str:
    """``text`` with each private path of an exception class (``specpack._core._errors.X``) made
    ``specpack.`` + the first of its MRO specpack exports (imports only the errors module)."""
    if "specpack." not in text:
        return text
    return _PRIVATE_PATH.sub(_public_path, text)


def _public_path(match: re.Match[str]) -> str:
    name = "specpack" + match.group(1)
    module = sys.modules.get(name)
    if module is None and name == "specpack._core._errors":
        module = importlib.import_module(name)
    cls = getattr(module, match.group(2), None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return match.group(0)
    return next((f"specpack.{b.__name__}" for b in cls.__mro__ if _exported(b)), match.group(0))


def one_line(exc: BaseException, limit: int = 400) -> str:
    """``"Type: first line of the message"``, bounded (what a report's one-line reason shows)."""
    name = public_name(type(exc))
    first = f"{name}: {exc}".strip().splitlines()[0].rstrip(": ") or name  # the ":" keeps a line
    return first if len(first) <= limit else first[: limit - 3] + "..."


def format_exception(exc: BaseException) -> str:
    """The full traceback text of ``exc``, chained causes included."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def suggest(word: str, choices: Iterable[str], *, n: int = 3,
            kinds: Mapping[str, str] | None = None) -> str:
    """`` did you mean 'X'?`` for the ``n`` closest ``choices`` to ``word`` (case ignored if none
    match as typed) or ``""``; ``kinds`` names some (``{"x": "option"}``: ``option 'x'``)."""
    pool = [c for c in choices if isinstance(c, str)]
    close = difflib.get_close_matches(word, pool, n=n, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in reversed(pool)}  # the first of each case wins
        close = [lowered[k] for k in difflib.get_close_matches(word.lower(), list(lowered), n=n)]
    if not close:
        return ""
    named = [f"{kinds[c]} {c!r}" if kinds and c in kinds else repr(c) for c in close]
    more = f" (also close: {', '.join(named[1:])})" if len(named) > 1 else ""
    return f" did you mean {named[0]}?{more}"


def unexpected_keywords(what: str, unknown: Sequence[str], names: Sequence[str], *,
                        kinds: Mapping[str, str] | None = None) -> str:
    """``"<what> got an unexpected keyword argument <unknown[0]>; did you mean ...? It takes:
    <names>"``, the one wording of every keyword typo; ``kinds`` are suggested, not listed."""
    extra = {o: v for o, v in (kinds or {}).items() if o not in names}
    k = unknown[0]
    more = f" (nor {', '.join(map(repr, unknown[1:]))})" if len(unknown) > 1 else ""
    hint = suggest(k, [*names, *extra], kinds=extra)
    takes = ", ".join(names) or "no arguments"
    return (f"{what} got an unexpected keyword argument {k!r}{more};{hint}"
            f"{' It' if hint else ' it'} takes: {takes}")


def size_text(n: Any) -> str:
    """A byte count as people read it: ``"312 bytes"``, ``"45.1 kB"``, ``"3.2 MB"``."""
    n = n if isinstance(n, int) and not isinstance(n, bool) else 0
    if n < 10_000:
        return f"{n:,} bytes"
    if n < 10_000_000:
        return f"{n / 1000:.1f} kB"
    return f"{n / 1e6:.1f} MB"
