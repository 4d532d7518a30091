"""The modules a pack's code refers to, and the distributions of those: a pack's ``requires``.

:func:`code_modules` takes the live objects of a pack's code references (entry point, wrapper
classes, code among the kwargs) and names their modules, their classes' MROs' modules, and one
level deep what those modules hold; :func:`specpack._core._provenance.requires_of` turns the names
into distributions: :func:`requires_of_pack` for the code a pack names, :func:`built_requires`
for a built env.

Reading a module's globals and judging its file is the costly part, and neither changes while
``sys.modules`` holds the same module object (a module's globals are what its import left; its
file does not move). So both are kept per module object, and the whole expansion per set of
modules: a first capture of any id whose code lives in modules already seen (another env of the
same package, a wrapper every id shares) reads no module again. What is looked at on every
call: that each class's MRO and each module are still the same objects, the by-value
registry, and which of the named modules are loaded.
"""

from __future__ import annotations

import functools
import operator
import sys
import types
from collections.abc import Iterable
from typing import Any

from ._carry.code import CodeRef, live_objects
from ._provenance import (
    _MAIN_NAMES,
    _OWN,
    _classify,
    _location,
    _registered_by_value,
    by_value_registry,
    essential,
    requires_of,
)

__all__ = ["built_requires", "code_modules", "requires_of_pack"]


def code_modules(objects: Iterable[Any]) -> list[str]:
    """The loaded modules that the code ``objects`` (classes, functions, partials) refers to.

    Each object's module, and for a class the modules of every class in its MRO (an env class
    defined in ``__main__`` that subclasses a MuJoCo env names the MuJoCo env's modules); then,
    one level deep, what each of those modules holds at module level: the modules it imported
    and the modules that its other globals come from (``mujoco`` for
    ``gymnasium.envs.mujoco.mujoco_env``). Modules of the standard library, the interpreter and
    specpack are not looked into, nor ``__main__``: a script's or a notebook's namespace is a
    session, not code a worker imports (its classes' MROs still count). Only modules loaded
    here are named; nothing is imported.

    Parameters
    ----------
    objects
        The live objects a pack's code references stand for (entry point, wrapper classes,
        code among the kwargs).

    Returns
    -------
    list[str]
        Module names, each once, in the order found (what
        :func:`~specpack._core._provenance.requires_of` reads).
    """
    return list(_code_modules(objects, by_value_registry()))


def _code_modules(objects: Iterable[Any], registry: frozenset[str]) -> tuple[str, ...]:
    """:func:`code_modules`, given the by-value registry read once by the caller."""
    first: dict[str, None] = {}
    for obj in objects:
        while isinstance(obj, functools.partial):
            obj = obj.func
        if isinstance(obj, type):
            first.update(_mro_modules(obj))
        else:
            name = _module_name(obj)
            if name is not None:
                first[name] = None
    key = tuple(first)
    hit = _EXPANDED.get(key)
    if hit is None or hit[0] != registry or not _same_modules(key, hit[1]):
        hit = _expand(key, registry)
    return tuple(filter(sys.modules.__contains__, hit[2]))


#: The modules of each class's MRO already walked: id -> (the class, its ``__mro__``, names).
_MROS: dict[int, tuple[type, tuple[type, ...], dict[str, None]]] = {}


def _mro_modules(cls: type) -> dict[str, None]:
    """The modules of the classes of ``cls``'s MRO, each once, in order.

    Kept per class while its ``__mro__`` is the same tuple (assigning ``__bases__`` makes a
    new one): the wrappers and env classes every capture names are walked once. As for a
    module's globals, a class's ``__module__`` is taken to be what its definition set.
    """
    mro = cls.__mro__
    hit = _MROS.get(id(cls))
    if hit is not None and hit[0] is cls and hit[1] is mro:
        return hit[2]
    names: dict[str, None] = {}
    for base in mro:
        name = _module_name(base)
        if name is not None:
            names[name] = None
    if len(_MROS) > 4096:
        _MROS.clear()
    _MROS[id(cls)] = (cls, mro, names)
    return names


#: The expansion of each set of first modules (in order): key -> (the by-value registry, the
#: module objects ``sys.modules`` held for them, every name found, unfiltered).
_EXPANDED: dict[tuple[str, ...], tuple[frozenset[str], tuple[Any, ...], tuple[str, ...]]] = {}


def _same_modules(names: tuple[str, ...], mods: tuple[Any, ...]) -> bool:
    """Whether ``sys.modules`` holds exactly ``mods`` for ``names`` still (None: absent)."""
    return all(map(operator.is_, map(sys.modules.get, names), mods))


def _expand(
    first: tuple[str, ...], registry: frozenset[str],
) -> tuple[frozenset[str], tuple[Any, ...], tuple[str, ...]]:
    """``first`` and what each of its modules holds (:func:`_expansion`), filed for reuse."""
    mods = tuple(sys.modules.get(name) for name in first)
    found = dict.fromkeys(first)
    for name, mod in zip(first, mods):
        if mod is None or name in _MAIN_NAMES or name.partition(".")[0] == _OWN:
            continue
        found.update(_expansion(name, mod, registry))
    if len(_EXPANDED) > 1024:
        _EXPANDED.clear()
    out = _EXPANDED[first] = (registry, mods, tuple(found))
    return out


#: Per loaded module: name -> (the module object, whether it is looked into when not
#: registered by value, the module names its globals are or come from; empty if not).
_HELD: dict[str, tuple[Any, bool, dict[str, None]]] = {}


def _expansion(name: str, mod: Any, registry: frozenset[str]) -> dict[str, None]:
    """The modules :func:`code_modules` adds for the loaded module ``name`` (``mod``): what
    its globals are or come from, or nothing for the standard library and the interpreter.

    Both answers are read once per module object (kept while ``sys.modules`` holds that same
    object). A module registered by value (in ``registry``) is looked into whatever its file,
    as :func:`~specpack._core._provenance.source_of` judges it ``"by_value"``.
    """
    hit = _HELD.get(name)
    if hit is None or hit[0] is not mod:
        looked = _classify(name, *_location(name)).origin not in ("builtin", "stdlib")
        hit = _HELD[name] = (mod, looked, _held(mod) if looked else {})
    if hit[1]:
        return hit[2]
    if registry and _registered_by_value(name):
        return _held(mod)  # a stdlib module carried by value: rare, read each time
    return hit[2]


def _held(mod: Any) -> dict[str, None]:
    """The modules ``mod``'s globals are or come from, each once, in order."""
    out: dict[str, None] = {}
    for value in list(getattr(mod, "__dict__", {}).values()):
        held: str | None
        if type(value) is types.ModuleType:
            held = value.__name__
        else:
            held = _module_name(value if isinstance(value, (type, types.FunctionType,
                                                             types.BuiltinFunctionType))
                                else type(value))
        if isinstance(held, str):
            out[held] = None
    return out


def _module_name(obj: Any) -> str | None:
    """``obj.__module__`` when it is a string (nothing else is read: no object's code runs)."""
    try:
        name = obj.__module__
    except Exception:  # noqa: BLE001 - a class whose __module__ raises names no module
        return None
    return name if isinstance(name, str) else None


def requires_of_pack(code: Iterable[CodeRef]) -> dict[str, str]:
    """The distributions of the code a pack names: of each reference's module, and of the
    modules its live object refers to (:func:`~specpack._core._reach.code_modules`: the classes
    of its MRO, and one level deep what those modules import), by value or by reference; those
    that another of them depends on are left out (:func:`~specpack._core._provenance.essential`)."""
    refs = list(code)
    registry = by_value_registry()
    named = tuple([c.module for c in refs if c.payload is None])
    key = (named, _code_modules(live_objects(refs), registry), registry)
    found = _requires_memo.get(key)
    if found is None:
        if len(_requires_memo) > 1024:
            _requires_memo.clear()
        found = _requires_memo[key] = essential(requires_of(dict.fromkeys([*key[0], *key[1]])))
    return dict(found)


#: What :func:`requires_of_pack` found, by the modules it read (those the references name by
#: reference, those :func:`code_modules` found) and the by-value registry.
_requires_memo: dict[tuple[tuple[str, ...], tuple[str, ...], frozenset[str]], dict[str, str]] = {}


def built_requires(env: Any, imported: Iterable[str] = ()) -> dict[str, str]:
    """The distributions of a built env's code: of its unwrapped class (its MRO, and what
    those modules import) and of the classes of the objects it holds (an ``MjModel``: the
    distribution of ``mujoco._structs``; one that the constructor imported: its own).

    ``imported`` is not read: what a build imports depends on what the process had loaded
    before, and a pack's ``requires`` is the same wherever it was captured.
    """
    node = getattr(env, "unwrapped", env)
    held = [type(v).__module__ for v in list(getattr(node, "__dict__", {}).values())]
    return essential(requires_of([*code_modules([type(node)]),
                                  *(m for m in held if isinstance(m, str) and m in sys.modules)]))
