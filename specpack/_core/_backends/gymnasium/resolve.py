"""Resolving a gymnasium env (an id, an ``EnvSpec``, a class or factory, or a live stack) as
``gymnasium.make`` does, step for step (0.28.1 through 1.4). What 0.28/0.29's make does that a
pack does not rebuild is refused; the render-mode wrappers are decided at build time."""

from __future__ import annotations

import functools
import importlib
import time
from typing import Any

import gymnasium
from gymnasium.envs import registration as _registration
from gymnasium.envs.registration import EnvSpec

from ..._carry.code import CodeRef, code_ref_from_string, reference_of
from ..._carry.importable import MAIN_NAMES, fresh_importable
from ..._errors import (
    CaptureError,
    DeprecatedEnvError,
    UnknownEnvError,
    UnknownEnvNameError,
    UnknownEnvVersionError,
    UnknownNamespaceError,
)
from ..._text import suggest
from .._args import live_recipe, wrapper_kwargs
from .._registry import import_id_module, versioned_spec
from ..recipe import Recipe
from .build import META_DEFAULTS
from .compat import LINE, repair_record

__all__ = ["from_env", "from_id", "from_spec", "registered_ids", "spec_meta"]


def spec_meta(spec: EnvSpec, *, minimal: bool) -> dict[str, Any]:
    """The non-default ``EnvSpec`` fields a rebuilt ``env.unwrapped.spec`` carries (``minimal``:
    those ``make`` sets); ``entry_point``: left out if a string, else None (the callable's).
    Written out field by field: every first capture runs it."""
    meta: dict[str, Any] = {"id": spec.id}
    if not isinstance(spec.entry_point, str):
        meta["entry_point"] = None
    defaults = META_DEFAULTS
    value: Any = spec.reward_threshold
    if value != defaults["reward_threshold"]:
        meta["reward_threshold"] = value
    value = spec.nondeterministic
    if value != defaults["nondeterministic"]:
        meta["nondeterministic"] = value
    value = spec.vector_entry_point
    if not isinstance(value, str):
        value = None
    if value != defaults["vector_entry_point"]:
        meta["vector_entry_point"] = value
    if not minimal:
        fields: dict[str, Any] = {
            "max_episode_steps": spec.max_episode_steps,
            "order_enforce": spec.order_enforce,
            "disable_env_checker": spec.disable_env_checker,
            "additional_wrappers": tuple(
                (w.name, w.entry_point, w.kwargs) for w in spec.additional_wrappers
            ),
        }
        for k, v in fields.items():
            if v != defaults[k]:
                meta[k] = v
    return meta


def from_id(env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
    """Resolve a registered id as ``gymnasium.make`` does, its warnings included; an unknown
    id raises the :class:`~specpack.UnknownEnvError` subclass matching gymnasium's error."""
    full_id = import_id_module(env_id)
    spec, _ = versioned_spec(_registration, full_id, library=gymnasium,
                             outdated=gymnasium.logger.deprecation, not_an_id=UnknownEnvNameError)
    if spec is None:
        cls: type[UnknownEnvError] = UnknownEnvError
        why = "not registered"
        try:
            gymnasium.spec(full_id)
        except gymnasium.error.Error as e:
            why = str(e).split(". Did you")[0]
            cls = next((sub for base, sub in _UNKNOWN if isinstance(e, base)), cls)
        raise cls(f"no env registered as {full_id!r} in gymnasium's registry ({why});"
                  f"{suggest(full_id, _registration.registry.keys())}",
                  python="Register it first (or import the package that registers it), or pass "
                  "the env class: specpack.capture(MyEnv)",
                  cli="Import the module that registers it first (--import MODULE), or capture "
                  "the class without a registry: specpack capture --entry-point module:Class")
    return from_spec(spec, options, kwargs)


#: gymnasium's lookup errors and the UnknownEnvError subclass that is also an instance of each.
_UNKNOWN: tuple[tuple[type[Exception], type[UnknownEnvError]], ...] = (
    (gymnasium.error.DeprecatedEnv, DeprecatedEnvError),
    (gymnasium.error.VersionNotFound, UnknownEnvVersionError),
    (gymnasium.error.NamespaceNotFound, UnknownNamespaceError),
    (gymnasium.error.NameNotFound, UnknownEnvNameError),
)


def from_spec(spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
    if not isinstance(spec, EnvSpec):
        raise CaptureError(f"expected a gymnasium EnvSpec, got {type(spec).__name__}")
    entry = spec.entry_point
    if entry is None:
        if spec.vector_entry_point is not None:
            return _vector_only(spec, options, kwargs)
        raise CaptureError(f"the spec {spec.id!r} has no entry_point; register it with "
                           "entry_point='module:Class' or a callable")
    max_episode_steps = options.get("max_episode_steps")
    checker = options.get("disable_env_checker")
    autoreset = options.get("autoreset")  # taken only on 0.28/0.29 (capture checks)
    if LINE == "0":
        _refuse_0x_only(spec, options)
    layers: list[tuple[type, dict[str, Any]]] = []  # gymnasium.make's order, innermost first
    if (spec.disable_env_checker if checker is None else checker) is False:
        layers.append((gymnasium.wrappers.PassiveEnvChecker, {}))
    if spec.order_enforce:
        layers.append((gymnasium.wrappers.OrderEnforcing, {}))
    if max_episode_steps != -1:
        steps = max_episode_steps if max_episode_steps is not None else spec.max_episode_steps
        if steps is not None:
            layers.append((gymnasium.wrappers.TimeLimit, {"max_episode_steps": steps}))
    # gymnasium 0.28/0.29 only, as its make decides: the call's True, else the spec's field.
    if autoreset is True or (autoreset is None and getattr(spec, "autoreset", False) is True):
        layers.append((gymnasium.wrappers.AutoResetWrapper, {}))
    for w in spec.additional_wrappers:
        if w.kwargs is None:
            raise CaptureError(f"the spec {spec.id!r} lists a wrapper without recorded kwargs: "
                               f"{w.name} wrapper does not inherit from "
                               "`gymnasium.utils.RecordConstructorArgs`, therefore, the wrapper "
                               "cannot be recreated. Make the wrapper record its arguments "
                               "(inherit gymnasium.utils.RecordConstructorArgs)")
        wcls: Any = w.entry_point if callable(w.entry_point) else code_ref_from_string(
            str(w.entry_point), by_value=None, what=f"wrapper {w.name} of {spec.id!r}")[1]
        layers.append((wcls, dict(w.kwargs)))
    layers.reverse()  # outermost first
    string = entry if isinstance(entry, str) else None
    if string is None and not callable(entry):
        raise CaptureError(f"the spec {spec.id!r} has entry_point={entry!r}, which is not "
                           "callable; use a class, a factory function or a 'module:Class' string")
    notes: list[str] = []
    return Recipe(id=spec.id, entry=entry if string is None else None, entry_string=string,
                  kwargs={**spec.kwargs, **kwargs}, spec=spec_meta(spec, minimal=True),
                  layers=layers, auto_render=True, notes=notes,
                  entry_ref=registered_ref(spec, entry, notes) if string is None else None)


def _refuse_0x_only(spec: EnvSpec, options: dict[str, Any]) -> None:
    """Refuse what 0.28/0.29's ``make`` does but a pack does not rebuild (``TimeLimit(env, -1)``,
    ``EnvCompatibility``), and a non-bool ``autoreset``/``apply_api_compatibility`` (it tests
    ``is True``: ``autoreset=1`` would add no wrapper)."""
    version = gymnasium.__version__
    for key in ("autoreset", "apply_api_compatibility"):
        value = options.get(key)
        if value is not None and not isinstance(value, bool):
            raise CaptureError(f"{key}={value!r} for {spec.id!r} must be True or False")
    compat = options.get("apply_api_compatibility")
    if options.get("max_episode_steps") == -1:
        raise CaptureError("max_episode_steps=-1 means no TimeLimit in specpack and gymnasium "
                           f"1.x, but gymnasium {version}'s make would wrap TimeLimit(env, -1), "
                           "which truncates every step; to capture the env without a TimeLimit "
                           "under this gymnasium, register it with max_episode_steps=None or "
                           "capture its class: specpack.capture(EnvClass, ...)")
    if compat:
        raise CaptureError(f"apply_api_compatibility={compat!r}: gymnasium "
                           f"{version}'s make would build {spec.id!r} inside EnvCompatibility "
                           "(deprecated, removed in gymnasium 1.0), which specpack does not "
                           "rebuild; capture a legacy env with backend='gym', or port it to the "
                           "gymnasium API and capture it without apply_api_compatibility")
    if compat is None and getattr(spec, "apply_api_compatibility", False):
        raise CaptureError(f"the spec {spec.id!r} sets apply_api_compatibility=True: gymnasium "
                           f"{version}'s make would build its old-API env inside EnvCompatibility "
                           "(deprecated, removed in gymnasium 1.0), which specpack does not "
                           "rebuild; capture the legacy env with backend='gym', or port it to the "
                           "gymnasium API and register it without apply_api_compatibility")


def registered_ref(spec: EnvSpec, entry: Any, notes: list[str]) -> CodeRef | None:
    """``entry`` as *the callable importing its module registers under spec.id* (Meta-World's
    lambdas) if it has no importable name and a fresh interpreter confirms that; else None."""
    module = getattr(entry, "__module__", None)
    if (
        type(entry) is functools.partial  # carried as its function and arguments (code_ref)
        or not isinstance(module, str)
        or module in MAIN_NAMES
        or reference_of(entry) is not None
        or gymnasium.registry.get(spec.id) is not spec
        or not fresh_importable(module)
        or spec.id not in registered_in_fresh_interpreter(module)
    ):
        return None
    qualname = str(getattr(entry, "__qualname__", None) or type(entry).__qualname__)
    notes.append(f"entry point: {qualname} is made inside {module}, with no importable name; the "
                 f"pack refers to it as the callable that importing {module} registers under "
                 f"{spec.id!r} (checked in a fresh interpreter), so it travels by reference")
    return CodeRef(module, qualname, registered=spec.id)


def registered_ids(payload: bytes, *, module: str) -> list[str]:
    """A job of the worker protocol: import ``module``, list gymnasium's ids."""
    importlib.import_module(module)
    return sorted(gymnasium.registry)


@functools.lru_cache(maxsize=64)
def registered_in_fresh_interpreter(module: str) -> frozenset[str]:
    """The ids gymnasium registers on ``import module`` in a fresh ``python`` (empty if it fails or
    takes over 2 minutes); a worker job: never what the module prints, nothing is unpickled."""
    # lazy: only capture probes; a worker that builds never does
    from ..._process.worker import run_one

    outcome = run_one("subprocess", f"{__name__}:registered_ids", b"", {"module": module},
                      deadline=time.monotonic() + 120.0)
    ids = outcome.value if outcome.status == "ok" else None
    return frozenset(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else frozenset()


def _vector_only(spec: EnvSpec, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
    """A spec with only a ``vector_entry_point``, resolved as ``gymnasium.make_vec`` would (it
    applies no wrappers in this mode); the pack builds with :func:`specpack.make_vec` only."""
    if options.get("disable_env_checker") is not None:
        raise CaptureError(f"{spec.id!r} is vector-only (vector_entry_point, no entry_point): "
                           "disable_env_checker does not apply to a vector creator")
    if spec.additional_wrappers:
        raise CaptureError(f"{spec.id!r} is vector-only but lists additional_wrappers; "
                           "gymnasium.make_vec cannot apply them in vector_entry_point mode either")
    env_kwargs = dict(spec.kwargs)
    for key in ("num_envs", "vectorization_mode", "vector_kwargs", "wrappers"):
        if key in env_kwargs:
            raise CaptureError(f"{spec.id!r}: its spec kwargs set {key!r}, a make_vec option; "
                               "pass it to specpack.make_vec instead")
    env_kwargs.update(kwargs)
    steps = options.get("max_episode_steps")
    if steps is not None and steps != -1:
        env_kwargs["max_episode_steps"] = steps
    elif spec.max_episode_steps is not None and "max_episode_steps" not in env_kwargs:
        env_kwargs["max_episode_steps"] = spec.max_episode_steps
    entry = spec.vector_entry_point
    entry_string = entry if isinstance(entry, str) else None
    notes: list[str] = []
    return Recipe(id=spec.id, entry=None if entry_string else entry, entry_string=entry_string,
                  kwargs=env_kwargs, spec=spec_meta(spec, minimal=True), notes=notes, vector=True,
                  entry_ref=None if entry_string else registered_ref(spec, entry, notes))


def from_env(env: Any) -> Recipe:
    if not isinstance(env, gymnasium.Env):
        raise CaptureError(f"expected a gymnasium.Env, got {type(env).__name__}")
    layers: list[tuple[type, dict[str, Any]]] = []
    node: Any = env
    while isinstance(node, gymnasium.Wrapper):
        layers.append((type(node), wrapper_kwargs(node, type(node), repair_record)))
        node = node.env
    return live_recipe(layers, node, getattr(node, "spec", None),
                       spec_meta=lambda spec: spec_meta(spec, minimal=False),
                       base_fix="capture the class with its arguments, specpack.capture({cls}, "
                       "...), or build the env with gymnasium.make so its spec records them",
                       make_inner=frozenset({"PassiveEnvChecker", "OrderEnforcing"}))
