"""Old call forms kept for one release: positional flags that are keyword-only now."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["positional"]


def positional(args: Sequence[Any], names: Sequence[str], what: str,
               given: dict[str, Any]) -> dict[str, Any]:
    """``given`` updated with ``args`` matched to ``names``, warning once that they are
    deprecated (``what`` names the call, e.g. ``"pack.verify()"``)."""
    if not args:
        return given
    if len(args) > len(names):
        raise TypeError(f"{what} takes at most {len(names)} positional flags")
    warnings.warn(
        f"{what} takes {', '.join(n + '=' for n in names)} as keywords; positional ones are "
        "deprecated and stop working in specpack 0.3", DeprecationWarning, stacklevel=3)
    return {**given, **dict(zip(names, args))}
