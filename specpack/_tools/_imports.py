"""The one ``--import`` of every subcommand and of :func:`specpack.audit` (``imports=``):
import the modules that register envs, by name or from a ``.py`` file."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .._core._errors import CaptureError
from .._core._text import one_line, printable

__all__ = ["import_targets"]


def import_targets(names: Sequence[str], *, option: str = "--import") -> list[str]:
    """Import each of ``names`` (every one checked first); return the module names imported.

    A module name is searched among the installed packages, then in the working directory (a
    console script does not put it on the path); a ``.py`` path is loaded as the module named
    after its stem. ``option`` names the list in a :class:`CaptureError`.
    """
    if isinstance(names, str):
        names = [names]
    for name in names:
        _check_name(name, option)
    return [_import_one(name, option) for name in names]


def _check_name(name: object, option: str) -> None:
    if not isinstance(name, str) or not name:
        raise CaptureError(f"{option} {name!r}: expected a module name or a path ending in .py")
    if name.endswith(".py") or all(part.isidentifier() for part in name.split(".")):
        return
    raise CaptureError(
        f"{option} {printable(name, 80)!r}: not a module name or a .py file; give a module "
        "name (my_pkg.envs) or the path of a Python file (envs/ant_envs.py)"
    )


def _import_one(name: str, option: str) -> str:
    try:
        if name.endswith(".py"):
            return _load_file(name, option)
        cwd = os.getcwd()  # searched too, after the installed packages
        if "" not in sys.path and cwd not in sys.path:
            sys.path.append(cwd)
        importlib.import_module(name)
        return name
    except (CaptureError, KeyboardInterrupt):
        raise
    except ModuleNotFoundError as e:
        if e.name and (name == e.name or name.startswith(e.name + ".")):
            raise CaptureError(
                f"{option} {name}: no module named {e.name!r} among the installed packages or "
                f"in the working directory ({os.getcwd()}); check the name and that it is "
                "installed"
            ) from None
        raise _failed(name, option, e) from e
    except BaseException as e:  # a module may even call sys.exit()
        raise _failed(name, option, e) from e


def _failed(name: str, option: str, e: BaseException) -> CaptureError:
    return CaptureError(f"{option} {name}: importing the module raised {one_line(e)}")


def _load_file(name: str, option: str) -> str:
    path = Path(name)
    if not path.is_file():
        raise CaptureError(f"{option} {name}: no such file")
    real = os.path.realpath(path)
    modname = path.stem
    loaded = sys.modules.get(modname)
    if loaded is not None:
        if _same_file(getattr(loaded, "__file__", None), real):
            return modname
        where = getattr(loaded, "__file__", None) or "built in"
        raise CaptureError(
            f"{option} {name}: a module named {modname!r} is already loaded (from {where}); "
            "rename the file so its name does not hide that module"
        )
    spec = importlib.util.spec_from_file_location(modname, real)
    if spec is None or spec.loader is None:
        raise CaptureError(f"{option} {name}: cannot load this file as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        # As a failed import does: no half-run module stays behind under that name.
        if sys.modules.get(modname) is module:
            del sys.modules[modname]
        raise
    return modname


def _same_file(a: str | None, b: str) -> bool:
    if not a:
        return False
    try:
        return os.path.realpath(a) == b
    except (OSError, ValueError):
        return False
