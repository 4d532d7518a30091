"""What ``capture`` takes besides env kwargs: its options, and the two checks of them.

A kwarg named as a near miss of an option (``self_containd``) would be stored as an env kwarg
and fail only at ``make()``: capture refuses it unless the constructor names it. ``autoreset``
and ``apply_api_compatibility`` are ``make`` options of gym and gymnasium 0.28/0.29 only.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping
from typing import Any

from ._backends import Backend
from ._backends.gymnasium.compat import LINE
from ._errors import UnexpectedKwargError

__all__ = ["check_near_misses", "check_options", "near_misses", "options_of", "refuse_near_miss"]

#: The options ``capture`` takes besides env kwargs (a kwarg of the same name goes in
#: ``env_kwargs=``).
_OPTIONS = ("max_episode_steps", "disable_env_checker", "autoreset", "apply_api_compatibility",
            "backend", "by_value", "env_kwargs", "record_spaces", "assets", "self_contained",
            "max_asset_bytes")
#: ``make`` options only the legacy lines take: gym's, and gymnasium 0.28/0.29's.
_LEGACY_OPTIONS = ("autoreset", "apply_api_compatibility")

#: Keyword names already judged by :func:`near_misses`: the option each is a near miss of, or
#: None (most captures pass the same few kwargs).
_near_cache: dict[str, str | None] = {}


def near_misses(kwargs: Mapping[str, Any]) -> dict[str, str] | None:
    """The ``**kwargs`` of ``capture`` named as a near miss of a capture option, each with the
    option; None if there is none (``env_kwargs=`` passes such a kwarg on purpose)."""
    found: dict[str, str] = {}
    for name in kwargs:
        if name in _near_cache:
            option = _near_cache[name]
        else:
            option = _near_option(name) if type(name) is str else None
            if len(_near_cache) > 4096:
                _near_cache.clear()
            _near_cache[name] = option
        if option is not None:
            found[name] = option
    return found or None


def _near_option(name: str) -> str | None:
    """The capture option ``name`` is a near miss of (case, ``_``/``-`` and a character or two
    aside), or None. Cutoff 0.8: not an env's own ``max_steps`` (0.69 to
    ``max_episode_steps``)."""
    folded = name.lower().replace("-", "").replace("_", "")
    for option in _OPTIONS:
        if folded == option.replace("_", ""):
            return option
    close = difflib.get_close_matches(name, _OPTIONS, n=1, cutoff=0.8)
    return close[0] if close else None


def refuse_near_miss(name: str, option: str, what: str | None) -> UnexpectedKwargError:
    """The refusal of the kwarg ``name``, a near miss of the capture option ``option``, for
    the env ``what`` (None: a live env, which takes no kwargs at all)."""
    if what is None:
        return UnexpectedKwargError(
            f"capture() got the keyword argument {name!r}, a near miss of the capture option "
            f"{option!r}; a live env is captured as it is and takes no env kwargs. Write "
            f"{option}=... for the option")
    return UnexpectedKwargError(
        f"capture() got the keyword argument {name!r}, a near miss of the capture option "
        f"{option!r}. {what[0].upper()}{what[1:]} takes **kwargs, so it would be stored as an "
        f"env kwarg and fail (or be ignored) only at make(). Write {option}=... for the option; "
        f"to pass {name!r} to the env on purpose, give it in env_kwargs: "
        f"specpack.capture(..., env_kwargs={{{name!r}: ...}})"
    )


def check_near_misses(entry: Any, suspects: Mapping[str, str], what: str) -> None:
    """Refuse each near miss of a capture option that ``entry`` does not name as a parameter
    (one it names is its own kwarg, not a typo)."""
    try:
        params = inspect.signature(entry).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]  # unreadable: nothing is named
    for name, option in suspects.items():
        param = params.get(name)
        if param is None or param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise refuse_near_miss(name, option, what)


def _legacy_options_taken(impl: Backend) -> bool:
    """Whether ``impl``'s ``make`` takes ``autoreset``/``apply_api_compatibility``: gym's does,
    and gymnasium's up to 0.29 (1.0 removed both)."""
    return impl.name == "gym" or (impl.name == "gymnasium" and LINE == "0")


def check_options(impl: Backend, options: dict[str, Any]) -> None:
    """Refuse gym-only ``make`` options for a backend whose ``make`` has no such option
    (gymnasium 0.28/0.29's backend resolves them as its ``make`` does)."""
    gym_only = [k for k in _LEGACY_OPTIONS if k in options]
    if gym_only and not _legacy_options_taken(impl):
        raise UnexpectedKwargError(
            f"{' and '.join(gym_only)}: only the legacy gym.make takes "
            f"{'this option' if len(gym_only) == 1 else 'these options'} (backend='gym'); "
            "gymnasium 1.x's make has none. For a gymnasium env, apply the wrapper yourself "
            "(e.g. gymnasium.wrappers.Autoreset) and capture the live env. If it is a kwarg of "
            "your env, pass it in env_kwargs={...}"
        )


def options_of(impl: Backend) -> tuple[str, ...]:
    """The capture options ``impl`` takes (what a mistyped kwarg may have meant)."""
    if _legacy_options_taken(impl):
        return _OPTIONS
    return tuple(o for o in _OPTIONS if o not in _LEGACY_OPTIONS)
