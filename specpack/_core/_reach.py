"""The modules a pack's code refers to, and the distributions of those: a pack's ``requires``.

Reading a module's globals and judging its file are the costly part, and neither changes while
``sys.modules`` holds the same module object: both are kept per module object, and the whole
expansion per set of modules."""

from __future__ import annotations

import functools
import operator
import sys
import types
from collections.abc import Iterable
from typing import Any

from . import _provenance
from ._carry.code import CodeRef, live_objects
from ._provenance import by_value_registry, essential, requires_of

__all__ = ["built_requires", "code_modules", "requires_of_pack"]

#: first modules -> (by-value registry, their module objects, every name found, unfiltered).
_EXPANDED: dict[tuple[str, ...], tuple[frozenset[str], tuple[Any, ...], tuple[str, ...]]] = {}
#: The modules of each class's MRO already walked: id -> (the class, its ``__mro__``, names).
_MROS: dict[int, tuple[type, tuple[type, ...], dict[str, None]]] = {}
#: name -> (module object, looked into unless by value, the modules its globals come from).
_HELD: dict[str, tuple[Any, bool, dict[str, None]]] = {}
#: :func:`requires_of_pack`'s answers, by the modules it read and the by-value registry.
_requires_memo: dict[tuple[tuple[str, ...], tuple[str, ...], frozenset[str]], dict[str, str]] = {}
#: :func:`requires_of_pack`'s answers for code that is all classes, by the ids of its references:
#: those references (held: no id is reused), the by-value registry, their live classes and those
#: classes' ``__mro__``, the first modules and their objects, the names found loaded and those
#: found absent, the answer. A hit is checked as the walk would check it, without walking.
_PACKS: dict[tuple[int, ...], tuple[Any, ...]] = {}
_LIVE = operator.attrgetter("_obj")  # a reference's live object, when it has one
_MRO = operator.attrgetter("__mro__")


def code_modules(objects: Iterable[Any], registry: frozenset[str]) -> tuple[str, ...]:
    """The loaded modules of the code ``objects``, of their MROs and, one level deep, of those
    modules' globals (except in the stdlib, the interpreter, specpack and ``__main__``), each
    once, in order. ``registry``: :func:`~._provenance.by_value_registry`."""
    return tuple(filter(sys.modules.__contains__, _reach_of(objects, registry)[2]))


def _reach_of(objects: Iterable[Any], registry: frozenset[str]
              ) -> tuple[tuple[str, ...], tuple[Any, ...], tuple[str, ...]]:
    """:func:`code_modules` before its filter: the first modules (of ``objects`` and their
    MROs), their module objects (None: absent), and every name found from them, loaded or not."""
    first: dict[str, None] = {}
    for obj in objects:
        while isinstance(obj, functools.partial):
            obj = obj.func
        if isinstance(obj, type):
            first.update(_mro_modules(obj))
        elif (name := _module_name(obj)) is not None:
            first[name] = None
    key = tuple(first)
    mods = tuple(map(sys.modules.get, key))
    hit = _EXPANDED.get(key)
    # reused while sys.modules holds the same module objects (None: absent) for the names
    if hit is None or hit[0] != registry or not all(map(operator.is_, mods, hit[1])):
        found = dict.fromkeys(key)
        for name, mod in zip(key, mods):
            if (mod is not None and name not in _provenance._MAIN_NAMES
                    and name.partition(".")[0] != _provenance._OWN):
                found.update(_expansion(name, mod, registry))
        if len(_EXPANDED) > 1024:
            _EXPANDED.clear()
        hit = _EXPANDED[key] = (registry, mods, tuple(found))
    return key, mods, hit[2]


def _mro_modules(cls: type) -> dict[str, None]:
    """The modules of the classes of ``cls``'s MRO, each once, in order; kept per class while
    its ``__mro__`` is the same tuple (assigning ``__bases__`` makes a new one)."""
    mro = cls.__mro__
    hit = _MROS.get(id(cls))
    if hit is not None and hit[0] is cls and hit[1] is mro:
        return hit[2]
    names = dict.fromkeys(n for n in map(_module_name, mro) if n is not None)
    if len(_MROS) > 4096:
        _MROS.clear()
    _MROS[id(cls)] = (cls, mro, names)
    return names


def _expansion(name: str, mod: Any, registry: frozenset[str]) -> dict[str, None]:
    """What :func:`code_modules` adds for the loaded module ``name`` (``mod``): :func:`_held`,
    but nothing for the stdlib and the interpreter unless registered by value."""
    hit = _HELD.get(name)
    if hit is None or hit[0] is not mod:
        origin = _provenance._classify(name, *_provenance._location(name)).origin
        looked = origin not in ("builtin", "stdlib")
        hit = _HELD[name] = (mod, looked, _held(mod) if looked else {})
    if not hit[1] and registry and _provenance._registered_by_value(name):
        return _held(mod)  # a stdlib module carried by value: rare, read each time
    return hit[2]


def _held(mod: Any) -> dict[str, None]:
    """The modules ``mod``'s globals are or come from, each once, in order."""
    code = (type, types.FunctionType, types.BuiltinFunctionType)
    names = (v.__name__ if type(v) is types.ModuleType
             else _module_name(v if isinstance(v, code) else type(v))
             for v in list(getattr(mod, "__dict__", {}).values()))
    return dict.fromkeys(n for n in names if isinstance(n, str))


def _module_name(obj: Any) -> str | None:
    """``obj.__module__`` when it is a string (nothing else is read: no object's code runs)."""
    try:
        name = obj.__module__
    except Exception:  # noqa: BLE001 - a class whose __module__ raises names no module
        return None
    return name if isinstance(name, str) else None


def requires_of_pack(code: Iterable[CodeRef]) -> dict[str, str]:
    """The :func:`._provenance.essential` distributions of the code a pack names: each
    reference's module and what :func:`code_modules` finds from its live object."""
    refs = code if type(code) is list else list(code)
    registry = by_value_registry()
    ids = tuple(map(id, refs))
    hit = _PACKS.get(ids)
    # C-level maps and set comparisons, not loops: every first capture of an id runs this check
    if (hit is not None and hit[1] == registry
            and all(map(operator.is_, map(_MRO, hit[2]), hit[3]))
            and all(map(operator.is_, map(sys.modules.get, hit[4]), hit[5]))
            and sys.modules.keys() >= hit[6]
            and (not hit[7] or sys.modules.keys().isdisjoint(hit[7]))):
        return dict(hit[8])
    objects = live_objects(refs)
    # A reference's live object, once set, is never another: code of classes each reference
    # holds is kept by the references' ids. Their MROs are read before the walk (one changed
    # meanwhile fails the next check); a function's __module__ may be reassigned: not kept.
    kept = all(isinstance(obj, type) for obj in objects) and all(
        map(operator.is_, map(_LIVE, refs), objects))
    mros = tuple(map(_MRO, objects)) if kept else ()
    first, mods, found = _reach_of(objects, registry)
    loaded = tuple(filter(sys.modules.__contains__, found))
    key = (tuple([c.module for c in refs if c.payload is None]), loaded, registry)
    answer = _requires_memo.get(key)
    if answer is None:
        if len(_requires_memo) > 1024:
            _requires_memo.clear()
        answer = _requires_memo[key] = essential(requires_of(dict.fromkeys([*key[0], *key[1]])))
    if kept:
        if len(_PACKS) > 1024:
            _PACKS.clear()
        absent = tuple(name for name in found if name not in loaded)
        _PACKS[ids] = (tuple(refs), registry, tuple(objects), mros, first, mods,
                       frozenset(loaded), absent, answer)
    return dict(answer)


def built_requires(env: Any) -> dict[str, str]:
    """The distributions of a built env's unwrapped class and of the objects it holds (not what
    the build imported: that depends on what the process loaded before, and ``requires`` must
    not)."""
    node = getattr(env, "unwrapped", env)
    held = [type(v).__module__ for v in list(getattr(node, "__dict__", {}).values())]
    return essential(requires_of([*code_modules([type(node)], by_value_registry()),
                                  *(m for m in held if isinstance(m, str) and m in sys.modules)]))
