"""Adapters: hand a pack to other libraries the way they expect: :func:`worker_env_fn` and
:func:`supersuit_vec` here, one module per library (:mod:`specpack.adapters.torchrl`,
``tianshou``, ``minari``, ``sample_factory``, ``pufferlib``), each importing it only when used.
"""

from __future__ import annotations

from .._core._restorer import claim
from ._workers import WorkerEnvFn, worker_env_fn, worker_env_fns
from .supersuit import supersuit_vec

__all__ = ["WorkerEnvFn", "supersuit_vec", "worker_env_fn", "worker_env_fns"]

claim(__name__, globals())  # users import these from here (see specpack._core._restorer)
