"""A backend's :class:`~specpack._core._backends.Recipe` turned into a capture's draft.

Every kwarg is checked against the constructor's (and each wrapper's) signature; the entry
point and wrapper classes become :class:`~specpack.CodeRef` values, the kwargs are lowered,
and what travels by value gets a note. :mod:`specpack._core._capture` adds what the pack needs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ._backends import Backend, Recipe
from ._backends._args import check_kwargs
from ._capture_options import check_near_misses, options_of
from ._carry.code import CodeRef, code_ref, code_ref_from_string
from ._carry.values import MAX_INT_BITS, SCALAR_TYPES, Blob, exact_key, iter_carried, lower_mapping
from ._draft import Draft
from ._errors import CaptureError, UnexpectedKwargError, _OldRenderAPIError
from ._layer import Layer
from ._needs import user_by_value
from ._provenance import distribution_of
from ._versions import current_versions

__all__ = ["assembled"]

#: Library wrappers with scalar kwargs, as shared Layers (Layers are immutable).
_layer_cache: dict[Any, Layer] = {}


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
    """A shared Layer for a library wrapper with scalar kwargs (None: take the full path)."""
    parts = []
    for k, v in lkw.items():
        t = type(v)
        if t not in SCALAR_TYPES or (t is int and v.bit_length() > MAX_INT_BITS):
            return None  # not plain, or an int lower_mapping refuses
        parts.append((k if type(k) is str else exact_key(k), exact_key(v)))
    key = (cls, tuple(parts))
    hit = _layer_cache.get(key)
    if hit is None:
        hit = Layer(code_ref(cls, what=f"wrapper {cls.__qualname__}"), dict(lkw))
        if len(_layer_cache) > 4096:
            _layer_cache.clear()
        _layer_cache[key] = hit
    return hit


def assembled(impl: Backend, recipe: Recipe, by_value: bool | None,
               self_contained: bool = False,
               suspects: Mapping[str, str] | None = None) -> tuple[Draft, bool]:
    """The draft of ``recipe``, and whether it may carry code by value (False: all its code
    is by reference, and nothing else in it can hold code)."""
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
                         lambda: options_of(impl))
        except UnexpectedKwargError as e:
            _old_render_api(entry_obj, recipe.kwargs, label, e)
            raise
    if suspects:
        check_near_misses(entry_obj, suspects, f"the env {label!r} ({entry.name})")
    kwargs, plain = lower_mapping(recipe.kwargs, label, "kwargs", by_value)
    spec, _ = lower_mapping(recipe.spec, label, "spec field", by_value)
    layers = []
    carries = entry.by_value or not plain
    code_by_value = carries
    refs: list[CodeRef] | None = [entry] if plain else None  # None: kwargs may hold code
    prefixes = impl.library_prefixes
    for cls, lkw in recipe.layers:
        if lkw:
            what = functools.partial("the wrapper {} of {!r}".format, cls.__qualname__, label)
            check_kwargs(cls, lkw, what)  # ``what`` is made only on an error
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
            if not lplain:
                refs = None
        elif layer.cls.by_value:
            code_by_value = True  # a library wrapper no fresh interpreter imports (no note)
        layers.append(layer)
        if refs is not None:
            refs.append(layer.cls)
    notes = [*recipe.notes, *_carry_notes(entry, kwargs, layers)] if carries else recipe.notes
    versions = current_versions(impl.name,
                                None if entry.by_value else distribution_of(entry.module))
    fields = dict(backend=impl.name, id=recipe.id, entry_point=entry, _kwargs=kwargs, spec=spec,
                  layers=tuple(layers), auto_render=bool(recipe.auto_render), versions=versions,
                  notes=tuple(notes), vector=bool(recipe.vector))
    return Draft(fields, plain, None if refs is None else tuple(refs)), code_by_value


def _carry_notes(entry: CodeRef, kwargs: dict[str, Any], layers: list[Layer]) -> list[str]:
    carried: list[tuple[str, Any]] = [("entry point", entry)]
    carried += [("kwargs", c) for c in iter_carried(kwargs)]
    for layer in layers:
        carried.append((f"wrapper {layer.name}", layer.cls))
        carried += [(f"{layer.name} kwargs", c) for c in iter_carried(layer._kwargs)]
    notes = []
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
