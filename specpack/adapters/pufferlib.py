"""PufferLib: an env creator for ``pufferlib.vector.make`` that rebuilds a pack in every worker.

What PufferLib 3.0's vectorization does with a creator (read from its source, shown by the
tests):

- ``vector.make(creator, backend=Serial | Multiprocessing, num_envs=n, ...)`` calls it as
  ``creator(*env_args, **env_kwargs)`` for a *driver env* in the calling process (the spaces,
  for the shared buffers; ``Multiprocessing`` keeps it until ``close``), and in each worker as
  ``creator(*env_args, buf=..., seed=..., **env_kwargs)``. It must return PufferLib's own env
  type: a plain gymnasium env fails (``'TimeLimit' object has no attribute 'emulated'``).
- ``Multiprocessing`` starts its workers with ``multiprocessing.Process``, i.e. the default
  start method: under spawn or forkserver the creator travels by pickle, and one that calls
  ``gymnasium.make(id)`` for an id registered at run time fails with ``NameNotFound`` in every
  worker while the parent waits for ever.

:func:`env_creator` returns a :class:`PufferEnvCreator`: plain-picklable, it builds
``pack.make(**env_kwargs)`` in whatever process calls it and wraps it in PufferLib's
``GymnasiumPufferEnv`` with the ``buf`` and ``seed`` it is given.
"""

from __future__ import annotations

from typing import Any

from .._core._errors import BackendUnavailableError, SpecPackError
from .._core._pack import SpecPack
from .._core._text import short
from ._workers import WorkerEnvFn

__all__ = ["PufferEnvCreator", "env_creator"]


def _emulation() -> Any:
    try:
        import pufferlib.emulation
    except ImportError as e:
        raise BackendUnavailableError(
            f"specpack.adapters.pufferlib needs PufferLib, which cannot be imported here ({e}); "
            "install it with: pip install pufferlib (its build downloads a C library)"
        ) from e
    return pufferlib.emulation


class PufferEnvCreator:
    """``GymnasiumPufferEnv(env=pack.make(**env_kwargs), buf=buf, seed=seed)``.

    Made by :func:`env_creator`; pickles as the pack and its kwargs (no cloudpickle needed).
    """

    def __init__(self, maker: WorkerEnvFn) -> None:
        self.maker = maker

    def __call__(self, *args: Any, buf: Any = None, seed: Any = 0, **kwargs: Any) -> Any:
        """The pack's env, built here, as PufferLib's emulation env.

        Parameters
        ----------
        buf
            PufferLib's shared buffers for this env (None: the env allocates its own).
        seed
            PufferLib's per-env seed; ``GymnasiumPufferEnv`` keeps the env unseeded until
            ``reset(seed=...)``, which the vector env calls with its own seeds.

        Returns
        -------
        pufferlib.emulation.GymnasiumPufferEnv

        Raises
        ------
        SpecPackError
            Positional or keyword env arguments were given through PufferLib (``env_args``,
            ``env_kwargs`` of ``vector.make``): give them to :func:`env_creator`.
        """
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
