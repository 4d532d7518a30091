"""``capture``: resolve an env where it is known, and carry it into a :class:`SpecPack`.

Resolution happens here, in the calling process: the registry lookup, ``make``'s option
logic, the wrapper stack, and the choice of carrying each piece of code by reference or by
value. After ``capture`` returns, nothing about the env depends on the registry, on what a
worker has imported, or on the source file of by-value code.
"""

from __future__ import annotations

from typing import Any

from ._carry import CodeRef, code_ref, code_ref_from_string
from ._values import SCALAR_TYPES, lower_mapping
from .backends import Backend, Recipe, detect_backend, get_backend
from .errors import CaptureError
from .pack import Layer, SpecPack
from .versions import version_record

__all__ = ["capture"]

_UNSET: Any = object()


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
    **kwargs: Any,
) -> SpecPack:
    """Resolve ``target`` now and return a self-contained, picklable :class:`SpecPack`.

    ``target`` is a registered id (``"CartPole-v1"``, ``"my_pkg.envs:Thing-v2"``), an
    ``EnvSpec``, an env class or factory callable, or a live (wrapped) env. Options and kwargs
    mean what they mean to ``gymnasium.make``; ``backend="gym"`` resolves from the legacy gym
    registry (specs and live envs are detected by type), where ``autoreset`` and
    ``apply_api_compatibility`` are ``gym.make`` options too. ``by_value`` forces how user code
    travels: ``None`` decides by whether a fresh interpreter could import it.

    Example::

        pack = specpack.capture("CartPole-v1", max_episode_steps=200)
        env = pack.make()

    Raises a :class:`~specpack.errors.CaptureError` naming the culprit on bad input (unknown
    id, uncarriable kwarg, unrecorded wrapper arguments, ...).
    """
    options: dict[str, Any] = {}
    if max_episode_steps is not None:
        if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int):
            raise CaptureError(
                f"max_episode_steps={max_episode_steps!r} must be an int (or -1 for no TimeLimit)"
            )
        options["max_episode_steps"] = max_episode_steps
    if disable_env_checker is not None:
        options["disable_env_checker"] = bool(disable_env_checker)
    if autoreset is not None:
        options["autoreset"] = autoreset
    if apply_api_compatibility is not None:
        options["apply_api_compatibility"] = apply_api_compatibility
    impl: Backend
    if type(target) is str:
        try:
            # type(v) in the key: 1, 1.0 and True are equal dict keys but different kwargs
            key: tuple[Any, ...] | None = (
                target, backend, by_value, tuple(options.items()),
                *((k, type(v), v) for k, v in sorted(kwargs.items())),
            )
            hit = _memo.get(key)  # type: ignore[arg-type]
        except TypeError:  # unhashable kwargs: no memo
            key, hit = None, None
        if hit is not None and hit[0].memo_valid(target, hit[1]):
            return hit[2]
        impl = get_backend(backend or "gymnasium")
        _check_options(impl, options)
        pack = _assemble(impl, impl.from_id(target, options, kwargs), by_value)
        if key is not None and pack._plain and not any(c.payload is not None for c in
                                                        pack.carried()):
            token = impl.memo_token(target)
            if token is not None:
                if len(_memo) > 4096:
                    _memo.clear()
                _memo[key] = (impl, token, pack)
        return pack
    if isinstance(target, SpecPack):
        if options or kwargs or backend or by_value is not None:
            raise CaptureError(
                "capture(pack, ...) got options: a pack is already resolved; capture the "
                "original target again with the new options"
            )
        return target
    impl = get_backend(backend) if backend else detect_backend(target)
    _check_options(impl, options)
    if _is_env(impl, target):
        if options or kwargs:
            raise CaptureError(
                f"capture(env) takes no options or kwargs (got {sorted([*options, *kwargs])}): "
                "a live env is captured as it is; to change it, capture its id or class with "
                "those arguments instead"
            )
        recipe = impl.from_env(target)
    elif _is_spec(target):
        recipe = impl.from_spec(target, options, kwargs)
    elif callable(target):
        recipe = impl.from_callable(target, options, kwargs)
    else:
        raise CaptureError(
            f"cannot capture {type(target).__name__} {target!r}: pass an env id, an EnvSpec, "
            "an env class or factory, or a live env"
        )
    return _assemble(impl, recipe, by_value)


def _check_options(impl: Backend, options: dict[str, Any]) -> None:
    """Refuse gym-only ``make`` options for a backend whose ``make`` has no such option."""
    gym_only = [k for k in ("autoreset", "apply_api_compatibility") if k in options]
    if gym_only and impl.name != "gym":
        raise CaptureError(
            f"{' and '.join(gym_only)}: only the legacy gym.make takes "
            f"{'this option' if len(gym_only) == 1 else 'these options'} (backend='gym'); "
            "gymnasium 1.x's make has none. For a gymnasium env, apply the wrapper yourself "
            "(e.g. gymnasium.wrappers.Autoreset) and capture the live env"
        )


def _is_env(impl: Backend, obj: Any) -> bool:
    return impl.owns(obj) and not _is_spec(obj)


def _is_spec(obj: Any) -> bool:
    return type(obj).__name__ == "EnvSpec" and hasattr(obj, "entry_point")


_layer_cache: dict[tuple[Any, ...], Layer] = {}
#: capture(id) results for by-reference packs with scalar kwargs. A pack is an immutable
#: value, so an identical capture may return the same object; each hit is re-validated against
#: the registry (same EnvSpec object, unchanged fields, same resolved entry point).
_memo: dict[tuple[Any, ...], tuple[Backend, Any, SpecPack]] = {}


def _library_layer(cls: type, lkw: dict[str, Any]) -> Layer | None:
    """A shared Layer for a library wrapper with scalar kwargs (Layers are immutable)."""
    try:
        key = (cls, *sorted(lkw.items()))
        hit = _layer_cache.get(key)
    except TypeError:
        return None
    if hit is None and all(type(v) in SCALAR_TYPES for v in lkw.values()):
        hit = Layer(code_ref(cls, what=f"wrapper {cls.__qualname__}"), dict(lkw))
        _layer_cache[key] = hit
    return hit


def _assemble(impl: Backend, recipe: Recipe, by_value: bool | None) -> SpecPack:
    label = recipe.id or getattr(recipe.entry, "__qualname__", None) or "env"
    if recipe.entry_string is not None:
        entry, _ = code_ref_from_string(
            recipe.entry_string, by_value=by_value, what=f"entry point of {label!r}"
        )
    else:
        if not callable(recipe.entry):
            raise CaptureError(f"the entry point of {label!r} ({recipe.entry!r}) is not callable")
        entry = code_ref(recipe.entry, by_value=by_value, what=f"entry point of {label!r}")
    for k in recipe.kwargs:
        if type(k) is not str:
            raise CaptureError(f"env kwarg names must be strings, got {k!r} for {label!r}")
    kwargs, plain = lower_mapping(recipe.kwargs, label, "kwargs", by_value)
    spec, _ = lower_mapping(recipe.spec, label, "spec field", by_value)
    layers = []
    carries = entry.payload is not None or not plain
    for cls, lkw in recipe.layers:
        layer = None
        if cls.__module__.startswith(impl.library_prefixes):
            layer = _library_layer(cls, lkw)
        if layer is None:
            lib = cls.__module__.startswith(impl.library_prefixes)
            ref = code_ref(cls, by_value=None if lib else by_value,
                           what=f"wrapper {cls.__qualname__}")
            lowered, lplain = lower_mapping(lkw, label, f"{cls.__qualname__} kwargs", by_value)
            layer = Layer(ref, lowered)
            carries = carries or ref.payload is not None or not lplain
        layers.append(layer)
    notes = recipe.notes
    if carries:
        notes = [*notes, *_carry_notes(entry, kwargs, layers)]
    return SpecPack(
        backend=impl.name,
        id=recipe.id,
        entry_point=entry,
        kwargs=kwargs,
        spec=spec,
        layers=tuple(layers),
        auto_render=recipe.auto_render,
        versions=version_record(impl.name, None if entry.payload is not None else entry.module),
        notes=tuple(notes),
        plain=plain,
    )


def _carry_notes(entry: CodeRef, kwargs: dict[str, Any], layers: list[Layer]) -> list[str]:
    from ._values import Blob, iter_carried

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
                "loaded from a file without trust=True or a signature key"
            )
        elif isinstance(c, Blob):
            notes.append(
                f"{where}: a {c.type_name} object travels as a pickle payload "
                f"({len(c.payload)} bytes), tied to Python {c.python}"
            )
    return notes
