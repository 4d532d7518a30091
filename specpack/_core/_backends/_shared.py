"""What building shares across the backends: the build plan kept per blueprint, constructing
the base env and naming its failure (with the keywords a constructor takes), wrapping failures,
a fresh ``env.spec``. A live stack's recipe is capture's (:mod:`._live`).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Generic, NoReturn, TypeVar

from .._errors import BuildError, BuildTypeError, build_error_for
from .._text import suggest
from .recipe import Blueprint

__all__ = ["Plans", "Step", "construct", "fresh_spec", "keyword_names", "load_steps", "no_hint",
           "raise_wrapped"]

#: One layer of a build plan: the loaded callable, its ready kwargs (None: materialise them
#: per build, they are not plain) and its lowered kwargs.
Step = tuple[Any, "dict[str, Any] | None", Mapping[str, Any]]

P = TypeVar("P")


class Plans(Generic[P]):
    """A backend's build plans, one per blueprint in this process, made on first use.

    Kept weakly, keyed by the blueprint (never inside the pack): a plan goes with its pack.
    """

    __slots__ = ("_make", "_plans")

    def __init__(self, make: Callable[[Blueprint], P]) -> None:
        self._make = make
        self._plans: weakref.WeakKeyDictionary[Blueprint, P] = weakref.WeakKeyDictionary()

    def of(self, bp: Blueprint) -> P:
        """The plan of ``bp``, made now if this process has none yet."""
        plan = self._plans.get(bp)
        if plan is None:
            plan = self._plans[bp] = self._make(bp)
        return plan


def load_steps(
    bp: Blueprint, fit: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None
) -> tuple[Step, ...]:
    """Every layer of ``bp`` loaded, innermost first, plain kwargs made ready once.

    ``fit(cls, kwargs)`` adapts non-empty plain kwargs to this process (gymnasium's releases).
    """
    steps: list[Step] = []
    for ref, lowered, plain in bp.layers:
        layer = ref.load()
        fixed: dict[str, Any] | None = None
        if plain:
            fixed = dict(lowered)
            if fit is not None and fixed:
                fixed = fit(layer, fixed)
        steps.append((layer, fixed, lowered))
    return tuple(steps)


def fresh_spec(template: Any, kwargs: dict[str, Any]) -> Any:
    """A copy of a plan's ``EnvSpec`` template holding this build's kwargs (``make`` gives
    every env a spec of its own)."""
    cls = template.__class__
    spec = cls.__new__(cls)
    spec.__dict__.update(template.__dict__)
    spec.kwargs = kwargs
    return spec


def keyword_names(target: Any) -> tuple[str, ...] | None:
    """The names ``target`` takes by keyword; None when it takes ``**kwargs`` or is unknowable."""
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    params = sig.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def no_hint(e: BaseException) -> str:
    """The hint of a failure that needs none (the default of :func:`construct`)."""
    return ""


def _keyword_hint(e: BaseException, creator: Any, kwargs: dict[str, Any]) -> str:
    """``; did you mean 'render_mode'?`` when ``e`` is the ``TypeError`` of a kwarg the
    constructor does not take (``pack.make(render_mod=...)``); read only once it failed."""
    if not isinstance(e, TypeError) or not kwargs:
        return ""
    names = keyword_names(creator)
    unknown = [k for k in kwargs if names is not None and k not in names]
    hint = suggest(unknown[0], [n for n in names or () if n != "self"]) if unknown else ""
    return f";{hint}" if hint else ""


def construct(
    label: str,
    entry_name: str,
    creator: Any,
    kwargs: dict[str, Any],
    env_type: type | None,
    not_env_fix: str,
    hint: Callable[[BaseException], str] = no_hint,
) -> Any:
    """``creator(**kwargs)``, a constructor failure named by pack, and the env type checked.

    ``env_type=None`` skips the type check (gym's API-compatibility mode builds old-API envs).
    """
    try:
        env = creator(**kwargs)
    except Exception as e:
        raise build_error_for(e)(
            f"the env constructor of pack {label} ({entry_name}) raised "
            f"{type(e).__name__}: {e}{_keyword_hint(e, creator, kwargs)}{hint(e)}"
        ) from e
    if env_type is not None and not isinstance(env, env_type):
        raise BuildTypeError(
            f"the entry point of pack {label} returned {type(env).__name__}, not a "
            f"{env_type.__module__.partition('.')[0]}.Env; {not_env_fix}"
        )
    return env


def raise_wrapped(
    label: str, e: Exception, hint: Callable[[BaseException], str] = no_hint
) -> NoReturn:
    """Raise ``e``, a failure while applying wrappers, as a BuildError naming the pack (a
    BuildError as it is). Called in the ``except`` clause that caught ``e``: an inline
    ``try`` costs a build nothing, a context manager about a microsecond."""
    if isinstance(e, BuildError):
        raise e
    raise BuildError(f"wrapping pack {label} failed: {type(e).__name__}: {e}{hint(e)}") from e
