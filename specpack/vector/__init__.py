"""Vector envs built from a pack: :func:`make_vec` (:mod:`.make`), the vector env classes
with worker start reports (:mod:`.envs`), and forkserver preloading (:mod:`.forkserver`)."""

from __future__ import annotations

from .._public import claim
from .forkserver import forkserver_modules, warm_forkserver
from .make import make_vec

__all__ = ["forkserver_modules", "make_vec", "warm_forkserver"]

claim(__name__, globals())  # users import these from here (see specpack._public)
