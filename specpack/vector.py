"""Vector envs built from a pack: :func:`make_vec`, and forkserver preloading
(:func:`warm_forkserver`, :func:`forkserver_modules`). A worker never imports this module."""

from __future__ import annotations

from ._core._restorer import claim
from ._core._vector._forkserver import forkserver_modules, warm_forkserver
from ._core._vector._make import make_vec

__all__ = ["forkserver_modules", "make_vec", "warm_forkserver"]

claim(__name__, globals())  # users import these from here (see specpack._core._restorer)
