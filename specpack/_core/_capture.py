"""``capture``: resolve an env where it is known (registry, ``make``'s options, wrappers, kwargs,
code) and carry it into a :class:`SpecPack` that depends on none of it. Captures of an id are
memoised on the *exact* kwargs (``0``, ``0.0``, ``-0.0``, ``False`` differ)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import suppress
from typing import Any

from ._assemble import assembled, check_options, near_misses, refuse_near_miss
from ._assets import DEFAULT_LIMIT
from ._backends import Backend, detect_backend, get_backend
from ._carry.code import CodeRef, witness_of
from ._carry.payload import Witness, by_value_modules
from ._carry.values import SCALAR_TYPES, exact_key
from ._draft import Draft
from ._errors import CaptureError, _CaptureTypeError
from ._keywords import check_flag
from ._needs import check_needs_options, user_code, with_needs
from ._pack import SpecPack
from ._reach import built_requires
from ._surface import record_surface

__all__ = ["capture"]


def capture(
    target: Any,
    /,
    *,
    max_episode_steps: int | None = None,
    disable_env_checker: bool | None = None,
    autoreset: bool | None = None,
    apply_api_compatibility: bool | None = None,
    backend: str | None = None,
    by_value: bool | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    record_spaces: bool = False,
    assets: Iterable[Any] = (),
    self_contained: bool = False,
    max_asset_bytes: int = DEFAULT_LIMIT,
    **kwargs: Any,
) -> SpecPack:
    """Resolve ``target`` now and return a self-contained, picklable :class:`SpecPack`.

    Parameters
    ----------
    target
        A registered id (``"CartPole-v1"``, ``"my_pkg.envs:Thing-v2"``), an ``EnvSpec``, an
        env class or factory callable, or a live (wrapped) env.
    max_episode_steps
        As in ``gymnasium.make`` (``-1``: no ``TimeLimit``).
    disable_env_checker
        As in ``gymnasium.make``.
    autoreset, apply_api_compatibility
        A ``gym.make`` option (``backend="gym"`` only).
    backend
        ``"gymnasium"`` (default) or ``"gym"``; detected from a spec, class or live env.
    by_value
        Force how user code travels (``None``: by whether a fresh interpreter imports it).
    env_kwargs
        Env constructor kwargs as a mapping, merged with ``**kwargs``: for one named like a
        capture option (``{"backend": "jax"}``) or a near miss of one (``record_space=`` as a
        keyword is refused as a typo unless the constructor names it).
    record_spaces
        Build the env once now to record its spaces, metadata and render mode in the pack
        (``pack.observation_space``...): ``make_vec`` then builds none in its process (a live
        env's are always recorded). What the build imports is added to ``pack.requires``.
    assets
        More files or folders the env reads (an XML's ``<include>``s, meshes) than the kwargs
        and entry-point defaults name; each is recorded in ``pack.assets`` with its sha256.
    self_contained
        Carry the user's own code (from no installed distribution) and the assets' bytes by
        value, so that the pack builds without the project folder (``pack.requires`` names
        the installed distributions, whose code stays by reference).
    max_asset_bytes
        The most asset bytes a self-contained pack carries (default 64 MiB).
    **kwargs
        Env constructor kwargs, as ``gymnasium.make(id, **kwargs)`` takes them.

    Returns
    -------
    SpecPack
        The resolved, immutable pack.

    Raises
    ------
    CaptureError
        Naming the culprit: an unknown id (:class:`~specpack.UnknownEnvError`), a kwarg the env
        cannot take or a near miss of an option (:class:`~specpack.UnexpectedKwargError`), an
        uncarriable value, a wrapper's unrecorded arguments.
    ArgumentTypeError
        A flag that is not ``True``/``False`` (or ``None`` where that is its default).

    Example::

        pack = specpack.capture("CartPole-v1", max_episode_steps=200)
        env = pack.make()
    """
    if not (disable_env_checker is None and autoreset is None and apply_api_compatibility is None
            and by_value is None and record_spaces is False and self_contained is False):
        where = "specpack.capture()"
        check_flag(disable_env_checker, "disable_env_checker", where, optional=True)
        check_flag(autoreset, "autoreset", where, optional=True)
        check_flag(apply_api_compatibility, "apply_api_compatibility", where, optional=True)
        check_flag(by_value, "by_value", where, optional=True)
        check_flag(record_spaces, "record_spaces", where)
        check_flag(self_contained, "self_contained", where)
    suspects = near_misses(kwargs) if kwargs else None
    if env_kwargs is not None:
        if not isinstance(env_kwargs, Mapping):
            raise CaptureError("env_kwargs must be a mapping of env constructor kwargs, got "
                               f"{type(env_kwargs).__name__}")
        both = sorted(set(env_kwargs) & set(kwargs))
        if both:
            raise CaptureError(f"{', '.join(map(repr, both))} given both in env_kwargs and as "
                               "a keyword argument; give each once")
        kwargs = {**env_kwargs, **kwargs}
    if max_episode_steps is not None and type(max_episode_steps) is not int:
        raise CaptureError(f"max_episode_steps={max_episode_steps!r} must be an int (or -1 for "
                           "no TimeLimit)")
    options: dict[str, Any] = {}  # an if per option, not a comprehension: capture's hot path
    if max_episode_steps is not None:
        options["max_episode_steps"] = max_episode_steps
    if disable_env_checker is not None:
        options["disable_env_checker"] = disable_env_checker
    if autoreset is not None:
        options["autoreset"] = autoreset
    if apply_api_compatibility is not None:
        options["apply_api_compatibility"] = apply_api_compatibility
    if backend is not None and not isinstance(backend, str):
        raise CaptureError(f"backend={backend!r} must be 'gymnasium' or 'gym'; if 'backend' is "
                           "a kwarg of your env, pass env_kwargs={'backend': ...}")
    if (type(assets) is tuple and not assets and not self_contained
            and type(max_asset_bytes) is int and max_asset_bytes >= 0):
        named: tuple[Any, ...] = ()  # the defaults: nothing for check_needs_options to refuse
    else:
        named = check_needs_options(assets, self_contained, max_asset_bytes, by_value)
    if not self_contained:  # no context manager on the hot path
        return _capture(target, options, kwargs, backend, by_value, record_spaces, named,
                        False, max_asset_bytes, suspects)
    with by_value_modules(user_code):
        return _capture(target, options, kwargs, backend, by_value, record_spaces, named,
                        True, max_asset_bytes, suspects)


def _capture(target: Any, options: dict[str, Any], kwargs: dict[str, Any], backend: str | None,
             by_value: bool | None, record_spaces: bool, assets: tuple[Any, ...],
             self_contained: bool, limit: int, suspects: Mapping[str, str] | None) -> SpecPack:
    """``capture`` once its options are checked (``suspects``: the near misses of an option)."""
    if type(target) is str:
        draft = _capture_id(target, options, kwargs, backend, by_value, self_contained, suspects)
    elif isinstance(target, SpecPack):
        if options or kwargs or backend or by_value is not None or assets or self_contained:
            raise CaptureError("capture(pack, ...) got options: a pack is already resolved; "
                               "capture the original target again with the new options")
        return target
    else:
        impl = get_backend(backend) if backend else detect_backend(target)
        check_options(impl, options)
        if impl.owns(target) and not _is_spec(target):  # a live env
            if suspects:
                raise refuse_near_miss(*next(iter(suspects.items())), None)
            if options or kwargs:
                raise CaptureError(f"capture(env) takes no options or kwargs (got "
                                   f"{sorted([*options, *kwargs])}): a live env is captured as "
                                   "it is; to change it, capture its id or class with those "
                                   "arguments instead")
            draft = assembled(impl, impl.from_env(target), by_value, self_contained)[0]
            more: dict[str, Any] = {"requires": built_requires(target)}
            if not callable(getattr(target, "observation_space", None)):
                more["surface"] = record_surface(target)  # (multi-agent: spaces per agent)
            return with_needs(draft, assets, self_contained, limit, **more)
        if _is_spec(target):
            recipe = impl.from_spec(target, options, kwargs)
        elif callable(target):
            recipe = impl.from_callable(target, options, kwargs)
        else:
            raise _CaptureTypeError(f"cannot capture {type(target).__name__} {target!r}: pass an "
                                    "env id, an EnvSpec, an env class or factory, or a live env")
        draft = assembled(impl, recipe, by_value, self_contained, suspects)[0]
    pack = with_needs(draft, assets, self_contained, limit)
    return _with_spaces(pack) if record_spaces else pack


def _with_spaces(pack: SpecPack) -> SpecPack:
    """``pack`` with one build's surface, and what the built env's code needs added to
    ``requires``."""
    if pack.vector or pack.surface is not None:
        return pack
    env = pack.make()
    try:
        requires = {**pack.requires, **built_requires(env)}
        return pack.evolve(surface=record_surface(env), requires=requires)
    finally:
        with suppress(Exception):  # closing is best effort
            env.close()


#: capture(id) drafts, keyed on the exact form of the call. Each hit is re-validated against the
#: registry (backend.memo_valid) and, for code carried by value, each payload's witness.
_memo: dict[Any, tuple[Backend, Any, Draft, tuple[Witness, ...]]] = {}


def _capture_id(
    target: str, options: dict[str, Any], kwargs: dict[str, Any], backend: str | None,
    by_value: bool | None, self_contained: bool, suspects: Mapping[str, str] | None,
) -> Draft:
    """``capture("Some-v0", ...)``'s draft, memoised on the exact kwargs (not when a kwarg is
    a near miss of an option: the same kwargs given in ``env_kwargs=`` made the memo's pack)."""
    key: Any = None
    if not options and not kwargs:
        key = (target, backend, by_value, self_contained, (), ())
    elif not suspects and all(type(v) in SCALAR_TYPES for v in kwargs.values()):
        key = (target, backend, by_value, self_contained,
               tuple((k, exact_key(options[k])) for k in sorted(options)),
               tuple((k, exact_key(kwargs[k])) for k in sorted(kwargs)))
    if key is not None:
        hit = _memo.get(key)
        if (hit is not None and hit[0].memo_valid(target, hit[1])
                and all(w.holds() for w in hit[3])):
            return hit[2]
    impl = get_backend(backend or "gymnasium")
    if options:
        check_options(impl, options)
    # Snapshot the registry before resolving, check it after: a pack is filed only under the
    # state it was made from (an import during resolution or another thread may re-register).
    token = impl.memo_token(target) if key is not None else None
    draft, code_by_value = assembled(impl, impl.from_id(target, options, kwargs), by_value,
                                      self_contained, suspects)
    if token is not None and draft.plain and impl.memo_valid(target, token):
        witnesses: tuple[Witness, ...] = ()
        if code_by_value:  # else no walk: most captures carry no code by value
            found = [witness_of(c) for c in draft.carried()
                     if isinstance(c, CodeRef) and c.by_value]
            witnesses = tuple(w for w in found if w is not None)
        if not code_by_value or len(witnesses) == len(found):
            if len(_memo) > 4096:
                _memo.clear()
            _memo[key] = (impl, token, draft, witnesses)
    return draft


def _is_spec(obj: Any) -> bool:
    return type(obj).__name__ == "EnvSpec" and hasattr(obj, "entry_point")
