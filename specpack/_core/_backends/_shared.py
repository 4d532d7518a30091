"""What building shares across the backends: the build plan kept per blueprint, constructing
the base env, naming a failure, a fresh ``env.spec``."""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Generic, NoReturn, TypeVar

from .._errors import BuildError, BuildTypeError, build_error_for
from .._text import suggest
from .recipe import Blueprint

__all__ = ["HUMAN_RENDERING", "Plans", "Step", "construct", "fresh_spec", "keyword_names",
           "load_steps", "name_of", "raise_wrapped"]

#: One layer of a build plan: the loaded callable, its ready kwargs (None: materialise them
#: per build, they are not plain) and its lowered kwargs.
Step = tuple[Any, "dict[str, Any] | None", Mapping[str, Any]]

P = TypeVar("P")
#: What a build failure's message ends with: a text, or a function of the failure giving it.
Hint = str | Callable[[BaseException], str]

#: The warning of ``make`` (gymnasium's and gym's) when it adds ``HumanRendering``.
HUMAN_RENDERING = ("You are trying to use 'human' rendering for an environment that doesn't "
                   "natively support it. The HumanRendering wrapper is being applied to your "
                   "environment.")


class Plans(Generic[P]):
    """A backend's build plans, one per blueprint in this process, made on first use; kept
    weakly, keyed by the blueprint (never inside the pack): a plan goes with its pack."""

    __slots__ = ("_make", "_plans")

    def __init__(self, make: Callable[[Blueprint], P]) -> None:
        self._make = make
        self._plans: weakref.WeakKeyDictionary[Blueprint, P] = weakref.WeakKeyDictionary()

    def of(self, bp: Blueprint) -> P:
        plan = self._plans.get(bp)
        if plan is None:
            plan = self._plans[bp] = self._make(bp)
        return plan


def load_steps(
    bp: Blueprint, fit: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None
) -> tuple[Step, ...]:
    """Every layer of ``bp`` loaded, innermost first, plain kwargs made ready once (and fitted
    to this process by ``fit(cls, kwargs)`` when not empty)."""
    steps: list[Step] = []
    for ref, lowered, plain in bp.layers:
        layer = ref.load()
        fixed = dict(lowered) if plain else None
        if fit is not None and fixed:
            fixed = fit(layer, fixed)
        steps.append((layer, fixed, lowered))
    return tuple(steps)


def fresh_spec(template: Any, kwargs: dict[str, Any]) -> Any:
    """A copy of a plan's ``EnvSpec`` template holding this build's kwargs."""
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


def name_of(obj: object) -> str:
    """``module:qualname`` of a class or function (how entry points are written)."""
    return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', '?')}"


def _text(hint: Hint, e: BaseException) -> str:
    return hint if isinstance(hint, str) else hint(e)


def _keyword_hint(e: BaseException, creator: Any, kwargs: dict[str, Any]) -> str:
    """``; did you mean 'render_mode'?`` for the ``TypeError`` of a kwarg ``creator`` lacks."""
    names = keyword_names(creator) if isinstance(e, TypeError) and kwargs else None
    unknown = [k for k in kwargs if k not in names] if names is not None else []
    hint = suggest(unknown[0], [n for n in names or () if n != "self"]) if unknown else ""
    return f";{hint}" if hint else ""


def construct(label: str, entry_name: str, creator: Any, kwargs: dict[str, Any],
              env_type: type | None, not_env_fix: str, hint: Hint = "") -> Any:
    """``creator(**kwargs)``, a failure named by pack, and the env type checked (``None``
    skips it: gym's API-compatibility mode builds old-API envs)."""
    try:
        env = creator(**kwargs)
    except Exception as e:
        raise build_error_for(e)(
            f"the env constructor of pack {label} ({entry_name}) raised "
            f"{type(e).__name__}: {e}{_keyword_hint(e, creator, kwargs)}{_text(hint, e)}"
        ) from e
    if env_type is not None and not isinstance(env, env_type):
        raise BuildTypeError(f"the entry point of pack {label} returned {type(env).__name__}, not "
                             f"a {env_type.__module__.partition('.')[0]}.Env; {not_env_fix}")
    return env


def raise_wrapped(label: str, e: Exception, hint: Hint = "") -> NoReturn:
    """Raise ``e``, a failure while applying wrappers, as a BuildError naming the pack (a
    BuildError as it is). Called from an inline ``except``: a context manager costs ~1 µs."""
    if isinstance(e, BuildError):
        raise e
    raise BuildError(f"wrapping pack {label} failed: {type(e).__name__}: {e}"
                     f"{_text(hint, e)}") from e
