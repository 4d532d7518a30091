"""Vector envs built from a pack: :func:`make_vec` (:mod:`.make`), the vector env classes
with worker start reports (:mod:`.envs`), and forkserver preloading (:mod:`.forkserver`).

The names load on first use: a worker process unpickles its env factory from
:mod:`.factory`, which imports this package, and must not pay for ``make_vec``'s own imports
(capture, the forkserver machinery).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._restorer import claim

if TYPE_CHECKING:
    from ._forkserver import forkserver_modules, warm_forkserver
    from ._make import make_vec

__all__ = ["forkserver_modules", "make_vec", "warm_forkserver"]

#: Where each public name is defined.
_HOMES = {"forkserver_modules": "._forkserver", "make_vec": "._make",
          "warm_forkserver": "._forkserver"}


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    claim(__name__, globals(), [name])  # users import it from here (see specpack._restorer)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
