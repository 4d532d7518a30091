"""PufferLib: an env creator for ``pufferlib.vector.make`` that rebuilds a pack in every worker.

PufferLib 3.0 calls a creator with ``buf=`` and ``seed=`` in the driver and in each worker, which
its ``Multiprocessing`` backend may spawn: there ``gymnasium.make(id)`` of an id registered at
run time fails while the parent waits for ever. :class:`PufferEnvCreator` builds the pack.
"""

from __future__ import annotations

from typing import Any

from .._core._errors import SpecPackError
from .._core._pack import SpecPack
from .._core._text import short
from ._workers import WorkerEnvFn, import_library

__all__ = ["PufferEnvCreator", "env_creator"]


def _emulation() -> Any:
    return import_library("pufferlib.emulation", "specpack.adapters.pufferlib", "PufferLib",
                          "pufferlib (its build downloads a C library)")


class PufferEnvCreator:
    """``GymnasiumPufferEnv(env=pack.make(**env_kwargs), buf=buf, seed=seed)``, made by
    :func:`env_creator`; pickles as the pack and its kwargs (no cloudpickle needed)."""

    def __init__(self, maker: WorkerEnvFn) -> None:
        self.maker = maker

    def __call__(self, *args: Any, buf: Any = None, seed: Any = 0, **kwargs: Any) -> Any:
        """The pack's env, built here, as PufferLib's ``GymnasiumPufferEnv``; env arguments given
        through PufferLib (``env_args``/``env_kwargs``) are refused: give them to
        :func:`env_creator`."""
        if args or kwargs:
            given = [*(short(a) for a in args), *sorted(kwargs)]
            raise SpecPackError(
                f"{self!r} takes only buf= and seed= (got {', '.join(given)}); give env "
                "arguments to specpack.adapters.pufferlib.env_creator(pack, **env_kwargs), not "
                "as pufferlib.vector.make's env_args/env_kwargs"
            )
        emulation = _emulation()
        env = self.maker.make()
        return emulation.GymnasiumPufferEnv(env=env, buf=buf, seed=seed)

    def __repr__(self) -> str:
        return f"PufferEnvCreator({self.maker.label})"


def env_creator(pack: SpecPack, **env_kwargs: Any) -> PufferEnvCreator:
    """A PufferLib env creator building ``pack.make(**env_kwargs)`` in any process.

    Give it to ``pufferlib.vector.make`` with any backend and start method::

        pack = specpack.capture("CustomAnt-v0")
        vecenv = pufferlib.vector.make(env_creator(pack), num_envs=4, num_workers=4,
                                       backend=pufferlib.vector.Multiprocessing)

    Parameters
    ----------
    pack
        The single-agent (gymnasium) pack to build.
    **env_kwargs
        Merged over the pack's kwargs in every build, as ``pack.make(**env_kwargs)``.

    Returns
    -------
    PufferEnvCreator
        A plain-picklable callable taking PufferLib's ``buf=None, seed=0``.

    Raises
    ------
    SpecPackError
        ``pack`` is not a single-env pack.
    BackendUnavailableError
        PufferLib is not installed.
    """
    if not isinstance(pack, SpecPack):
        raise SpecPackError(
            f"pufferlib.env_creator takes a SpecPack, got {type(pack).__name__}; make one with "
            "specpack.capture(...)"
        )
    creator = PufferEnvCreator(WorkerEnvFn(pack, env_kwargs))
    _emulation()
    return creator
