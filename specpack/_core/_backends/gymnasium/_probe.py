"""Which env ids does importing a module register, in a *fresh* interpreter (one that never ran
this process's code)? Run as a job of the worker protocol (:mod:`specpack._core._process`): what
the module prints cannot be mistaken for the answer, and nothing from the child is unpickled.
"""

from __future__ import annotations

import functools
import importlib
import time
from typing import Any

import gymnasium

__all__ = ["registered_ids", "registered_in_fresh_interpreter"]


def registered_ids(payload: bytes, *, module: str) -> list[str]:
    """The job run in the fresh interpreter: import ``module``, list gymnasium's ids."""
    importlib.import_module(module)
    return sorted(gymnasium.registry)


@functools.lru_cache(maxsize=64)
def registered_in_fresh_interpreter(module: str, timeout: float = 120.0) -> frozenset[str]:
    """The ids gymnasium's registry holds after ``import module`` in a fresh ``python``; empty
    when the import fails or takes longer than ``timeout`` seconds."""
    from ..._process import run_one  # lazy: only capture probes; a worker that builds never does

    outcome = run_one("subprocess", f"{__name__}:registered_ids", b"", {"module": module},
                      deadline=time.monotonic() + timeout)
    ids: Any = outcome.value if outcome.status == "ok" else None
    if not isinstance(ids, list):
        return frozenset()
    return frozenset(i for i in ids if isinstance(i, str))
