"""Capture's reading of a live env: a wrapper's or base env's constructor arguments, faithfully
(checked against the signature and the instance's attributes: the EzPickle gap once dropped
Atari's ``frameskip``) or not at all; the stack's recipe; kwargs checked against a signature."""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np
from gymnasium.utils import EzPickle

from .._errors import UnexpectedKwargError, UnrecordedArgumentsError
from .._text import short, unexpected_keywords
from ._shared import keyword_names
from .recipe import Recipe
from .recorders import recorder_for

__all__ = ["Repair", "base_kwargs", "check_coverage", "check_kwargs", "evidence_kwargs",
           "ezpickle_kwargs", "init_params", "live_recipe", "wrapper_kwargs"]

#: Completes a ``RecordConstructorArgs`` record a library release is known to get wrong:
#: ``repair(wrapper, cls, recorded) -> kwargs``.
Repair = Callable[[Any, type, dict[str, Any]], dict[str, Any]]

_keyword_names_cached = functools.lru_cache(maxsize=1024)(keyword_names)


def check_kwargs(target: Any, kwargs: Mapping[str, Any], what: str | Callable[[], str],
                 options: Collection[str] | Callable[[], Collection[str]] = ()) -> None:
    """Refuse at capture (not as a worker's ``TypeError``) a kwarg ``target`` cannot take, naming
    its parameters or a capture option it mistypes; ``what``/``options`` may be lazy functions."""
    if not kwargs:
        return
    try:
        names = _keyword_names_cached(target)
    except TypeError:  # an unhashable callable
        names = keyword_names(target)
    if names is None:
        return
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        what = what() if callable(what) else what
        options = options() if callable(options) else options
        raise UnexpectedKwargError(unexpected_keywords(
            what, unknown, [n for n in names if n not in ("self", "env")],
            kinds={o: "the capture option" for o in options}))


def init_params(cls: type, *, wrapper: bool = True) -> list[inspect.Parameter] | None:
    """``cls.__init__``'s named parameters (less a ``wrapper``'s ``env``); None if unknowable."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    return [p for p in sig.parameters.values()
            if not (p.name == "self" or (wrapper and p.name == "env")
                    or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD))]


def _same(a: Any, b: Any) -> bool:
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        return bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable values count as different
        return False


_MISSING = object()


def _evidence(obj: Any, name: str) -> Any:
    """The instance's own value for a parameter, if it visibly stores one."""
    d = getattr(obj, "__dict__", {})
    return d[name] if name in d else d.get(f"_{name}", _MISSING)


def check_coverage(obj: Any, cls: type, recorded: dict[str, Any], source: str, fix: str, *,
                   wrapper: bool = False) -> list[str]:
    """Refuse a ``recorded`` that names an argument the constructor lacks or misses one ``obj``
    visibly got (no default, or another value stored); return those left at their default."""
    params = init_params(cls, wrapper=wrapper)
    if params is None:
        return []
    names = {p.name for p in params}
    name = f"{cls.__module__}.{cls.__qualname__}"
    stale = sorted(k for k in recorded if k not in names)
    if stale and keyword_names(cls) is not None:  # not under **kwargs
        raise UnrecordedArgumentsError(
            f"{name} recorded {', '.join(map(repr, stale))} through {source}, but its "
            f"constructor takes no such argument, so a rebuild would raise TypeError; {fix}")
    unrecorded: list[str] = []
    for p in params:
        if p.name in recorded or p.kind is p.POSITIONAL_ONLY:
            continue
        if p.default is p.empty:
            raise UnrecordedArgumentsError(
                f"{name} requires the argument {p.name!r}, which {source} did not record, so "
                f"it cannot be rebuilt; {fix}")
        seen = _evidence(obj, p.name)
        if seen is not _MISSING and not _same(seen, p.default):
            raise UnrecordedArgumentsError(
                f"{name} was built with {p.name}={short(seen)} but {source} did not record "
                f"it, so a rebuild would silently use the default {p.name}={short(p.default)}; "
                f"{fix}")
        unrecorded.append(f"{p.name}={short(p.default)}")
    return unrecorded


def evidence_kwargs(obj: Any, params: list[inspect.Parameter]) -> dict[str, Any] | None:
    """Constructor kwargs read back from attributes (``name``, ``_name``, or the standard
    ``render_mode``) named like *every* parameter; one missing and nothing is guessed (None)."""
    out: dict[str, Any] = {}
    for p in params:
        if p.kind is p.POSITIONAL_ONLY:
            return None
        seen = _evidence(obj, p.name)
        if seen is _MISSING and p.name == "render_mode":
            seen = getattr(obj, "render_mode", _MISSING)
        if seen is _MISSING:
            return None
        out[p.name] = seen
    return out


def ezpickle_kwargs(obj: Any, cls: type) -> dict[str, Any] | None:
    """The constructor kwargs EzPickle recorded for ``obj``, by name; None if not EzPickle."""
    args = getattr(obj, "_ezpickle_args", None)
    kwargs = getattr(obj, "_ezpickle_kwargs", None)
    if args is None and kwargs is None:
        return None
    args = tuple(args or ())
    kwargs = dict(kwargs or {})
    try:
        sig = inspect.signature(cls)
        bound = sig.bind_partial(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise UnrecordedArgumentsError(
            f"{cls.__module__}.{cls.__qualname__}'s EzPickle record {args!r}, {kwargs!r} does "
            f"not match its constructor ({e}); fix the EzPickle.__init__ call, or capture the "
            "class with explicit arguments: specpack.capture(EnvClass, **kwargs)") from e
    out: dict[str, Any] = {}
    for pname, value in bound.arguments.items():
        param = sig.parameters[pname]
        if param.kind is param.VAR_KEYWORD:
            out.update(value)
        elif param.kind is param.VAR_POSITIONAL:  # bound only when it holds values
            raise UnrecordedArgumentsError(
                f"{cls.__qualname__} takes *{pname}, which cannot be passed by name; "
                "capture the class with explicit arguments instead")
        else:
            out[pname] = value
    return out


def _recorded(obj: Any, cls: type, fix: str, *, wrapper: bool,
              repair: Repair | None = None) -> tuple[dict[str, Any], list[str]] | None:
    """``obj``'s kwargs from ``RecordConstructorArgs`` (completed by ``repair``), EzPickle (with
    its gap: :func:`check_coverage`) or a constructor that takes nothing; None if none applies."""
    saved = getattr(obj, "__dict__", {}).get("_saved_kwargs")
    if isinstance(saved, dict):
        kwargs = {k: v for k, v in saved.items() if not (wrapper and k == "env")}
        if repair is not None:
            kwargs = repair(obj, cls, kwargs)
        check_coverage(obj, cls, kwargs, "RecordConstructorArgs", fix, wrapper=wrapper)
        return kwargs, []
    recorded = ezpickle_kwargs(obj, cls)
    if recorded is None and not isinstance(obj, EzPickle):
        return ({}, []) if init_params(cls, wrapper=wrapper) == [] else None
    recorded = recorded or {}  # an EzPickle whose __init__ never ran recorded nothing
    if wrapper:
        recorded.pop("env", None)
    fix = f"pass every argument to EzPickle.__init__ in {cls.__qualname__}.__init__, or {fix}"
    return recorded, check_coverage(obj, cls, recorded, "EzPickle", fix, wrapper=wrapper)


def wrapper_kwargs(node: Any, cls: type, repair: Repair | None = None) -> dict[str, Any]:
    """A live gymnasium or gym wrapper's constructor kwargs, faithfully or refused: from its
    recorder, RecordConstructorArgs (completed by ``repair``), EzPickle, or an ``env``-only init."""
    fix = (
        f"make {cls.__qualname__} inherit gymnasium.utils.RecordConstructorArgs (a gym wrapper "
        "can too) and call RecordConstructorArgs.__init__(self, <arg>=<arg>, ...) in its "
        "__init__, or capture the env below it and re-apply the wrapper in the worker, or "
        f"register a recorder: specpack.register_recorder({cls.__qualname__}, lambda w: {{...}})")
    name = f"{cls.__module__}.{cls.__qualname__}"
    recorder = recorder_for(cls)
    if recorder is not None:
        try:
            got = recorder(node)
        except Exception as e:
            raise UnrecordedArgumentsError(
                f"the recorder registered for {name} failed on this instance "
                f"({type(e).__name__}: {e}); {fix}") from e
        if not isinstance(got, Mapping) or not all(isinstance(k, str) for k in got):
            raise UnrecordedArgumentsError(
                f"the recorder registered for {name} returned {type(got).__name__}, not a "
                f"mapping of argument names to values; {fix}")
        return {k: v for k, v in got.items() if k != "env"}
    record = _recorded(node, cls, fix, wrapper=True, repair=repair)
    if record is not None:
        return record[0]
    taken = ", ".join(p.name for p in init_params(cls) or ()) or "unknown"
    raise UnrecordedArgumentsError(
        f"the wrapper {name} takes constructor arguments ({taken}) but does not record them, "
        f"so it cannot be rebuilt faithfully; {fix}")


def base_kwargs(base: Any, notes: list[str], fix: str) -> dict[str, Any]:
    """A live base env's kwargs no spec records: as :func:`_recorded` finds them or read back from
    same-named attributes (noted); else refused with ``fix`` (``{cls}`` in it: the class name)."""
    cls = type(base)
    fix = fix.format(cls=cls.__qualname__)
    record = _recorded(base, cls, fix, wrapper=False)
    if record is not None:
        kwargs, gap = record
        if gap:
            notes.append(f"EzPickle gap: {cls.__name__} does not pass {', '.join(gap)} to "
                         "EzPickle.__init__; nothing shows a non-default value here, so the "
                         "rebuild uses those defaults (pickling the env itself would too)")
        return kwargs
    params = init_params(cls, wrapper=False) or []
    recovered = evidence_kwargs(base, params) if params else None
    if recovered is not None:
        notes.append(f"{cls.__qualname__} was built directly: its constructor arguments "
                     f"({', '.join(recovered)}) were read back from same-named attributes; "
                     "specpack.verify(pack) proves the rebuild")
        return recovered
    taken = ", ".join(p.name for p in params) or "unknown"
    missing = ", ".join(p.name for p in params if evidence_kwargs(base, [p]) is None)
    raise UnrecordedArgumentsError(
        f"the env {cls.__module__}.{cls.__qualname__} was built directly with constructor "
        f"arguments ({taken}) that nothing recorded (no RecordConstructorArgs, no EzPickle, no "
        f"attribute holding {missing or 'them'}); {fix}")


def _spec_made(spec: Any, cls: type) -> bool:
    """Whether ``spec`` describes how this base env was really made (by ``make``)."""
    ep = spec.entry_point
    if isinstance(ep, str):
        modname, _, attr = ep.partition(":")
        if modname == "__mp_main__":
            modname = "__main__"
        try:
            ep = functools.reduce(getattr, attr.split("."), importlib.import_module(modname))
        except Exception:  # noqa: BLE001 - an unloadable string is no evidence
            return False
    return ep is cls


def live_recipe(layers: list[tuple[type, dict[str, Any]]], base: Any, spec: Any, *,
                spec_meta: Callable[[Any], dict[str, Any]], base_fix: str,
                make_inner: frozenset[str]) -> Recipe:
    """The recipe of a live stack (``layers`` outermost first, down to ``base``, whose kwargs come
    from its spec if ``make`` built it so); notes say where its shape differs from ``make``'s."""
    notes: list[str] = []
    made = spec is not None and _spec_made(spec, type(base))
    kwargs = dict(spec.kwargs) if made else base_kwargs(base, notes, base_fix)
    meta = spec_meta(spec) if spec is not None else {}
    entry = spec.entry_point if spec is not None else None
    string = entry if isinstance(entry, str) else None
    if string is not None and not made:
        meta["entry_point"] = string
    names = [c.__qualname__ for c, _ in layers]
    if "TimeLimit" in names:
        below = [n for n in names[names.index("TimeLimit") + 1 :] if n not in make_inner]
        if below:
            notes.append(f"TimeLimit is not innermost: {', '.join(below)} sit below it (make's "
                         "env.spec would reorder this stack; the pack keeps it exactly)")
    if names.count("TimeLimit") > 1:
        notes.append("the stack has more than one TimeLimit; every one is kept")
    return Recipe(id=spec.id if spec is not None else None,
                  entry=None if made and string else type(base),
                  entry_string=string if made else None,
                  kwargs=kwargs, spec=meta, layers=layers, notes=notes)
