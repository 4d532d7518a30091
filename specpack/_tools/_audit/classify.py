"""Turning an exception raised where an env is registered into the audit's verdict: a missing
dependency, ``needs_arguments``, a timeout (:func:`time_limit` bounds work in the audit's own
process) or a capture error, as a plain dict (it travels back from the reference workers as
typed JSON)."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import re
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..._core._text import format_exception, one_line, printable, short
from .report import CAPTURE_ERROR, MISSING_DEPENDENCY, NEEDS_ARGUMENTS, TIMEOUT

__all__ = ["Overtime", "failure", "guard", "missing_package", "raised", "rollout_missing",
           "time_limit", "unset_required"]

_PIP = re.compile(r"pip install\s+(?:-U\s+)?[`'\"]?([A-Za-z0-9][A-Za-z0-9_.\-]*(?:\[[^\]\s]*\])?)")
_SUPPORTED = re.compile(r"only supported (?:on|with) [`'\"]([^`'\"]+)[`'\"]")
_MOVED = re.compile(r"moved to (?:the )?[`'\"]?([A-Za-z0-9][A-Za-z0-9_.\-]*)[`'\"]? project")
_NO_MODULE = re.compile(r"No module named [`'\"]?([A-Za-z_][A-Za-z0-9_.]*)")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and its causes/contexts, each once."""
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        yield node
        node = node.__cause__ or node.__context__


def _hinted_package(text: str) -> str | None:
    """The package a message names: a pip hint (one with extras first), a project it moved
    to, what it is only supported with, or the module it says is missing."""
    hits: list[str] = _PIP.findall(text)
    with_extra = [h for h in hits if "[" in h]
    if hits:
        return (with_extra or hits)[0]
    for pattern in (_SUPPORTED, _MOVED):
        hit = pattern.search(text)
        if hit:
            return str(hit.group(1))
    hit = _NO_MODULE.search(text)
    return hit.group(1).partition(".")[0] if hit else None


def _installed(top: str) -> bool:
    """Whether the top-level module ``top`` can be imported here."""
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def _absent_module_top(chain: list[BaseException]) -> str | None:
    """The top-level module of a ``ModuleNotFoundError`` in the chain that is not installed."""
    for e in chain:
        if isinstance(e, ModuleNotFoundError) and e.name:
            top = e.name.partition(".")[0]
            if not _installed(top):
                return top
    return None


def missing_package(exc: BaseException) -> str | None:
    """The package a failure says is missing (``"gymnasium[box2d]"``), or None; a
    ``ModuleNotFoundError`` for an installed top-level package is a broken env module, not a
    missing one. The message comes first: gymnasium-robotics raises
    ``DependencyNotInstalled("No module named 'mujoco_py'...")`` with no chain."""
    chain = list(_chain(exc))
    for e in chain:
        if type(e).__name__ == "DependencyNotInstalled":
            return _hinted_package(str(e)) or _absent_module_top(chain) or "unknown"
    top = _absent_module_top(chain)
    for e in chain:
        broken_module = isinstance(e, ModuleNotFoundError) and top is None
        if isinstance(e, ImportError) and not broken_module:
            hinted = _hinted_package(str(e))
            if hinted is not None:
                return hinted
    if top is not None:
        return top
    for e in chain:
        if isinstance(e, ImportError) and not isinstance(e, ModuleNotFoundError):
            return e.name.partition(".")[0] if e.name else "unknown"
    return None


def raised(error: Mapping[str, Any]) -> str:
    """A trace's record of a rollout that raised, as a reason says it: ``"builtins.RuntimeError:
    boom in reset() at step 0"``."""
    message = error.get("message")
    said = f": {message}" if message else ""
    return f"{error.get('type')}{said} in {error.get('method')}() at step {error.get('step')}"


def rollout_missing(error: Mapping[str, Any]) -> str | None:
    """The package a rollout's recorded exception (a trace's ``error``: type name and message,
    no chain) says is missing, or None: :func:`missing_package`'s rules on what a trace keeps
    (minigrid's ``MiniGrid-WFC-*`` raise ``DependencyNotInstalled`` in ``reset()``)."""
    kind = str(error.get("type") or "").rpartition(".")[2]
    text = str(error.get("message") or "")
    if kind in ("DependencyNotInstalled", "ImportError"):
        return _hinted_package(text) or "unknown"
    if kind == "ModuleNotFoundError":
        hit = _NO_MODULE.search(text)
        top = hit.group(1).partition(".")[0] if hit else None
        return top if top is not None and not _installed(top) else None
    return None


def unset_required(entry: Any, kwargs: Mapping[str, Any]) -> list[str]:
    """The required parameters of the loaded entry point ``entry`` that ``kwargs`` does not
    give, in signature order (``[]`` when the signature cannot be read)."""
    try:
        params = inspect.signature(entry).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.default is p.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in kwargs]


def failure(exc: BaseException, what: str, timeout: float, needs: list[str] | None = None,
            name: str = "it") -> dict[str, Any]:
    """``status``, ``reason`` and maybe ``package`` and ``detail`` of an exception raised while
    doing ``what``; a call missing one of ``needs`` (:func:`unset_required`) ``needs_arguments``,
    with a hint naming the env ``name``."""
    if isinstance(exc, Overtime):
        return {"status": TIMEOUT, "reason": f"{what} here did not finish within {timeout:g} s"}
    package = missing_package(exc)
    if package is not None:
        return {"status": MISSING_DEPENDENCY, "reason": f"needs {package}: {one_line(exc)}",
                "package": package, "detail": format_exception(exc)}
    # the call itself misses one of needs ("f() missing 1 required positional argument: 'x'")
    if needs and any("missing" in text and any(f"'{n}'" in text for n in needs)
                     for text in map(str, _chain(exc))):
        args = ", ".join(f"{n}=..." for n in needs)
        return {
            "status": NEEDS_ARGUMENTS,
            "reason": f"its registration gives no {', '.join(map(repr, needs))}, which its entry "
            f"point requires, so it cannot be built as registered here either ({one_line(exc)}); "
            "check it with them: in Python, specpack.testing.assert_portable("
            f"specpack.capture({short(name)}, {args})); on the command line, specpack capture "
            f"{printable(str(name))} --kwarg KEY=JSON -o FILE, then specpack verify FILE",
            "detail": format_exception(exc),
        }
    return {"status": CAPTURE_ERROR, "reason": f"{what} failed: {one_line(exc)}",
            "detail": format_exception(exc)}


def guard(what: str, timeout: float, work: Callable[[], dict[str, Any]],
          needs: list[str] | None = None, name: str = "it") -> dict[str, Any]:
    """``work()``, or ``{"failed": failure(...)}`` when it raises (KeyboardInterrupt passes)."""
    try:
        return work()
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"failed": failure(e, what, timeout, needs, name)}


class Overtime(BaseException):
    """Raised by the alarm when work here exceeds the per-env timeout (a ``BaseException`` so
    that an env's own ``except Exception`` cannot swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the body with :class:`Overtime` after ``seconds``; the body runs unbounded off
    the main thread, without ``setitimer``, or while an alarm of the caller is running."""
    if not (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0.0):
        yield
        return

    def _ring(signum: int, frame: Any) -> None:
        raise Overtime()

    previous = signal.signal(signal.SIGALRM, _ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)
