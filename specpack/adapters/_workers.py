"""Env factories for other libraries' worker processes (:class:`WorkerEnvFn`: a
:class:`ParentView` where it was made, the env anywhere else), and :func:`import_library`."""

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

    For a vectorizer that calls a factory in the parent only to read the spaces (gymnasium's
    ``AsyncVectorEnv``, Tianshou's ``ShmemVectorEnv``), not one that steps it there (a
    ``SyncVectorEnv`` needs ``pack.make``). Sample Factory and PufferLib have their own
    (:func:`specpack.adapters.sample_factory.register`,
    :func:`specpack.adapters.pufferlib.env_creator`)::

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


def worker_env_fns(pack: SpecPack, num: int, env_kwargs: Mapping[str, Any]
                   | Sequence[Mapping[str, Any]] | Callable[[int], Mapping[str, Any]]
                   | None = None) -> list[WorkerEnvFn]:
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
        Workers with equal kwargs share one factory object (one recording per distinct mapping
        in a library that calls each in the parent; one task for TorchRL when all are equal).
    """
    out: list[WorkerEnvFn] = []
    for kw in per_env_kwargs(env_kwargs, num):
        out.append(next((f for f in out if f.env_kwargs == kw), None) or WorkerEnvFn(pack, kw))
    return out
