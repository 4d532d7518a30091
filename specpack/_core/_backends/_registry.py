"""Ids and registries, as gymnasium and gym share them: ``"module:Env-v0"`` ids, versions,
registering a pack, the capture memo's snapshot of a registry entry."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import operator
import sys
from collections.abc import Callable
from typing import Any

from .._carry.tree import SCALAR_TYPES, exact_key
from .._errors import CaptureError, capture_error_for

__all__ = ["PackEntryPoint", "import_id_module", "memo_token", "memo_valid", "register_pack",
           "versioned_spec"]


def import_id_module(env_id: str) -> str:
    """Import the module of a ``"module:Env-v0"`` id (it registers its envs); return the id."""
    if ":" not in env_id:
        return env_id
    module, _, name = env_id.partition(":")
    try:
        importlib.import_module(module)
    except Exception as e:
        raise capture_error_for(e)(
            f"{env_id!r}: importing the module {module!r} to register {name!r} failed "
            f"({type(e).__name__}: {e}); install it or fix the module name"
        ) from e
    return name


class PackEntryPoint:
    """A picklable registry entry point that builds a pack (``make`` then adds nothing)."""

    def __init__(self, pack: Any) -> None:
        self.pack = pack

    def __call__(self, **kwargs: Any) -> Any:
        return self.pack.make(**kwargs)

    def __repr__(self) -> str:
        return f"PackEntryPoint({self.pack.label})"


def register_pack(pack: Any, env_id: str | None, registry: Any, register: Callable[..., Any],
                  library: str) -> str:
    """Register ``pack`` under ``env_id`` (default ``pack.id``) in ``registry``; idempotent.
    Turns off all ``make`` would add, so that ``make(id)`` equals ``pack.make()``."""
    env_id = env_id or pack.id
    if not env_id:
        raise CaptureError("this pack has no id (it was captured from a callable); pass one: "
                           "pack.register('MyEnv-v0')")
    existing = registry.get(env_id)
    if existing is not None:
        ep = existing.entry_point
        if isinstance(ep, PackEntryPoint) and ep.pack == pack:
            return env_id
        raise CaptureError(f"{env_id!r} is already registered in {library}'s registry "
                           f"(entry_point={ep!r}); pass another id to pack.register(), or "
                           f"{library}.envs.registry.pop(id) first")
    register(id=env_id, entry_point=PackEntryPoint(pack), disable_env_checker=True,
             order_enforce=False, nondeterministic=pack.nondeterministic,
             reward_threshold=pack.spec.get("reward_threshold"))
    return env_id


def memo_token(registry: Any, env_id: str, *, strings_only: bool) -> Any:
    """A snapshot (None: do not memoise), taken before resolving ``env_id`` so a re-registration
    never files a pack under another state: the spec, its fields' and kwargs' very objects (not
    ``==``: 0.0 and -0.0, 1 and True differ), the exact key of a mutable one, the entry point."""
    spec = None if ":" in env_id else registry.get(env_id)
    if spec is None or spec.entry_point is None or (
            strings_only and not isinstance(spec.entry_point, str)):
        return None
    fields = vars(spec)
    kwargs = fields.get("kwargs")
    if type(kwargs) is not dict:
        return None
    names, values = tuple(fields), tuple(fields.values())
    kw_names, kw_values = tuple(kwargs), tuple(kwargs.values())
    keep: list[Any] = []
    deep = None
    flat = _flat.get(id(spec))
    # The very objects of the spec's last flat snapshot again: as flat (scalars and tuples of
    # them do not change), not read again. C-level maps: every first capture runs this.
    if not (flat is not None and flat[0] is spec and flat[1] == names and flat[3] == kw_names
            and all(map(operator.is_, values, flat[2]))
            and all(map(operator.is_, kw_values, flat[4]))):
        if _all_flat(names, values, ("entry_point", "kwargs")) and _all_flat(kw_names, kw_values,
                                                                              ()):
            if len(_flat) > 4096:
                _flat.clear()
            _flat[id(spec)] = (spec, names, values, kw_names, kw_values)
        else:
            deep = _fields_key(spec, keep)
            if deep is None:
                return None
    return (spec, names, values, kw_names, kw_values, deep, keep, _entry_now(spec.entry_point))


#: The last flat snapshot (fields and kwargs all scalars or tuples of them) of each spec, by its
#: id: the spec (held: its id is not reused), its field names and objects, its kwargs'.
_flat: dict[int, tuple[Any, tuple[str, ...], tuple[Any, ...], tuple[str, ...], tuple[Any, ...]]] = {}


def memo_valid(registry: Any, env_id: str, token: Any) -> bool:
    """Whether ``registry`` still holds exactly what ``token`` snapshotted."""
    spec, names, values, kw_names, kw_values, deep, _, entry = token
    current = registry.get(env_id)
    if current is not spec:
        return False
    now = vars(current)
    kwargs = now.get("kwargs")
    return (type(kwargs) is dict and _same_objects(now, names, values)
            and _same_objects(kwargs, kw_names, kw_values)
            and _entry_now(current.entry_point) is entry
            and (deep is None or _fields_key(current, []) == deep))


def _same_objects(now: dict[str, Any], names: tuple[str, ...], values: tuple[Any, ...]) -> bool:
    """Whether ``now`` holds exactly ``names``, in order, each with the very same object."""
    if not names:
        return not now
    return (len(now) == len(names) and all(map(operator.is_, now.values(), values))
            and tuple(now) == names)


def _all_flat(names: tuple[str, ...], values: tuple[Any, ...], skip: tuple[str, ...]) -> bool:
    """Whether each value (but ``skip``'s) is a scalar or a tuple of them: identity is content.
    A loop, not generators: a first capture of a spec runs it twice."""
    scalars = SCALAR_TYPES
    for name, value in zip(names, values):
        t = type(value)
        if t in scalars or name in skip:
            continue
        if t is not tuple:
            return False
        for item in value:
            if type(item) not in scalars:
                return False
    return True


def _fields_key(spec: Any, keep: list[Any]) -> Any:
    """The exact key of a spec's fields (None: not keyable): containers and dataclasses by
    content, any other object by identity, kept alive in ``keep`` (its id is never reused)."""
    try:
        key = _key(vars(spec), keep, 0)
        hash(key)
    except (TypeError, RecursionError):
        return None
    return key


def _key(value: Any, keep: list[Any], depth: int) -> Any:
    t = type(value)
    if depth > 64:
        raise RecursionError
    if t is dict:
        return ("d", frozenset((exact_key(k), _key(v, keep, depth + 1))
                               for k, v in value.items()))
    if t is list or t is tuple:
        return (t.__name__, tuple(_key(v, keep, depth + 1) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ("dc", t, _key(vars(value), keep, depth + 1))
    key = exact_key(value)
    if type(key) is tuple and key and key[0] == "?":
        keep.append(value)
    return key


def _entry_now(entry: Any) -> Any:
    """The object an entry point (callable or ``module:attr`` string) names right now."""
    if not isinstance(entry, str):
        return entry
    modname, _, attr = entry.partition(":")
    obj: Any = sys.modules.get(modname)
    if "." not in attr:
        return getattr(obj, attr, None)
    try:
        return functools.reduce(getattr, attr.split("."), obj)
    except AttributeError:
        return None


@functools.lru_cache(maxsize=4096)
def _parse(parse: Callable[[str], tuple[Any, str, Any]], full_id: str) -> tuple[Any, str, Any]:
    """``parse(full_id)``, kept: ``parse_env_id`` is a pure function of the string."""
    return parse(full_id)


#: ``find_highest_version``'s answers by ``(id of the registry, namespace, name)``: the registry
#: and the function asked (both held), the specs it held then, in order, and the answer.
_highest: dict[tuple[int, Any, str], tuple[Any, Any, tuple[Any, ...], int | None]] = {}


def _highest_version(reg: Any, ns: Any, name: str) -> int | None:
    """``reg.find_highest_version(ns, name)``, asked again only once the registry holds other
    specs (one added, removed or replaced; compared by identity, in order): it reads three
    fields of every registered spec (dozens to hundreds), on every first capture of an id."""
    registry, find = reg.registry, reg.find_highest_version
    key = (id(registry), ns, name)
    hit = _highest.get(key)
    # all(map(is_)): a C loop, under half the scan's cost; never ``==`` (no spec's __eq__ runs)
    if (hit is not None and hit[0] is registry and hit[1] is find
            and len(registry) == len(hit[2]) and all(map(operator.is_, registry.values(), hit[2]))):
        return hit[3]
    specs = tuple(registry.values())  # before the scan: a change meanwhile fails the next check
    latest: int | None = find(ns, name)
    if len(_highest) > 1024:
        _highest.clear()
    _highest[key] = (registry, find, specs, latest)
    return latest


def versioned_spec(reg: Any, full_id: str, *, library: Any, outdated: Callable[[str], None],
                   not_an_id: type[CaptureError]) -> tuple[Any, tuple[Any, str, Any]]:
    """The spec ``make`` would use for ``full_id`` (None if unregistered) and the parsed id, with
    ``make``'s warnings (an unversioned id takes the latest version; ``outdated`` warns)."""
    spec = reg.registry.get(full_id)
    try:
        ns, name, version = _parse(reg.parse_env_id, full_id)
    except library.error.Error as e:
        raise not_an_id(
            f"{full_id!r} is not an env id ({e}); ids look like 'CartPole-v1'") from None
    latest = _highest_version(reg, ns, name)
    if version is not None and latest is not None and latest > version:
        outdated(f"The environment {full_id} is out of date. You should consider upgrading to "
                 f"version `v{latest}`.")
    if version is None and latest is not None:
        newest = reg.get_env_id(ns, name, latest)
        spec = reg.registry.get(newest)
        library.logger.warn(f"Using the latest versioned environment `{newest}` instead of the "
                            f"unversioned environment `{full_id}`.")
    return spec, (ns, name, version)
