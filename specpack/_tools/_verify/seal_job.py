"""The seal's rollout job: the digests a seal holds, and what the build loaded.

Run in the seal's fresh interpreter. A check's rebuild runs
:func:`~specpack._tools._verify.sealing.rollout_digests` alone, so its worker never loads the
provenance lookup (and ``importlib.metadata``) that naming the loaded distributions needs.
"""

from __future__ import annotations

import sys
from typing import Any

from ..._core._provenance import requires_of
from .sealing import rollout_digests

__all__ = ["rollout_and_loaded"]


def rollout_and_loaded(payload: bytes, **params: Any) -> dict[str, Any]:
    """:func:`~specpack._tools._verify.sealing.rollout_digests`, and under ``"loaded"`` the
    distributions this interpreter holds once the pack is built and rolled out (what the build
    loaded, with the harness's own) as ``{name: version}``, their versions added to
    ``"versions"``."""
    out = rollout_digests(payload, **params)
    found = requires_of(list(sys.modules))
    out["loaded"] = found
    versions = out["versions"]
    for name, version in found.items():
        versions.setdefault(name, version)
    return out
