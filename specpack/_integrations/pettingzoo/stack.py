"""Walking a live PettingZoo stack: which object wraps which, and each layer's arguments.

Each object's own ``__dict__`` is read (PettingZoo wrappers forward every other attribute) and
every object is one layer, in its true order. A wrapper's arguments come from same-named
attributes (or :data:`ATTRIBUTE_NAMES`), a function-made one's from its closure (:mod:`.suits`);
what cannot be recovered faithfully is refused.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.conversions import (
    aec_to_parallel_wrapper,
    parallel_to_aec_wrapper,
    turn_based_aec_to_parallel_wrapper,
)
from pettingzoo.utils.env import AECEnv, ParallelEnv

from ..._core._backends._args import evidence_kwargs, init_params
from ..._core._errors import CaptureError, UnrecordedArgumentsError
from .suits import function_layer

__all__ = ["ATTRIBUTE_NAMES", "Layer", "inner", "is_env", "walk"]

#: A layer of a walked stack: the callable that rebuilds it (a wrapper class, a conversion
#: class or a wrapper function such as ``supersuit.frame_stack_v1``) and its kwargs.
Layer = tuple[Any, dict[str, Any]]

#: Wrappers that keep a constructor argument under an attribute of another name:
#: ``{class qualname: {parameter: attribute}}`` (module checked too).
ATTRIBUTE_NAMES: dict[tuple[str, str], dict[str, str]] = {
    ("pettingzoo.utils.wrappers.terminate_illegal", "TerminateIllegalWrapper"): {
        "illegal_reward": "_illegal_value",
    },
}

_CONVERSIONS = (aec_to_parallel_wrapper, turn_based_aec_to_parallel_wrapper)
_MAX_DEPTH = 1000


def is_env(obj: Any) -> bool:
    """Whether ``obj`` is a PettingZoo env of either API (wrappers included)."""
    return isinstance(obj, (AECEnv, ParallelEnv))


def inner(node: Any) -> Any:
    """The env ``node`` wraps, or None for a base env (from its own ``__dict__``: a wrapper
    answers ``node.env`` by forwarding)."""
    own = getattr(node, "__dict__", {})
    if isinstance(node, _CONVERSIONS):
        return own.get("aec_env")
    below = own.get("env")
    return below if is_env(below) else None


def walk(env: Any, notes: list[str]) -> tuple[list[Layer], Any]:
    """The layers of a live stack, outermost first, and its base env (UnrecordedArgumentsError:
    a layer's arguments cannot be recovered; CaptureError: not a PettingZoo stack, or cyclic)."""
    if not is_env(env):
        raise CaptureError(
            f"expected a PettingZoo AECEnv or ParallelEnv, got {type(env).__name__}"
        )
    layers: list[Layer] = []
    node = env
    for _ in range(_MAX_DEPTH):
        below = inner(node)
        if below is None:
            return layers, node
        cls = type(node)
        if isinstance(node, (*_CONVERSIONS, parallel_to_aec_wrapper)):
            layers.append((cls, {}))
        else:  # a wrapper a function made, else a wrapper class
            layers.append(function_layer(node, below, notes) or (cls, wrapper_kwargs(node, cls)))
        node = below
    raise CaptureError(f"the stack of {type(env).__name__} is more than {_MAX_DEPTH} deep "
                       "(a wrapper that wraps itself?)")


def wrapper_kwargs(node: Any, cls: type) -> dict[str, Any]:
    """A wrapper class's constructor kwargs, read back from the instance, or refused."""
    params = init_params(cls)
    if params is not None and not params:
        return {}
    renamed = ATTRIBUTE_NAMES.get((cls.__module__, cls.__qualname__), {})
    own = getattr(node, "__dict__", {})
    if params is not None:
        found: dict[str, Any] = {}
        missing = []
        for p in params:
            attr = renamed.get(p.name)
            if attr is not None and attr in own:
                found[p.name] = own[attr]
                continue
            seen = evidence_kwargs(node, [p])
            if seen is None:
                missing.append(p.name)
            else:
                found.update(seen)
        if not missing:
            return found
    taken = ", ".join(p.name for p in params or ()) or "unknown"
    holds = ", ".join(missing) if params is not None else "them"
    raise UnrecordedArgumentsError(
        f"the wrapper {cls.__module__}.{cls.__qualname__} takes constructor arguments ({taken}) "
        f"but no attribute of the instance holds {holds}, so it cannot be rebuilt faithfully; "
        f"store each argument under its own name (self.<arg> = <arg>) in {cls.__qualname__}"
        ".__init__, or capture the env below it and apply the wrapper in the worker"
    )
