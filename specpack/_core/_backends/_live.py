"""A live stack's recipe (gymnasium and gym): what capture makes of an env already built.
Capture-side only: never loaded in a worker that only builds."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ._args import base_kwargs
from .recipe import Recipe

__all__ = ["live_recipe"]


def _spec_made(spec: Any, cls: type) -> bool:
    """Whether ``spec`` describes how this base env was really made (by ``make``)."""
    ep = spec.entry_point
    if isinstance(ep, str):
        modname, _, attr = ep.partition(":")
        if modname == "__mp_main__":
            modname = "__main__"
        try:
            obj: Any = importlib.import_module(modname)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - an unloadable string is no evidence
            return False
        ep = obj
    return ep is cls


def live_recipe(layers: list[tuple[type, dict[str, Any]]], base: Any, spec: Any, *,
                spec_meta: Callable[[Any], dict[str, Any]], base_fix: str,
                make_inner: frozenset[str]) -> Recipe:
    """The recipe of a live stack (``layers`` outermost first, down to ``base``). The base env's
    kwargs come from its spec when ``make`` built it from that spec, else from what the env
    recorded (:func:`~._args.base_kwargs`, refusing with ``base_fix``); notes say where the
    stack's shape differs from what ``make`` builds."""
    bcls = type(base)
    notes: list[str] = []
    entry_string: str | None = None
    if spec is not None and _spec_made(spec, bcls):
        kwargs = dict(spec.kwargs)
        if isinstance(spec.entry_point, str):
            entry_string = spec.entry_point
        meta = spec_meta(spec)
    else:
        kwargs = base_kwargs(base, notes, base_fix)
        meta = spec_meta(spec) if spec is not None else {}
        if spec is not None and isinstance(spec.entry_point, str):
            meta["entry_point"] = spec.entry_point
    names = [c.__qualname__ for c, _ in layers]
    if "TimeLimit" in names:
        below = [n for n in names[names.index("TimeLimit") + 1 :] if n not in make_inner]
        if below:
            notes.append(f"TimeLimit is not innermost: {', '.join(below)} sit below it (make's "
                         "env.spec would reorder this stack; the pack keeps it exactly)")
    if names.count("TimeLimit") > 1:
        notes.append("the stack has more than one TimeLimit; every one is kept")
    return Recipe(id=spec.id if spec is not None else None,
                  entry=None if entry_string else bcls, entry_string=entry_string,
                  kwargs=kwargs, spec=meta, layers=layers, notes=notes)
