"""Could a fresh interpreter of this installation import a module by name? Answered without
importing: the top-level package must be on the *installation* search path (not the script or
working directory, nor runtime ``sys.path`` additions), the dotted path lead to the loaded file."""

from __future__ import annotations

import contextlib
import functools
import os
import pathlib
import site
import sys
import sysconfig
import types
from importlib.machinery import FrozenImporter, PathFinder
from typing import Any

from .allowlist import resolve_qualname

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
                lines = pathlib.Path(sitedir, name).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            paths += [os.path.join(sitedir, line) for line in map(str.strip, lines)
                      if line and not line.startswith(("#", "import ", "import\t"))]
    paths += [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    # keep sys.path entries under the installation prefixes (the zipped stdlib, lib-dynload)
    prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix, sys.prefix)}
    paths += [p for p in sys.path
              if p and any(os.path.realpath(p).startswith(pre + os.sep) for pre in prefixes)]
    return tuple(dict.fromkeys(
        os.path.realpath(p) for p in paths if os.path.isdir(p) or p.endswith(".zip")))


def _editable_spec(top: str) -> Any:
    """The spec of ``top`` from a meta-path finder an editable install (setuptools etc.) adds."""
    for f in sys.meta_path:
        if any(isinstance(m, str) and m.startswith(_EDITABLE)
               for m in (getattr(f, "__module__", None), getattr(type(f), "__module__", None))):
            with contextlib.suppress(Exception):  # a broken finder is no evidence
                spec = f.find_spec(top, None)
                if spec is not None:
                    return spec
    return None


@functools.lru_cache(maxsize=4096)
def _fresh_importable_cached(modname: str, loaded_file: str | None) -> bool:
    top, _, rest = modname.partition(".")
    if top in sys.builtin_module_names or FrozenImporter.find_spec(top) is not None:
        return not rest
    spec = PathFinder.find_spec(top, list(_installation_paths())) or _editable_spec(top)
    # Walk down the package path without importing: each step must be a package on disk.
    for part in rest.split(".") if rest else ():
        if spec is None or not spec.submodule_search_locations:
            return False
        spec = PathFinder.find_spec(part, list(spec.submodule_search_locations))
    if spec is None or loaded_file is None:
        return spec is not None
    try:
        return bool(spec.origin and loaded_file
                    and os.path.realpath(spec.origin) == os.path.realpath(loaded_file))
    except (OSError, ValueError):  # pragma: no cover
        return False


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
        name for name, mod in list(sys.modules.items())
        if name not in MAIN_NAMES and getattr(mod, "__file__", None)
        and not (name + ".").startswith(("specpack", "gymnasium", "gym.", "numpy", "cloudpickle"))
        and not _in_site_or_stdlib(mod.__file__) and not fresh_importable(name))
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
    try:
        found = resolve_qualname(sys.modules[modname], qualname)
    except (KeyError, AttributeError):  # not loaded, or no such name
        return None
    if found is obj or (type(obj) is types.MethodType and isinstance(obj.__self__, type)
                        and found == obj):
        return (modname, qualname)
    return None
