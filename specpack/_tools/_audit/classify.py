"""Turning an exception raised where an env is registered into the audit's verdict.

A construction failure is a missing dependency when gymnasium's ``DependencyNotInstalled``,
an ``ImportError`` or a ``ModuleNotFoundError`` says so; the package is named from the message
(a ``pip install X`` hint wins, then "moved to the X project", then ``No module named 'X'``,
then the module the exception names). It is ``needs_arguments`` when the registered entry point
has required parameters the registration does not give (Meta-World's ``MT1`` needs
``env_name``). Anything else is a capture error. The result is a plain dict (it travels back
from the audit's reference workers as typed JSON).

A rollout that raises is recorded in its trace as the exception's type name and message
(:func:`raised` shows it); :func:`rollout_missing` reads a missing package from that record
(minigrid's ``MiniGrid-WFC-*`` build, then raise ``DependencyNotInstalled`` in ``reset()``).
"""

from __future__ import annotations

import importlib.util
import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..._core._text import format_exception, one_line, printable, short
from .report import CAPTURE_ERROR, MISSING_DEPENDENCY, NEEDS_ARGUMENTS, TIMEOUT
from .timelimit import Overtime

__all__ = ["failure", "guard", "missing_package", "raised", "rollout_missing", "unset_required"]

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
    """The package a failure says is missing, or None when it is not a missing dependency.

    gymnasium's ``DependencyNotInstalled`` and any ``ImportError`` count, except a
    ``ModuleNotFoundError`` for a module whose top-level package is installed (that is a broken
    env module, not a missing package). The name comes from the message first (gymnasium-
    robotics raises ``DependencyNotInstalled("No module named 'mujoco_py'. (HINT: ...)")`` with
    no exception chain), then from the exceptions themselves; ``"unknown"`` only when nothing
    names one.

    Parameters
    ----------
    exc
        The exception raised while capturing or building the env.

    Returns
    -------
    str or None
        The package (``"mujoco_py"``, ``"gymnasium[box2d]"``), or None.
    """
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
    """How a trace's record of a rollout that raised reads in a reason.

    ``{"type": "builtins.RuntimeError", "message": "boom", "method": "reset", "step": 0}``
    reads ``"builtins.RuntimeError: boom in reset() at step 0"``.
    """
    message = error.get("message")
    said = f": {message}" if message else ""
    return f"{error.get('type')}{said} in {error.get('method')}() at step {error.get('step')}"


def rollout_missing(error: Mapping[str, Any]) -> str | None:
    """The package a rollout's recorded exception says is missing, or None.

    The same rules as :func:`missing_package`, on what a trace keeps of the exception (its type
    name and message; no chain): gymnasium's ``DependencyNotInstalled`` names a package from
    its message (``"unknown"`` when it names none), an ``ImportError`` too, and a
    ``ModuleNotFoundError`` whose module is not installed here names it (one whose module *is*
    installed is a broken env module, not a missing package).

    Parameters
    ----------
    error
        A trace's ``error`` (``type``, ``message``, ``method``, ``step``).

    Returns
    -------
    str or None
        The package (``"minigrid[wfc]"``), or None when the rollout failed for another reason.
    """
    kind = str(error.get("type") or "").rpartition(".")[2]
    text = str(error.get("message") or "")
    if kind == "DependencyNotInstalled":
        return _hinted_package(text) or "unknown"
    if kind == "ModuleNotFoundError":
        hit = _NO_MODULE.search(text)
        top = hit.group(1).partition(".")[0] if hit else None
        return top if top is not None and not _installed(top) else None
    if kind == "ImportError":
        return _hinted_package(text) or "unknown"
    return None


def unset_required(entry: Any, kwargs: Mapping[str, Any]) -> list[str]:
    """The required parameters of ``entry`` (a callable) that ``kwargs`` does not give.

    Parameters
    ----------
    entry
        A registered entry point, already loaded (a class, function or lambda).
    kwargs
        The kwargs the registration passes.

    Returns
    -------
    list of str
        Their names, in signature order; ``[]`` when the signature cannot be read.
    """
    try:
        params = inspect.signature(entry).parameters.values()
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in params
        if p.default is p.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        and p.name not in kwargs
    ]


def _says_missing(exc: BaseException, needs: list[str]) -> bool:
    """Whether the failure is the call missing one of ``needs`` (``TypeError: f() missing 1
    required positional argument: 'env_name'``), not something else."""
    for e in _chain(exc):
        text = str(e)
        if "missing" in text and any(f"'{n}'" in text for n in needs):
            return True
    return False


def failure(
    exc: BaseException,
    what: str,
    timeout: float,
    needs: list[str] | None = None,
    name: str = "it",
) -> dict[str, Any]:
    """How an exception raised where the env is registered is reported.

    Parameters
    ----------
    exc
        The exception.
    what
        What was being done, for the reason (``"capturing it"``, ``"building it"``).
    timeout
        The per-env timeout (for the reason of an :class:`Overtime`).
    needs
        Required entry-point parameters the registration does not give (see
        :func:`unset_required`); when there are any, the env ``needs_arguments``.
    name
        The env, for the hint of ``needs_arguments``.

    Returns
    -------
    dict
        ``status``, ``reason`` and, where they apply, ``package`` and ``detail``.
    """
    if isinstance(exc, Overtime):
        return {"status": TIMEOUT, "reason": f"{what} here did not finish within {timeout:g} s"}
    package = missing_package(exc)
    if package is not None:
        return {
            "status": MISSING_DEPENDENCY,
            "reason": f"needs {package}: {one_line(exc)}",
            "package": package,
            "detail": format_exception(exc),
        }
    if needs and _says_missing(exc, needs):
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
    return {
        "status": CAPTURE_ERROR,
        "reason": f"{what} failed: {one_line(exc)}",
        "detail": format_exception(exc),
    }


def guard(what: str, timeout: float, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``work()``, or ``{"failed": failure(...)}`` when it raises (KeyboardInterrupt passes)."""
    try:
        return work()
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"failed": failure(e, what, timeout)}
