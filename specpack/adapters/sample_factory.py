"""Sample Factory: register a pack in its env registry so every worker process builds it.

What Sample Factory 2.1.1 does with an env (read from its source, shown by the tests):

- ``register_env(name, creator)`` stores the creator in the registry of its global context;
  ``create_env`` calls it as ``creator(full_env_name, cfg, env_config, render_mode)``.
- ``run_rl`` starts every process with spawn: first one that builds a throwaway env to read the
  spaces (``obtain_env_info_in_a_separate_process``; the parent waits for it in ``q.get()``
  with no timeout), then the rollout, inference and learner workers. Each receives the global
  context, registry included, by pickle: a lambda cannot travel, and a creator that calls
  ``gymnasium.make(id)`` fails with ``NameNotFound`` in the child for an id registered at run
  time in the main guard (the parent then waits for ever).

:func:`register` gives the registry a :class:`SampleFactoryEnvFn`: a plain-picklable creator
that carries the pack and builds ``pack.make()`` wherever it is called.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core._errors import BackendUnavailableError, SpecPackError
from .._core._pack import SpecPack
from ._workers import WorkerEnvFn

__all__ = ["SampleFactoryEnvFn", "register"]


class SampleFactoryEnvFn:
    """Sample Factory's four-argument env creator over a pack: ``pack.make(**env_kwargs)``.

    Made by :func:`register`. It pickles as the pack (plain pickle, as Sample Factory's spawn
    workers need), and ignores Sample Factory's ``cfg`` and ``env_config``: the pack alone says
    what env to build.
    """

    def __init__(self, maker: WorkerEnvFn) -> None:
        self.maker = maker

    def __call__(
        self,
        full_env_name: str,
        cfg: Any = None,
        env_config: Any = None,
        render_mode: str | None = None,
    ) -> Any:
        """``pack.make(**env_kwargs)``, with ``render_mode`` given only when it is set.

        Parameters
        ----------
        full_env_name
            The name Sample Factory was asked for (``cfg.env``); not used to build.
        cfg, env_config
            Sample Factory's configuration and per-env information (worker and vector index);
            not used: seeding goes through ``reset(seed=...)`` as for any gymnasium env.
        render_mode
            Passed to ``pack.make`` when not None (``enjoy``'s ``"human"``/``"rgb_array"``).

        Returns
        -------
        gymnasium.Env
            The pack's env, built in this process.
        """
        if render_mode is not None:
            return self.maker.make(render_mode=render_mode)
        return self.maker.make()

    def __repr__(self) -> str:
        return f"SampleFactoryEnvFn({self.maker.label})"


def register(
    pack: SpecPack,
    name: str | None = None,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
) -> str:
    """Register ``pack`` in Sample Factory's env registry; the name to give as ``--env``.

    Call it where the registry is read, before ``run_rl`` (also inside ``if __name__ ==
    "__main__":``): Sample Factory's spawn workers receive the registry by pickle, pack included,
    so nothing needs to be importable or registered in them::

        pack = specpack.capture("CustomAnt-v0", record_spaces=True)
        name = specpack.adapters.sample_factory.register(pack)
        cfg = parse_full_cfg(parse_sf_args([f"--env={name}", ...])[0])
        status = run_rl(cfg)

    Parameters
    ----------
    pack
        The single-env pack every Sample Factory process builds.
    name
        The registry name (what ``cfg.env`` must be); defaults to the pack's id, else its entry
        point's name. Registering a name again replaces the creator (Sample Factory warns).
    env_kwargs
        Merged over the pack's kwargs in every build, as ``pack.make(**env_kwargs)``.

    Returns
    -------
    str
        The name registered.

    Raises
    ------
    SpecPackError
        ``pack`` is not a single-env pack, ``name`` is not a non-empty string, or an env_kwargs
        name is not a string.
    BackendUnavailableError
        Sample Factory is not installed.
    """
    if not isinstance(pack, SpecPack):
        raise SpecPackError(
            f"sample_factory.register takes a SpecPack, got {type(pack).__name__}; make one "
            "with specpack.capture(...)"
        )
    maker = WorkerEnvFn(pack, env_kwargs)
    name = pack.label if name is None else name
    if not isinstance(name, str) or not name:
        raise SpecPackError(
            f"sample_factory.register: name={name!r} must be a non-empty string (what "
            "Sample Factory's --env is given); leave it out to use the pack's id"
        )
    try:
        from sample_factory.envs.env_utils import register_env
    except ImportError as e:
        raise BackendUnavailableError(
            f"specpack.adapters.sample_factory needs Sample Factory, which cannot be imported "
            f"here ({e}); install it with: pip install sample-factory"
        ) from e
    register_env(name, SampleFactoryEnvFn(maker))
    return name
