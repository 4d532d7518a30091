"""Recovering a live env's or wrapper's constructor arguments, faithfully or not at all, and
checking kwargs against a constructor's signature. Every source is checked against the signature
and the instance's attributes: an argument passed but not recorded (the EzPickle gap that once
dropped Atari's ``frameskip``) is refused, never rebuilt as its default.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np
from gymnasium.utils import EzPickle

from .._errors import UnexpectedKwargError, UnrecordedArgumentsError
from .._text import short, unexpected_keywords
from ._shared import keyword_names
from .recorders import recorder_for

__all__ = ["Repair", "base_kwargs", "check_coverage", "check_kwargs", "evidence_kwargs",
           "ezpickle_kwargs", "init_params", "wrapper_kwargs"]

#: Completes a ``RecordConstructorArgs`` record a library release is known to get wrong:
#: ``repair(wrapper, cls, recorded) -> kwargs``.
Repair = Callable[[Any, type, dict[str, Any]], dict[str, Any]]

_keyword_names_cached = functools.lru_cache(maxsize=1024)(keyword_names)


def check_kwargs(target: Any, kwargs: Mapping[str, Any], what: str | Callable[[], str],
                 options: Collection[str] | Callable[[], Collection[str]] = ()) -> None:
    """Refuse, at capture, a kwarg that ``target``'s signature cannot take (not as a
    ``TypeError`` in a worker's ``make()``), with a suggestion among its parameters and the
    caller's ``options`` (``max_episode_step`` is a typo of a capture option). ``what`` and
    ``options`` may be functions, called only on an error. Signatures are read once per target.
    """
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
        if callable(what):
            what = what()
        if callable(options):
            options = options()
        raise UnexpectedKwargError(unexpected_keywords(
            what, unknown, [n for n in names if n not in ("self", "env")],
            kinds={o: "the capture option" for o in options}))


def init_params(cls: type, *, wrapper: bool = True) -> list[inspect.Parameter] | None:
    """The named parameters of ``cls.__init__`` (without ``env``, a wrapper's inner env, when
    ``wrapper``); None if unknowable."""
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
    """Refuse when ``recorded`` misses an argument ``obj`` was visibly built with (no default,
    or a non-default value stored under its name) or names one the constructor does not take.
    Returns the unrecorded parameters that hold their default here (worth a note)."""
    params = init_params(cls, wrapper=wrapper)
    if params is None:
        return []
    unrecorded: list[str] = []
    names = {p.name for p in params}
    name = f"{cls.__module__}.{cls.__qualname__}"
    if keyword_names(cls) is not None:  # no **kwargs
        stale = sorted(k for k in recorded if k not in names)
        if stale:
            raise UnrecordedArgumentsError(
                f"{name} recorded {', '.join(map(repr, stale))} through {source}, but its "
                f"constructor takes no such argument, so a rebuild would raise TypeError; {fix}"
            )
    for p in params:
        if p.name in recorded or p.kind is p.POSITIONAL_ONLY:
            continue
        if p.default is p.empty:
            raise UnrecordedArgumentsError(
                f"{name} requires the argument {p.name!r}, which {source} did not record, so "
                f"it cannot be rebuilt; {fix}"
            )
        seen = _evidence(obj, p.name)
        if seen is not _MISSING and not _same(seen, p.default):
            raise UnrecordedArgumentsError(
                f"{name} was built with {p.name}={short(seen)} but {source} did not record "
                f"it, so a rebuild would silently use the default {p.name}={short(p.default)}; "
                f"{fix}"
            )
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
            "class with explicit arguments: specpack.capture(EnvClass, **kwargs)"
        ) from e
    out: dict[str, Any] = {}
    for pname, value in bound.arguments.items():
        param = sig.parameters[pname]
        if param.kind is param.VAR_KEYWORD:
            out.update(value)
        elif param.kind is param.VAR_POSITIONAL:
            if value:
                raise UnrecordedArgumentsError(
                    f"{cls.__qualname__} takes *{pname}, which cannot be passed by name; "
                    "capture the class with explicit arguments instead"
                )
        else:
            out[pname] = value
    return out


def _recorded(obj: Any, cls: type, fix: str, *, wrapper: bool,
              repair: Repair | None = None) -> tuple[dict[str, Any], str, list[str]] | None:
    """``obj``'s kwargs from ``RecordConstructorArgs`` (completed by ``repair``) or EzPickle,
    the record's name and its gap (:func:`check_coverage`); None when it keeps neither."""
    saved = getattr(obj, "__dict__", {}).get("_saved_kwargs")
    if isinstance(saved, dict):
        kwargs = {k: v for k, v in saved.items() if not (wrapper and k == "env")}
        if repair is not None:
            kwargs = repair(obj, cls, kwargs)
        source = "RecordConstructorArgs"
    else:
        recorded = ezpickle_kwargs(obj, cls)
        if recorded is None:
            if not isinstance(obj, EzPickle):
                return None
            recorded = {}  # an EzPickle whose __init__ never ran recorded nothing
        if wrapper:
            recorded.pop("env", None)
        kwargs, source = recorded, "EzPickle"
        fix = f"pass every argument to EzPickle.__init__ in {cls.__qualname__}.__init__, or {fix}"
    return kwargs, source, check_coverage(obj, cls, kwargs, source, fix, wrapper=wrapper)


def wrapper_kwargs(node: Any, cls: type, repair: Repair | None = None) -> dict[str, Any]:
    """The constructor kwargs of a live gymnasium or gym wrapper, known faithfully, or refused:
    from a registered recorder, the ``RecordConstructorArgs`` record (completed by ``repair``),
    EzPickle's record, or a constructor that takes nothing but ``env``."""
    fix = (
        f"make {cls.__qualname__} inherit gymnasium.utils.RecordConstructorArgs (a gym wrapper "
        "can too) and call RecordConstructorArgs.__init__(self, <arg>=<arg>, ...) in its "
        "__init__, or capture the env below it and re-apply the wrapper in the worker, or "
        f"register a recorder: specpack.register_recorder({cls.__qualname__}, lambda w: {{...}})"
    )
    recorder = recorder_for(cls)
    if recorder is not None:
        name = f"{cls.__module__}.{cls.__qualname__}"
        try:
            got = recorder(node)
        except Exception as e:
            raise UnrecordedArgumentsError(
                f"the recorder registered for {name} failed on this instance "
                f"({type(e).__name__}: {e}); {fix}"
            ) from e
        if not isinstance(got, Mapping) or not all(isinstance(k, str) for k in got):
            raise UnrecordedArgumentsError(
                f"the recorder registered for {name} returned {type(got).__name__}, not a "
                f"mapping of argument names to values; {fix}"
            )
        return {k: v for k, v in got.items() if k != "env"}
    record = _recorded(node, cls, fix, wrapper=True, repair=repair)
    if record is not None:
        return record[0]
    params = init_params(cls)
    if params == []:
        return {}
    taken = ", ".join(p.name for p in params or ()) or "unknown"
    raise UnrecordedArgumentsError(
        f"the wrapper {cls.__module__}.{cls.__qualname__} takes constructor arguments ({taken}) "
        f"but does not record them, so it cannot be rebuilt faithfully; {fix}"
    )


def base_kwargs(base: Any, notes: list[str], fix: str) -> dict[str, Any]:
    """The constructor kwargs of a live base env that no spec records, or a refusal: from the
    ``RecordConstructorArgs`` record, EzPickle's (its gap noted), a constructor that takes
    nothing, attributes named like every parameter (noted). ``fix`` says how to capture the env
    instead; ``{cls}`` in it stands for the class's name."""
    cls = type(base)
    fix = fix.format(cls=cls.__qualname__)
    record = _recorded(base, cls, fix, wrapper=False)
    if record is not None:
        kwargs, source, gap = record
        if gap and source == "EzPickle":
            notes.append(f"EzPickle gap: {cls.__name__} does not pass {', '.join(gap)} to "
                         "EzPickle.__init__; nothing shows a non-default value here, so the "
                         "rebuild uses those defaults (pickling the env itself would too)")
        return kwargs
    params = init_params(cls, wrapper=False)
    if params == []:
        return {}
    recovered = evidence_kwargs(base, params) if params else None
    if recovered is not None:
        notes.append(f"{cls.__qualname__} was built directly: its constructor arguments "
                     f"({', '.join(recovered)}) were read back from same-named attributes; "
                     "specpack.verify(pack) proves the rebuild")
        return recovered
    taken = ", ".join(p.name for p in params or ()) or "unknown"
    missing = ", ".join(p.name for p in params or () if evidence_kwargs(base, [p]) is None)
    raise UnrecordedArgumentsError(
        f"the env {cls.__module__}.{cls.__qualname__} was built directly with constructor "
        f"arguments ({taken}) that nothing recorded (no RecordConstructorArgs, no EzPickle, no "
        f"attribute holding {missing or 'them'}); {fix}"
    )
