"""Text for messages: bounded reprs, escaped names, one-line and full exception text.

Everywhere a value, a name from a file or an exception reaches a message or a terminal: a huge
value must not flood it, a failing ``__repr__`` must not turn one error into another, and a
hostile file's names must not carry terminal escapes (C0/C1 controls, bidi overrides).
"""

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
    """``text`` safe to print, capped at ``limit``: the one way a string from a file or an env
    reaches a terminal. Controls, line breaks and format characters (bidi marks) are not
    ``isprintable``: escaped, the result is one line, shown left to right."""
    if len(text) > limit:
        text = text[:limit] + "..."
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def public_name(cls: type) -> str:
    """The name of ``cls`` as users know it: for specpack's classes the first of its MRO that
    ``specpack`` exports (``_CaptureTypeError``: ``CaptureError``), for others the name of
    ``cls`` or, when it is private, of its first public base."""
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
    """``text`` with each exception class named by a private path (``specpack._core._errors.X``)
    named by the first of its MRO that ``specpack`` exports (``BuildTypeError``:
    ``specpack.BuildError``); only the errors module is imported to look a name up."""
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
    text = f"{name}: {exc}".strip()
    first = text.splitlines()[0] if text else name
    first = first.rstrip(": ") or name
    return first if len(first) <= limit else first[: limit - 3] + "..."


def format_exception(exc: BaseException) -> str:
    """The full traceback text of ``exc``, chained causes included."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def suggest(word: str, choices: Iterable[str], *, n: int = 3,
            kinds: Mapping[str, str] | None = None) -> str:
    """`` did you mean 'X'?`` for the closest of ``choices`` to ``word`` (up to ``n``), or
    ``""``; case is ignored when nothing matches as typed. ``kinds`` says what some choices
    are (``{"x": "the capture option"}``: ``did you mean the capture option 'x'?``)."""
    pool = [c for c in choices if isinstance(c, str)]
    close = difflib.get_close_matches(word, pool, n=n, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in reversed(pool)}  # the first of each case wins
        close = [lowered[k] for k in difflib.get_close_matches(word.lower(), list(lowered), n=n)]
    if not close:
        return ""
    kinds = kinds or {}
    named = [f"{kinds[c]} {c!r}" if c in kinds else repr(c) for c in close]
    text = f" did you mean {named[0]}?"
    if len(close) > 1:
        text += " (also close: " + ", ".join(named[1:]) + ")"
    return text


def unexpected_keywords(what: str, unknown: Sequence[str], names: Sequence[str], *,
                        kinds: Mapping[str, str] | None = None) -> str:
    """The one wording of every keyword typo: ``"<what> got an unexpected keyword argument
    <unknown[0]>; did you mean ...? It takes: <names>"``; ``kinds`` are suggested but not
    listed (as for :func:`suggest`)."""
    kinds = dict(kinds or {})
    k = unknown[0]
    more = f" (nor {', '.join(map(repr, unknown[1:]))})" if len(unknown) > 1 else ""
    hint = suggest(k, [*names, *(o for o in kinds if o not in names)],
                   kinds={o: v for o, v in kinds.items() if o not in names})
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
