"""Resolving a ``module:qualname`` reference strictly, and what an ``allow`` list admits.

A module entry admits the env and wrapper classes defined in a listed module, enum classes and
values; any other callable needs its exact ``module:qualname`` entry (docs/security.md). The
env base classes are looked up in ``sys.modules``, so the check imports nothing."""

from __future__ import annotations

import enum
import importlib
import re
import sys
import types
from typing import Any

from .._errors import BuildError, UntrustedPackError

__all__ = ["NotAName", "admitted", "is_env_class", "may_import", "module_allowed",
           "resolve_qualname", "resolve_reference", "valid_entry"]

#: (module, attribute) of the base classes whose subclasses are envs or wrappers.
_ENV_BASES = (("gymnasium", "Env"), ("gymnasium.vector", "VectorEnv"), ("gym", "Env"),
              ("pettingzoo", "AECEnv"), ("pettingzoo", "ParallelEnv"))
#: One part of an exact entry's qualname: a name, or ``<locals>``/``<lambda>``.
_PART = re.compile(r"<\w+>")
_MRO = type.__dict__["__mro__"]


class NotAName(AttributeError):
    """A qualified name that steps through a module or a dunder attribute (refused)."""


def resolve_qualname(module: types.ModuleType, qualname: str) -> Any:
    """``module.<qualname>``, one attribute at a time, never stepping through a module (from
    ``gym.os`` a reference could reach any module the named one imports)."""
    obj: Any = module
    for part in qualname.split("."):
        if part.startswith("__") and part.endswith("__"):
            raise NotAName(f"{module.__name__}:{qualname}: {part!r} is not part of a name")
        obj = getattr(obj, part)
        if isinstance(obj, types.ModuleType):
            raise NotAName(
                f"{module.__name__}:{qualname} steps through the module {obj.__name__!r}; a "
                "reference must name a class or function by its own module"
            )
    return obj


def valid_entry(entry: str) -> bool:
    """Whether ``entry`` is a module name or an exact ``module:qualname`` reference."""
    mod, sep, qual = entry.partition(":")
    if not mod or not all(p.isidentifier() for p in mod.split(".")):
        return False
    return not sep or (bool(qual) and all(
        p.isidentifier() or _PART.fullmatch(p) is not None for p in qual.split(".")))


def module_allowed(module: str, allow: tuple[str, ...]) -> bool:
    """Whether a module entry of ``allow`` is ``module`` or a package holding it."""
    return any(module == p or module.startswith(p + ".") for p in allow)


def may_import(module: str, qualname: str, allow: tuple[str, ...]) -> bool:
    """Whether ``module:qualname`` may be resolved at all: its module or itself is listed."""
    return module_allowed(module, allow) or f"{module}:{qualname}" in allow


def _is_class(obj: Any) -> bool:
    """Whether ``obj`` is a class (by its real type: a ``__class__`` property cannot pose)."""
    return issubclass(type(obj), type)


def is_env_class(obj: Any) -> bool:
    """Whether ``obj`` is an env or wrapper class of an imported env library (imports nothing)."""
    if not _is_class(obj):
        return False
    mro = _MRO.__get__(obj)  # the real MRO, whatever the metaclass says
    bases = (getattr(sys.modules.get(mod), name, None) for mod, name in _ENV_BASES)
    return any(isinstance(base, type) and base in mro for base in bases)


def _kind(obj: Any) -> str:
    if _is_class(obj):
        return "a class that is not an env or wrapper class"
    kind = type(obj).__name__
    if kind in ("function", "builtin_function_or_method", "method", "method-wrapper"):
        owner = getattr(obj, "__self__", None)
        return "a function" if owner is None or isinstance(owner, types.ModuleType) else "a method"
    return f"a callable {kind} object"


def admitted(obj: Any, module: str, qualname: str, allow: tuple[str, ...],
             enum_class: bool = False) -> str | None:
    """Why ``allow`` refuses ``obj``, found at ``module:qualname`` (``None``: admitted);
    ``enum_class`` admits an enum class (an ``$enum`` member's) like an env class."""
    name = f"{module}:{qualname}"
    if name in allow:
        return None
    if not module_allowed(module, allow):
        return f"{name} is outside the allow list {list(allow)}"
    if _is_class(obj) and (is_env_class(obj) or (enum_class and issubclass(obj, enum.Enum))):
        home = obj.__module__
        if isinstance(home, str) and module_allowed(home, allow):
            return None
        return (f"{name} resolves to a class defined in {home!r}, outside the allow list "
                f"{list(allow)}; a module in allow admits only classes defined in it. Add that "
                "module to allow if you trust it")
    if not callable(obj):
        return None
    return (f"{name} is {_kind(obj)}: a module in the allow list {list(allow)} admits its env and "
            "wrapper classes and its values, not functions or other callables, which do "
            "whatever their arguments say. Nothing was called. Add the exact entry "
            f"{name!r} to allow if you trust it")


def resolve_reference(module: str, qualname: str, allow: tuple[str, ...] | None,
                      enum_class: bool = False) -> Any:
    """``module.<qualname>``, imported and resolved strictly if ``allow`` (``None``: all) admits
    it, else :class:`UntrustedPackError` (before any import when outside ``allow``)."""
    name = f"{module}:{qualname}"
    if allow is not None and not may_import(module, qualname, allow):
        raise UntrustedPackError(f"{name} is outside the allow list {list(allow)}; nothing was "
                                 "imported")
    try:
        obj = resolve_qualname(importlib.import_module(module), qualname)
    except NotAName as e:
        if allow is None:
            raise BuildError(f"cannot load {name}: {e}") from e
        raise UntrustedPackError(
            f"{e}; under the allow list {list(allow)} a reference reaches only code defined in an "
            "allowed module. Nothing it names was called"
        ) from e
    except Exception as e:
        raise BuildError(
            f"cannot import {name} in this process ({type(e).__name__}: {e}); install the "
            "package that provides it here,",
            python="or capture with by_value=True",
            cli="or capture with --by-value",
        ) from e
    if allow is not None and (why := admitted(obj, module, qualname, allow, enum_class)):
        raise UntrustedPackError(why)
    return obj
