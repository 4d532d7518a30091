"""A backend's :class:`~specpack._core._backends.Recipe` turned into a capture's draft: kwargs
checked against the signatures and capture's own options (a near miss of one is a typo), code
made :class:`~specpack.CodeRef` values, kwargs lowered, a note for what travels by value."""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Mapping
from typing import Any

from ._backends import Backend, Recipe
from ._backends._args import check_kwargs
from ._backends.gymnasium.compat import LINE
from ._carry.code import CodeRef, code_ref, code_ref_from_string, known_ref_from_string
from ._carry.values import MAX_INT_BITS, SCALAR_TYPES, Blob, exact_key, iter_carried, lower_mapping
from ._draft import Draft
from ._errors import CaptureError, UnexpectedKwargError, _OldRenderAPIError
from ._layer import Layer
from ._needs import user_by_value
from ._provenance import distribution_of
from ._versions import current_versions

__all__ = ["assembled", "check_options", "near_misses", "refuse_near_miss"]

#: The options ``capture`` takes besides env kwargs.
_OPTIONS = ("max_episode_steps", "disable_env_checker", "autoreset", "apply_api_compatibility",
            "backend", "by_value", "env_kwargs", "record_spaces", "assets", "self_contained",
            "max_asset_bytes")
#: ``make`` options only gym's and gymnasium 0.28/0.29's ``make`` take (1.0 removed both).
_LEGACY_OPTIONS = ("autoreset", "apply_api_compatibility")
_MODERN_OPTIONS = tuple(o for o in _OPTIONS if o not in _LEGACY_OPTIONS)

#: Library wrappers with scalar kwargs, as shared Layers (Layers are immutable).
_layer_cache: dict[Any, Layer] = {}


def near_misses(kwargs: Mapping[str, Any]) -> dict[str, str] | None:
    """The ``**kwargs`` of ``capture`` named as a near miss of a capture option, each with the
    option, or None: stored as env kwargs, they would fail only at ``make()``."""
    found = {k: o for k in kwargs if type(k) is str and (o := _near_option(k)) is not None}
    return found or None


@functools.lru_cache(maxsize=4096)  # most captures pass the same few kwargs
def _near_option(name: str) -> str | None:
    """The capture option ``name`` nearly is (case, ``_``/``-``, a character or two aside), or
    None. Cutoff 0.8: not an env's own ``max_steps`` (0.69 to ``max_episode_steps``)."""
    folded = name.lower().replace("-", "").replace("_", "")
    found = [o for o in _OPTIONS if o.replace("_", "") == folded]
    found = found or difflib.get_close_matches(name, _OPTIONS, n=1, cutoff=0.8)
    return found[0] if found else None


def refuse_near_miss(name: str, option: str, what: str | None) -> UnexpectedKwargError:
    """The refusal of ``name``, a near miss of ``option``, for the env ``what`` (None: live)."""
    head = (f"capture() got the keyword argument {name!r}, a near miss of the capture option "
            f"{option!r}")
    if what is None:
        return UnexpectedKwargError(f"{head}; a live env is captured as it is and takes no env "
                                    f"kwargs. Write {option}=... for the option")
    return UnexpectedKwargError(
        f"{head}. {what[0].upper()}{what[1:]} takes **kwargs, so it would be stored as an env "
        f"kwarg and fail (or be ignored) only at make(). Write {option}=... for the option; to "
        f"pass {name!r} to the env on purpose, give it in env_kwargs: "
        f"specpack.capture(..., env_kwargs={{{name!r}: ...}})")


def _check_near_misses(entry: Any, suspects: Mapping[str, str], what: str) -> None:
    """Refuse each near miss ``entry`` does not name as a parameter (one it names is its own)."""
    try:
        params = inspect.signature(entry).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]  # unreadable: nothing is named
    for name, option in suspects.items():
        param = params.get(name)
        if param is None or param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise refuse_near_miss(name, option, what)


def _legacy(impl: Backend) -> bool:
    """Whether ``impl``'s ``make`` takes the legacy options: gym's, gymnasium's up to 0.29."""
    return impl.name == "gym" or (impl.name == "gymnasium" and LINE == "0")


def check_options(impl: Backend, options: dict[str, Any]) -> None:
    """Refuse the legacy ``make`` options for a backend whose ``make`` has no such option."""
    gym_only = [k for k in _LEGACY_OPTIONS if k in options]
    if gym_only and not _legacy(impl):
        raise UnexpectedKwargError(
            f"{' and '.join(gym_only)}: only the legacy gym.make takes "
            f"{'this option' if len(gym_only) == 1 else 'these options'} (backend='gym'); "
            "gymnasium 1.x's make has none. For a gymnasium env, apply the wrapper yourself "
            "(e.g. gymnasium.wrappers.Autoreset) and capture the live env. If it is a kwarg of "
            "your env, pass it in env_kwargs={...}")


def _old_render_api(entry: Any, kwargs: Mapping[str, Any], label: str,
                    refused: UnexpectedKwargError) -> None:
    """Raise ``gymnasium.make``'s error for ``render_mode='human'`` on an old render API env."""
    modes = (getattr(entry, "metadata", None) or {}).get("render_modes", ())
    if (kwargs.get("render_mode") == "human" and "human" not in modes
            and "argument 'render_mode'" in str(refused)):
        raise _OldRenderAPIError(
            f"You passed render_mode='human' although {label} doesn't implement human-rendering "
            "natively. Gym tried to apply the HumanRendering wrapper but it looks like your "
            "environment is using the old rendering API, which is not supported by the "
            f"HumanRendering wrapper ({refused})"
        ) from None


def _layer_key(cls: type, lkw: dict[str, Any]) -> tuple[Any, ...] | None:
    """The key of a library wrapper's shared Layer, or None: its kwargs are not all plain
    scalars (a Layer of its own, lowered in full)."""
    parts = []
    for k, v in lkw.items():
        t = type(v)
        if t not in SCALAR_TYPES or (t is int and v.bit_length() > MAX_INT_BITS):
            return None  # not plain, or an int lower_mapping refuses
        parts.append((k if type(k) is str else exact_key(k), exact_key(v)))
    return (cls, tuple(parts))


def _library_layer(cls: type, lkw: dict[str, Any], key: tuple[Any, ...]) -> Layer:
    """A library wrapper's shared Layer (Layers are immutable), made and kept under ``key``
    once its kwargs are checked: a Layer kept is one whose kwargs passed the check."""
    layer = Layer(code_ref(cls, what=f"wrapper {cls.__qualname__}"), dict(lkw))
    if len(_layer_cache) > 4096:
        _layer_cache.clear()
    _layer_cache[key] = layer
    return layer


def assembled(impl: Backend, recipe: Recipe, by_value: bool | None,
              self_contained: bool = False,
              suspects: Mapping[str, str] | None = None) -> tuple[Draft, bool]:
    """The draft of ``recipe``, and whether it may carry code by value (False: all its code
    is by reference, and nothing else in it can hold code)."""
    label = recipe.id or getattr(recipe.entry, "__qualname__", None) or "env"
    if recipe.entry_ref is not None and by_value is not True:
        entry, entry_obj = recipe.entry_ref, recipe.entry
    elif recipe.entry_string is not None:
        # a reference kept for the string and still true: its error text is never made
        known = known_ref_from_string(recipe.entry_string, by_value)
        entry, entry_obj = known if known is not None else code_ref_from_string(
            recipe.entry_string, by_value=by_value, what=f"entry point of {label!r}")
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
                         lambda: _OPTIONS if _legacy(impl) else _MODERN_OPTIONS)
        except UnexpectedKwargError as e:
            _old_render_api(entry_obj, recipe.kwargs, label, e)
            raise
    if suspects:
        _check_near_misses(entry_obj, suspects, f"the env {label!r} ({entry.name})")
    # most ids take no kwargs: no call then
    kwargs, plain = lower_mapping(recipe.kwargs, label, "kwargs", by_value) if recipe.kwargs \
        else ({}, True)
    spec, _ = lower_mapping(recipe.spec, label, "spec field", by_value)
    layers = []
    carries = entry.by_value or not plain
    code_by_value = carries
    refs: list[CodeRef] | None = [entry] if plain else None  # None: kwargs may hold code
    prefixes = impl.library_prefixes
    for cls, lkw in recipe.layers:
        key = _layer_key(cls, lkw) if lkw else (cls, ())  # most of make's own take none
        layer = None if key is None else _layer_cache.get(key)
        # A kept Layer's kwargs passed check_kwargs for this class: checked again, they would
        # pass again (its keyword names are read once per class), so a library one is reused.
        if layer is None or not cls.__module__.startswith(prefixes):
            if lkw:  # the text naming the wrapper is made only on an error
                check_kwargs(cls, lkw, functools.partial("the wrapper {} of {!r}".format,
                                                         cls.__qualname__, label))
            lib = cls.__module__.startswith(prefixes)
            layer = _library_layer(cls, lkw, key) if lib and key is not None else None
        else:
            lib = True
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
    """A note for each piece of code or opaque object that travels by value."""
    carried: list[tuple[str, Any]] = [("entry point", entry)]
    carried += [("kwargs", c) for c in iter_carried(kwargs)]
    for layer in layers:
        carried.append((f"wrapper {layer.name}", layer.cls))
        carried += [(f"{layer.name} kwargs", c) for c in iter_carried(layer._kwargs)]
    notes = []
    for where, c in carried:
        if isinstance(c, CodeRef) and c.by_value:
            kind = "a lambda" if "<lambda>" in c.qualname else c.qualname
            notes.append(f"{where}: {kind} ({c.module}) travels by value (cloudpickle, "
                         f"{len(c.payload or b'')} bytes): it is tied to Python {c.python} and "
                         "cannot be loaded from a file unless trusted (trust=True; --trust on the "
                         "command line) or signed with a key (key=; --key-file)")
        elif isinstance(c, Blob):
            notes.append(f"{where}: a {c.type_name} object travels as a pickle payload "
                         f"({len(c.payload)} bytes), tied to Python {c.python}")
    return notes
