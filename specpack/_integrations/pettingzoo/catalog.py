"""The env modules an audit of PettingZoo walks, and what each one offers.

PettingZoo has no registry before 1.27: a family package (``pettingzoo.butterfly``) holds one
module per env and version (``pistonball_v6``) with the factories ``env`` and ``parallel_env``.
Each is imported on its own, so one family's missing system library does not hide the others.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

from ..._core._text import one_line

__all__ = ["FACTORIES", "EnvModule", "env_modules", "missing_package"]

#: The factories an env module may define, in the order the audit captures them.
FACTORIES = ("parallel_env", "env")
_ENV_MODULE = re.compile(r"^[a-z][a-z0-9_]*_v\d+$")


@dataclass
class EnvModule:
    """One env module: its name, family, the factories it defines, or why it cannot load."""

    name: str
    family: str
    factories: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    missing: str | None = None


def missing_package(exc: BaseException) -> str | None:
    """The package an import failure names (``ModuleNotFoundError.name``, or PettingZoo's
    ``DependencyNotInstalled`` hint ``pip install pettingzoo[...]``), else None."""
    node: BaseException | None = exc
    for _ in range(10):
        if node is None:
            return None
        if isinstance(node, ModuleNotFoundError) and node.name:
            return node.name.partition(".")[0]
        hint = re.search(r"pip install ['\"]?([\w\-\[\],.]+)", str(node))
        if hint:
            return hint.group(1)
        node = node.__cause__ or node.__context__
    return None


def _family_modules(package: str) -> list[str]:
    pkg = importlib.import_module(package)
    path = getattr(pkg, "__path__", None)
    if path is None:
        return [package] if _ENV_MODULE.match(package.rpartition(".")[2]) else []
    return sorted(f"{package}.{m.name}" for m in pkgutil.iter_modules(path)
                  if not m.ispkg and _ENV_MODULE.match(m.name))


def env_modules(packages: list[str]) -> list[EnvModule]:
    """Every env module of ``packages`` (``"pettingzoo.butterfly"``, or one env module), in
    name order; one that cannot be imported carries the error and the missing package."""
    out: list[EnvModule] = []
    for package in packages:
        family = package.split(".")[1] if package.count(".") >= 1 else package
        try:
            names = _family_modules(package)
        except Exception as e:  # noqa: BLE001 - a family that does not import is reported
            out.append(EnvModule(package, family, error=one_line(e), missing=missing_package(e)))
            continue
        for name in names:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    module = importlib.import_module(name)
                    factories = {f: getattr(module, f) for f in FACTORIES
                                 if callable(getattr(module, f, None))}
            except Exception as e:  # noqa: BLE001 - a missing system library, named
                out.append(EnvModule(name, family, error=one_line(e), missing=missing_package(e)))
                continue
            out.append(EnvModule(name, family, factories=factories))
    return out
