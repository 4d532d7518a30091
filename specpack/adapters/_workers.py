"""Env factories for other libraries' worker processes: nothing is built where they are made.

:class:`WorkerEnvFn` (``make_vec``'s async workers use it too) returns a :class:`ParentView` of
the pack's recorded spaces in the process that made it, and ``pack.make(**env_kwargs)`` in any
other, checked against the spaces the parent was shown. Also :func:`import_library`, the
adapters' import of the library they serve.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._core._errors import BackendUnavailableError
from .._core._pack import SpecPack
from .._core._vector._factory import WorkerEnvFn
from .._core._vector._make import per_env_kwargs
from .._core._vector._view import ParentView

__all__ = ["ParentView", "WorkerEnvFn", "import_library", "worker_env_fn", "worker_env_fns"]


def import_library(module: str, adapter: str, library: str, install: str) -> Any:
    """``module`` imported, or :class:`BackendUnavailableError` saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise BackendUnavailableError(
            f"{adapter} needs {library}, which cannot be imported here ({e}); install it with: "
            f"pip install {install}"
        ) from e


def worker_env_fn(pack: SpecPack, **env_kwargs: Any) -> WorkerEnvFn:
    """An env factory for worker processes: nothing is built where it was made.

    Give it to a vectorizer that calls a factory in the parent only to read the spaces
    (gymnasium's ``AsyncVectorEnv``, Tianshou's ``ShmemVectorEnv``); never where the parent
    steps the env (a ``SyncVectorEnv`` here needs ``pack.make``). Sample Factory and PufferLib
    have their own: :func:`specpack.adapters.sample_factory.register`,
    :func:`specpack.adapters.pufferlib.env_creator`::

        pack = specpack.capture("CustomAnt-v0", record_spaces=True)
        venv = gymnasium.vector.AsyncVectorEnv([worker_env_fn(pack)] * 8, context="spawn")

    Parameters
    ----------
    pack
        The pack to build; capture it with ``record_spaces=True`` (or from a live env) so the
        parent is answered without a build.
    **env_kwargs
        Merged over the pack's kwargs in every worker, as ``pack.make(**env_kwargs)``.

    Returns
    -------
    WorkerEnvFn
        A plain-picklable zero-argument callable: in this process it returns a
        :class:`ParentView` (spaces, metadata and render mode only; it refuses
        ``reset``/``step``), in any other process the env.

    Raises
    ------
    SpecPackError
        ``pack`` is not a pack, or is vector-only.
    """
    return WorkerEnvFn(pack, env_kwargs)


def worker_env_fns(
    pack: SpecPack,
    num: int,
    env_kwargs: Mapping[str, Any] | Sequence[Mapping[str, Any]]
    | Callable[[int], Mapping[str, Any]] | None = None,
) -> list[WorkerEnvFn]:
    """``num`` factories, one object per distinct kwargs mapping (so each records once).

    Parameters
    ----------
    pack
        The pack every worker builds.
    num
        How many factories (workers).
    env_kwargs
        One mapping for all, a list of one per worker, or a function of the worker index
        (checked as ``specpack.make_vec`` checks them).

    Returns
    -------
    list of WorkerEnvFn
        Workers with equal kwargs share one factory object: a library that calls each in the
        parent (Tianshou's shared memory) costs at most one recording per distinct mapping,
        and TorchRL sees one task when all are equal.
    """
    distinct: list[WorkerEnvFn] = []
    out: list[WorkerEnvFn] = []
    for kw in per_env_kwargs(env_kwargs, num):
        fn = next((f for f in distinct if f.env_kwargs == kw), None)
        if fn is None:
            fn = WorkerEnvFn(pack, kw)
            distinct.append(fn)
        out.append(fn)
    return out
