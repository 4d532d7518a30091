"""Fast forkserver starts: preload what a pack's workers need, once, in the forkserver.

For ``context="forkserver"`` the modules a pack's workers need (gymnasium, numpy, cloudpickle,
specpack's own build path for the pack's backend, and the importable modules of the code the
pack carries by reference; never ``__main__``) are merged into the forkserver's preload list,
so each worker forks with them loaded. This takes effect only if the forkserver is not
running yet; :func:`warm_forkserver` starts it early, in the background.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import multiprocessing.popen_forkserver
import multiprocessing.queues
import sys
from collections.abc import Iterable
from typing import Any

import cloudpickle
import gymnasium
import numpy as np
from gymnasium.vector import AsyncVectorEnv

from .._backends import get_backend
from .._carry.code import CodeRef
from .._carry.importable import MAIN_NAMES, fresh_importable
from .._errors import SpecPackError
from .._pack import SpecPack
from .._versions import check_skew
from . import _factory as factory

__all__ = ["forkserver_modules", "start_forkserver", "warm_forkserver"]


def _base_modules(backend: str) -> list[str]:
    """What every worker of a ``backend`` pack imports, derived from the objects it uses.

    The two multiprocessing modules are what a forkserver child imports to unpickle its
    arguments (the fd handles of its pipes; gymnasium's error queue): once in the forkserver
    instead of once per worker.
    """
    package = type(get_backend(backend)).__module__
    return [
        np.__name__, cloudpickle.__name__, gymnasium.__name__, AsyncVectorEnv.__module__,
        multiprocessing.popen_forkserver.__name__, multiprocessing.queues.__name__,
        "specpack", SpecPack.__module__, factory.__name__, check_skew.__module__, package,
        *sorted(m for m in list(sys.modules) if m.startswith(package + ".")),
    ]


def forkserver_modules(*packs: SpecPack) -> list[str]:
    """The modules a forkserver should preload so that workers of ``packs`` start fast.

    gymnasium, numpy, cloudpickle and specpack's own build path, plus the modules of every
    piece of code the packs carry by reference (entry point, wrappers, callables in kwargs) that
    a fresh interpreter can import by name. Never ``__main__``, never code carried by value.

    Parameters
    ----------
    *packs
        The packs whose workers the forkserver will start (none: the base list).

    Returns
    -------
    list[str]
        Module names, in import order.
    """
    out: dict[str, None] = {}
    for pack in packs or ():
        out.update(dict.fromkeys(_base_modules(pack.backend)))
    if not packs:
        out.update(dict.fromkeys(_base_modules("gymnasium")))
    for pack in packs:
        for item in pack.carried():
            if isinstance(item, CodeRef) and not item.by_value:
                mod = item.module
                if mod not in MAIN_NAMES and fresh_importable(mod):
                    out[mod] = None
    return list(out)


def warm_forkserver(*packs: SpecPack, modules: Iterable[str] = ()) -> list[str]:
    """Start the forkserver now, preloading what ``packs`` need; return its preload list.

    The forkserver imports its preload list once, when it starts; the first forkserver
    ``make_vec`` of a process otherwise waits for that import. Call this early (for example
    before importing your learning library or building a model) and the import runs in the
    background meanwhile. ``modules`` adds more, e.g. ``["stable_baselines3"]`` so that SB3's
    ``SubprocVecEnv`` workers (forkserver by default) do not each import SB3 and torch::

        specpack.vector.warm_forkserver(pack, modules=["stable_baselines3"])

    The list is merged with the one already set (by you, or the default ``['__main__']``).
    If the forkserver is running already, nothing changes: it read its list when it started.

    Parameters
    ----------
    *packs
        Packs whose modules to preload (see :func:`forkserver_modules`).
    modules
        More module names to preload.

    Returns
    -------
    list[str]
        The forkserver's preload list after the merge.

    Raises
    ------
    SpecPackError
        An entry of ``modules`` is not a module name.
    """
    for m in modules:
        if not isinstance(m, str):
            raise SpecPackError(f"warm_forkserver: modules must be module names, got {m!r}")
    merged = merge_forkserver_preload([*forkserver_modules(*packs), *modules])
    start_forkserver()
    return merged


def start_forkserver() -> None:
    """Start the forkserver if it is not running: it imports its preload list in the background
    (``make_vec`` calls this before its own set-up, so that import overlaps it)."""
    multiprocessing.forkserver.ensure_running()


def _forkserver_state() -> Any:
    return getattr(multiprocessing.forkserver, "_forkserver", None)


def merge_forkserver_preload(modules: Iterable[str]) -> list[str]:
    """Add ``modules`` to the forkserver preload list, keeping what is there (and its order)."""
    state = _forkserver_state()
    current = getattr(state, "_preload_modules", None)
    existing = list(current) if isinstance(current, (list, tuple)) else ["__main__"]
    merged = list(dict.fromkeys([*existing, *(m for m in modules if m not in MAIN_NAMES)]))
    if merged != existing:
        multiprocessing.get_context("forkserver").set_forkserver_preload(merged)
    return merged


