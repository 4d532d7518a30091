"""Could a fresh interpreter of this installation import a module by name?

Answered without importing anything or trusting ``sys.modules``: the top-level package must be
found on the *installation* search path, and the dotted path must lead to the file loaded now.
The script directory, the working directory and runtime ``sys.path`` additions do not count.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import os
import site
import sys
import sysconfig
import types
from typing import Any

from .names import resolve_qualname

__all__ = ["MAIN_NAMES", "fresh_importable", "non_importable_modules", "reference_of"]

MAIN_NAMES = frozenset({"__main__", "__mp_main__"})
_SCHEMES = ("stdlib", "platstdlib", "purelib", "platlib")
_EDITABLE = ("__editable__", "_editable_impl", "_pdm_", "_hatch_editable")


def _stdlib() -> list[str]:
    return [p for p in map(sysconfig.get_paths().get, _SCHEMES) if p]


def _site_packages() -> list[str]:
    try:
        return list(site.getsitepackages())
    except AttributeError:  # pragma: no cover - virtualenv's old site.py
        return []


@functools.lru_cache(maxsize=1)
def _installation_paths() -> tuple[str, ...]:
    """The search path a fresh ``python`` of this installation starts with: stdlib and site
    directories, their ``.pth`` entries and ``PYTHONPATH``."""
    stdlib = _stdlib()
    sitedirs = _site_packages()
    if site.ENABLE_USER_SITE:
        sitedirs.append(site.getusersitepackages())
    paths = stdlib + sitedirs
    for sitedir in dict.fromkeys(sitedirs + stdlib):
        try:
            names = sorted(n for n in os.listdir(sitedir) if n.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(sitedir, name), encoding="utf-8") as fh:
                    lines = fh.read().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            paths += [os.path.join(sitedir, line) for line in map(str.strip, lines)
                      if line and not line.startswith(("#", "import ", "import\t"))]
    paths += [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    # The zipped stdlib and lib-dynload live beside the stdlib: keep sys.path entries under the
    # installation prefixes.
    prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix, sys.prefix)}
    paths += [p for p in sys.path
              if p and any(os.path.realpath(p).startswith(pre + os.sep) for pre in prefixes)]
    return tuple(dict.fromkeys(
        os.path.realpath(p) for p in paths if os.path.isdir(p) or p.endswith(".zip")))


def _editable_finders() -> list[Any]:
    """Meta-path finders that editable installs (setuptools etc.) add at interpreter start."""
    return [f for f in sys.meta_path if any(
        isinstance(m, str) and m.startswith(_EDITABLE)
        for m in (getattr(f, "__module__", None), getattr(type(f), "__module__", None)))]


def _same_file(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):  # pragma: no cover
        return False


@functools.lru_cache(maxsize=4096)
def _fresh_importable_cached(modname: str, loaded_file: str | None) -> bool:
    top, _, rest = modname.partition(".")
    if (top in sys.builtin_module_names
            or importlib.machinery.FrozenImporter.find_spec(top) is not None):
        return not rest
    spec = importlib.machinery.PathFinder.find_spec(top, list(_installation_paths()))
    if spec is None:
        for finder in _editable_finders():
            try:
                spec = finder.find_spec(top, None)
            except Exception:  # noqa: BLE001 - a broken finder is no evidence
                continue
            if spec is not None:
                break
    # Walk down the package path without importing: each step must be a package on disk.
    for part in rest.split(".") if rest else ():
        if spec is None or not spec.submodule_search_locations:
            return False
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    if spec is None:
        return False
    return loaded_file is None or _same_file(spec.origin, loaded_file)


def fresh_importable(modname: str) -> bool:
    """Whether a fresh interpreter of this installation could import ``modname`` by name."""
    if modname in MAIN_NAMES:
        return False
    mod = sys.modules.get(modname)
    loaded_file = getattr(mod, "__file__", None) if mod is not None else None
    if mod is not None and loaded_file is None and getattr(mod, "__spec__", None) is None:
        return False  # built at run time (types.ModuleType): nowhere to import it from
    return _fresh_importable_cached(modname, loaded_file)


_scan: tuple[tuple[int, str | None], frozenset[str], frozenset[str]] | None = None


def non_importable_modules() -> frozenset[str]:
    """The loaded modules a fresh interpreter could not import, rescanned only when the set of
    loaded module names changed (the scan is most of a by-value capture's cost)."""
    global _scan
    modules = sys.modules
    # cheap first: the count and the newest name change whenever a module is added
    quick = (len(modules), next(reversed(modules), None))
    if _scan is not None and _scan[0] == quick:
        return _scan[2]
    names = frozenset(modules)
    if _scan is not None and _scan[1] == names:
        _scan = (quick, names, _scan[2])
        return _scan[2]
    found = frozenset(
        name
        for name, mod in list(sys.modules.items())
        if name not in MAIN_NAMES
        and mod is not None
        and getattr(mod, "__file__", None)
        and not name.startswith(("specpack", "gymnasium", "gym.", "numpy", "cloudpickle"))
        and name != "gym"
        and not _in_site_or_stdlib(getattr(mod, "__file__", ""))
        and not fresh_importable(name)
    )
    _scan = (quick, names, found)
    return found


@functools.lru_cache(maxsize=1)
def _site_and_stdlib() -> tuple[str, ...]:
    return tuple({os.path.realpath(p) for p in _stdlib() + _site_packages()})


@functools.lru_cache(maxsize=8192)
def _in_site_or_stdlib(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real.startswith(p + os.sep) for p in _site_and_stdlib())


def reference_of(obj: Any) -> tuple[str, str] | None:
    """``(module, qualname)`` under which ``obj`` can be looked up in this process, or None:
    a classmethod bound to its class counts (each lookup binds an equal method), a method
    bound to an instance does not (the instance is state, not a name)."""
    modname = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(modname, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    mod = sys.modules.get(modname)
    if mod is None:
        return None
    try:
        found = resolve_qualname(mod, qualname)
    except AttributeError:
        return None
    if found is obj or (type(obj) is types.MethodType and isinstance(obj.__self__, type)
                        and found == obj):
        return (modname, qualname)
    return None
