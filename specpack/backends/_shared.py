"""What the gymnasium and gym backends share: building, registering, memo tokens, arguments.

Each backend keeps what is its own (``make``'s wrapper logic, the env type, error hints);
constructing the base env, wrapping failures into :class:`~specpack.errors.BuildError`,
putting a pack into a registry, and recovering a live env's constructor arguments are written
once, here.

Constructor arguments are recovered faithfully or not at all. Sources, in order of trust:
``RecordConstructorArgs._saved_kwargs`` (gymnasium), the ``EnvSpec.kwargs`` that ``make``
passed, EzPickle's ``_ezpickle_args``/``_ezpickle_kwargs``, and a constructor that takes no
arguments. Each source is checked against the constructor's signature and the instance's
attributes: an argument that was passed but not recorded (the EzPickle gap that once dropped
Atari's ``frameskip``) is refused, never rebuilt as its default.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from .._text import short, suggest
from ..errors import (
    BuildError,
    CaptureError,
    UnexpectedKwargError,
    UnrecordedArgumentsError,
    build_error_for,
)
from .recipe import Recipe
from .recorders import recorder_for

__all__ = [
    "PackEntryPoint",
    "check_coverage",
    "check_kwargs",
    "construct",
    "evidence_kwargs",
    "ezpickle_kwargs",
    "import_id_module",
    "init_params",
    "live_recipe",
    "memo_token",
    "memo_valid",
    "read_recorder",
    "register_pack",
    "spec_made",
    "versioned_spec",
    "wrap_failure",
    "wrapping",
]


def import_id_module(env_id: str) -> str:
    """For gymnasium's ``"module:Env-v0"`` id form, import the module here; return the id.

    Importing is how such a module registers its envs; a failure is a CaptureError that names
    the module and carries the import error.
    """
    if ":" not in env_id:
        return env_id
    module, _, name = env_id.partition(":")
    try:
        importlib.import_module(module)
    except Exception as e:
        raise CaptureError(
            f"{env_id!r}: importing the module {module!r} to register {name!r} failed "
            f"({type(e).__name__}: {e}); install it or fix the module name"
        ) from e
    return name


def _no_hint(e: BaseException) -> str:
    return ""


def construct(
    label: str,
    entry_name: str,
    creator: Any,
    kwargs: dict[str, Any],
    env_type: type | None,
    not_env_fix: str,
    hint: Callable[[BaseException], str] = _no_hint,
) -> Any:
    """``creator(**kwargs)``, a constructor failure named by pack, and the env type checked.

    ``env_type=None`` skips the type check (gym's API-compatibility mode builds old-API envs).
    """
    try:
        env = creator(**kwargs)
    except Exception as e:
        raise build_error_for(e)(
            f"the env constructor of pack {label} ({entry_name}) raised "
            f"{type(e).__name__}: {e}{hint(e)}"
        ) from e
    if env_type is not None and not isinstance(env, env_type):
        raise BuildError(
            f"the entry point of pack {label} returned {type(env).__name__}, not a "
            f"{env_type.__module__.partition('.')[0]}.Env; {not_env_fix}"
        )
    return env


def wrap_failure(
    label: str, e: Exception, hint: Callable[[BaseException], str] = _no_hint
) -> BuildError:
    """The BuildError for a failure while applying wrappers (a BuildError passes through)."""
    if isinstance(e, BuildError):
        return e
    return BuildError(f"wrapping pack {label} failed: {type(e).__name__}: {e}{hint(e)}")


@contextmanager
def wrapping(label: str, hint: Callable[[BaseException], str] = _no_hint) -> Iterator[None]:
    """Turn a failure while applying wrappers into a BuildError naming the pack."""
    try:
        yield
    except Exception as e:
        err = wrap_failure(label, e, hint)
        if err is e:
            raise
        raise err from e


def _keyword_names(target: Any) -> tuple[str, ...] | None:
    """The names ``target`` takes by keyword; None when it takes ``**kwargs`` or is unknowable."""
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    params = sig.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


_keyword_names_cached = functools.lru_cache(maxsize=1024)(_keyword_names)


def check_kwargs(target: Any, kwargs: Mapping[str, Any], what: str) -> None:
    """Refuse, at capture, a kwarg that ``target``'s signature cannot take.

    Skipped when the signature takes ``**kwargs`` or cannot be read. The error names the
    kwarg, suggests the closest parameter and lists what ``target`` takes: the mistake is
    reported here, in the parent, not as a ``TypeError`` in a worker's ``make()``. Signatures
    are read once per class or function (capture's hot path).
    """
    if not kwargs:
        return
    try:
        names = _keyword_names_cached(target)
    except TypeError:  # an unhashable callable
        names = _keyword_names(target)
    if names is None:
        return
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        k = unknown[0]
        takes = ", ".join(n for n in names if n not in ("self", "env")) or "no arguments"
        more = f" (nor {', '.join(map(repr, unknown[1:]))})" if len(unknown) > 1 else ""
        hint = suggest(k, names)
        raise UnexpectedKwargError(
            f"{what} takes no argument {k!r}{more};{hint}{' It' if hint else ' it'} takes: "
            f"{takes}"
        )


class PackEntryPoint:
    """A picklable registry entry point that builds a pack (``make`` then adds nothing)."""

    def __init__(self, pack: Any) -> None:
        self.pack = pack

    def __call__(self, **kwargs: Any) -> Any:
        return self.pack.make(**kwargs)

    def __repr__(self) -> str:
        return f"PackEntryPoint({self.pack.label})"


def register_pack(
    pack: Any,
    env_id: str | None,
    registry: Any,
    register: Callable[..., Any],
    library: str,
) -> str:
    """Register ``pack`` under ``env_id`` (default ``pack.id``) in ``registry``; idempotent.

    The entry point builds the whole pack, so the registration turns off everything ``make``
    would add (checker, order enforcing, time limit): ``make(id)`` equals ``pack.make()``.
    """
    env_id = env_id or pack.id
    if not env_id:
        raise CaptureError(
            "this pack has no id (it was captured from a callable); pass one: "
            "pack.register('MyEnv-v0')"
        )
    existing = registry.get(env_id)
    if existing is not None:
        ep = existing.entry_point
        if isinstance(ep, PackEntryPoint) and ep.pack == pack:
            return env_id
        raise CaptureError(
            f"{env_id!r} is already registered in {library}'s registry (entry_point={ep!r}); pass "
            f"another id to pack.register(), or {library}.envs.registry.pop(id) first"
        )
    register(
        id=env_id,
        entry_point=PackEntryPoint(pack),
        disable_env_checker=True,
        order_enforce=False,
        nondeterministic=pack.nondeterministic,
        reward_threshold=pack.spec.get("reward_threshold"),
    )
    return env_id


def memo_token(registry: Any, env_id: str, *, strings_only: bool) -> Any:
    """A snapshot of what resolving ``env_id`` read from ``registry`` (None: do not memoise).

    ``capture`` may return an earlier, identical pack while :func:`memo_valid` holds: same
    spec object, unchanged fields and kwargs, same object behind the entry point.
    """
    if ":" in env_id:
        return None
    spec = registry.get(env_id)
    if spec is None or spec.entry_point is None:
        return None
    if strings_only and not isinstance(spec.entry_point, str):
        return None
    return (spec, dict(spec.__dict__), dict(spec.kwargs), _entry_now(spec.entry_point))


def memo_valid(registry: Any, env_id: str, token: Any) -> bool:
    """Whether ``registry`` still holds exactly what ``token`` snapshotted."""
    spec, fields, kwargs, entry = token
    current = registry.get(env_id)
    if current is None or current is not spec:
        return False
    return bool(
        current.__dict__ == fields
        and current.kwargs == kwargs
        and _entry_now(current.entry_point) is entry
    )


def _entry_now(entry: Any) -> Any:
    """The object an entry point (callable or ``module:attr`` string) names right now."""
    if not isinstance(entry, str):
        return entry
    modname, _, attr = entry.partition(":")
    obj: Any = sys.modules.get(modname)
    try:
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        return None
    return obj


_SKIP = frozenset({"self", "env"})


def init_params(cls: type) -> list[inspect.Parameter] | None:
    """The named parameters of ``cls.__init__`` besides ``self``/``env``; None if unknowable."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.name in _SKIP or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out.append(p)
    return out


def _accepts_var_kwargs(cls: type) -> bool:
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return True
    return any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


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
    for attr in (name, f"_{name}"):
        if attr in d:
            return d[attr]
    return _MISSING


def check_coverage(
    obj: Any, cls: type, recorded: dict[str, Any], source: str, fix: str
) -> list[str]:
    """Refuse when ``recorded`` misses an argument ``obj`` was visibly built with.

    A parameter that is not recorded is an error when it has no default (the rebuild would
    fail) or when the instance stores a non-default value under its name; a recorded name the
    constructor does not take is an error too (the rebuild would raise ``TypeError``).
    Returns the parameters that were not recorded but hold their default here (worth a note).
    """
    params = init_params(cls)
    if params is None:
        return []
    unrecorded: list[str] = []
    names = {p.name for p in params}
    name = f"{cls.__module__}.{cls.__qualname__}"
    if not _accepts_var_kwargs(cls):
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
    """Constructor kwargs read back from attributes named like every parameter, or None.

    Only when *every* parameter has a same-named attribute (``name`` or ``_name``, or the
    gymnasium-standard ``render_mode``); one missing and nothing is guessed.
    """
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


def read_recorder(node: Any, cls: type, fix: str) -> dict[str, Any] | None:
    """The wrapper's arguments from its registered recorder (None: no recorder for ``cls``)."""
    recorder = recorder_for(cls)
    if recorder is None:
        return None
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
            f"the recorder registered for {name} returned {type(got).__name__}, not a mapping "
            f"of argument names to values; {fix}"
        )
    return {k: v for k, v in got.items() if k != "env"}


def versioned_spec(
    reg: Any,
    full_id: str,
    *,
    library: Any,
    outdated: Callable[[str], None],
    not_an_id: type[CaptureError],
) -> tuple[Any, tuple[Any, str, Any]]:
    """The spec ``make`` would use for ``full_id`` and the parsed id, with ``make``'s warnings.

    gymnasium 1.x and gym 0.26 share this: an unversioned id takes the latest version (warned),
    an outdated version is warned about with ``outdated``. The spec is None when nothing is
    registered; the caller raises its own error then.
    """
    spec = reg.registry.get(full_id)
    try:
        ns, name, version = reg.parse_env_id(full_id)
    except library.error.Error as e:
        raise not_an_id(f"{full_id!r} is not an env id ({e}); ids look like 'CartPole-v1'") from None
    latest = reg.find_highest_version(ns, name)
    if version is not None and latest is not None and latest > version:
        outdated(f"The environment {full_id} is out of date. You should consider upgrading to "
                 f"version `v{latest}`.")
    if version is None and latest is not None:
        newest = reg.get_env_id(ns, name, latest)
        spec = reg.registry.get(newest)
        library.logger.warn(f"Using the latest versioned environment `{newest}` instead of the "
                            f"unversioned environment `{full_id}`.")
    return spec, (ns, name, version)


def live_recipe(
    layers: list[tuple[type, dict[str, Any]]],
    base: Any,
    spec: Any,
    *,
    spec_meta: Callable[[Any], dict[str, Any]],
    base_kwargs: Callable[[Any, type, list[str]], dict[str, Any]],
    make_inner: frozenset[str],
) -> Recipe:
    """The recipe of a live stack (``layers`` outermost first, down to ``base``).

    The base env's kwargs come from its spec when ``make`` built it from that spec, else from
    what the env recorded (``base_kwargs``); the notes say where the stack's shape differs from
    what ``make`` builds (a ``TimeLimit`` that is not innermost, more than one).
    """
    bcls = type(base)
    notes: list[str] = []
    entry_string: str | None = None
    if spec is not None and spec_made(spec, bcls):
        kwargs = dict(spec.kwargs)
        if isinstance(spec.entry_point, str):
            entry_string = spec.entry_point
        meta = spec_meta(spec)
    else:
        kwargs = base_kwargs(base, bcls, notes)
        meta = spec_meta(spec) if spec is not None else {}
        if spec is not None and isinstance(spec.entry_point, str):
            meta["entry_point"] = spec.entry_point
    names = [c.__qualname__ for c, _ in layers]
    if "TimeLimit" in names:
        below = [n for n in names[names.index("TimeLimit") + 1 :] if n not in make_inner]
        if below:
            notes.append(
                f"TimeLimit is not innermost: {', '.join(below)} sit below it (make's "
                "env.spec would reorder this stack; the pack keeps it exactly)"
            )
    if names.count("TimeLimit") > 1:
        notes.append("the stack has more than one TimeLimit; every one is kept")
    return Recipe(
        id=spec.id if spec is not None else None,
        entry=None if entry_string else bcls,
        entry_string=entry_string,
        kwargs=kwargs,
        spec=meta,
        layers=layers,
        auto_render=False,
        notes=notes,
    )


def spec_made(spec: Any, cls: type) -> bool:
    """Whether ``spec`` describes how this base env was really made (by ``make``)."""
    ep = spec.entry_point
    if ep is None:
        return False
    if isinstance(ep, str):
        modname, _, attr = ep.partition(":")
        if modname == "__mp_main__":
            modname = "__main__"
        try:
            obj: Any = importlib.import_module(modname)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - an unloadable string is no evidence
            return False
        ep = obj
    return ep is cls
