"""Resolving a PettingZoo env: a module's factory, a class, a live stack, a registry spec.

A factory is carried by the module attribute that holds it (``parallel_env`` is a closure with
no importable name of its own), its kwargs checked against the class it forwards them to.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import sys
import types
from typing import Any

import pettingzoo

from ..._core._backends._args import base_kwargs, check_kwargs
from ..._core._backends.recipe import Recipe
from ..._core._carry.code import code_ref_from_string
from ..._core._errors import CaptureError, UnknownEnvError
from ..._core._text import suggest
from .stack import walk

__all__ = ["from_callable", "from_env", "from_id", "from_spec", "home_name", "kwargs_target"]


def _refuse_options(options: dict[str, Any], what: str) -> None:
    if options:
        raise CaptureError(
            f"{', '.join(sorted(options))}: gymnasium.make options, which {what} does not take; "
            "a PettingZoo env limits episodes with its own max_cycles kwarg "
            "(specpack.capture(module.parallel_env, max_cycles=100))"
        )


def home_name(fn: Any) -> tuple[str, str] | None:
    """``(module, attribute)`` under which a module holds ``fn``, or None: ``fn``'s own module
    first (the defining one, not a re-exporting ``pistonball_v6``), then those of the callables
    its closure holds."""
    seen: list[str] = []
    todo = [fn]
    for obj in itertools.islice(todo, 8):  # todo grows as it is walked
        module = getattr(obj, "__module__", None)
        if isinstance(module, str) and module not in seen:
            seen.append(module)
        for cell in getattr(obj, "__closure__", None) or ():
            with contextlib.suppress(ValueError):  # an empty cell
                if callable(cell.cell_contents):
                    todo.append(cell.cell_contents)
    for module in seen:
        mod = sys.modules.get(module)
        for name, value in vars(mod).items() if mod is not None else ():
            if value is fn and not name.startswith("_"):
                return module, name
    return None


def kwargs_target(fn: Any, depth: int = 0) -> Any:
    """What ``fn`` forwards its ``**kwargs`` to (the env class), or ``fn`` itself: so a misspelt
    kwarg is refused at capture instead of failing in a worker."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return fn
    if depth > 4 or not any(p.kind is p.VAR_KEYWORD for p in params) or any(
            p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        return fn
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if callable(value) and not isinstance(value, types.ModuleType):
            return kwargs_target(value, depth + 1)
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    raw = getattr(module, "raw_env", None)
    if isinstance(raw, type) and raw is not fn:
        return kwargs_target(raw, depth + 1)
    return fn


def from_callable(fn: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
    """A factory function or env class as the entry point, called with ``kwargs``."""
    home = home_name(fn)
    name = (f"{home[0]}.{home[1]}" if home is not None
            else getattr(fn, "__qualname__", None) or type(fn).__qualname__)
    _refuse_options(options, f"the PettingZoo factory {name}")
    target = kwargs_target(fn)
    if target is not fn:
        tname = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"
        check_kwargs(target, kwargs, f"the PettingZoo env {name} (its kwargs go to {tname})")
    entry_string = None
    if home is not None and "<locals>" in str(getattr(fn, "__qualname__", "<locals>")):
        entry_string = f"{home[0]}:{home[1]}"
    return Recipe(id=None, entry=None if entry_string else fn, entry_string=entry_string,
                  kwargs=dict(kwargs), spec={}, layers=[], auto_render=False)


def from_env(env: Any) -> Recipe:
    """A live stack: the base env's class and kwargs, every layer with its arguments."""
    notes: list[str] = []
    layers, base = walk(env, notes)
    kwargs = base_kwargs(base, notes, "capture the env's factory with its arguments, "
                         "specpack.capture({cls}, ...) or "
                         "specpack.capture(module.parallel_env, ...)")
    return Recipe(id=None, entry=type(base), entry_string=None, kwargs=kwargs, spec={},
                  layers=layers, auto_render=False, notes=notes)


def _api_of(spec: Any) -> str:
    """Which of PettingZoo's registries holds ``spec`` (the same object): its API."""
    for api in ("parallel", "aec"):
        registry = getattr(pettingzoo, f"{api}_registry", {})
        if registry.get(spec.id) is spec:
            return api
    raise CaptureError(
        f"the PettingZoo spec {spec.id!r} is in neither pettingzoo.aec_registry nor "
        "pettingzoo.parallel_registry, so its API is unknown; capture its entry point instead: "
        "specpack.capture(module.parallel_env, ...)"
    )


def from_spec(spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
    """A PettingZoo 1.27 registry spec, resolved as ``pettingzoo.make(api, spec)`` would."""
    _refuse_options(options, f"the PettingZoo spec {spec.id!r}")
    _api_of(spec)
    merged = {**spec.kwargs, **kwargs}
    if spec.max_cycles is not None and spec.max_cycles != -1:
        merged.setdefault("max_cycles", spec.max_cycles)
    entry = spec.entry_point
    if entry is None:
        raise CaptureError(f"the PettingZoo spec {spec.id!r} has no entry_point")
    obj = entry
    if isinstance(entry, str):
        _, obj = code_ref_from_string(entry, by_value=None, what=f"entry point of {spec.id!r}")
    recipe = from_callable(obj, {}, merged)
    if isinstance(entry, str):  # carried by its string, as the spec names it
        recipe.entry, recipe.entry_string = None, entry
    recipe.id, recipe.spec = spec.id, {"id": spec.id}
    return recipe


def from_id(env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
    """``"parallel:butterfly/pistonball-v6"`` or ``"aec:..."``: a PettingZoo 1.27 registry id
    (one registry per API, so the id names the API first)."""
    api, sep, rest = env_id.partition(":")
    lookup = getattr(pettingzoo, "spec", None)
    if lookup is None:
        raise CaptureError(
            f"{env_id!r}: pettingzoo {getattr(pettingzoo, '__version__', '?')} has no registry "
            "(it came in 1.27); capture the env module's factory: "
            "specpack.capture(pistonball_v6.parallel_env, n_pistons=20)"
        )
    if not sep or api not in ("aec", "parallel"):
        raise CaptureError(
            f"{env_id!r}: PettingZoo has one registry per API; name it first, e.g. "
            f"'parallel:{env_id}' or 'aec:{env_id}'"
        )
    try:
        spec = lookup(api, rest)
    except Exception as e:  # noqa: BLE001 - pettingzoo's lookup errors, named and suggested
        known = getattr(pettingzoo, f"{api}_registry", {})
        raise UnknownEnvError(
            f"no env registered as {rest!r} in pettingzoo's {api} registry "
            f"({type(e).__name__});{suggest(rest, known)} import the package that registers it, "
            "or capture the env module's factory"
        ) from None
    return from_spec(spec, options, kwargs)
