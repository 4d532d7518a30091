"""What building and live-stack resolution share across gymnasium and gym: constructing the
base env and naming its failure, wrapping failures, and a live stack's recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import BuildError, build_error_for
from ._registry import spec_made
from .recipe import Recipe

__all__ = ["construct", "live_recipe", "wrap_failure", "wrapping"]


def _no_hint(e: BaseException) -> str:
    return ""


def construct(
    label: str,
    entry_name: str,
    creator: Any,
    kwargs: dict[str, Any],
    env_type: type | None,
    not_env_fix: str,
    hint: Callable[[BaseException], str] = _no_hint,
) -> Any:
    """``creator(**kwargs)``, a constructor failure named by pack, and the env type checked.

    ``env_type=None`` skips the type check (gym's API-compatibility mode builds old-API envs).
    """
    try:
        env = creator(**kwargs)
    except Exception as e:
        raise build_error_for(e)(
            f"the env constructor of pack {label} ({entry_name}) raised "
            f"{type(e).__name__}: {e}{hint(e)}"
        ) from e
    if env_type is not None and not isinstance(env, env_type):
        raise BuildError(
            f"the entry point of pack {label} returned {type(env).__name__}, not a "
            f"{env_type.__module__.partition('.')[0]}.Env; {not_env_fix}"
        )
    return env


def wrap_failure(
    label: str, e: Exception, hint: Callable[[BaseException], str] = _no_hint
) -> BuildError:
    """The BuildError for a failure while applying wrappers (a BuildError passes through)."""
    if isinstance(e, BuildError):
        return e
    return BuildError(f"wrapping pack {label} failed: {type(e).__name__}: {e}{hint(e)}")


@contextmanager
def wrapping(label: str, hint: Callable[[BaseException], str] = _no_hint) -> Iterator[None]:
    """Turn a failure while applying wrappers into a BuildError naming the pack."""
    try:
        yield
    except Exception as e:
        err = wrap_failure(label, e, hint)
        if err is e:
            raise
        raise err from e


def live_recipe(
    layers: list[tuple[type, dict[str, Any]]],
    base: Any,
    spec: Any,
    *,
    spec_meta: Callable[[Any], dict[str, Any]],
    base_kwargs: Callable[[Any, type, list[str]], dict[str, Any]],
    make_inner: frozenset[str],
) -> Recipe:
    """The recipe of a live stack (``layers`` outermost first, down to ``base``).

    The base env's kwargs come from its spec when ``make`` built it from that spec, else from
    what the env recorded (``base_kwargs``); the notes say where the stack's shape differs from
    what ``make`` builds (a ``TimeLimit`` that is not innermost, more than one).
    """
    bcls = type(base)
    notes: list[str] = []
    entry_string: str | None = None
    if spec is not None and spec_made(spec, bcls):
        kwargs = dict(spec.kwargs)
        if isinstance(spec.entry_point, str):
            entry_string = spec.entry_point
        meta = spec_meta(spec)
    else:
        kwargs = base_kwargs(base, bcls, notes)
        meta = spec_meta(spec) if spec is not None else {}
        if spec is not None and isinstance(spec.entry_point, str):
            meta["entry_point"] = spec.entry_point
    names = [c.__qualname__ for c, _ in layers]
    if "TimeLimit" in names:
        below = [n for n in names[names.index("TimeLimit") + 1 :] if n not in make_inner]
        if below:
            notes.append(
                f"TimeLimit is not innermost: {', '.join(below)} sit below it (make's "
                "env.spec would reorder this stack; the pack keeps it exactly)"
            )
    if names.count("TimeLimit") > 1:
        notes.append("the stack has more than one TimeLimit; every one is kept")
    return Recipe(
        id=spec.id if spec is not None else None,
        entry=None if entry_string else bcls,
        entry_string=entry_string,
        kwargs=kwargs,
        spec=meta,
        layers=layers,
        auto_render=False,
        notes=notes,
    )
