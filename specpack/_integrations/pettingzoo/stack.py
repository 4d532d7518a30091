"""Walking a live PettingZoo stack: which object wraps which, and each layer's arguments.

Each object's own ``__dict__`` is read (wrappers forward every other attribute). A wrapper
class's arguments come from same-named attributes (or :data:`ATTRIBUTE_NAMES`); a wrapper a
function made (SuperSuit's ``frame_stack_v1(env, 4)``) holds them in its local code's closure,
and they are *proved*: the function applied again to the env below must give equal cells.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from pettingzoo.utils import conversions
from pettingzoo.utils.env import AECEnv, ParallelEnv

from ..._core._backends._args import evidence_kwargs, init_params
from ..._core._errors import CaptureError, UnrecordedArgumentsError
from ..._core._text import one_line, short

__all__ = ["ATTRIBUTE_NAMES", "BASIC_TRANSFORMS", "Layer", "cells", "function_layer", "inner",
           "is_env", "walk"]

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

_CONVERSIONS = (conversions.aec_to_parallel_wrapper,
                conversions.turn_based_aec_to_parallel_wrapper)
_MAX_DEPTH = 1000

#: Instance attributes of SuperSuit's lambda wrappers that hold the functions they apply (each
#: also looked up with a leading underscore, as ``aec_reward_lambda`` keeps it).
_FUNCTION_ATTRS = ("change_observation_fn", "change_obs_space_fn", "change_action_fn",
                   "change_space_fn", "change_reward_fn")
_LOCALS = ".<locals>."

#: ``basic_obs_wrapper``'s transform module -> (public function, its kwargs from ``param``).
BASIC_TRANSFORMS: dict[str, tuple[str, Callable[[Any], dict[str, Any]]]] = {
    "color_reduction": ("color_reduction_v0", lambda p: {"mode": p}),
    "resize": ("resize_v1", lambda p: {"x_size": p[0], "y_size": p[1], "linear_interp": p[2]}),
    "dtype": ("dtype_v0", lambda p: {"dtype": p}),
    "flatten": ("flatten_v0", lambda p: {}),
    "reshape": ("reshape_v0", lambda p: {"shape": p}),
    "normalize_obs": ("normalize_obs_v0", lambda p: {"env_min": p[0], "env_max": p[1]}),
}
_BASIC = ("supersuit.generic_wrappers.basic_wrappers", "basic_obs_wrapper")


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
        raise CaptureError(f"expected a PettingZoo AECEnv or ParallelEnv, got {type(env).__name__}")
    layers: list[Layer] = []
    node = env
    for _ in range(_MAX_DEPTH):
        below = inner(node)
        if below is None:
            return layers, node
        cls = type(node)
        if isinstance(node, (*_CONVERSIONS, conversions.parallel_to_aec_wrapper)):
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
            if renamed.get(p.name) in own:
                found[p.name] = own[renamed[p.name]]
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


def _local_code(node: Any) -> list[Any]:
    """The functions and classes local to some function that ``node`` holds."""
    own = getattr(node, "__dict__", {})
    found: list[Any] = []
    modifier = own.get("modifier_class")
    if isinstance(modifier, type) and _LOCALS in modifier.__qualname__:
        found.append(modifier)
    for attr in _FUNCTION_ATTRS:
        fn = own.get(attr, own.get(f"_{attr}"))
        if isinstance(fn, types.FunctionType) and _LOCALS in fn.__qualname__:
            found.append(fn)
    return found


def _functions(obj: Any) -> Iterator[types.FunctionType]:
    """``obj`` if it is a function, else the functions defined in a class body."""
    if isinstance(obj, types.FunctionType):
        yield obj
    elif isinstance(obj, type):
        for value in vars(obj).values():
            fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
            if isinstance(fn, types.FunctionType):
                yield fn


def cells(code: list[Any]) -> dict[str, Any]:
    """Every closure cell of the given local code, by variable name (``__class__`` left out)."""
    out: dict[str, Any] = {}
    for obj in code:
        for fn in _functions(obj):
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
                if name != "__class__":
                    with contextlib.suppress(ValueError):  # an empty cell
                        out[name] = cell.cell_contents
    return out


def _outer(code: list[Any]) -> tuple[str, str] | None:
    """``(module, name)`` of the one function the local code was defined in."""
    homes = {(obj.__module__, obj.__qualname__.rsplit(_LOCALS, 1)[0]) for obj in code}
    if len(homes) != 1:
        return None
    home = homes.pop()
    return home if "." not in home[1] else None


def _alike(a: Any, b: Any, depth: int = 0) -> bool:
    """Whether two closure values are the same argument (code compared by name)."""
    if depth > 20:
        return False
    if isinstance(a, (types.FunctionType, type)) or isinstance(b, (types.FunctionType, type)):
        return (getattr(a, "__module__", None), getattr(a, "__qualname__", None)) == (
            getattr(b, "__module__", None), getattr(b, "__qualname__", None))
    if isinstance(a, types.ModuleType) or isinstance(b, types.ModuleType):
        return a is b
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_alike(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_alike(a[k], b[k], depth + 1) for k in a)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable values are different arguments
        return False


def _candidates(fn: Any, known: dict[str, Any]) -> list[dict[str, Any]]:
    """Argument sets to try: the known ones, each unknown at its default (a bool: either)."""
    params = [p for p in list(inspect.signature(fn).parameters.values())[1:]
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    choices: list[list[tuple[str, Any]]] = []
    for p in params:
        if p.name in known:
            choices.append([(p.name, known[p.name])])
        elif p.default is p.empty:
            return []
        elif isinstance(p.default, bool):
            choices.append([(p.name, p.default), (p.name, not p.default)])
        else:
            choices.append([(p.name, p.default)])
    return [dict(combo) for combo in itertools.product(*choices)][:16]


def _public(code: list[Any], live: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None:
    """The function that made the wrapper and the arguments its closure shows."""
    home = _outer(code)
    if home is None:
        return None
    fn = getattr(sys.modules.get(home[0]), home[1], None)
    if home == _BASIC:
        transform = live.get("module")
        name = getattr(transform, "__name__", "").rpartition(".")[2]
        if name not in BASIC_TRANSFORMS or "param" not in live:
            return None
        public, unpack = BASIC_TRANSFORMS[name]
        fn = getattr(sys.modules.get("supersuit"), public, None)
        return (fn, unpack(live["param"])) if fn is not None else None
    if not isinstance(fn, types.FunctionType) or fn.__qualname__ != home[1]:
        return None
    return fn, {k: v for k, v in live.items() if k in inspect.signature(fn).parameters}


def function_layer(node: Any, below: Any, notes: list[str]) -> tuple[Any, dict[str, Any]] | None:
    """``(function, kwargs)`` that rebuild ``node`` on ``below``, or None if no function made it
    (UnrecordedArgumentsError if one did but no argument set reproduces it)."""
    code = _local_code(node)
    if not code:
        return None
    live = cells(code)
    found = _public(code, live)
    what = f"{type(node).__qualname__} (made by {code[0].__qualname__.rsplit(_LOCALS, 1)[0]})"
    if found is None:
        raise UnrecordedArgumentsError(
            f"the wrapper {what} holds code local to a function that cannot be looked up by "
            "name, so it cannot be rebuilt; define the wrapper function at module level, or "
            "capture the env below it and apply the wrapper in the worker"
        )
    fn, known = found
    errors = []
    for kwargs in _candidates(fn, known):
        try:
            probe = fn(below, **kwargs)
        except Exception as e:  # noqa: BLE001 - a candidate that does not apply is no match
            errors.append(one_line(e, 200))
            continue
        if type(probe) is type(node) and _same_cells(cells(_local_code(probe)), live):
            unread = sorted(set(kwargs) - set(known))
            if unread:
                notes.append(
                    f"{fn.__qualname__}: {', '.join(f'{k}={short(kwargs[k])}' for k in unread)} "
                    "no closure holds; applying the function again with that value gives the "
                    "same wrapper"
                )
            return fn, kwargs
    why = f" (it raised {errors[0]})" if errors else ""
    raise UnrecordedArgumentsError(
        f"the wrapper {what}: applying {fn.__module__}.{fn.__qualname__} again with the "
        f"arguments its closure shows ({short(known)}) does not reproduce it{why}, so its "
        "arguments cannot be recovered; capture the env below it and apply the wrapper in the "
        "worker, or capture a factory function that builds the whole stack"
    )


def _same_cells(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(_alike(a[k], b[k]) for k in a)
