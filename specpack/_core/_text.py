"""Text for messages: bounded reprs, escaped names, one-line and full exception text.

Written once here and used everywhere a value, a name from a file or an exception reaches a
message, a report or a terminal: a 5,000-digit int or a huge array must not flood a message, a
failing ``__repr__`` must not turn one error into another, and a hostile file's names must not
carry terminal escape sequences (C0/C1 controls, bidi overrides) to the screen.
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
    """``text`` safe to print: non-printable characters escaped, length capped at ``limit``.

    The one way every string that comes from a file or an env (ids, kwarg names, notes,
    versions, asset paths, ``requires`` entries, reasons, the env's output) reaches a terminal,
    in every command. ``str.isprintable`` is False for C0/C1 controls (ESC, BEL, DEL...), for
    every line break (``\\n``, ``\\r``, ``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``,
    ``\\x85``, U+2028, U+2029) and for format characters such as the bidi marks (U+202A-U+202E,
    U+2066-U+2069, U+200E, U+200F, U+061C), so each of those is written as its
    ``\\x``/``\\u`` escape, as ``repr`` writes it: the result is one line, shown left to
    right, and nothing in it can pose as a line of its own.
    """
    if len(text) > limit:
        text = text[:limit] + "..."
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def public_name(cls: type) -> str:
    """The name of ``cls`` as users know it: for specpack's own classes the first class of its
    MRO that ``specpack`` exports (``_CaptureTypeError`` is shown as the ``CaptureError`` users
    catch, ``BuildTypeError`` as ``BuildError``), for others the name of ``cls`` or of its
    first public base when it is private."""
    if str(getattr(cls, "__module__", "")).startswith("specpack"):
        for base in cls.__mro__:
            if _exported(base):
                return base.__name__
    for base in cls.__mro__:
        if not base.__name__.startswith("_"):
            return base.__name__
    return cls.__name__


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


_ERROR_MODULES = ("specpack._core._errors",)


def public_names(text: str) -> str:
    """``text`` with every exception class named by a private path (``specpack._core._errors.X``,
    ``specpack._core._errors.BuildTypeError``) named as users import it: ``specpack.Y``, where
    ``Y`` is the class itself when ``specpack`` exports it, else its first base ``specpack``
    exports (``BuildTypeError`` is caught as ``specpack.BuildError``). Other text is kept.

    Only specpack's modules of errors are imported to look a name up (others are looked up
    when already loaded), so a name that is not an exception class stays as written.
    """
    if "specpack._" not in text and "specpack." not in text:
        return text
    return _PRIVATE_PATH.sub(_public_path, text)


def _public_path(match: re.Match[str]) -> str:
    name = "specpack" + match.group(1)
    module = sys.modules.get(name)
    if module is None and name in _ERROR_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # pragma: no cover - specpack's own modules
            module = None
    cls = getattr(module, match.group(2), None) if module is not None else None
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return match.group(0)
    for base in cls.__mro__:
        if _exported(base):
            return f"specpack.{base.__name__}"
    return match.group(0)


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
    """`` did you mean 'X'?`` for the closest of ``choices`` to ``word``, or ``""``.

    Used for every name a user can mistype: env ids, env and wrapper kwargs, CLI flags and
    commands. Case is ignored when nothing matches as typed.

    Parameters
    ----------
    word, choices, n
        The mistyped name, the names it may stand for, how many close ones to show.
    kinds
        What some choices are, said before them (``{"max_episode_steps": "the capture
        option"}`` gives ``did you mean the capture option 'max_episode_steps'?``).
    """
    pool = [c for c in choices if isinstance(c, str)]
    close = difflib.get_close_matches(word, pool, n=n, cutoff=0.6)
    if not close:
        lowered: dict[str, str] = {}
        for c in pool:
            lowered.setdefault(c.lower(), c)
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
    """The message for keyword arguments ``what`` does not take, with a did-you-mean.

    The one wording of every keyword typo specpack reports (an env's kwargs at capture,
    ``make_vec``'s vector kwargs, ``load``'s flags...): ``"<what> got an unexpected keyword
    argument 'shared_memroy'; did you mean 'shared_memory'? It takes: ..."``.

    Parameters
    ----------
    what
        How the message names the callee (``"make_vec(vectorization_mode='async')"``).
    unknown
        The keywords it does not take (the first is named, the rest listed after it).
    names
        The keywords it takes, in the order to list them.
    kinds
        Other names a typo may stand for, suggested but not listed as taken, each with what it
        is (``{"max_episode_steps": "the capture option"}``).
    """
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
