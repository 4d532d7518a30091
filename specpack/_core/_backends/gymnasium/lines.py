"""Packs across gymnasium's two lines, 0.28/0.29 and 1.x: 1.0 moved the wrappers ``make`` adds
and renamed, re-signed or changed every other one (``FrameStack``, ...). A pack from the other
line rebuilds here only if its gymnasium wrappers are all in :data:`SAME_IN_BOTH`: another
line's class would make another env."""

from __future__ import annotations

from typing import Any

import gymnasium

from ..._carry.ref import CodeRef
from ..._errors import BuildError
from ..recipe import Blueprint
from .compat import GYMNASIUM_VERSION, LINE, line_of

__all__ = ["SAME_IN_BOTH", "line_hint", "other_line_blueprint"]

#: The wrappers that ``gymnasium.make`` applies in both lines, with the same constructor
#: arguments and the same behaviour; only their module differs.
SAME_IN_BOTH: frozenset[str] = frozenset({"PassiveEnvChecker", "OrderEnforcing", "TimeLimit",
                                          "HumanRendering", "RenderCollection"})


def _describe(line: str | None) -> str:
    return "1.x" if line == "1" else "0.28/0.29"


def _refusal(label: str, what: str, captured_under: str | None) -> BuildError:
    here = GYMNASIUM_VERSION
    return BuildError(f"pack {label}: {what} was captured under gymnasium {captured_under} (the "
                      f"{_describe(line_of(captured_under))} line) and gymnasium {here} here (the "
                      f"{_describe(LINE)} line) has no same one (gymnasium 1.0 renamed, re-signed "
                      "or changed its wrappers; only those make adds itself are the same in "
                      f"both). Install gymnasium=={captured_under} here to rebuild it, or capture "
                      f"the env again under gymnasium {here}")


def line_hint(captured_under: str | None) -> str:
    """What a constructor failure of a pack from the other line adds to its message."""
    return (f"; the pack was captured under gymnasium {captured_under} and gymnasium "
            f"{GYMNASIUM_VERSION} runs here (the {_describe(LINE)} line), whose env may take other "
            f"arguments: install gymnasium=={captured_under} here, or capture the env again under "
            f"gymnasium {GYMNASIUM_VERSION}")


def other_line_blueprint(bp: Blueprint, captured_under: str | None) -> Blueprint:
    """``bp`` with each gymnasium wrapper of the other line replaced by this line's class; a
    BuildError for one outside :data:`SAME_IN_BOTH` or an entry point this release lacks."""
    layers = []
    for ref, lowered, plain in bp.layers:
        if ref.module.startswith("gymnasium."):
            cls: Any = getattr(gymnasium.wrappers, ref.qualname, None)
            if ref.qualname not in SAME_IN_BOTH or cls is None:
                raise _refusal(bp.label, f"the wrapper {ref.name}", captured_under)
            ref = CodeRef(cls.__module__, cls.__qualname__)
        layers.append((ref, lowered, plain))
    entry = bp.entry
    if entry.module.startswith("gymnasium."):
        try:
            entry.load()
        except BuildError:
            raise _refusal(bp.label, f"the entry point {entry.name}", captured_under) from None
    return Blueprint(bp.label, bp.entry, tuple(layers), bp.spec, bp.auto_render, bp.versions)
