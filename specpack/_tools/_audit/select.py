"""Which env ids an audit covers: each target an env id, a namespace (``"ALE/"``) or an
entry-point module prefix (``"minigrid"``; imported when nothing matches yet, since importing a
package registers its envs); no target: the whole registry."""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Sequence
from typing import Any

from gymnasium.envs import registration as gym_registration

from ..._core._errors import SpecPackError, UnknownEnvError
from ..._core._text import printable, suggest

__all__ = ["entry_of", "matches", "registry", "select"]


def registry() -> Any:
    return gym_registration.registry


def _entry_point(spec: Any) -> Any:
    """A spec's entry point, or its vector entry point when it has none."""
    return spec.entry_point if spec.entry_point is not None else spec.vector_entry_point


def entry_of(env_id: str) -> tuple[Any, dict[str, Any]] | None:
    """The loaded entry point of a registered id and the kwargs it is registered with (for a
    vector-only id: the vector creator, ``num_envs`` counted as given); None when the id is not
    registered or its entry point is missing or does not load."""
    spec = registry().get(env_id)
    ep = None if spec is None else _entry_point(spec)
    if ep is None:
        return None
    if isinstance(ep, str):
        try:
            ep = gym_registration.load_env_creator(ep)
        except Exception:  # noqa: BLE001 - the capture reports what is wrong with it
            return None
    given = {} if spec.entry_point is not None else {"num_envs": None}
    return ep, {**dict(spec.kwargs or {}), **given}


def matches(target: str, spec: Any) -> bool:
    """Whether a namespace (``"ALE/"``) or module prefix names the spec."""
    if target.endswith("/"):
        return bool(spec.id.startswith(target) or (spec.namespace or "") == target[:-1])
    ep = _entry_point(spec)
    if isinstance(ep, str):
        module = ep.partition(":")[0]
    else:
        while isinstance(ep, functools.partial):  # the module of the function it wraps
            ep = ep.func
        module = str(getattr(ep, "__module__", "") or "")
    return module == target or module.startswith(target + ".")


def select(targets: Sequence[str]) -> list[str]:
    """The env ids the targets name (empty: the whole registry), in registry order, each once;
    :class:`UnknownEnvError` for a target that matches nothing."""
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
        modular = all(part.isidentifier() for part in target.split("."))
        if not found and not target.endswith("/") and modular:
            with contextlib.suppress(ImportError):
                importlib.import_module(target)
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
