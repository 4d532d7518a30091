"""Tianshou: a ``SubprocVectorEnv`` of a pack that builds no env in the parent (with shared
memory, each worker's constructor calls its factory *in the parent* to size the buffers; a
:class:`~specpack.adapters.WorkerEnvFn` answers from the recorded spaces)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._core._errors import SpecPackError
from .._core._keywords import check_flag
from .._core._pack import SpecPack
from ._workers import import_library, worker_env_fns

__all__ = ["subproc_vector_env"]


def subproc_vector_env(pack: SpecPack, num_envs: int, *, env_kwargs: Mapping[str, Any]
                       | Sequence[Mapping[str, Any]] | Callable[[int], Mapping[str, Any]]
                       | None = None, share_memory: bool = False, context: str | None = None,
                       wait_num: int | None = None, timeout: float | None = None) -> Any:
    """A Tianshou ``SubprocVectorEnv`` of ``num_envs`` copies of ``pack``, none built here.

    Example::

        pack = specpack.capture("CustomAnt-v0", record_spaces=True)
        envs = subproc_vector_env(pack, 8, share_memory=True, context="spawn")

    Parameters
    ----------
    pack
        The pack; with recorded spaces (``capture(..., record_spaces=True)`` or a live env) the
        parent builds nothing, else one env to record them (and only if ``share_memory``).
    num_envs
        Worker processes, one env each.
    env_kwargs
        Merged over the pack's kwargs: one mapping for all, a list of one per env, or a
        function of the env index (as ``specpack.make_vec``). With ``share_memory`` each
        distinct mapping costs one build here, since kwargs may change the spaces.
    share_memory
        Observations through shared memory (what ``ShmemVectorEnv`` is).
    context
        The start method (``"fork"``, ``"spawn"``, ``"forkserver"``), or None for the default.
    wait_num, timeout
        As Tianshou's (asynchronous stepping).

    Returns
    -------
    tianshou.env.SubprocVectorEnv

    Raises
    ------
    SpecPackError
        Bad ``num_envs`` or ``env_kwargs``; a vector-only pack.
    BackendUnavailableError
        Tianshou is not installed.
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise SpecPackError(f"subproc_vector_env: num_envs={num_envs!r} must be a positive int")
    check_flag(share_memory, "share_memory", "subproc_vector_env()")
    env = import_library("tianshou.env", "specpack.adapters.tianshou", "Tianshou", "tianshou")
    fns = worker_env_fns(pack, num_envs, env_kwargs)
    return env.SubprocVectorEnv(fns, wait_num=wait_num, timeout=timeout,
                                share_memory=share_memory, context=context)
