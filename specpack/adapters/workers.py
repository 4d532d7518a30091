"""An env factory for worker processes that builds nothing in the process that made it.

Every vectorizer starts its workers with a list of zero-argument env factories, and many also
call one of them in the parent only to read the spaces: gymnasium's ``AsyncVectorEnv`` (one
throwaway env), Tianshou's ``ShmemVectorEnv`` / ``SubprocVectorEnv(share_memory=True)`` (one
per worker, for the shared-memory buffers), TorchRL's ``ParallelEnv`` (one, for its metadata),
PufferLib's and Sample Factory's multiprocessing backends. For an env that takes seconds to
build, or holds a GPU or a license, that parent build is pure cost.

:class:`WorkerEnvFn` answers that parent call from the pack's recorded surface (its spaces,
metadata and render mode: ``capture(..., record_spaces=True)`` or a captured live env): in the
process that made it, calling it returns a :class:`ParentView` that shows the spaces and
refuses to be stepped; in any other process (a fork, spawn or forkserver
worker, a Ray actor) it returns ``pack.make(**env_kwargs)``, after checking that the built env's
spaces are the ones the parent was shown. It is a plain-picklable object (no cloudpickle
needed), so every start method can carry it.

Use it only where the parent never steps the env it gets (a ``DummyVectorEnv``, TorchRL's
``SerialEnv`` or a ``SyncVectorEnv`` in this process need ``pack.make``).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._surface import Surface, SurfaceEnv, record_surface
from .._text import short
from .._verify.compare import same
from .._verify.describe import describe_space
from ..errors import SpecPackError
from ..pack import SpecPack
from ..vector.make import per_env_kwargs

__all__ = ["ParentView", "WorkerEnvFn", "worker_env_fn", "worker_env_fns"]

#: This interpreter's mark. A fork child inherits it (but has another pid); a fresh interpreter
#: (spawn, forkserver, another host) draws its own, so a pid that happens to repeat elsewhere
#: is never taken for the parent.
_HOME_MARK = secrets.token_hex(8)


def _here() -> tuple[int, str]:
    return (os.getpid(), _HOME_MARK)


class WorkerEnvFn:
    """``pack.make(**env_kwargs)`` in workers; the recorded spaces only in the making process.

    Parameters
    ----------
    pack
        The pack every worker builds.
    env_kwargs
        Keyword arguments merged over the pack's, as in ``pack.make(**env_kwargs)``.

    Notes
    -----
    With no ``env_kwargs`` the parent is answered from ``pack.surface``. A pack without a
    recorded surface, or ``env_kwargs`` (which may change the spaces), costs one build in the
    parent on the first parent call, once per factory object: the surface is recorded from it
    and the env closed. Workers check the env they build against the surface the parent was
    shown and raise :class:`~specpack.SpecPackError` naming the difference, since buffers sized
    from one space cannot carry another's observations.
    """

    def __init__(self, pack: SpecPack, env_kwargs: Mapping[str, Any] | None = None) -> None:
        if not isinstance(pack, SpecPack):
            raise SpecPackError(
                f"worker_env_fn takes a SpecPack, got {type(pack).__name__}; make one with "
                "specpack.capture(..., record_spaces=True)"
            )
        if pack.vector:
            raise SpecPackError(
                f"pack {pack.label} is vector-only (its spec has only a vector_entry_point); "
                "there is no single env for a worker to build: use specpack.make_vec"
            )
        kwargs = dict(env_kwargs or {})
        for name in kwargs:
            if not isinstance(name, str):
                raise SpecPackError(f"env_kwargs names must be strings, got {short(name)}")
        self.pack = pack
        self.env_kwargs = kwargs
        self.home = _here()
        self._surface: Surface | None = None if kwargs else pack.surface

    @property
    def in_home_process(self) -> bool:
        """Whether this is the process that made the factory (where calls only describe)."""
        return self.home == _here()

    @property
    def recorded(self) -> Surface | None:
        """The surface the parent was (or will be) shown, if known yet; nothing is built."""
        return self._surface

    def surface(self) -> Surface:
        """What the parent is shown: the pack's recorded surface, else one recorded here."""
        if self._surface is None:
            env = self.pack.make(**self.env_kwargs)
            try:
                self._surface = record_surface(env)
            finally:
                try:
                    env.close()
                except Exception:  # noqa: BLE001 - closing is best effort
                    pass
        return self._surface

    def __call__(self) -> Any:
        """A :class:`ParentView` in the making process, the built env anywhere else."""
        if self.in_home_process:
            return ParentView(self.surface(), self.pack.label)
        return self.build()

    def build(self) -> Any:
        """Build the env here, whatever process this is, checked against the surface."""
        env = self.pack.make(**self.env_kwargs)
        if self._surface is not None:
            problem = mismatch(env, self._surface)
            if problem is not None:
                try:
                    env.close()
                except Exception:  # noqa: BLE001 - closing is best effort
                    pass
                raise SpecPackError(
                    f"pack {self.pack.label}: the env built in this worker does not match the "
                    f"spaces its parent was shown ({problem}); the env's spaces depend on "
                    "something other than the pack (a file, the host, randomness). Capture "
                    "again where the workers run, or give the library pack.make instead"
                )
        return env

    def __repr__(self) -> str:
        kw = f", env_kwargs={short(self.env_kwargs)}" if self.env_kwargs else ""
        return f"WorkerEnvFn({self.pack.label}{kw})"


class ParentView(SurfaceEnv):
    """What a :class:`WorkerEnvFn` gives in its own process: the spaces, no env behind them."""

    def __init__(self, surface: Surface, label: str) -> None:
        super().__init__(surface)
        self.label = label

    def _refuse(self, method: str) -> SpecPackError:
        return SpecPackError(
            f"{method}() on a worker_env_fn's env in the process that made it: there it only "
            f"shows pack {self.label}'s recorded spaces (so vectorizers can read them without "
            "a build). Give worker_env_fn only to libraries that step the env in worker "
            "processes; build here with pack.make()"
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Refused: nothing is built in the making process (see :class:`WorkerEnvFn`)."""
        raise self._refuse("reset")

    def step(self, action: Any) -> Any:
        """Refused: nothing is built in the making process (see :class:`WorkerEnvFn`)."""
        raise self._refuse("step")

    def render(self) -> Any:
        """Refused: nothing is built in the making process (see :class:`WorkerEnvFn`)."""
        raise self._refuse("render")

    def __repr__(self) -> str:
        return f"<ParentView of {self.label}>"


def mismatch(env: Any, surface: Surface) -> str | None:
    """How ``env``'s observation or action space differs from ``surface``'s, or None."""
    for name in ("observation_space", "action_space"):
        built, shown = getattr(env, name, None), getattr(surface, name)
        if not same(describe_space(built), describe_space(shown)):
            return f"{name}: built {short(built)}, shown {short(shown)}"
    return None


def worker_env_fn(pack: SpecPack, **env_kwargs: Any) -> WorkerEnvFn:
    """An env factory for worker processes: nothing is built where it was made.

    Give it to a vectorizer that calls a factory in the parent only to read the spaces
    (gymnasium's ``AsyncVectorEnv``, Tianshou's ``ShmemVectorEnv``, PufferLib-style
    multiprocessing backends)::

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
