"""TorchRL: env creators that rebuild a pack in ``ParallelEnv`` workers under any start method.

TorchRL 0.14's ``ParallelEnv(n, creator)`` builds an env in the parent for its metadata unless
``metadata_from_workers=True`` (no shared buffers). :func:`parallel_env` builds none *and* keeps
the buffers: the parent is described the recorded spaces, each worker's specs are checked
against them. :func:`env_fn` is the plain creator for ``SerialEnv`` and collectors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._core._errors import SpecPackError
from .._core._pack import SpecPack
from .._core._surface import SurfaceEnv
from .._core._text import short
from ._workers import WorkerEnvFn, import_library, worker_env_fns

__all__ = ["TorchRLEnvFn", "env_fn", "parallel_env"]


def _torchrl_envs() -> Any:
    return import_library("torchrl.envs", "specpack.adapters.torchrl", "TorchRL", "torchrl")


class TorchRLEnvFn:
    """A plain-picklable TorchRL creator: ``GymWrapper(pack.make(**env_kwargs), **wrapper)``,
    made by :func:`env_fn` or :func:`parallel_env` (not a lambda: no ``EnvCreator`` wraps it).
    """

    def __init__(self, maker: WorkerEnvFn, wrapper_kwargs: Mapping[str, Any] | None,
                 describe_in_parent: bool) -> None:
        self.maker = maker
        self.wrapper_kwargs = dict(wrapper_kwargs or {})
        self.describe_in_parent = describe_in_parent

    def __call__(self, **kwargs: Any) -> Any:
        """The TorchRL env (in the making process of a describing creator: a description)."""
        if kwargs:
            raise SpecPackError(
                f"{self!r} takes no arguments (got {', '.join(sorted(kwargs))}); give env "
                "arguments as env_kwargs= to env_fn/parallel_env, not as ParallelEnv's "
                "create_env_kwargs"
            )
        gym_wrapper = _torchrl_envs().GymWrapper
        if not self.describe_in_parent:
            return gym_wrapper(self.maker.make(), **self.wrapper_kwargs)
        if self.maker.in_home_process:
            return gym_wrapper(self.maker(), **self.wrapper_kwargs)
        env = gym_wrapper(self.maker.build(), **self.wrapper_kwargs)
        shown = self.maker.recorded
        if shown is None:  # the parent read no metadata (metadata_from_workers=True)
            return env
        expected = gym_wrapper(SurfaceEnv(shown), **self.wrapper_kwargs).specs
        if (problem := spec_difference(env.specs, expected)) is not None:
            env.close()
            raise SpecPackError(
                f"pack {self.maker.label}: this worker's TorchRL specs differ from those "
                f"of the recorded spaces its parent allocated buffers for ({problem}). Use "
                "ParallelEnv(n, specpack.adapters.torchrl.env_fn(pack), "
                "metadata_from_workers=True, use_buffers=False), which reads the specs in the "
                "workers"
            )
        return env

    def __repr__(self) -> str:
        return f"TorchRLEnvFn({self.maker.label})"


def spec_difference(built: Any, expected: Any) -> str | None:
    """The first TorchRL spec leaf that differs between two ``env.specs``, or None."""
    if built == expected:
        return None
    keys_b = set(built.keys(True, True))
    keys_e = set(expected.keys(True, True))
    for key in sorted(keys_b | keys_e, key=repr):
        if key not in keys_e:
            return f"{key!r} only in the built env"
        if key not in keys_b:
            return f"{key!r} only in the recorded spaces"
        if built[key] != expected[key]:
            return f"{key!r}: built {_spec_text(built[key])}, recorded {_spec_text(expected[key])}"
    return "the spec trees differ"


def _spec_text(spec: Any) -> str:
    """A TorchRL spec leaf in one short line: its type, shape and dtype."""
    shape, dtype = getattr(spec, "shape", None), getattr(spec, "dtype", None)
    if shape is None:
        return short(spec)
    return f"{type(spec).__name__}(shape={tuple(shape)}, dtype={dtype})"


def env_fn(pack: SpecPack, *, env_kwargs: Mapping[str, Any] | None = None,
           **wrapper_kwargs: Any) -> TorchRLEnvFn:
    """A TorchRL creator building ``GymWrapper(pack.make(**env_kwargs), **wrapper_kwargs)``.

    Works with ``SerialEnv``, ``ParallelEnv`` under every start method, ``EnvCreator`` and
    collectors. ``ParallelEnv(n, env_fn(pack))`` builds one env in the parent for its metadata
    (a lambda would build two); :func:`parallel_env` builds none.

    Parameters
    ----------
    pack
        The pack to build.
    env_kwargs
        Merged over the pack's kwargs, as ``pack.make(**env_kwargs)``.
    **wrapper_kwargs
        For ``GymWrapper`` (``categorical_action_encoding``, ``device``, ...).

    Returns
    -------
    TorchRLEnvFn
        A plain-picklable callable taking no arguments.

    Raises
    ------
    SpecPackError
        ``pack`` is not a single-env pack.
    """
    return TorchRLEnvFn(WorkerEnvFn(pack, env_kwargs), wrapper_kwargs, describe_in_parent=False)


def parallel_env(pack: SpecPack, num_workers: int, *, env_kwargs: Mapping[str, Any]
                 | Sequence[Mapping[str, Any]] | Callable[[int], Mapping[str, Any]] | None = None,
                 wrapper_kwargs: Mapping[str, Any] | None = None, **parallel_kwargs: Any) -> Any:
    """A TorchRL ``ParallelEnv`` of ``pack`` that builds no env in this process.

    Example::

        pack = specpack.capture("CustomAnt-v0", record_spaces=True)
        env = parallel_env(pack, 4, mp_start_method="spawn")

    Parameters
    ----------
    pack
        The pack; with recorded spaces (``capture(..., record_spaces=True)`` or a live env) the
        parent builds nothing, else it builds one env to record them.
    num_workers
        Worker processes.
    env_kwargs
        Merged over the pack's kwargs: one mapping for every worker, a list of one per worker,
        or a function of the worker index (as ``specpack.make_vec``). Kwargs cost one build here
        per distinct mapping, since they may change the spaces.
    wrapper_kwargs
        For each worker's ``GymWrapper``.
    **parallel_kwargs
        For ``ParallelEnv`` (``mp_start_method``, ``use_buffers``, ``device``, ...).

    Returns
    -------
    torchrl.envs.ParallelEnv

    Raises
    ------
    SpecPackError
        Bad ``num_workers``/``env_kwargs``, ``create_env_kwargs`` or ``serial_for_single``
        given (use ``env_kwargs``; ``SerialEnv(1, env_fn(pack))`` for one in-process env).
    BackendUnavailableError
        TorchRL is not installed.
    """
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise SpecPackError(f"parallel_env: num_workers={num_workers!r} must be a positive int")
    for name, fix in (("create_env_kwargs", "give env_kwargs= instead"),
                      ("serial_for_single", "for one in-process env use "
                       "SerialEnv(1, specpack.adapters.torchrl.env_fn(pack))")):
        if name in parallel_kwargs:
            raise SpecPackError(f"parallel_env: {name} is not taken here; {fix}")
    envs = _torchrl_envs()
    by_maker: dict[int, TorchRLEnvFn] = {}  # one creator per distinct factory
    fns = [by_maker.setdefault(id(m), TorchRLEnvFn(m, wrapper_kwargs, describe_in_parent=True))
           for m in worker_env_fns(pack, num_workers, env_kwargs)]
    creator: Any = fns[0] if len(by_maker) == 1 else fns
    return envs.ParallelEnv(num_workers, creator, **parallel_kwargs)
