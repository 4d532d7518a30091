"""Env factories for other libraries' worker processes: nothing is built where they are made.

:func:`worker_env_fn` and :func:`worker_env_fns` hand out :class:`WorkerEnvFn`, the one worker
env factory (defined in :mod:`specpack._core._vector._factory`, which ``make_vec``'s async workers use
too): in the process that made it, calling it returns a :class:`ParentView` that shows the
pack's recorded spaces and refuses to be stepped; in any other process (a fork, spawn or
forkserver worker, a Ray actor) it returns ``pack.make(**env_kwargs)``, after checking that the
built env's spaces are the ones the parent was shown.

Use it only where the parent never steps the env it gets (a ``DummyVectorEnv``, TorchRL's
``SerialEnv`` or a ``SyncVectorEnv`` in this process need ``pack.make``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._core._pack import SpecPack
from .._core._vector._factory import WorkerEnvFn
from .._core._vector._make import per_env_kwargs
from .._core._vector._view import ParentView

__all__ = ["ParentView", "WorkerEnvFn", "worker_env_fn", "worker_env_fns"]


def worker_env_fn(pack: SpecPack, **env_kwargs: Any) -> WorkerEnvFn:
    """An env factory for worker processes: nothing is built where it was made.

    Give it to a vectorizer that calls a factory in the parent only to read the spaces
    (gymnasium's ``AsyncVectorEnv``, Tianshou's ``ShmemVectorEnv``). Sample Factory 2.1.1
    builds its throwaway env in a separate spawn process, not in the parent: give it
    :func:`specpack.adapters.sample_factory.register`; PufferLib 3.0 needs its own env type:
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
