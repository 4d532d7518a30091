"""The legacy ``gym`` (0.26.x) backend: its registry, its ``make`` semantics, live stacks.

``gym.make`` in 0.26 differs from gymnasium's in ways a rebuild must follow exactly: the
env gets a deep copy of the *whole* ``EnvSpec`` (not a minimal one); the wrappers are, from
the inside out, ``EnvCompatibility`` (``apply_api_compatibility``, which takes the
``render_mode`` away from the constructor), ``PassiveEnvChecker`` (unless disabled),
``OrderEnforcing`` (if ``order_enforce``), ``TimeLimit`` (the call's ``max_episode_steps``, else
the spec's; there is no ``-1``), ``AutoResetWrapper`` (only the call's ``autoreset``: gym ignores
``spec.autoreset``) and the render wrappers ``HumanRendering``/``RenderCollection``, decided at
build time from the final ``render_mode``. ``TimeLimit`` writes its limit into
``env.spec.max_episode_steps``, so each build gets a fresh spec.

gym has no ``RecordConstructorArgs``. A live stack's constructor arguments are read from the
attributes where gym's own wrappers store them (a table, checked against their sources), from a
``_saved_kwargs`` record (a gym wrapper may inherit ``gymnasium.utils.RecordConstructorArgs``),
from EzPickle, or from an ``__init__`` that takes only ``env``; anything else is refused.

gym 0.26.2 predates numpy 2: its ``PassiveEnvChecker`` uses ``np.bool8`` and ``Acrobot`` uses
``np.float_``. Where numpy lacks them, capture and build raise a
:class:`~specpack.errors.SpecPackError` with the fix instead of an ``AttributeError`` at the
first ``step()``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import gym as _gym
import numpy as np
from gym.envs.registration import EnvSpec as GymSpec
from gym.wrappers.compatibility import EnvCompatibility

from .._values import materialize
from ..errors import BuildError, CaptureError, UnknownEnvError, UnrecordedArgumentsError
from . import Recipe
from ._args import check_coverage, evidence_kwargs, ezpickle_kwargs, init_params
from ._common import (
    construct,
    import_id_module,
    memo_token,
    memo_valid,
    register_pack,
    wrapping,
)

if TYPE_CHECKING:
    from ..pack import SpecPack

#: gym's partial type hints do not help here: treat the package as untyped.
gym: Any = _gym

__all__ = ["BACKEND", "GymBackend", "numpy2_problem"]

_ID_SAFE = re.compile(r"[^\w.-]+")
_OPTIONS = frozenset(
    {"max_episode_steps", "disable_env_checker", "autoreset", "apply_api_compatibility"}
)

#: gym's EnvSpec field defaults: fields at these values are left out of a pack's spec record.
_SPEC_DEFAULTS: dict[str, Any] = {
    "reward_threshold": None,
    "nondeterministic": False,
    "max_episode_steps": None,
    "order_enforce": True,
    "autoreset": False,
    "disable_env_checker": False,
    "apply_api_compatibility": False,
}

_CHECKER = "gym.wrappers.env_checker:PassiveEnvChecker"
_COMPAT = "gym.wrappers.compatibility:EnvCompatibility"
_TIME_LIMIT = "gym.wrappers.time_limit:TimeLimit"

# -- numpy 2 ---------------------------------------------------------------------------------

#: gym 0.26.2 code that needs a numpy alias removed in numpy 2, and the fixes that work.
_NUMPY2: dict[str, tuple[str, str, str]] = {
    _CHECKER: (
        "bool8",
        "gym's PassiveEnvChecker (which gym.make adds unless disable_env_checker=True) tests "
        "isinstance(..., np.bool8) at the first step()",
        "install numpy<2 (pip install 'numpy<2'), or capture with disable_env_checker=True "
        "(for a live env: gym.make(..., disable_env_checker=True))",
    ),
    "gym.envs.classic_control.acrobot:AcrobotEnv": (
        "float_",
        "gym's AcrobotEnv integrates with np.float_ in every step()",
        "install numpy<2 (pip install 'numpy<2'); the env itself needs it, so no option helps",
    ),
}


def _numpy_lacks(alias: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy 1.24+ warns on access to the aliases
        return not hasattr(np, alias)


def numpy2_problem(names: Iterable[str]) -> str | None:
    """Why an env made of the classes ``names`` (``module:qualname``) fails under this numpy.

    ``None`` when numpy here has every alias those gym classes use (numpy < 2, or the alias
    was put back, e.g. ``np.bool8 = np.bool_``).
    """
    for name in names:
        known = _NUMPY2.get(name)
        if known is not None and _numpy_lacks(known[0]):
            alias, why, fix = known
            return (
                f"{why}, but numpy {np.__version__} here has no np.{alias} (numpy 2 removed it), "
                f"so the env would raise AttributeError: module 'numpy' has no attribute "
                f"'{alias}'. gym 0.26 predates numpy 2; {fix}"
            )
    return None


_NUMPY2_MSG = re.compile(
    r"`np\.\w+` was removed in the NumPy 2\.0 release|module 'numpy' has no attribute '\w+'"
)


def _numpy2_hint(e: BaseException) -> str:
    """A fix to append when ``e`` is numpy 2's AttributeError for a removed alias."""
    if isinstance(e, AttributeError) and _NUMPY2_MSG.search(str(e)):
        return (
            f" (numpy {np.__version__} here removed an alias that gym-era code uses; install "
            "numpy<2: pip install 'numpy<2')"
        )
    return ""


def _name(cls: Any) -> str:
    return f"{getattr(cls, '__module__', '?')}:{getattr(cls, '__qualname__', '?')}"


# -- spec records ----------------------------------------------------------------------------


def spec_meta(spec: Any) -> dict[str, Any]:
    """The ``EnvSpec`` fields ``gym.make`` copies onto ``env.unwrapped.spec`` (non-defaults).

    ``entry_point`` is left out when it is the string the pack's entry point came from, and
    ``None`` when the spec's entry point is a callable (the rebuild then puts the callable).
    """
    meta: dict[str, Any] = {"id": spec.id}
    if not isinstance(spec.entry_point, str):
        meta["entry_point"] = None
    for k, default in _SPEC_DEFAULTS.items():
        v = getattr(spec, k, default)
        if v != default:
            meta[k] = v
    return meta


# -- the backend -----------------------------------------------------------------------------


class GymBackend:
    """The backend for the legacy ``gym`` package, release 0.26.x."""

    name = "gym"
    library_prefixes = ("gym.",)

    def owns(self, obj: Any) -> bool:
        return isinstance(obj, (gym.Env, GymSpec))

    # -- resolution --------------------------------------------------------------------------

    def from_id(self, env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        from gym.envs import registration as reg

        full_id = import_id_module(env_id)
        spec = reg.registry.get(full_id)
        try:
            ns, name, version = reg.parse_env_id(full_id)
        except gym.error.Error as e:
            raise UnknownEnvError(
                f"{full_id!r} is not a gym env id ({e}); ids look like 'CartPole-v1'"
            ) from None
        latest = reg.find_highest_version(ns, name)
        if version is not None and latest is not None and latest > version:
            gym.logger.warn(
                f"The environment {full_id} is out of date. You should consider "
                f"upgrading to version `v{latest}`."
            )
        if version is None and latest is not None:
            newest = reg.get_env_id(ns, name, latest)
            spec = reg.registry.get(newest)
            gym.logger.warn(
                f"Using the latest versioned environment `{newest}` "
                f"instead of the unversioned environment `{full_id}`."
            )
        if spec is None:
            why = "not registered"
            try:
                reg._check_version_exists(ns, name, version)
            except gym.error.Error as e:
                why = str(e)
            from .gymnasium import suggest

            raise UnknownEnvError(
                f"no env registered as {full_id!r} in gym's registry ({why});"
                f"{suggest(full_id, reg.registry)} Register it with gym.register first, or "
                "pass the env class: specpack.capture(MyEnv, backend='gym')"
            )
        return self.from_spec(spec, options, kwargs)

    def from_spec(self, spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        if not isinstance(spec, GymSpec):
            raise CaptureError(
                f"backend='gym' expects a gym EnvSpec, got {type(spec).__module__}."
                f"{type(spec).__qualname__}; drop backend='gym' for a gymnasium spec"
            )
        unknown = sorted(set(options) - _OPTIONS)
        if unknown:
            raise CaptureError(
                f"gym.make has no option {', '.join(map(repr, unknown))}; its options are "
                f"{', '.join(sorted(_OPTIONS))}"
            )
        if spec.entry_point is None:
            raise CaptureError(
                f"the gym spec {spec.id!r} has no entry_point; register it with "
                "entry_point='module:Class' or a callable"
            )
        steps = options.get("max_episode_steps")
        if steps == -1:
            raise CaptureError(
                f"max_episode_steps=-1 for the gym env {spec.id!r}: -1 means 'no TimeLimit' "
                "only in gymnasium; gym.make would wrap TimeLimit(env, -1) and truncate every "
                "episode at its first step. Pass a positive limit, or register the spec "
                "without max_episode_steps"
            )
        flags = {}
        for key in ("autoreset", "apply_api_compatibility", "disable_env_checker"):
            value = options.get(key)
            if value is not None and not isinstance(value, bool):
                raise CaptureError(f"{key}={value!r} for {spec.id!r} must be True or False")
            flags[key] = value
        compat = flags["apply_api_compatibility"]
        checker = flags["disable_env_checker"]
        env_kwargs = dict(spec.kwargs)
        env_kwargs.update(kwargs)
        # gym.make's order, innermost first.
        layers: list[tuple[type, dict[str, Any]]] = []
        if compat is True or (compat is None and spec.apply_api_compatibility is True):
            layers.append((EnvCompatibility, {}))  # its render_mode is decided at build time
        if checker is False or (checker is None and spec.disable_env_checker is False):
            layers.append((gym.wrappers.env_checker.PassiveEnvChecker, {}))
        if spec.order_enforce:
            layers.append((gym.wrappers.OrderEnforcing, {}))
        if steps is not None:
            layers.append((gym.wrappers.TimeLimit, {"max_episode_steps": steps}))
        elif spec.max_episode_steps is not None:
            layers.append((gym.wrappers.TimeLimit, {"max_episode_steps": spec.max_episode_steps}))
        if flags["autoreset"]:
            layers.append((gym.wrappers.AutoResetWrapper, {}))
        layers.reverse()  # outermost first
        entry = spec.entry_point
        if isinstance(entry, str):
            entry_string: str | None = entry
            entry_obj: Any = None
            entry_name = entry
        else:
            if not callable(entry):
                raise CaptureError(
                    f"the gym spec {spec.id!r} has entry_point={entry!r}, which is not "
                    "callable; use a class, a factory function or a 'module:Class' string"
                )
            entry_string, entry_obj, entry_name = None, entry, _name(entry)
        problem = numpy2_problem([entry_name, *(_name(c) for c, _ in layers)])
        if problem:
            raise CaptureError(f"the gym env {spec.id!r} cannot run here: {problem}")
        return Recipe(
            id=spec.id,
            entry=entry_obj,
            entry_string=entry_string,
            kwargs=env_kwargs,
            spec=spec_meta(spec),
            layers=layers,
            auto_render=True,
        )

    def from_callable(
        self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]
    ) -> Recipe:
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "env"
        spec_id = _ID_SAFE.sub("_", str(name)).strip("_.-") or "env"
        recipe = self.from_spec(GymSpec(id=spec_id, entry_point=fn), options, kwargs)
        recipe.id = None
        return recipe

    def from_env(self, env: Any) -> Recipe:
        if not isinstance(env, gym.Env):
            raise CaptureError(f"expected a gym.Env, got {type(env).__name__}")
        layers: list[tuple[type, dict[str, Any]]] = []
        node: Any = env
        while True:
            cls = type(node)
            if isinstance(node, gym.Wrapper):
                layers.append((cls, _wrapper_kwargs(node, cls)))
                node = node.env
            elif isinstance(node, EnvCompatibility):
                # gym's EnvCompatibility is an Env holding the old-API env, not a Wrapper.
                layers.append((cls, _wrapper_kwargs(node, cls)))
                node = node.env
            else:
                break
        base = node
        bcls = type(base)
        spec = getattr(base, "spec", None)
        if not isinstance(spec, GymSpec):
            spec = None
        notes: list[str] = []
        entry_string: str | None = None
        if spec is not None and _spec_made(spec, bcls):
            kwargs = dict(spec.kwargs)
            if isinstance(spec.entry_point, str):
                entry_string = spec.entry_point
            meta = spec_meta(spec)
        else:
            kwargs = _base_kwargs(base, bcls, notes)
            meta = spec_meta(spec) if spec is not None else {}
            if spec is not None and isinstance(spec.entry_point, str):
                meta["entry_point"] = spec.entry_point
        problem = numpy2_problem([_name(bcls), *(_name(c) for c, _ in layers)])
        if problem:
            raise CaptureError(f"the live gym env {env!r} cannot be rebuilt here: {problem}")
        names = [c.__qualname__ for c, _ in layers]
        if "TimeLimit" in names:
            below = [
                n for n in names[names.index("TimeLimit") + 1 :]
                if n not in ("PassiveEnvChecker", "OrderEnforcing", "EnvCompatibility")
            ]
            if below:
                notes.append(
                    f"TimeLimit is not innermost: {', '.join(below)} sit below it (the pack "
                    "keeps this order exactly)"
                )
        return Recipe(
            id=spec.id if spec is not None else None,
            entry=None if entry_string else bcls,
            entry_string=entry_string,
            kwargs=kwargs,
            spec=meta,
            layers=layers,
            auto_render=False,
            notes=notes,
        )

    # -- building ----------------------------------------------------------------------------

    def build(self, pack: SpecPack, kwargs: dict[str, Any]) -> Any:
        inner = pack._inner
        problem = numpy2_problem([pack.entry_point.name, *(layer.cls.name for layer in inner)])
        if problem:
            raise BuildError(f"pack {pack.label} (a gym env) cannot be built here: {problem}")
        creator = pack.entry_point.load()
        human = collection = False
        if pack.auto_render:
            human, collection = _render_plan(creator, kwargs, pack.label)
        # gym.make's apply_api_compatibility: the render mode goes to EnvCompatibility.
        compat_mode: dict[str, Any] | None = None
        if pack.auto_render and inner and inner[0].cls.name == _COMPAT and not inner[0]._kwargs:
            compat_mode = {"render_mode": kwargs.pop("render_mode", None)}
        env = construct(pack, creator, kwargs, gym.Env if compat_mode is None else None,
                        "for a gymnasium env capture without backend='gym'", _numpy2_hint)
        with wrapping(pack, _numpy2_hint):
            if pack.spec:
                env.unwrapped.spec = _env_spec(pack, creator, kwargs)
            for i, layer in enumerate(inner):
                lk = compat_mode if (i == 0 and compat_mode is not None) else layer._kwargs
                env = layer.cls.load()(env, **(materialize(lk) if lk else {}))
            if human:
                env = gym.wrappers.HumanRendering(env)
            elif collection:
                env = gym.wrappers.RenderCollection(env)
        return env

    def register(self, pack: SpecPack, env_id: str | None) -> str:
        from gym.envs.registration import registry

        return register_pack(pack, env_id, registry, gym.register, "gym")

    def memo_token(self, env_id: str) -> Any:
        from gym.envs.registration import registry

        # string entry points only (also skips unversioned ids: gym.make resolves and warns)
        return memo_token(registry, env_id, strings_only=True)

    def memo_valid(self, env_id: str, token: Any) -> bool:
        from gym.envs.registration import registry

        return memo_valid(registry, env_id, token)


# -- helpers ---------------------------------------------------------------------------------


def _render_plan(creator: Any, kwargs: dict[str, Any], label: str) -> tuple[bool, bool]:
    """gym.make's render-mode logic (0.26.2), warnings included; may rewrite ``render_mode``."""
    mode = kwargs.get("render_mode")
    if mode is None or not hasattr(creator, "metadata"):
        return False, False
    metadata = creator.metadata
    if not isinstance(metadata, dict):
        raise BuildError(
            f"pack {label}: the env creator's metadata must be a dict (gym.make asserts it), "
            f"got {type(metadata).__name__}"
        )
    if "render_modes" not in metadata:
        gym.logger.warn(
            "The environment creator metadata doesn't include `render_modes`, contains: "
            f"{list(metadata.keys())}"
        )
        return False, False
    modes = metadata["render_modes"]
    if mode == "human" and "human" not in modes and (
        "rgb_array" in modes or "rgb_array_list" in modes
    ):
        gym.logger.warn(
            "You are trying to use 'human' rendering for an environment that doesn't natively "
            "support it. The HumanRendering wrapper is being applied to your environment."
        )
        kwargs["render_mode"] = "rgb_array" if "rgb_array" in modes else "rgb_array_list"
        return True, False
    if mode not in modes and mode.endswith("_list") and mode[: -len("_list")] in modes:
        kwargs["render_mode"] = mode[: -len("_list")]
        return False, True
    if mode not in modes:
        gym.logger.warn(
            f"The environment is being initialised with mode ({mode}) that is not in the "
            f"possible render_modes ({modes})."
        )
    return False, False


def _env_spec(pack: SpecPack, creator: Any, kwargs: dict[str, Any]) -> Any:
    """A fresh ``EnvSpec`` for one build (``TimeLimit`` writes into it, as in gym.make)."""
    cache = pack._cache
    template = cache.get("gym.spec")
    if template is None:
        meta = {**_SPEC_DEFAULTS, **materialize(dict(pack.spec))}
        entry: Any
        if "entry_point" not in meta:
            entry = pack.entry_point.name
        else:
            entry = meta["entry_point"] if meta["entry_point"] is not None else creator
        template = GymSpec(
            id=meta.get("id") or "env",
            entry_point=entry,
            **{k: meta[k] for k in _SPEC_DEFAULTS},
        )
        cache["gym.spec"] = template
    spec = GymSpec.__new__(GymSpec)
    spec.__dict__.update(template.__dict__)
    spec.kwargs = kwargs
    return spec


def _spec_made(spec: Any, cls: type) -> bool:
    """Whether ``spec`` describes how this base env was made (its entry point is the class)."""
    from .gymnasium import _spec_made as made

    return made(spec, cls)


def _attrs(**params: str) -> Callable[[Any], dict[str, Any]]:
    """An extractor reading each constructor parameter from the named instance attribute."""

    def read(node: Any) -> dict[str, Any]:
        d = vars(node)
        return {p: d[a] for p, a in params.items()}

    return read


def _same(*names: str) -> Callable[[Any], dict[str, Any]]:
    return _attrs(**{n: n for n in names})


def _record_stats(node: Any) -> dict[str, Any]:
    return {"deque_size": vars(node)["return_queue"].maxlen}


#: Where gym 0.26.2's own wrappers keep each constructor argument (read from their __init__;
#: a stored value passed back yields the same wrapper). Wrappers whose __init__ takes only env
#: need no entry.
_GYM_WRAPPERS: dict[str, Callable[[Any], dict[str, Any]]] = {
    _TIME_LIMIT: _attrs(max_episode_steps="_max_episode_steps"),
    "gym.wrappers.order_enforcing:OrderEnforcing": _attrs(
        disable_render_order_enforcing="_disable_render_order_enforcing"
    ),
    _COMPAT: _same("render_mode"),
    "gym.wrappers.render_collection:RenderCollection": _same("pop_frames", "reset_clean"),
    "gym.wrappers.step_api_compatibility:StepAPICompatibility": _same("output_truncation_bool"),
    "gym.wrappers.atari_preprocessing:AtariPreprocessing": _same(
        "noop_max", "frame_skip", "screen_size", "terminal_on_life_loss", "grayscale_obs",
        "grayscale_newaxis", "scale_obs",
    ),
    "gym.wrappers.filter_observation:FilterObservation": _attrs(filter_keys="_filter_keys"),
    "gym.wrappers.frame_stack:FrameStack": _same("num_stack", "lz4_compress"),
    "gym.wrappers.gray_scale_observation:GrayScaleObservation": _same("keep_dim"),
    "gym.wrappers.normalize:NormalizeObservation": _same("epsilon"),
    "gym.wrappers.normalize:NormalizeReward": _same("gamma", "epsilon"),
    "gym.wrappers.record_episode_statistics:RecordEpisodeStatistics": _record_stats,
    "gym.wrappers.record_video:RecordVideo": _same(
        "video_folder", "episode_trigger", "step_trigger", "video_length", "name_prefix"
    ),
    "gym.wrappers.rescale_action:RescaleAction": _same("min_action", "max_action"),
    "gym.wrappers.resize_observation:ResizeObservation": _same("shape"),
    "gym.wrappers.transform_observation:TransformObservation": _same("f"),
    "gym.wrappers.transform_reward:TransformReward": _same("f"),
    "gym.wrappers.pixel_observation:PixelObservationWrapper": _attrs(
        pixels_only="_pixels_only", render_kwargs="_render_kwargs", pixel_keys="_pixel_keys"
    ),
}


def _known_extractor(cls: type) -> Callable[[Any], dict[str, Any]] | None:
    """The table entry of ``cls``, or of a gym wrapper it subclasses without a new __init__."""
    owner = next((c for c in cls.__mro__ if "__init__" in vars(c)), cls)
    return _GYM_WRAPPERS.get(_name(owner))


def _wrapper_kwargs(node: Any, cls: type) -> dict[str, Any]:
    """The constructor kwargs of one gym wrapper, known faithfully, or a clear refusal."""
    name = f"{cls.__module__}.{cls.__qualname__}"
    fix = (
        f"make {cls.__qualname__} inherit gymnasium.utils.RecordConstructorArgs (it works for "
        f"gym wrappers too) and call RecordConstructorArgs.__init__(self, <arg>=<arg>, ...) in "
        "its __init__, or capture the env below it and re-apply the wrapper in the worker"
    )
    extract = _known_extractor(cls)
    if extract is not None:
        try:
            return extract(node)
        except (KeyError, AttributeError, TypeError) as e:
            raise UnrecordedArgumentsError(
                f"the gym wrapper {name} no longer holds its constructor arguments where gym "
                f"0.26 keeps them ({type(e).__name__}: {e}); {fix}"
            ) from e
    saved = vars(node).get("_saved_kwargs")
    if isinstance(saved, dict):
        kwargs = {k: v for k, v in saved.items() if k != "env"}
        check_coverage(node, cls, kwargs, "RecordConstructorArgs", fix)
        return kwargs
    recorded = ezpickle_kwargs(node, cls)
    if recorded is not None:
        recorded.pop("env", None)
        check_coverage(node, cls, recorded, "EzPickle", fix)
        return recorded
    params = init_params(cls)
    if params is not None and not params:
        return {}
    taken = ", ".join(p.name for p in params or ())
    raise UnrecordedArgumentsError(
        f"the gym wrapper {name} takes constructor arguments ({taken or 'unknown'}) that gym "
        f"does not record (gym has no RecordConstructorArgs), so it cannot be rebuilt "
        f"faithfully; {fix}"
    )


def _base_kwargs(base: Any, cls: type, notes: list[str]) -> dict[str, Any]:
    """Constructor kwargs of a base gym env that ``gym.make`` did not build."""
    name = f"{cls.__module__}.{cls.__qualname__}"
    fix = (
        f"capture the class with its arguments, specpack.capture({cls.__qualname__}, "
        "backend='gym', ...), or build the env with gym.make so its spec records them"
    )
    saved = getattr(base, "__dict__", {}).get("_saved_kwargs")
    if isinstance(saved, dict):
        kwargs = dict(saved)
        check_coverage(base, cls, kwargs, "RecordConstructorArgs", fix)
        return kwargs
    recorded = ezpickle_kwargs(base, cls)
    if recorded is not None:
        check_coverage(
            base, cls, recorded, "EzPickle",
            f"pass every argument to EzPickle.__init__ in {cls.__qualname__}.__init__, or {fix}",
        )
        return recorded
    params = init_params(cls)
    if params is not None and not params:
        return {}
    if params is not None:
        recovered = evidence_kwargs(base, params)
        if recovered is not None:
            if recovered and [p.name for p in params] != ["render_mode"]:
                notes.append(
                    f"{cls.__qualname__} was built directly: its constructor arguments "
                    f"({', '.join(recovered)}) were read back from same-named attributes; "
                    "pack.verify() proves the rebuild"
                )
            return recovered
    taken = ", ".join(p.name for p in params or ())
    raise UnrecordedArgumentsError(
        f"the gym env {name} was built directly with constructor arguments "
        f"({taken or 'unknown'}) that nothing recorded (no spec from gym.make, no EzPickle, "
        f"no RecordConstructorArgs); {fix}"
    )


BACKEND = GymBackend()
