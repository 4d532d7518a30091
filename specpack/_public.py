"""The public line: where users import each name, and the old paths pickles still name.

specpack's code lives in ``_`` modules; what users import is re-exported by a public module
(``specpack``, ``specpack.vector``, ``specpack.files``, ``specpack.adapters``). As in httpx,
:func:`claim` tells each re-exported class and function where users import it, so reprs,
tracebacks, ``help()`` and pickles of the class itself say ``specpack.SpecPack``, not
``specpack._pack.SpecPack``. Pickling is kept: pickle finds a class by ``__module__`` +
``__qualname__``, and the public module exports it under that name.

Pickles name globals by module path, and packs pickled by earlier releases name modules that
no longer exist: ``specpack.pack._restore`` (0.1.0, 0.2.0), ``specpack.carry.code.CodeRef``,
``specpack.carry.values._rebuild_array`` (0.2.0), ``specpack.layer.Layer``, ... The
tree keeps no module at those paths (they would be public-looking modules nobody should
import). Instead :class:`LegacyFinder`, put on :data:`sys.meta_path` after the path finder
by ``import specpack``, answers only when no real module has the name: for a module path that
:data:`specpack._pickled.LEGACY_NAMES` names, it makes a stand-in module whose attributes are
the objects ``LEGACY_NAMES`` gives, so plain ``pickle.loads`` resolves the old path to
today's object. Old paths that are still real modules (``specpack._carry``, ``specpack._values``,
``specpack._surface``) resolve by themselves. Installing the finder imports nothing; the
first old path looked up loads :mod:`specpack._pickled`, which an unpickle loads anyway.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._restorer import claim

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

__all__ = ["LegacyFinder", "claim", "install_legacy_finder", "legacy_modules"]


# --- old paths ---------------------------------------------------------------------------------

_PREFIX = "specpack."
_busy: list[bool] = []  # set while LEGACY_NAMES is being read (its own imports pass through)


def _legacy_names() -> dict[str, Any]:
    from ._pickled import LEGACY_NAMES

    return LEGACY_NAMES


def legacy_modules() -> frozenset[str]:
    """Every module path an old pickle may name, with the packages above it (not ``specpack``)."""
    out: set[str] = set()
    for path in _legacy_names():
        parts = path.split(".")[:-1]
        out.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
    return frozenset(out)


def _lookup(module: str, name: str) -> Any:
    """A stand-in module's attribute: the object ``LEGACY_NAMES`` gives for ``module.name``."""
    try:
        return _legacy_names()[f"{module}.{name}"]
    except KeyError:
        raise AttributeError(
            f"module {module!r} (an old path kept for old pickles) has no attribute {name!r}; "
            "import specpack's public names from 'specpack'") from None


class LegacyFinder:
    """Finds and loads the stand-in modules of old pickle paths (after the path finder).

    A meta path finder and loader by protocol: subclassing ``importlib.abc``'s would make
    ``import specpack`` import :mod:`importlib.resources`, :mod:`tempfile` and more.
    """

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> ModuleSpec | None:
        """A spec for ``fullname`` if it is an old pickle path no real module has, else None."""
        if not fullname.startswith(_PREFIX) or _busy:
            return None
        _busy.append(True)
        try:
            known = fullname in legacy_modules()
        finally:
            _busy.pop()
        if not known:
            return None
        from importlib.machinery import ModuleSpec

        loader: Any = self  # a loader by protocol (create_module, exec_module)
        return ModuleSpec(fullname, loader, is_package=True)

    def create_module(self, spec: ModuleSpec) -> None:
        """The default module object."""
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        """Make ``module`` a stand-in: its attributes come from ``LEGACY_NAMES``."""
        name = module.__name__
        module.__doc__ = (f"Old path {name!r}, kept so that old pickles load "
                          "(see specpack._public); import from 'specpack' instead.")
        module.__path__ = []  # a package, so that deeper old paths resolve too

        def __getattr__(attr: str) -> Any:
            return _lookup(name, attr)

        module.__getattr__ = __getattr__  # type: ignore[method-assign]


def install_legacy_finder() -> None:
    """Put one :class:`LegacyFinder` on ``sys.meta_path`` (once per interpreter).

    Right after the path finder, which finds every real module: no real module is shadowed,
    and a finder installed later (an editable install of another checkout) cannot serve an
    old path from elsewhere.
    """
    if any(isinstance(f, LegacyFinder) for f in sys.meta_path):
        return
    at = len(sys.meta_path)
    for i, finder in enumerate(sys.meta_path):
        if getattr(finder, "__name__", None) == "PathFinder":
            at = i + 1
    sys.meta_path.insert(at, LegacyFinder())
