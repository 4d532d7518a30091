"""Adapters: hand a pack to other libraries (vectorizers, dataset tools) the way they expect.

- :func:`worker_env_fn` (:mod:`.workers`): an env factory for worker processes that builds no
  env in the process that made it (the parent is shown the pack's recorded spaces).
- :mod:`specpack.adapters.torchrl`: ``env_fn`` and ``parallel_env`` for TorchRL.
- :mod:`specpack.adapters.tianshou`: ``subproc_vector_env`` for Tianshou.
- :mod:`specpack.adapters.minari`: ``attach``, ``recover_pack`` and ``recover_environment``
  for Minari datasets.
- :mod:`specpack.adapters.sample_factory`: ``register`` a pack in Sample Factory's env registry.
- :mod:`specpack.adapters.pufferlib`: ``env_creator`` for ``pufferlib.vector.make``.
- :func:`supersuit_vec` (:mod:`.supersuit`): SuperSuit's ``concat_vec_envs_v1`` over a
  PettingZoo pack, each copy built from the pack.

The library modules import their library only when used: ``import specpack.adapters`` needs
none of them.
"""

from __future__ import annotations

from .._core._restorer import claim
from ._workers import WorkerEnvFn, worker_env_fn, worker_env_fns
from .supersuit import supersuit_vec

__all__ = ["WorkerEnvFn", "supersuit_vec", "worker_env_fn", "worker_env_fns"]

claim(__name__, globals())  # users import these from here (see specpack._core._restorer)
