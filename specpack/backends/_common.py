"""Build and register steps that gymnasium and gym share (their libraries differ, not these).

Each backend keeps what is its own (``make``'s wrapper logic, the env type, error hints);
constructing the base env, wrapping failures into :class:`~specpack.errors.BuildError` and
putting a pack into a registry are written once, here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import BuildError, CaptureError

if TYPE_CHECKING:
    from ..pack import SpecPack

__all__ = ["PackEntryPoint", "construct", "import_id_module", "memo_token", "memo_valid", "register_pack", "wrap_failure", "wrapping"]


def import_id_module(env_id: str) -> str:
    """For gymnasium's ``"module:Env-v0"`` id form, import the module here; return the id.

    Importing is how such a module registers its envs; a failure is a CaptureError that names
    the module and carries the import error.
    """
    if ":" not in env_id:
        return env_id
    module, _, name = env_id.partition(":")
    try:
        importlib.import_module(module)
    except Exception as e:
        raise CaptureError(
            f"{env_id!r}: importing the module {module!r} to register {name!r} failed "
            f"({type(e).__name__}: {e}); install it or fix the module name"
        ) from e
    return name


def _no_hint(e: BaseException) -> str:
    return ""


def construct(
    pack: SpecPack,
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
        raise BuildError(
            f"the env constructor of pack {pack.label} ({pack.entry_point.name}) raised "
            f"{type(e).__name__}: {e}{hint(e)}"
        ) from e
    if env_type is not None and not isinstance(env, env_type):
        raise BuildError(
            f"the entry point of pack {pack.label} returned {type(env).__name__}, not a "
            f"{env_type.__module__.partition('.')[0]}.Env; {not_env_fix}"
        )
    return env


def wrap_failure(
    pack: SpecPack, e: Exception, hint: Callable[[BaseException], str] = _no_hint
) -> BuildError:
    """The BuildError for a failure while applying wrappers (a BuildError passes through)."""
    if isinstance(e, BuildError):
        return e
    return BuildError(f"wrapping pack {pack.label} failed: {type(e).__name__}: {e}{hint(e)}")


@contextmanager
def wrapping(pack: SpecPack, hint: Callable[[BaseException], str] = _no_hint) -> Iterator[None]:
    """Turn a failure while applying wrappers into a BuildError naming the pack."""
    try:
        yield
    except Exception as e:
        err = wrap_failure(pack, e, hint)
        if err is e:
            raise
        raise err from e


class PackEntryPoint:
    """A picklable registry entry point that builds a pack (``make`` then adds nothing)."""

    def __init__(self, pack: SpecPack) -> None:
        self.pack = pack

    def __call__(self, **kwargs: Any) -> Any:
        return self.pack.make(**kwargs)

    def __repr__(self) -> str:
        return f"PackEntryPoint({self.pack.label})"


def register_pack(
    pack: SpecPack,
    env_id: str | None,
    registry: Any,
    register: Callable[..., Any],
    library: str,
) -> str:
    """Register ``pack`` under ``env_id`` (default ``pack.id``) in ``registry``; idempotent.

    The entry point builds the whole pack, so the registration turns off everything ``make``
    would add (checker, order enforcing, time limit): ``make(id)`` equals ``pack.make()``.
    """
    env_id = env_id or pack.id
    if not env_id:
        raise CaptureError(
            "this pack has no id (it was captured from a callable); pass one: "
            "pack.register('MyEnv-v0')"
        )
    existing = registry.get(env_id)
    if existing is not None:
        ep = existing.entry_point
        if isinstance(ep, PackEntryPoint) and ep.pack == pack:
            return env_id
        raise CaptureError(
            f"{env_id!r} is already registered in {library}'s registry (entry_point={ep!r}); pass "
            f"another id to pack.register(), or {library}.envs.registry.pop(id) first"
        )
    register(
        id=env_id,
        entry_point=PackEntryPoint(pack),
        disable_env_checker=True,
        order_enforce=False,
        nondeterministic=pack.nondeterministic,
        reward_threshold=pack.spec.get("reward_threshold"),
    )
    return env_id


def memo_token(registry: Any, env_id: str, *, strings_only: bool) -> Any:
    """A snapshot of what resolving ``env_id`` read from ``registry`` (None: do not memoise).

    ``capture`` may return an earlier, identical pack while :func:`memo_valid` holds: same
    spec object, unchanged fields and kwargs, same object behind the entry point.
    """
    if ":" in env_id:
        return None
    spec = registry.get(env_id)
    if spec is None or spec.entry_point is None:
        return None
    if strings_only and not isinstance(spec.entry_point, str):
        return None
    return (spec, dict(spec.__dict__), dict(spec.kwargs), _entry_now(spec.entry_point))


def memo_valid(registry: Any, env_id: str, token: Any) -> bool:
    """Whether ``registry`` still holds exactly what ``token`` snapshotted."""
    spec, fields, kwargs, entry = token
    current = registry.get(env_id)
    if current is None or current is not spec:
        return False
    return bool(
        current.__dict__ == fields
        and current.kwargs == kwargs
        and _entry_now(current.entry_point) is entry
    )


def _entry_now(entry: Any) -> Any:
    """The object an entry point (callable or ``module:attr`` string) names right now."""
    if not isinstance(entry, str):
        return entry
    modname, _, attr = entry.partition(":")
    obj: Any = sys.modules.get(modname)
    try:
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        return None
    return obj
