"""The seal's rollout job: the digests a seal holds, and what the build loaded (a module of its
own: a check's worker never loads the provenance lookup and ``importlib.metadata``)."""

from __future__ import annotations

import sys
from typing import Any

from ..._core._provenance import requires_of
from .sealing import rollout_digests

__all__ = ["rollout_and_loaded"]


def rollout_and_loaded(payload: bytes, **params: Any) -> dict[str, Any]:
    """:func:`~.sealing.rollout_digests`, and under ``"loaded"`` the distributions this
    interpreter holds after the rollout, ``{name: version}`` (added to ``"versions"`` too)."""
    out = rollout_digests(payload, **params)
    out["loaded"] = found = requires_of(list(sys.modules))
    for name, version in found.items():
        out["versions"].setdefault(name, version)
    return out
