"""Sample Factory: register a pack in its env registry so every worker process builds it.

Sample Factory 2.1.1's ``run_rl`` spawns every process and pickles it the registry: a lambda
cannot travel, and ``gymnasium.make(id)`` of an id registered in the main guard fails there.
:func:`register` gives it a :class:`SampleFactoryEnvFn`, which builds the pack anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core._errors import SpecPackError
from .._core._pack import SpecPack
from ._workers import WorkerEnvFn, import_library

__all__ = ["SampleFactoryEnvFn", "register"]


class SampleFactoryEnvFn:
    """Sample Factory's four-argument env creator over a pack: ``pack.make(**env_kwargs)``.
    Made by :func:`register`; it pickles as the pack (plain pickle)."""

    def __init__(self, maker: WorkerEnvFn) -> None:
        self.maker = maker

    def __call__(self, full_env_name: str, cfg: Any = None, env_config: Any = None,
                 render_mode: str | None = None) -> Any:
        """``pack.make(**env_kwargs)``, with ``render_mode`` given only when set (the other
        arguments are not used: seeding goes through ``reset(seed=...)``)."""
        if render_mode is not None:
            return self.maker.make(render_mode=render_mode)
        return self.maker.make()

    def __repr__(self) -> str:
        return f"SampleFactoryEnvFn({self.maker.label})"


def register(pack: SpecPack, name: str | None = None, *,
             env_kwargs: Mapping[str, Any] | None = None) -> str:
    """Register ``pack`` in Sample Factory's env registry; the name to give as ``--env``.

    Call it before ``run_rl`` (also inside ``if __name__ == "__main__":``): the spawn workers
    receive the registry by pickle, pack included, so nothing need be registered in them::

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
    env_utils = import_library("sample_factory.envs.env_utils", "specpack.adapters.sample_factory",
                               "Sample Factory", "sample-factory")
    env_utils.register_env(name, SampleFactoryEnvFn(maker))
    return name
