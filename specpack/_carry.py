"""Carrying code across a process boundary: by reference or by value.

A class or function is kept **by reference** (``"module:qualname"``) when a fresh interpreter
started from the same installation could import it under that name, and **by value** (a
cloudpickle payload made at capture time) when it could not: code defined in ``__main__``, in a
module loaded from a file path, in a module found only through a runtime ``sys.path`` entry,
local classes, lambdas and closures.

"Could a fresh interpreter import it?" is answered without importing anything and without
trusting ``sys.modules`` (membership there is not evidence): the module's top-level package
must be findable on the *installation* search path (stdlib, site-packages, ``.pth`` entries,
``PYTHONPATH``) and the dotted path must lead to the same file that is loaded now.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.machinery
import os
import site
import sys
import sysconfig
import threading
import types
from typing import Any

from .errors import BuildError, CaptureError

__all__ = ["CodeRef", "code_ref", "fresh_importable"]

_PY = f"{sys.version_info[0]}.{sys.version_info[1]}"
_MAIN_NAMES = frozenset({"__main__", "__mp_main__"})


@functools.lru_cache(maxsize=1)
def _installation_paths() -> tuple[str, ...]:
    """The module search path a fresh ``python`` of this installation starts with.

    That is the stdlib and site directories, the entries added by ``.pth`` files in them and
    ``PYTHONPATH``; not the script directory, the working directory or runtime additions.
    """
    paths: list[str] = []
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            paths.append(p)
    sitedirs: list[str] = []
    try:
        sitedirs.extend(site.getsitepackages())
    except AttributeError:  # pragma: no cover - virtualenv's old site.py
        pass
    if site.ENABLE_USER_SITE:
        sitedirs.append(site.getusersitepackages())
    paths.extend(sitedirs)
    for sitedir in dict.fromkeys(sitedirs + paths):
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
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                paths.append(os.path.join(sitedir, line))
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p:
            paths.append(os.path.abspath(p))
    # The zipped stdlib and lib-dynload live beside the stdlib: keep sys.path entries under the
    # installation prefixes.
    prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix, sys.prefix)}
    for p in sys.path:
        if p and any(os.path.realpath(p).startswith(pre + os.sep) for pre in prefixes):
            paths.append(p)
    return tuple(dict.fromkeys(os.path.realpath(p) for p in paths if os.path.isdir(p) or p.endswith(".zip")))


def _editable_finders() -> list[Any]:
    """Meta-path finders installed at interpreter start by editable installs (setuptools etc.)."""
    out = []
    for finder in sys.meta_path:
        mods = (getattr(finder, "__module__", None), getattr(type(finder), "__module__", None))
        if any(
            isinstance(m, str)
            and m.startswith(("__editable__", "_editable_impl", "_pdm_", "_hatch_editable"))
            for m in mods
        ):
            out.append(finder)
    return out


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
    if top in sys.builtin_module_names:
        return not rest
    if importlib.machinery.FrozenImporter.find_spec(top) is not None:
        return not rest
    spec = importlib.machinery.PathFinder.find_spec(top, list(_installation_paths()))
    if spec is None:
        for finder in _editable_finders():
            try:
                spec = finder.find_spec(top, None)
            except Exception:  # noqa: BLE001 - a broken finder is no evidence
                spec = None
            if spec is not None:
                break
    if spec is None:
        return False
    if not rest:
        return loaded_file is None or _same_file(spec.origin, loaded_file)
    # Walk down the package path without importing: each step must be a package on disk.
    locations = spec.submodule_search_locations
    parts = rest.split(".")
    for i, part in enumerate(parts):
        if not locations:
            return False
        sub = importlib.machinery.PathFinder.find_spec(part, list(locations))
        if sub is None:
            return False
        if i == len(parts) - 1:
            return loaded_file is None or _same_file(sub.origin, loaded_file)
        locations = sub.submodule_search_locations
    return False  # pragma: no cover


def fresh_importable(modname: str) -> bool:
    """Whether a fresh interpreter of this installation could import ``modname`` by name."""
    if modname in _MAIN_NAMES:
        return False
    mod = sys.modules.get(modname)
    loaded_file = getattr(mod, "__file__", None) if mod is not None else None
    if mod is not None and loaded_file is None and getattr(mod, "__spec__", None) is None:
        return False  # built at run time (types.ModuleType): nowhere to import it from
    return _fresh_importable_cached(modname, loaded_file)


def _resolve_qualname(module: types.ModuleType, qualname: str) -> Any:
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def reference_of(obj: Any) -> tuple[str, str] | None:
    """``(module, qualname)`` under which ``obj`` can be looked up in this process, or None."""
    modname = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(modname, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    mod = sys.modules.get(modname)
    if mod is None:
        return None
    try:
        found = _resolve_qualname(mod, qualname)
    except AttributeError:
        return None
    return (modname, qualname) if found is obj else None


_pickle_lock = threading.Lock()
_load_lock = threading.Lock()
_loaded: dict[str, Any] = {}


def _dumps_by_value(obj: Any, modules: set[str]) -> bytes:
    """cloudpickle ``obj`` by value, also for code living in non-importable named modules."""
    import cloudpickle

    with _pickle_lock:
        registered = []
        try:
            for name in sorted(modules):
                mod = sys.modules.get(name)
                if mod is None or name in _MAIN_NAMES:
                    continue
                try:
                    cloudpickle.register_pickle_by_value(mod)
                    registered.append(mod)
                except ValueError:
                    pass
            return bytes(cloudpickle.dumps(obj, protocol=4))
        finally:
            for mod in registered:
                try:
                    cloudpickle.unregister_pickle_by_value(mod)
                except ValueError:  # pragma: no cover
                    pass


def portable_dumps(obj: Any, *, force_modules: set[str] | None = None) -> bytes:
    """cloudpickle ``obj`` so that a fresh interpreter can load it.

    Modules that a fresh interpreter could not import (file-loaded, runtime ``sys.path``) are
    registered for pickling by value for the duration of the call; ``__main__`` is by value
    already in cloudpickle.
    """
    modules = set(_non_importable_modules())
    if force_modules:
        modules |= force_modules
    return _dumps_by_value(obj, modules)


_scan: tuple[frozenset[str], frozenset[str]] | None = None


def _non_importable_modules() -> frozenset[str]:
    """The loaded modules a fresh interpreter could not import, rescanned only when the set of
    loaded module names changed (the scan is most of a by-value capture's cost)."""
    global _scan
    names = frozenset(sys.modules)
    if _scan is not None and _scan[0] == names:
        return _scan[1]
    found = frozenset(
        name
        for name, mod in list(sys.modules.items())
        if name not in _MAIN_NAMES
        and mod is not None
        and getattr(mod, "__file__", None)
        and not name.startswith(("specpack", "gymnasium", "gym.", "numpy", "cloudpickle"))
        and name != "gym"
        and not _is_stdlib_or_site(getattr(mod, "__file__", ""))
        and not fresh_importable(name)
    )
    _scan = (names, found)
    return found


@functools.lru_cache(maxsize=8192)
def _is_stdlib_or_site_cached(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real.startswith(p + os.sep) for p in _site_and_stdlib())


def _is_stdlib_or_site(path: str) -> bool:
    return bool(path) and _is_stdlib_or_site_cached(path)


@functools.lru_cache(maxsize=1)
def _site_and_stdlib() -> tuple[str, ...]:
    paths = [sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    try:
        paths.extend(site.getsitepackages())
    except AttributeError:  # pragma: no cover
        pass
    return tuple({os.path.realpath(p) for p in paths if p})


class CodeRef:
    """A class or function, carried by reference (``module:qualname``) or by value (payload).

    Immutable and hashable by content. ``load()`` returns the object in this process: by
    reference it imports the module; by value it unpickles the payload once per process (the
    result is cached by digest, so every rebuild in a process shares one class object).
    """

    __slots__ = ("_digest", "_obj", "module", "payload", "python", "qualname")

    module: str
    qualname: str
    payload: bytes | None
    python: str | None
    _digest: str | None
    _obj: Any

    def __init__(
        self, module: str, qualname: str, payload: bytes | None = None, python: str | None = None
    ) -> None:
        object.__setattr__(self, "module", module)
        object.__setattr__(self, "qualname", qualname)
        object.__setattr__(self, "payload", payload)
        object.__setattr__(self, "python", python if payload is not None else None)
        object.__setattr__(self, "_digest", None)
        object.__setattr__(self, "_obj", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"CodeRef is immutable (cannot set {name!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (CodeRef, (self.module, self.qualname, self.payload, self.python))

    @property
    def by_value(self) -> bool:
        """True when the code travels as a cloudpickle payload."""
        return self.payload is not None

    @property
    def name(self) -> str:
        """``module:qualname``, as written in entry points."""
        return f"{self.module}:{self.qualname}"

    @property
    def digest(self) -> str | None:
        """``sha256:<hex>`` of the payload (None for a reference)."""
        if self.payload is None:
            return None
        if self._digest is None:
            object.__setattr__(self, "_digest", "sha256:" + hashlib.sha256(self.payload).hexdigest())
        return self._digest

    def _key(self) -> tuple[Any, ...]:
        return (self.module, self.qualname, self.digest, self.python)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CodeRef) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if self.payload is None:
            return f"CodeRef({self.name!r})"
        return f"CodeRef({self.name!r}, by_value, {len(self.payload)} bytes, {self.digest})"

    def load(self) -> Any:
        """The object itself, in this process (cached after the first call)."""
        obj = self._obj
        if obj is not None:
            return obj
        obj = self._load()
        object.__setattr__(self, "_obj", obj)
        return obj

    def _load(self) -> Any:
        if self.payload is None:
            try:
                mod = importlib.import_module(self.module)
                return _resolve_qualname(mod, self.qualname)
            except Exception as e:
                raise BuildError(
                    f"cannot import {self.name} in this process ({type(e).__name__}: {e}); "
                    "install the package that provides it here, or capture with by_value=True"
                ) from e
        digest = self.digest
        assert digest is not None
        if self.python is None:
            raise BuildError(
                f"{self.name} is carried by value but its record says nothing about the Python "
                f"version it was pickled under; capture the pack again under Python {_PY}"
            )
        if self.python != _PY:
            raise BuildError(
                f"{self.name} was carried by value under Python {self.python} and cannot be "
                f"loaded under Python {_PY}: cloudpickle payloads are tied to the Python minor "
                f"version; capture the pack again under Python {_PY}, or make the code importable "
                "so it travels by reference"
            )
        obj = _loaded.get(digest)
        if obj is not None:
            return obj
        import cloudpickle

        with _load_lock:
            obj = _loaded.get(digest)
            if obj is None:
                try:
                    obj = cloudpickle.loads(self.payload)
                except Exception as e:
                    raise BuildError(
                        f"cannot load {self.name} carried by value ({type(e).__name__}: {e}); "
                        "a module it needs is missing here"
                    ) from e
                _loaded[digest] = obj
        return obj


_ref_cache: dict[Any, CodeRef] = {}


def code_ref(obj: Any, *, by_value: bool | None = None, what: str = "entry point") -> CodeRef:
    """The :class:`CodeRef` for a class or function, deciding by reference vs by value.

    ``by_value=None`` decides by fresh importability; ``True``/``False`` force the choice
    (``False`` still needs a name under which the object can be looked up).
    """
    if by_value is None:
        try:
            cached = _ref_cache.get(obj)
        except TypeError:  # unhashable callable
            cached = None
        if cached is not None and cached._obj is obj:
            return cached
    ref = reference_of(obj)
    if by_value is None:
        by_value = ref is None or not fresh_importable(ref[0])
    if not by_value:
        if ref is None:
            raise CaptureError(
                f"the {what} {obj!r} has no importable name (it is a lambda, a closure or a "
                "local class); it can only travel by value: drop by_value=False"
            )
        out = CodeRef(ref[0], ref[1])
        object.__setattr__(out, "_obj", obj)
        try:
            _ref_cache[obj] = out
        except TypeError:
            pass
        return out
    modname = getattr(obj, "__module__", None) or "__main__"
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    force: set[str] = set()
    if isinstance(modname, str) and modname not in _MAIN_NAMES and modname in sys.modules:
        force.add(modname)
    try:
        payload = portable_dumps(obj, force_modules=force)
    except Exception as e:
        raise CaptureError(
            f"the {what} {modname}:{qualname} cannot be carried by value "
            f"({type(e).__name__}: {e}); move it to an importable module"
        ) from e
    return CodeRef(str(modname), str(qualname), payload, _PY)


def code_ref_from_string(entry: str, *, by_value: bool | None, what: str) -> tuple[CodeRef, Any]:
    """Resolve a ``"module:attr"`` entry point here, in the parent, and carry it."""
    modname, sep, attr = entry.partition(":")
    if not sep or not modname or not attr:
        raise CaptureError(
            f"the {what} {entry!r} is not of the form 'module:attr'; "
            "give a 'package.module:ClassName' string or the class itself"
        )
    if modname == "__mp_main__":
        modname = "__main__"
    key = (entry, by_value)
    hit = _string_cache.get(key)
    if hit is not None and sys.modules.get(modname) is hit[2]:
        return hit[0], hit[1]
    try:
        mod = importlib.import_module(modname)
        obj = _resolve_qualname(mod, attr)
    except Exception as e:
        raise CaptureError(
            f"cannot load the {what} {entry!r} ({type(e).__name__}: {e}); check the module "
            "is importable here and defines that name"
        ) from e
    if not callable(obj):
        raise CaptureError(
            f"the {what} {entry!r} resolves to {obj!r}, which is not callable; "
            "point it at an env class or a factory function"
        )
    if by_value is False or (
        by_value is None and modname not in _MAIN_NAMES and fresh_importable(modname)
    ):
        # The string itself is the reference a fresh interpreter will resolve.
        if modname in _MAIN_NAMES:
            raise CaptureError(
                f"the {what} {entry!r} lives in __main__, which a worker cannot import by name; "
                "drop by_value=False so it travels by value"
            )
        ref = CodeRef(modname, attr)
        object.__setattr__(ref, "_obj", obj)
        _string_cache[key] = (ref, obj, mod)
        return ref, obj
    return code_ref(obj, by_value=True, what=what), obj


_string_cache: dict[tuple[str, bool | None], tuple[CodeRef, Any, Any]] = {}
