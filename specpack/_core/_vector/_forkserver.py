"""Fast forkserver starts: the modules a pack's workers import join the forkserver's preload
list (which counts only if the forkserver is not running yet), so each worker forks with them
loaded."""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import multiprocessing.popen_forkserver
import multiprocessing.queues
from collections.abc import Iterable

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

__all__ = ["forkserver_modules", "merge_forkserver_preload", "warm_forkserver"]

#: Imported last: freezes what the server imported (see the module).
_FROZEN = f"{__package__}._frozen"


def _base_modules(backend: str) -> list[str]:
    """What every worker of a ``backend`` pack imports (the multiprocessing modules: to
    unpickle its pipes' fd handles and gymnasium's error queue). The backend's module brings its
    build path; not its capture side, which no worker loads (~6 ms of the server's start)."""
    return [  # specpack first: its import pauses the GC while gymnasium and numpy load
        "specpack", np.__name__, cloudpickle.__name__, gymnasium.__name__,
        AsyncVectorEnv.__module__, multiprocessing.popen_forkserver.__name__,
        multiprocessing.queues.__name__, SpecPack.__module__, factory.__name__,
        check_skew.__module__, type(get_backend(backend)).__module__,
    ]


def forkserver_modules(*packs: SpecPack) -> list[str]:
    """The modules a forkserver should preload so that workers of ``packs`` start fast.

    specpack, numpy, cloudpickle, gymnasium and specpack's build path, the modules of the code
    the packs carry by reference that a fresh interpreter can import (never ``__main__``), and
    last a module that freezes what the server imported (``gc.freeze``), so that no worker's
    GC walks and copies it.

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
    for backend in [pack.backend for pack in packs] or ["gymnasium"]:
        out.update(dict.fromkeys(_base_modules(backend)))
    for pack in packs:
        for item in pack.carried():
            if isinstance(item, CodeRef) and not item.by_value:
                mod = item.module
                if mod not in MAIN_NAMES and fresh_importable(mod):
                    out[mod] = None
    return [*out, _FROZEN]


def warm_forkserver(*packs: SpecPack, modules: Iterable[str] = ()) -> list[str]:
    """Start the forkserver now, preloading what ``packs`` need; return its preload list.

    The forkserver imports its preload list once, when it starts, and the first forkserver
    ``make_vec`` otherwise waits for that import: call this early (before importing your
    learning library, say) and it runs in the background meanwhile. ``modules`` adds more, e.g.
    so that SB3's ``SubprocVecEnv`` workers do not each import SB3 and torch::

        specpack.vector.warm_forkserver(pack, modules=["stable_baselines3"])

    The list is merged with the one already set (by you, or the default ``['__main__']``); a
    forkserver already running keeps the list it started with.

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
    multiprocessing.forkserver.ensure_running()
    return merged


def merge_forkserver_preload(modules: Iterable[str]) -> list[str]:
    """Add ``modules`` to the forkserver preload list, keeping what is there (and its order)."""
    state = getattr(multiprocessing.forkserver, "_forkserver", None)
    current = getattr(state, "_preload_modules", None)
    existing = list(current) if isinstance(current, (list, tuple)) else ["__main__"]
    merged = list(dict.fromkeys([*existing, *(m for m in modules if m not in MAIN_NAMES)]))
    if _FROZEN in merged:  # last, whatever came after it
        merged = [*(m for m in merged if m != _FROZEN), _FROZEN]
    if merged != existing:
        multiprocessing.get_context("forkserver").set_forkserver_preload(merged)
    return merged
