"""The types a manifest's spec fields and ``make()``'s own wrappers' kwargs must have (a
hand-edited ``"max_episode_steps": "500"`` would fail far from the file), and the code a spec
names as strings, which ``allow`` checks too."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._errors import PackFormatError
from .._text import printable
from .._typedjson.walk import Path, path_text

__all__ = ["MAKE_WRAPPERS", "check_layer_kwargs", "check_spec", "is_make_wrapper",
           "spec_entry_points"]

#: Wrapper classes ``make()`` itself adds (in the backend's ``wrappers`` package); ``allow``
#: always admits them as layer classes.
MAKE_WRAPPERS = frozenset({
    "PassiveEnvChecker", "OrderEnforcing", "TimeLimit", "StepAPICompatibility",
    "EnvCompatibility",
})

_Check = tuple[Callable[[Any], bool], str]
_STR: _Check = (lambda x: type(x) is str, "a string")
_STR_OR_NONE: _Check = (lambda x: x is None or type(x) is str, "a string or null")
_NUMBER_OR_NONE: _Check = (
    lambda x: x is None or type(x) in (int, float) or isinstance(x, (np.integer, np.floating)),
    "a number or null")
_INT_OR_NONE: _Check = (lambda x: x is None or type(x) is int or isinstance(x, np.integer),
                        "an int or null")
_BOOL: _Check = (lambda x: type(x) is bool or isinstance(x, np.bool_), "true or false")
_POSITIVE_INT: _Check = (lambda x: type(x) is int and x > 0, "a positive int")

#: The spec fields gymnasium's and gym's ``EnvSpec`` take, and their types.
SPEC_FIELDS: dict[str, _Check] = {
    "id": _STR,
    "entry_point": _STR_OR_NONE,
    "reward_threshold": _NUMBER_OR_NONE,
    "nondeterministic": _BOOL,
    "max_episode_steps": _INT_OR_NONE,
    "order_enforce": _BOOL,
    "disable_env_checker": _BOOL,
    "autoreset": _BOOL,
    "apply_api_compatibility": _BOOL,
    "vector_entry_point": _STR_OR_NONE,
}

#: backend -> wrapper qualname -> kwarg -> type, for the wrappers ``make()`` adds.
LAYER_FIELDS: dict[str, dict[str, dict[str, _Check]]] = {
    "gymnasium": {
        "TimeLimit": {"max_episode_steps": _POSITIVE_INT},
        "OrderEnforcing": {"disable_render_order_enforcing": _BOOL},
    },
    "gym": {
        "TimeLimit": {"max_episode_steps": _INT_OR_NONE},
        "OrderEnforcing": {"disable_render_order_enforcing": _BOOL},
        "StepAPICompatibility": {"output_truncation_bool": _BOOL},
        "EnvCompatibility": {"render_mode": _STR_OR_NONE},
    },
}


def is_make_wrapper(backend: Any, module: str, qualname: str) -> bool:
    """Whether a layer class is one of the wrappers ``make()`` itself adds."""
    return bool(
        type(backend) is str
        and (module == f"{backend}.wrappers" or module.startswith(f"{backend}.wrappers."))
        and qualname in MAKE_WRAPPERS)


def _describe(x: Any) -> str:
    text = repr(x) if type(x) in (str, int, float, bool) else ""
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{type(x).__name__}{' ' + text if text else ''}"


def _check(value: Any, check: _Check, at: Path, source: str) -> None:
    ok, what = check
    if not ok(value):
        raise PackFormatError(f"{source}: {path_text(at)} must be {what}, got "
                              f"{printable(_describe(value))}")


def spec_entry_points(spec: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    """``(place, "module:attr")`` of the string ``entry_point`` and ``vector_entry_point`` of a
    decoded spec and of each ``additional_wrappers`` item's entry point."""
    for key in ("entry_point", "vector_entry_point"):
        value = spec.get(key)
        if type(value) is str:
            yield ("spec", key), value
    wrappers: Any = spec.get("additional_wrappers")
    for i, item in enumerate(wrappers if type(wrappers) in (tuple, list) else ()):
        if type(item) in (tuple, list) and len(item) == 3 and type(item[1]) is str:
            yield ((("spec", "additional_wrappers"), i), 1), item[1]


def check_spec(spec: dict[str, Any], source: str) -> None:
    """Refuse spec fields of the wrong type (:class:`PackFormatError` naming the field)."""
    for key, check in SPEC_FIELDS.items():
        if key in spec:
            _check(spec[key], check, ("spec", key), source)
    if "additional_wrappers" not in spec:
        return
    wrappers = spec["additional_wrappers"]
    at: Path = ("spec", "additional_wrappers")
    if type(wrappers) not in (tuple, list):
        raise PackFormatError(f"{source}: {path_text(at)} must be a tuple of (name, "
                              f"entry_point, kwargs), got {_describe(wrappers)}")
    for i, item in enumerate(wrappers):
        if type(item) not in (tuple, list) or len(item) != 3:
            raise PackFormatError(f"{source}: {path_text((at, i))} must be (name, "
                                  f"entry_point, kwargs), got {_describe(item)}")
        _check(item[0], _STR, ((at, i), 0), source)
        _check(item[1], _STR, ((at, i), 1), source)
        kwargs = item[2]
        if kwargs is not None and not (type(kwargs) is dict
                                       and all(type(k) is str for k in kwargs)):
            raise PackFormatError(f"{source}: {path_text(((at, i), 2))} must be an object "
                                  f"with string keys or null, got {_describe(kwargs)}")


def check_layer_kwargs(backend: str, i: int, module: str, qualname: str,
                       kwargs: dict[str, Any], source: str) -> None:
    """Refuse a ``make()`` wrapper's kwargs of the wrong type (e.g. TimeLimit's steps)."""
    if not is_make_wrapper(backend, module, qualname):
        return
    for key, check in LAYER_FIELDS.get(backend, {}).get(qualname, {}).items():
        if key in kwargs:
            _check(kwargs[key], check, ((("layers", i), "kwargs"), key), source)
