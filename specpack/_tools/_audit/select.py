"""Which env ids an audit covers: targets matched against gymnasium's registry.

A target is an env id, a namespace (``"ALE/"``), or an entry-point module prefix
(``"minigrid"``; imported when nothing matches yet, since importing a package is what registers
its envs). No target: the whole registry.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from typing import Any

from gymnasium.envs import registration as gym_registration

from ..._core._errors import SpecPackError, UnknownEnvError
from ..._core._text import printable, suggest

__all__ = ["entry_of", "matches", "registry", "select"]


def registry() -> Any:
    """gymnasium's registry."""
    return gym_registration.registry


def _entry_module(spec: Any) -> str:
    """The module of a spec's entry point (or of its vector entry point when it has none); of
    a ``functools.partial``, the module of the function it wraps (shimmy's, partialenvs')."""
    ep = spec.entry_point if spec.entry_point is not None else spec.vector_entry_point
    if isinstance(ep, str):
        return ep.partition(":")[0]
    while isinstance(ep, functools.partial):  # the module of the function it wraps
        ep = ep.func
    return str(getattr(ep, "__module__", "") or "")


def entry_of(env_id: str) -> tuple[Any, dict[str, Any]] | None:
    """The loaded entry point of a registered id and the kwargs it is registered with.

    For a vector-only id it is the vector creator, with ``num_envs`` counted as given (the
    build passes it). Returns None when the id is not registered, has no entry point, or it
    does not load.
    """
    spec = registry().get(env_id)
    if spec is None:
        return None
    ep = spec.entry_point if spec.entry_point is not None else spec.vector_entry_point
    given = {} if spec.entry_point is not None else {"num_envs": None}
    if ep is None:
        return None
    if isinstance(ep, str):
        try:

            ep = gym_registration.load_env_creator(ep)
        except Exception:  # noqa: BLE001 - the capture reports what is wrong with it
            return None
    return ep, {**dict(spec.kwargs or {}), **given}


def matches(target: str, spec: Any) -> bool:
    """Whether a namespace (``"ALE/"``) or module prefix names the spec."""
    if target.endswith("/"):
        return bool(spec.id.startswith(target) or (spec.namespace or "") == target[:-1])
    module = _entry_module(spec)
    return module == target or module.startswith(target + ".")


def _looks_like_module(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def select(targets: Sequence[str]) -> list[str]:
    """The env ids the targets name, in registry order, each once.

    Parameters
    ----------
    targets
        Env ids, namespaces, module prefixes; empty for the whole registry.

    Returns
    -------
    list of str
        The ids.

    Raises
    ------
    UnknownEnvError
        A target matches nothing (with the closest id, and how to register it).
    SpecPackError
        A target is not a non-empty string.
    """
    reg = registry()
    if not targets:
        return list(reg)
    chosen: dict[str, None] = {}
    for target in targets:
        if not isinstance(target, str) or not target:
            raise SpecPackError(f"audit target {target!r} must be a non-empty string")
        if target in reg or ":" in target:
            chosen[target] = None
            continue
        found = [k for k, s in reg.items() if matches(target, s)]
        if not found and not target.endswith("/") and _looks_like_module(target):
            try:
                importlib.import_module(target)
            except ImportError:
                pass
            reg = registry()
            found = [k for k, s in reg.items() if matches(target, s)]
        if not found:
            raise UnknownEnvError(
                f"audit target {printable(target)!r} matches no registered env: it is not an env "
                "id, a namespace ('ALE/') or an entry-point module prefix ('minigrid');"
                f"{suggest(target, reg.keys())}",
                python="Import the package that registers it first (imports=[...])",
                cli="Import the module that registers it first (--import MODULE)",
            )
        chosen.update(dict.fromkeys(found))
    return list(chosen)

