"""``capture``: resolve an env where it is known, and carry it into a :class:`SpecPack`.

Resolution happens here, in the calling process: the registry lookup, ``make``'s option
logic, the wrapper stack, the check that every kwarg can be taken, and the choice of carrying
each piece of code by reference or by value. After ``capture`` returns, nothing about the env
depends on the registry, on what a worker has imported, or on the source file of by-value code.

Repeated captures of the same id are served from a memo keyed on the *exact* form of the
kwargs (:func:`~specpack._carry.values.exact_key`: ``0``, ``0.0``, ``-0.0``, ``False`` and ``0j``
are different keys), and each hit is re-validated against the registry.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Iterable, Mapping
from typing import Any

from ._assets import DEFAULT_LIMIT
from ._backends import Backend, Recipe, check_kwargs, detect_backend, get_backend
from ._carry.code import CodeRef, code_ref, code_ref_from_string, witness_of
from ._carry.payload import Witness, by_value_modules
from ._carry.values import (
    MAX_INT_BITS,
    SCALAR_TYPES,
    Blob,
    exact_key,
    iter_carried,
    lower_mapping,
)
from ._draft import Draft
from ._errors import CaptureError, UnexpectedKwargError, _CaptureTypeError, _OldRenderAPIError
from ._keywords import check_flag
from ._needs import (
    check_needs_options,
    user_by_value,
    user_code,
    with_needs,
)
from ._pack import Layer, SpecPack
from ._provenance import distribution_of, imported_during
from ._reach import built_requires
from ._surface import record_surface
from ._versions import version_mapping

__all__ = ["capture"]

#: The options ``capture`` takes besides env kwargs (a kwarg of the same name goes in
#: ``env_kwargs=``).
OPTIONS = ("max_episode_steps", "disable_env_checker", "autoreset", "apply_api_compatibility",
           "backend", "by_value", "env_kwargs", "record_spaces", "assets", "self_contained",
           "max_asset_bytes")


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
    autoreset
        A ``gym.make`` option (``backend="gym"`` only).
    apply_api_compatibility
        A ``gym.make`` option (``backend="gym"`` only).
    backend
        ``"gymnasium"`` (default) or ``"gym"``; specs, classes and live envs are detected by
        type.
    by_value
        Force how user code travels: ``None`` decides by whether a fresh interpreter could
        import it.
    env_kwargs
        Env constructor kwargs as a mapping: for kwargs named like one of these options
        (``env_kwargs={"backend": "jax"}``), or a near miss of one (a keyword argument
        ``record_space=`` is refused as a typo of ``record_spaces`` unless the constructor
        names that parameter; ``env_kwargs={"record_space": 3}`` passes it on purpose).
        Merged with ``**kwargs``.
    record_spaces
        Build the env once now to record its spaces, metadata and render mode in the pack
        (``pack.observation_space``...), so that ``make_vec`` and other creators need not build
        one in their process. A live env's are always recorded. The distributions the build
        imports are then added to ``pack.requires``.
    assets
        More files or folders the env reads (a folder for an XML with ``<include>``s or
        meshes), besides the kwargs and entry-point defaults that name an existing file, which
        are found on their own. Each is recorded in ``pack.assets`` with its sha256.
    self_contained
        Carry the user's own code (modules from no installed distribution) by value, and the
        assets' bytes, so that the pack builds on a node without the project folder. Code from
        installed distributions stays by reference (``pack.requires`` names them).
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
        Naming the culprit on bad input: unknown id (:class:`~specpack.UnknownEnvError`), a
        kwarg the constructor cannot take or a near miss of a capture option
        (:class:`~specpack.UnexpectedKwargError`, with a suggestion), an uncarriable value,
        unrecorded wrapper arguments.
    ArgumentTypeError
        A flag (``record_spaces``, ``self_contained``, ``disable_env_checker``, ``by_value``,
        ...) that is not ``True``/``False`` (or ``None`` where that is its default).

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
    suspects = _near_misses(kwargs) if kwargs else None
    if env_kwargs is not None:
        if not isinstance(env_kwargs, Mapping):
            raise CaptureError(
                f"env_kwargs must be a mapping of env constructor kwargs, got "
                f"{type(env_kwargs).__name__}"
            )
        both = sorted(set(env_kwargs) & set(kwargs))
        if both:
            raise CaptureError(f"{', '.join(map(repr, both))} given both in env_kwargs and as "
                               "a keyword argument; give each once")
        kwargs = {**env_kwargs, **kwargs}
    options: dict[str, Any] = {}
    if max_episode_steps is not None:
        if type(max_episode_steps) is not int:
            raise CaptureError(
                f"max_episode_steps={max_episode_steps!r} must be an int (or -1 for no TimeLimit)"
            )
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
    if not self_contained:
        return _capture(target, options, kwargs, backend, by_value, record_spaces, named,
                        False, max_asset_bytes, suspects)
    with by_value_modules(user_code):
        return _capture(target, options, kwargs, backend, by_value, record_spaces, named,
                        True, max_asset_bytes, suspects)


#: Keyword names already judged by :func:`_near_misses`: the option each is a near miss of,
#: or None (most captures pass the same few kwargs: ``render_mode``...).
_near_cache: dict[str, str | None] = {}

#: How close (``difflib`` ratio) a kwarg's name must be to an option's to count as its typo:
#: one or two characters off (``self_containd``, ``record_space``, ``max_episode_step``), not
#: an env's own ``max_steps`` (0.69 to ``max_episode_steps``).
_NEAR = 0.8


def _near_misses(kwargs: Mapping[str, Any]) -> dict[str, str] | None:
    """The keyword arguments of ``capture(..., **kwargs)`` whose name is a near miss of a
    capture option (``self_containd``: ``self_contained``), each with the option; None if
    there is none. Names given in ``env_kwargs=`` are not asked about: that is the way to pass
    such a kwarg on purpose."""
    found: dict[str, str] | None = None
    for name in kwargs:
        if name in _near_cache:
            option = _near_cache[name]
        else:
            option = _near_option(name) if type(name) is str else None
            if len(_near_cache) > 4096:
                _near_cache.clear()
            _near_cache[name] = option
        if option is not None:
            found = found or {}
            found[name] = option
    return found


def _near_option(name: str) -> str | None:
    """The capture option ``name`` is a near miss of (case, ``_``/``-`` and a character or two
    aside), or None."""

    folded = name.lower().replace("-", "").replace("_", "")
    for option in OPTIONS:
        if folded == option.replace("_", ""):
            return option
    close = difflib.get_close_matches(name, OPTIONS, n=1, cutoff=_NEAR)
    return close[0] if close else None


def _refuse_near_miss(name: str, option: str, what: str | None) -> UnexpectedKwargError:
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


def _check_near_misses(entry: Any, suspects: Mapping[str, str], what: str) -> None:
    """Refuse each near miss of a capture option that ``entry`` does not name as a parameter
    (one it names is its own kwarg, not a typo). Runs only when there is a near miss."""

    try:
        params = inspect.signature(entry).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]  # unreadable: nothing is named
    for name, option in suspects.items():
        param = params.get(name)
        if param is None or param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise _refuse_near_miss(name, option, what)



def _capture(
    target: Any, options: dict[str, Any], kwargs: dict[str, Any], backend: str | None,
    by_value: bool | None, record_spaces: bool, assets: tuple[Any, ...],
    self_contained: bool, limit: int, suspects: Mapping[str, str] | None = None,
) -> SpecPack:
    """``capture`` once its options are checked: resolve, then record what the pack needs.

    ``suspects``: the ``**kwargs`` that are near misses of a capture option (refused unless
    the entry point names them as parameters)."""
    impl: Backend
    if type(target) is str:
        draft = _capture_id(target, options, kwargs, backend, by_value, self_contained,
                            suspects)
        pack = with_needs(draft, assets, self_contained, limit)
        return _with_spaces(pack) if record_spaces else pack
    if isinstance(target, SpecPack):
        if options or kwargs or backend or by_value is not None or assets or self_contained:
            raise CaptureError(
                "capture(pack, ...) got options: a pack is already resolved; capture the "
                "original target again with the new options"
            )
        return target
    impl = get_backend(backend) if backend else detect_backend(target)
    _check_options(impl, options)
    if _is_env(impl, target):
        if suspects:
            name, option = next(iter(suspects.items()))
            raise _refuse_near_miss(name, option, None)
        if options or kwargs:
            raise CaptureError(
                f"capture(env) takes no options or kwargs (got {sorted([*options, *kwargs])}): "
                "a live env is captured as it is; to change it, capture its id or class with "
                "those arguments instead"
            )
        draft = _assemble(impl, impl.from_env(target), by_value, self_contained)
        more: dict[str, Any] = {"requires": built_requires(target, ())}
        if not callable(getattr(target, "observation_space", None)):
            more["surface"] = record_surface(target)  # (multi-agent: spaces per agent)
        return with_needs(draft, assets, self_contained, limit, **more)
    elif _is_spec(target):
        recipe = impl.from_spec(target, options, kwargs)
    elif callable(target):
        recipe = impl.from_callable(target, options, kwargs)
    else:
        raise _CaptureTypeError(
            f"cannot capture {type(target).__name__} {target!r}: pass an env id, an EnvSpec, "
            "an env class or factory, or a live env"
        )
    pack = with_needs(_assemble(impl, recipe, by_value, self_contained, suspects), assets,
                      self_contained, limit)
    return _with_spaces(pack) if record_spaces else pack


def _with_spaces(pack: SpecPack) -> SpecPack:
    """``pack`` with its surface recorded from one build here (vector-only packs: as is), and
    the distributions the build needed added to ``requires``."""
    if pack.vector or pack.surface is not None:
        return pack
    env, imported = imported_during(pack.make)
    try:
        requires = {**pack.requires, **built_requires(env, imported)}
        return pack.evolve(surface=record_surface(env), requires=requires)
    finally:
        try:
            env.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass


#: capture(id) results, keyed on the exact form of the call. A pack is an immutable value, so an
#: identical capture may return the same object; each hit is re-validated against the registry
#: (same EnvSpec object, fields and kwargs unchanged under their exact key, same entry point)
#: and, for code carried by value, against the witness of each payload (everything cloudpickle
#: read unchanged: carry.payload).
_memo: dict[Any, tuple[Backend, Any, Draft, tuple[Witness, ...]]] = {}
_layer_cache: dict[Any, Layer] = {}


def _capture_id(
    target: str, options: dict[str, Any], kwargs: dict[str, Any], backend: str | None,
    by_value: bool | None, self_contained: bool = False,
    suspects: Mapping[str, str] | None = None,
) -> Draft:
    """``capture("Some-v0", ...)`` resolved (its draft), memoised on the exact kwargs (not when a kwarg is a near
    miss of an option: the same kwargs given in ``env_kwargs=`` made the memo's pack)."""
    key: Any = None
    if not options and not kwargs:
        key = (target, backend, by_value, self_contained, (), ())
    elif not suspects and all(type(v) in SCALAR_TYPES for v in kwargs.values()):
        key = (
            target, backend, by_value, self_contained,
            tuple((k, exact_key(options[k])) for k in sorted(options)),
            tuple((k, exact_key(kwargs[k])) for k in sorted(kwargs)),
        )
    if key is not None:
        hit = _memo.get(key)
        if (hit is not None and hit[0].memo_valid(target, hit[1])
                and all(w.holds() for w in hit[3])):
            return hit[2]
    impl = get_backend(backend or "gymnasium")
    if options:
        _check_options(impl, options)
    # Snapshot the registry before resolving, check it after: a pack is filed only under the
    # state it was made from (an import during resolution or another thread may re-register).
    token = impl.memo_token(target) if key is not None else None
    draft, code_by_value = _assembled(impl, impl.from_id(target, options, kwargs), by_value,
                                      self_contained, suspects)
    if token is not None and draft.plain and impl.memo_valid(target, token):
        witnesses: tuple[Witness, ...] = ()
        if code_by_value:
            found = [witness_of(c) for c in draft.carried()
                     if isinstance(c, CodeRef) and c.by_value]
            witnesses = tuple(w for w in found if w is not None)
        if not code_by_value or len(witnesses) == len(found):
            if len(_memo) > 4096:
                _memo.clear()
            _memo[key] = (impl, token, draft, witnesses)
    return draft


#: ``make`` options only the legacy lines take: gym's, and gymnasium 0.28/0.29's.
_LEGACY_OPTIONS = ("autoreset", "apply_api_compatibility")


def _legacy_options_taken(impl: Backend) -> bool:
    """Whether ``impl``'s ``make`` takes ``autoreset``/``apply_api_compatibility``: gym's does,
    and gymnasium's up to 0.29 (1.0 removed both)."""
    if impl.name == "gym":
        return True
    if impl.name != "gymnasium":
        return False
    from ._backends.gymnasium.compat import LINE  # loaded with the gymnasium backend already

    return LINE == "0"


def _check_options(impl: Backend, options: dict[str, Any]) -> None:
    """Refuse gym-only ``make`` options for a backend whose ``make`` has no such option.

    gymnasium 0.28/0.29's ``make`` takes them: the backend resolves them as that ``make`` does
    (``autoreset=True`` adds ``AutoResetWrapper``; ``apply_api_compatibility=True`` is refused
    there, pointing to ``backend='gym'``).
    """
    gym_only = [k for k in _LEGACY_OPTIONS if k in options]
    if gym_only and not _legacy_options_taken(impl):
        raise UnexpectedKwargError(
            f"{' and '.join(gym_only)}: only the legacy gym.make takes "
            f"{'this option' if len(gym_only) == 1 else 'these options'} (backend='gym'); "
            "gymnasium 1.x's make has none. For a gymnasium env, apply the wrapper yourself "
            "(e.g. gymnasium.wrappers.Autoreset) and capture the live env. If it is a kwarg of "
            "your env, pass it in env_kwargs={...}"
        )


def _options_of(impl: Backend) -> tuple[str, ...]:
    """The capture options ``impl`` takes (what a mistyped kwarg may have meant)."""
    if _legacy_options_taken(impl):
        return OPTIONS
    return tuple(o for o in OPTIONS if o not in _LEGACY_OPTIONS)


def _is_env(impl: Backend, obj: Any) -> bool:
    return impl.owns(obj) and not _is_spec(obj)


def _is_spec(obj: Any) -> bool:
    return type(obj).__name__ == "EnvSpec" and hasattr(obj, "entry_point")


def _old_render_api(entry: Any, kwargs: Mapping[str, Any], label: str,
                    refused: UnexpectedKwargError) -> None:
    """Raise ``gymnasium.make``'s error when ``render_mode='human'`` would need the
    ``HumanRendering`` wrapper on an env whose constructor takes no ``render_mode``."""
    modes = (getattr(entry, "metadata", None) or {}).get("render_modes", ())
    if (kwargs.get("render_mode") == "human" and "human" not in modes
            and "argument 'render_mode'" in str(refused)):

        raise _OldRenderAPIError(
            f"You passed render_mode='human' although {label} doesn't implement human-rendering "
            "natively. Gym tried to apply the HumanRendering wrapper but it looks like your "
            "environment is using the old rendering API, which is not supported by the "
            f"HumanRendering wrapper ({refused})"
        ) from None


def _library_layer(cls: type, lkw: dict[str, Any]) -> Layer | None:
    """A shared Layer for a library wrapper with scalar kwargs (Layers are immutable)."""
    parts = []
    for k, v in lkw.items():
        t = type(v)
        if t not in SCALAR_TYPES or (t is int and v.bit_length() > MAX_INT_BITS):
            return None  # not plain, or an int lower_mapping refuses: take the full path
        parts.append((k if type(k) is str else exact_key(k), exact_key(v)))
    key = (cls, tuple(parts))
    hit = _layer_cache.get(key)
    if hit is None:
        hit = Layer(code_ref(cls, what=f"wrapper {cls.__qualname__}"), dict(lkw))
        if len(_layer_cache) > 4096:
            _layer_cache.clear()
        _layer_cache[key] = hit
    return hit


def _wrapper_what(cls: type, label: str) -> str:
    """How a kwarg error names the wrapper ``cls`` of the env ``label``."""
    return f"the wrapper {cls.__qualname__} of {label!r}"


def _assemble(impl: Backend, recipe: Recipe, by_value: bool | None,
              self_contained: bool = False,
              suspects: Mapping[str, str] | None = None) -> Draft:
    return _assembled(impl, recipe, by_value, self_contained, suspects)[0]


def _assembled(impl: Backend, recipe: Recipe, by_value: bool | None,
               self_contained: bool = False,
               suspects: Mapping[str, str] | None = None) -> tuple[Draft, bool]:
    """The draft of ``recipe`` (its pack is made once its needs are known), and whether it may carry code by value (False: every piece of
    code in it is a reference, and nothing else in it can hold code)."""
    label = recipe.id or getattr(recipe.entry, "__qualname__", None) or "env"
    if recipe.entry_ref is not None and by_value is not True:
        entry, entry_obj = recipe.entry_ref, recipe.entry
    elif recipe.entry_string is not None:
        entry, entry_obj = code_ref_from_string(
            recipe.entry_string, by_value=by_value, what=f"entry point of {label!r}"
        )
    else:
        if not callable(recipe.entry):
            raise CaptureError(f"the entry point of {label!r} ({recipe.entry!r}) is not callable")
        entry_obj = recipe.entry
        entry = code_ref(recipe.entry, by_value=by_value, what=f"entry point of {label!r}")
    if self_contained:
        entry = user_by_value(entry, entry_obj, self_contained, f"entry point of {label!r}")
    if recipe.kwargs:
        for k in recipe.kwargs:
            if type(k) is not str:
                raise CaptureError(f"env kwarg names must be strings, got {k!r} for {label!r}")
        try:
            check_kwargs(entry_obj, recipe.kwargs, lambda: f"the env {label!r} ({entry.name})",
                         lambda: _options_of(impl))
        except UnexpectedKwargError as e:
            _old_render_api(entry_obj, recipe.kwargs, label, e)
            raise
    if suspects:
        _check_near_misses(entry_obj, suspects, f"the env {label!r} ({entry.name})")
    kwargs, plain = lower_mapping(recipe.kwargs, label, "kwargs", by_value)
    spec, _ = lower_mapping(recipe.spec, label, "spec field", by_value)
    layers = []
    carries = entry.by_value or not plain
    code_by_value = carries
    prefixes = impl.library_prefixes
    for cls, lkw in recipe.layers:
        if lkw:
            check_kwargs(cls, lkw, functools.partial(_wrapper_what, cls, label))
        lib = cls.__module__.startswith(prefixes)
        layer = _library_layer(cls, lkw) if lib else None
        if layer is None:
            ref = code_ref(cls, by_value=None if lib else by_value,
                           what=f"wrapper {cls.__qualname__}")
            if self_contained:
                ref = user_by_value(ref, cls, self_contained, f"wrapper {cls.__qualname__}")
            lowered, lplain = lower_mapping(lkw, label, f"{cls.__qualname__} kwargs", by_value)
            layer = Layer(ref, lowered)
            carries = carries or ref.by_value or not lplain
            code_by_value = code_by_value or carries
        elif layer.cls.by_value:
            code_by_value = True  # a library wrapper no fresh interpreter imports (no note)
        layers.append(layer)
    notes = recipe.notes
    if carries:
        notes = [*notes, *_carry_notes(entry, kwargs, layers)]
    draft = Draft(
        backend=impl.name,
        id=recipe.id,
        entry_point=entry,
        _kwargs=kwargs,
        spec=spec,
        layers=tuple(layers),
        auto_render=bool(recipe.auto_render),
        versions=version_mapping(impl.name,
                                 None if entry.by_value else distribution_of(entry.module)),
        notes=tuple(notes),
        plain=plain,
        vector=bool(recipe.vector),
    )
    return draft, code_by_value


def _carry_notes(entry: CodeRef, kwargs: dict[str, Any], layers: list[Layer]) -> list[str]:
    notes = []
    carried: list[tuple[str, Any]] = [("entry point", entry)]
    carried += [("kwargs", c) for c in iter_carried(kwargs)]
    for layer in layers:
        carried.append((f"wrapper {layer.name}", layer.cls))
        carried += [(f"{layer.name} kwargs", c) for c in iter_carried(layer._kwargs)]
    for where, c in carried:
        if isinstance(c, CodeRef) and c.by_value:
            kind = "a lambda" if "<lambda>" in c.qualname else c.qualname
            notes.append(
                f"{where}: {kind} ({c.module}) travels by value (cloudpickle, "
                f"{len(c.payload or b'')} bytes): it is tied to Python {c.python} and cannot be "
                "loaded from a file unless trusted (trust=True; --trust on the command line) "
                "or signed with a key (key=; --key-file)"
            )
        elif isinstance(c, Blob):
            notes.append(
                f"{where}: a {c.type_name} object travels as a pickle payload "
                f"({len(c.payload)} bytes), tied to Python {c.python}"
            )
    return notes
