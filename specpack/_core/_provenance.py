"""Where a module's code comes from, what a pack needs installed, and the check ``make()`` runs.

A module comes from one of five places (its :data:`Origin`):

- ``"builtin"``: compiled or frozen into the interpreter (``sys``, ``_io``; ``os`` on 3.11+);
- ``"stdlib"``: a file under the standard library folders (``sysconfig`` ``stdlib`` and
  ``platstdlib``, their ``site-packages`` excepted);
- ``"distribution"``: a file an installed distribution owns (its ``RECORD``), or a file in the
  project folder of an editable install (``direct_url.json`` ``dir_info.editable``; flagged);
- ``"user"``: anything else: a file no distribution owns (the user's project on ``sys.path``),
  ``__main__``, a module built at run time;
- ``"by_value"``: a module registered with ``cloudpickle.register_pickle_by_value`` (its code
  travels inside the pickle, whatever its file).

Which distribution owns a file is answered by :mod:`specpack._core._owners`: on the first question
that needs it, every ``RECORD`` is read once (a few tens of ms for a hundred distributions) but
only each distribution's top-level names are kept; a distribution's file list is read when a
question falls under one of them. Modules of the standard library never ask.
:func:`specpack._core._reach.code_modules` finds the modules a pack's code refers to,
:func:`requires_of` turns modules into ``{distribution: version}``, and
:func:`~specpack._core._versions.check_requires` (beside the skew check, in the module a worker
loads) is what ``make()`` runs against it: cached per process, so a pack whose distributions
all match costs a dict lookup.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.metadata as md
import os
import re
import site
import sys
import sysconfig
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ._owners import owner_of_file, owners_of_dir, real_path
from ._version import __version__

__all__ = ["Origin", "Source", "by_value_registry", "distribution_of",
           "essential", "imported_during", "requires_of", "source_of", "user_modules"]

T = TypeVar("T")
Origin = Literal["builtin", "stdlib", "distribution", "user", "by_value"]

#: Our own package: every node that builds a pack has it, so it is never a requirement.
_OWN = __name__.partition(".")[0]
_MAIN_NAMES = frozenset({"__main__", "__mp_main__"})
_SUFFIXES = tuple(importlib.machinery.all_suffixes())
_BUILTIN_NAMES = frozenset(sys.builtin_module_names)


@dataclass(frozen=True)
class Source:
    """Where one module's code comes from.

    Parameters
    ----------
    module
        The module's name (``"gymnasium.envs.mujoco.ant_v5"``).
    origin
        One of :data:`Origin`.
    distribution
        For ``"distribution"``: the distribution's name as its metadata spells it
        (``"gymnasium"``, ``"PyYAML"``). None for a namespace package whose portions come from
        several distributions (its submodules name theirs).
    version
        That distribution's version, exactly as its metadata says.
    path
        The module's file (a namespace package: its first folder); None when it has none.
    editable
        The distribution is an editable install and the file lies in its project folder: the
        code is whatever that folder holds now, not a released version.
    """

    module: str
    origin: Origin
    distribution: str | None = None
    version: str | None = None
    path: str | None = None
    editable: bool = False


def source_of(module: str) -> Source:
    """Where ``module``'s code comes from (see the module docstring for the five origins).

    A loaded module is judged by the file it was loaded from; a module not loaded is located
    without importing anything (a name nothing can find is ``"user"`` with no path). Cached
    per name and file; whether it is registered by value is read on every call.

    Parameters
    ----------
    module
        A dotted module name (``"json"``, ``"numpy.linalg"``, ``"my_envs"``).

    Returns
    -------
    Source
        ``source_of("json").origin == "stdlib"``; ``source_of("numpy")`` names ``"numpy"`` and
        its version.
    """
    if _registered_by_value(module):
        return Source(module, "by_value", path=_location(module)[1])
    kind, path = _location(module)
    return _classify(module, kind, path)


def distribution_of(module: str) -> tuple[str, str] | None:
    """``(distribution, version)`` of the installed distribution that owns ``module``'s file, or
    None (the standard library, the user's own files, a module carried by value): the one
    module -> distribution lookup (a file's owner, not a guess from its top-level name).

    Parameters
    ----------
    module
        A dotted module name (``"gymnasium.envs.classic_control.cartpole"``).
    """
    src = source_of(module)
    if src.origin == "distribution" and src.distribution and src.version:
        return src.distribution, src.version
    return None


def requires_of(modules: Iterable[str]) -> dict[str, str]:
    """``{distribution: version}`` of the installed distributions that ``modules`` come from.

    specpack itself, the interpreter, the standard library, the user's own files, by-value
    modules and namespace packages shared by several distributions add nothing. An editable
    install counts as its distribution (:attr:`Source.editable` says which ones are).

    Parameters
    ----------
    modules
        Module names, e.g. those of a pack's code references and :func:`imported_during` a build.

    Returns
    -------
    dict[str, str]
        Sorted by distribution name: ``{"gymnasium": "1.4.0", "mujoco": "3.3.0"}``.
    """
    out: dict[str, str] = {}
    for name in modules:
        src = source_of(name)
        if (src.origin == "distribution" and src.distribution and src.version
                and name.partition(".")[0] != _OWN and _canonical(src.distribution) != _OWN):
            out[src.distribution] = src.version
    return dict(sorted(out.items()))


def by_value_registry() -> frozenset[str]:
    """The modules registered with ``cloudpickle.register_pickle_by_value`` (none before
    cloudpickle is imported)."""
    cloudpickle = sys.modules.get("cloudpickle")
    return frozenset(cloudpickle.list_registry_pickle_by_value()) if cloudpickle else frozenset()


def essential(requires: Mapping[str, str]) -> dict[str, str]:
    """``requires`` without the distributions that another one of them depends on (its
    ``Requires-Dist``, extras left out): installing that one installs them. ``{gymnasium,
    numpy, typing_extensions, mujoco, mujoco-core}`` is ``{gymnasium, mujoco}``. Two that depend
    on each other are both kept.

    Parameters
    ----------
    requires
        ``{distribution: version}`` (:func:`requires_of`).
    """
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
    out = set()
    for line in lines:
        spec, _, marker = line.partition(";")
        if "extra" in marker:
            continue
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if name:
            out.add(_canonical(name.group(1)))
    return frozenset(out)


def user_modules(modules: Iterable[str]) -> list[str]:
    """The names among ``modules`` whose origin is ``"user"``, in order, each once.

    These are what a self-contained pack must carry by value: a node without the user's
    project cannot import them.
    """
    return [m for m in dict.fromkeys(modules) if source_of(m).origin == "user"]


def imported_during(fn: Callable[[], T]) -> tuple[T, frozenset[str]]:
    """Run ``fn()``; return its result and the names of the modules it newly imported.

    Only modules that were not loaded before count (a module the process had already imported
    is not seen: combine with the modules of the code a pack names). Imports made by other
    threads meanwhile are counted too. An exception from ``fn`` propagates.

    Parameters
    ----------
    fn
        What to run, e.g. ``lambda: pack.make()``.

    Returns
    -------
    tuple
        ``(fn(), frozenset of dotted module names)``, submodules included.
    """
    before = set(sys.modules)
    result = fn()
    return result, frozenset(n for n in list(sys.modules) if n not in before)


# -- classification -----------------------------------------------------------------------------


def _registered_by_value(module: str) -> bool:
    cloudpickle = sys.modules.get("cloudpickle")
    if cloudpickle is None:
        return False  # nothing can be registered before cloudpickle is imported
    registry = cloudpickle.list_registry_pickle_by_value()
    if not registry:
        return False
    parts = module.split(".")
    return any(".".join(parts[:i]) in registry for i in range(1, len(parts) + 1))


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
    path = _file_of(mod) if mod is not None else None
    if path is None and spec is not None and getattr(spec, "has_location", False):
        path = origin if isinstance(origin, str) else None
    if path is not None:
        return "file", path
    locations = getattr(spec, "submodule_search_locations", None)
    if locations is None and mod is not None:
        locations = getattr(mod, "__path__", None)
    if locations is not None:
        dirs = [d for d in list(locations) if isinstance(d, str)]
        if dirs:
            return "namespace", os.pathsep.join(dirs)
    return "none", None


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


# -- the standard library -----------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _stdlib_roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stdlib folders, site folders inside or beside them that are not the stdlib)."""
    paths = sysconfig.get_paths()
    roots = {real_path(p) for k in ("stdlib", "platstdlib") if (p := paths.get(k))}
    sites = [paths.get("purelib"), paths.get("platlib")]
    try:
        sites.extend(site.getsitepackages())
    except AttributeError:  # pragma: no cover - virtualenv's old site.py
        pass
    sites.append(site.getusersitepackages() if site.ENABLE_USER_SITE else None)
    return tuple(roots), tuple({real_path(p) for p in sites if p})


@functools.lru_cache(maxsize=8192)
def _in_stdlib(path: str) -> bool:
    real = real_path(path)
    roots, sites = _stdlib_roots()
    if any(real.startswith(s + os.sep) for s in sites):
        return False
    for root in roots:
        if real.startswith(root + os.sep):
            first = real[len(root) + 1:].split(os.sep, 1)[0]
            return first not in ("site-packages", "dist-packages")
    return False


def _canonical(name: str) -> str:
    return "-".join(name.replace("_", "-").replace(".", "-").lower().split("-"))
