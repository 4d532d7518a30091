"""Vector envs built from a pack: :func:`make_vec` (:mod:`.make`), the vector env classes
with worker start reports (:mod:`.envs`), and forkserver preloading (:mod:`.forkserver`)."""

from __future__ import annotations

from .forkserver import forkserver_modules, warm_forkserver
from .make import make_vec

__all__ = ["forkserver_modules", "make_vec", "warm_forkserver"]
