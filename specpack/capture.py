"""``capture``: resolve an env where it is known, and carry it into a :class:`SpecPack`.

Resolution happens here, in the calling process: the registry lookup, ``make``'s option
logic, the wrapper stack, and the choice of carrying each piece of code by reference or by
value. After ``capture`` returns, nothing about the env depends on the registry, on what a
worker has imported, or on the source file of by-value code.
"""

from __future__ import annotations

from typing import Any

from ._carry import CodeRef, code_ref, code_ref_from_string
from ._values import is_plain, lower_mapping
from .backends import Backend, Recipe, detect_backend, get_backend
from .errors import CaptureError
from .pack import Layer, SpecPack
from .versions import current_versions

__all__ = ["capture"]

_UNSET: Any = object()


def capture(
    target: Any,
    /,
    *,
    max_episode_steps: int | None = None,
    disable_env_checker: bool | None = None,
    backend: str | None = None,
    by_value: bool | None = None,
    **kwargs: Any,
) -> SpecPack:
    """Resolve ``target`` now and return a self-contained, picklable :class:`SpecPack`.

    ``target`` is a registered id (``"CartPole-v1"``, ``"my_pkg.envs:Thing-v2"``), an
    ``EnvSpec``, an env class or factory callable, or a live (wrapped) env. Options and kwargs
    mean what they mean to ``gymnasium.make``; ``backend="gym"`` resolves from the legacy gym
    registry (specs and live envs are detected by type). ``by_value`` forces how user code
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
    if "gym_options" in kwargs:
        options.update(kwargs.pop("gym_options"))
    impl: Backend
    if isinstance(target, SpecPack):
        if options or kwargs or backend or by_value is not None:
            raise CaptureError(
                "capture(pack, ...) got options: a pack is already resolved; capture the "
                "original target again with the new options"
            )
        return target
    if isinstance(target, str):
        impl = get_backend(backend or "gymnasium")
        recipe = impl.from_id(target, options, kwargs)
    else:
        impl = get_backend(backend) if backend else detect_backend(target)
        if _is_env(impl, target):
            if options or kwargs:
                raise CaptureError(
                    f"capture(env) takes no options or kwargs (got "
                    f"{sorted([*options, *kwargs])}): a live env is captured as it is; to "
                    "change it, capture its id or class with those arguments instead"
                )
            recipe = impl.from_env(target)
        elif _is_spec(target):
            recipe = impl.from_spec(target, options, kwargs)
        elif callable(target):
            recipe = impl.from_callable(target, options, kwargs)
        else:
            raise CaptureError(
                f"cannot capture {type(target).__name__} {target!r}: pass an env id, an "
                "EnvSpec, an env class or factory, or a live env"
            )
    return _assemble(impl, recipe, by_value)


def _is_env(impl: Backend, obj: Any) -> bool:
    return impl.owns(obj) and not _is_spec(obj)


def _is_spec(obj: Any) -> bool:
    return type(obj).__name__ == "EnvSpec" and hasattr(obj, "entry_point")


def _assemble(impl: Backend, recipe: Recipe, by_value: bool | None) -> SpecPack:
    label = recipe.id or getattr(recipe.entry, "__qualname__", None) or "env"
    what = f"entry point of {label!r}"
    if recipe.entry_string is not None:
        entry, _ = code_ref_from_string(recipe.entry_string, by_value=by_value, what=what)
    else:
        if not callable(recipe.entry):
            raise CaptureError(f"the {what} {recipe.entry!r} is not callable")
        entry = code_ref(recipe.entry, by_value=by_value, what=what)
    for k in recipe.kwargs:
        if not isinstance(k, str):
            raise CaptureError(f"env kwarg names must be strings, got {k!r} for {label!r}")
    kwargs = lower_mapping(recipe.kwargs, f"{label!r} kwargs", by_value)
    spec = lower_mapping(recipe.spec, f"{label!r} spec field", by_value)
    layers = []
    for cls, lkw in recipe.layers:
        lib = cls.__module__.startswith(impl.library_prefixes)
        ref = code_ref(cls, by_value=None if lib else by_value, what=f"wrapper {cls.__qualname__}")
        layers.append(Layer(ref, lower_mapping(lkw, f"{label!r} {cls.__qualname__} kwargs",
                                               by_value)))
    notes = list(recipe.notes)
    if (
        entry.by_value
        or not all(is_plain(v) for v in kwargs.values())
        or any(layer.cls.by_value or not all(is_plain(v) for v in layer._kwargs.values())
               for layer in layers)
    ):
        notes.extend(_carry_notes(entry, kwargs, layers))
    versions = current_versions(impl.name, None if entry.by_value else entry.module)
    return SpecPack(
        backend=impl.name,
        id=recipe.id,
        entry_point=entry,
        kwargs=kwargs,
        spec=spec,
        layers=tuple(layers),
        auto_render=recipe.auto_render,
        versions=versions,
        notes=tuple(notes),
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
