# stand-in: replaced at merge by helper P's module
"""Where a module's code comes from (stand-in with the contract's names, for the wiring)."""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

from .errors import BuildError, VersionSkewWarning

__all__ = ["Origin", "Source", "check_requires", "imported_during", "requires_of",
           "source_of", "user_modules"]

T = TypeVar("T")
Origin = Literal["builtin", "stdlib", "distribution", "user", "by_value"]


@dataclass(frozen=True)
class Source:
    """Where one module's code comes from."""

    module: str
    origin: Origin
    distribution: str | None = None
    version: str | None = None
    path: str | None = None


def _stdlib_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(os.path.realpath(paths[k]) + os.sep for k in ("stdlib", "platstdlib"))


@functools.lru_cache(maxsize=4096)
def source_of(module: str) -> Source:
    """The origin of ``module`` (loaded in ``sys.modules``)."""
    from .versions import distribution_of

    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    if mod is None or not isinstance(path, str):
        return Source(module, "builtin")
    real = os.path.realpath(path)
    dist = distribution_of(module)
    if dist is not None:
        return Source(module, "distribution", dist[0], dist[1], real)
    if real.startswith(_stdlib_dirs()) and "site-packages" not in real:
        return Source(module, "stdlib", path=real)
    return Source(module, "user", path=real)


def requires_of(modules: Iterable[str]) -> dict[str, str]:
    """``{distribution: version}`` of the modules that come from installed distributions."""
    out: dict[str, str] = {}
    for name in modules:
        src = source_of(name)
        if src.origin == "distribution" and src.distribution and src.version:
            if src.distribution.lower() != "specpack":
                out[src.distribution] = src.version
    return dict(sorted(out.items()))


def imported_during(fn: Callable[[], T]) -> tuple[T, frozenset[str]]:
    """``fn()`` and the module names it newly imported."""
    before = set(sys.modules)
    out = fn()
    return out, frozenset(set(sys.modules) - before)


def check_requires(requires: Mapping[str, str], *, label: str) -> None:
    """Refuse a missing required distribution; warn for a different version."""
    import importlib.metadata as md

    for name, version in requires.items():
        try:
            here = md.version(name)
        except md.PackageNotFoundError:
            raise BuildError(
                f"{label} needs the distribution {name} {version}, which is not installed "
                f"here: pip install {name}=={version}") from None
        if here != version:
            warnings.warn(f"{label} was captured with {name} {version}, here is {name} {here}; "
                          "run pack.check() on a sealed pack to prove the rebuild",
                          VersionSkewWarning, stacklevel=4)


def user_modules(modules: Iterable[str]) -> list[str]:
    """The modules of origin ``"user"``."""
    return sorted(m for m in modules if source_of(m).origin == "user")
