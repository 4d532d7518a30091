"""Where a module's code comes from (its :data:`Origin`), and which distributions a pack needs.

``"builtin"``, ``"stdlib"`` (``sysconfig`` stdlib folders, ``site-packages`` excepted),
``"distribution"`` (in an installed distribution's ``RECORD``, or an editable install's project:
:mod:`._owners`), ``"by_value"`` (``cloudpickle.register_pickle_by_value``) or ``"user"``
(anything else: the user's project, ``__main__``, a module built at run time)."""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.metadata as md
import os
import re
import site
import sys
import sysconfig
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Literal

from ._owners import owner_of_file, owners_of_dir, real_path
from ._version import __version__

__all__ = ["Origin", "Source", "by_value_registry", "distribution_of",
           "essential", "requires_of", "source_of", "user_modules"]

Origin = Literal["builtin", "stdlib", "distribution", "user", "by_value"]

#: Our own package: every node that builds a pack has it, so it is never a requirement.
_OWN = __name__.partition(".")[0]
_MAIN_NAMES = frozenset({"__main__", "__mp_main__"})
_BUILTIN_NAMES = frozenset(sys.builtin_module_names)


@dataclass(frozen=True)
class Source:
    """Where one module's code comes from: for ``"distribution"``, its name and version (None: a
    namespace package shared by several), editable or not; ``path``: its file (or first folder)."""

    module: str
    origin: Origin
    distribution: str | None = None
    version: str | None = None
    path: str | None = None
    editable: bool = False


def source_of(module: str) -> Source:
    """Where ``module``'s code comes from, by the file it was (or, found without importing, would
    be) loaded from; nothing found: ``"user"``. The by-value registry is read on every call."""
    kind, path = _location(module)
    if _registered_by_value(module):
        return Source(module, "by_value", path=path)
    return _classify(module, kind, path)


def distribution_of(module: str) -> tuple[str, str] | None:
    """``(distribution, version)`` of the installed distribution owning ``module``'s file, or
    None: the one module -> distribution lookup (a file's owner, not a guess from its name).
    Kept per loaded module object (what its file is does not change while ``sys.modules``
    holds the same one) unless it is registered by value, which is read on every call."""
    mod = sys.modules.get(module)
    hit = _distributions.get(module)
    # kept only for a loaded module: hit[0] is never None
    if hit is not None and hit[0] is mod and not _registered_by_value(module):
        return hit[1]
    src = source_of(module)
    found = (src.distribution, src.version) if (
        src.origin == "distribution" and src.distribution and src.version) else None
    if mod is not None and src.origin != "by_value":
        if len(_distributions) > 4096:
            _distributions.clear()
        _distributions[module] = (mod, found)
    return found


#: :func:`distribution_of`'s answers by module name: the module object asked about, the answer.
_distributions: dict[str, tuple[Any, tuple[str, str] | None]] = {}


def requires_of(modules: Iterable[str]) -> dict[str, str]:
    """``{distribution: version}``, sorted by name, of the installed distributions (editable
    ones too) that ``modules`` come from; specpack itself and every other origin add nothing."""
    out = {found[0]: found[1] for name in modules if (found := distribution_of(name))
           and name.partition(".")[0] != _OWN and _canonical(found[0]) != _OWN}
    return dict(sorted(out.items()))


def by_value_registry() -> frozenset[str]:
    """The modules registered with ``cloudpickle.register_pickle_by_value``."""
    cloudpickle = sys.modules.get("cloudpickle")
    return frozenset(cloudpickle.list_registry_pickle_by_value()) if cloudpickle else frozenset()


def essential(requires: Mapping[str, str]) -> dict[str, str]:
    """``requires`` without those another of them depends on (``Requires-Dist``, no extras; two
    that depend on each other stay): ``{gymnasium, numpy, mujoco}`` is ``{gymnasium, mujoco}``."""
    deps = {_canonical(name): _dependencies(name) for name in requires}
    return {name: version for name, version in requires.items()
            if not any(_canonical(name) in theirs and other not in deps[_canonical(name)]
                       for other, theirs in deps.items() if other != _canonical(name))}


@functools.lru_cache(maxsize=256)
def _dependencies(dist: str) -> frozenset[str]:
    """The canonical names ``dist`` depends on unconditionally of extras (its metadata)."""
    try:
        lines = md.requires(dist) or []
    except md.PackageNotFoundError:
        return frozenset()
    names = (re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line.partition(";")[0])
             for line in lines if "extra" not in line.partition(";")[2])
    return frozenset(_canonical(name.group(1)) for name in names if name)


def user_modules(modules: Iterable[str]) -> list[str]:
    """The ``"user"`` modules among ``modules``, in order, each once (carried by value)."""
    return [m for m in dict.fromkeys(modules) if source_of(m).origin == "user"]


def _registered_by_value(module: str) -> bool:
    """Whether ``module`` or a package it is in is registered by value (most often nothing
    is: then no frozenset and no generator, as every first capture asks)."""
    cloudpickle = sys.modules.get("cloudpickle")
    registry = cloudpickle.list_registry_pickle_by_value() if cloudpickle else ()
    return bool(registry) and any(module == r or module.startswith(r + ".") for r in registry)


def _location(module: str) -> tuple[str, str | None]:
    """``(kind, path)``: kind is "builtin", "main", "file", "namespace" or "none"."""
    if module in _MAIN_NAMES:
        return "main", _file_of(sys.modules.get(module))
    mod = sys.modules.get(module)
    spec = getattr(mod, "__spec__", None) if mod is not None else _find_unloaded(module)
    if mod is None and spec is None:
        return "none", None
    origin = getattr(spec, "origin", None)
    if module in _BUILTIN_NAMES or origin in ("built-in", "frozen"):
        return "builtin", None
    path = _file_of(mod)
    if path is None and getattr(spec, "has_location", False) and isinstance(origin, str):
        path = origin
    if path is not None:
        return "file", path
    locations = getattr(spec, "submodule_search_locations", None)
    if locations is None:
        locations = getattr(mod, "__path__", None)
    dirs = [d for d in list(locations or ()) if isinstance(d, str)]
    return ("namespace", os.pathsep.join(dirs)) if dirs else ("none", None)


def _file_of(mod: Any) -> str | None:
    path = getattr(mod, "__file__", None)
    return path if isinstance(path, str) and path else None


def _find_unloaded(module: str) -> Any:
    """The spec of a module not loaded, found without importing anything (or None)."""
    top, *rest = module.split(".")
    spec = None
    for finder in list(sys.meta_path):
        try:
            spec = finder.find_spec(top, None)
        except Exception:  # noqa: BLE001 - a broken finder finds nothing
            spec = None
        if spec is not None:
            break
    for part in rest:
        locations = getattr(spec, "submodule_search_locations", None)
        if not locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(part, list(locations))
    return spec


@functools.lru_cache(maxsize=8192)
def _classify(module: str, kind: str, path: str | None) -> Source:
    shown = path.split(os.pathsep)[0] if path else None
    if module.partition(".")[0] == _OWN and kind != "main":
        owner = owner_of_file(path, module) if kind == "file" and path else None
        return Source(module, "distribution", "specpack", __version__, shown,
                      bool(owner and owner[2]))
    if kind == "builtin":
        return Source(module, "builtin")
    if kind == "file" and path:
        if _in_stdlib(path):
            return Source(module, "stdlib", path=path)
        owner = owner_of_file(path, module)
        if owner is not None:
            return Source(module, "distribution", owner[0], owner[1], path, owner[2])
    if kind == "namespace" and path:
        owners = {o for d in path.split(os.pathsep) for o in owners_of_dir(d)}
        if len(owners) == 1:
            name, version = owners.pop()
            return Source(module, "distribution", name, version, shown)
        if owners:
            return Source(module, "distribution", path=shown)
        if all(_in_stdlib(d + os.sep) for d in path.split(os.pathsep)):
            return Source(module, "stdlib", path=shown)
    return Source(module, "user", path=shown)


@functools.lru_cache(maxsize=1)
def _stdlib_roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stdlib folders, site folders inside or beside them that are not the stdlib)."""
    paths = sysconfig.get_paths()
    roots = {real_path(p) for k in ("stdlib", "platstdlib") if (p := paths.get(k))}
    sites = [paths.get("purelib"), paths.get("platlib")]
    with suppress(AttributeError):  # virtualenv's old site.py has no getsitepackages
        sites.extend(site.getsitepackages())
    sites.append(site.getusersitepackages() if site.ENABLE_USER_SITE else None)
    return tuple(roots), tuple({real_path(p) for p in sites if p})


@functools.lru_cache(maxsize=8192)
def _in_stdlib(path: str) -> bool:
    real = real_path(path)
    roots, sites = _stdlib_roots()
    if any(real.startswith(s + os.sep) for s in sites):
        return False
    root = next((r for r in roots if real.startswith(r + os.sep)), None)
    return root is not None and real[len(root) + 1:].partition(os.sep)[0] not in (
        "site-packages", "dist-packages")


def _canonical(name: str) -> str:
    return name.replace("_", "-").replace(".", "-").lower()
