"""The legacy ``gym`` (0.26.x) backend: an env resolved (id, spec, class, live stack) and built
exactly as ``gym.make`` would. Unlike gymnasium's, ``gym.make`` copies the *whole* ``EnvSpec``
onto the env (a fresh copy per build: ``TimeLimit`` writes into it), wraps ``EnvCompatibility``
innermost, has no ``max_episode_steps=-1`` and ignores ``spec.autoreset``. gym has no
``RecordConstructorArgs``: recorders say where its own wrappers keep their arguments. gym 0.26
predates numpy 2: capture and build name the classes that fail under it, and the fix."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from typing import Any

import gym as _gym
import numpy as np
from gym.envs import registration as reg
from gym.wrappers.compatibility import EnvCompatibility

from .._carry.tree import materialize
from .._errors import BuildError, CaptureError, SpecPackError, UnknownEnvError
from .._text import suggest
from ._args import live_recipe, wrapper_kwargs
from ._registry import import_id_module, versioned_spec
from ._shared import (
    HUMAN_RENDERING,
    Plans,
    construct,
    fresh_spec,
    load_steps,
    name_of,
    raise_wrapped,
)
from .recipe import Blueprint, Recipe
from .recorders import Recorder, attrs, register_recorder, same

#: gym's partial type hints do not help here: treat the package as untyped.
gym: Any = _gym

__all__ = ["build", "build_vector", "from_env", "from_id", "from_spec", "spec_meta"]

#: gym's EnvSpec field defaults: fields at these values are left out of a pack's spec record.
_SPEC_DEFAULTS: dict[str, object] = {
    "reward_threshold": None,
    "nondeterministic": False,
    "max_episode_steps": None,
    "order_enforce": True,
    "autoreset": False,
    "disable_env_checker": False,
    "apply_api_compatibility": False,
}
_COMPAT = "gym.wrappers.compatibility:EnvCompatibility"
#: The options of ``gym.make`` that capture takes.
_OPTIONS = frozenset({"max_episode_steps", "disable_env_checker", "autoreset",
                      "apply_api_compatibility"})
_NUMPY2_MSG = re.compile(
    r"`np\.\w+` was removed in the NumPy 2\.0 release|module 'numpy' has no attribute '\w+'"
)

#: gym 0.26.2 code that needs a numpy alias removed in numpy 2: (alias, why, Python fix, CLI fix).
_NUMPY2: dict[str, tuple[str, str, str, str]] = {
    "gym.wrappers.env_checker:PassiveEnvChecker": (
        "bool8",
        "gym's PassiveEnvChecker (which gym.make adds unless the env checker is disabled) tests "
        "isinstance(..., np.bool8) at the first step()",
        "install numpy<2 (pip install 'numpy<2'), or capture with disable_env_checker=True "
        "(for a live env: gym.make(..., disable_env_checker=True))",
        "install numpy<2 (pip install 'numpy<2'), or capture again without the checker: "
        "specpack capture --backend gym ID --disable-env-checker -o FILE",
    ),
    "gym.envs.classic_control.acrobot:AcrobotEnv": (
        "float_",
        "gym's AcrobotEnv integrates with np.float_ in every step()",
        "install numpy<2 (pip install 'numpy<2'); the env itself needs it, so no option helps",
        "install numpy<2 (pip install 'numpy<2'); the env itself needs it, so no option helps",
    ),
}


def _numpy_lacks(alias: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy 1.24+ warns on access to the aliases
        return not hasattr(np, alias)


def _refuse_numpy2(names: Iterable[str], error: type[SpecPackError], what: str) -> None:
    """Raise ``error`` (``what`` first) when an env made of the classes ``names``
    (``module:qualname``) fails under this numpy; nothing when numpy has every alias they use
    (numpy < 2, or ``np.bool8 = np.bool_`` put back)."""
    for name in names:
        known = _NUMPY2.get(name)
        if known is not None and _numpy_lacks(known[0]):
            alias, why, python, cli = known
            raise error(f"{what}: {why}, but numpy {np.__version__} here has no np.{alias} (numpy "
                        "2 removed it), so the env would raise AttributeError: module 'numpy' has "
                        f"no attribute '{alias}'. gym 0.26 predates numpy 2;",
                        python=python, cli=cli)


def _numpy2_hint(e: BaseException) -> str:
    """A fix to append when ``e`` is numpy 2's AttributeError for a removed alias."""
    if isinstance(e, AttributeError) and _NUMPY2_MSG.search(str(e)):
        return (f" (numpy {np.__version__} here removed an alias that gym-era code uses; install "
                "numpy<2: pip install 'numpy<2')")
    return ""


def spec_meta(spec: Any) -> dict[str, Any]:
    """The ``EnvSpec`` fields ``gym.make`` copies onto ``env.unwrapped.spec`` (non-defaults;
    ``entry_point`` left out when a string, else ``None``: the rebuild puts the callable)."""
    meta: dict[str, Any] = {"id": spec.id}
    if not isinstance(spec.entry_point, str):
        meta["entry_point"] = None
    meta.update((k, v) for k, d in _SPEC_DEFAULTS.items() if (v := getattr(spec, k, d)) != d)
    return meta


def from_id(env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
    full_id = import_id_module(env_id)
    spec, (ns, name, version) = versioned_spec(reg, full_id, library=gym, outdated=gym.logger.warn,
                                               not_an_id=UnknownEnvError)
    if spec is None:
        why = "not registered"
        try:
            reg._check_version_exists(ns, name, version)
        except gym.error.Error as e:
            why = str(e)
        raise UnknownEnvError(
            f"no env registered as {full_id!r} in gym's registry ({why});"
            f"{suggest(full_id, reg.registry.keys())}",
            python="Register it with gym.register first, or pass the env class: "
            "specpack.capture(MyEnv, backend='gym')",
            cli="Import the module that registers it first (--import MODULE), or capture the "
            "class without a registry: specpack capture --backend gym --entry-point module:Class",
        )
    return from_spec(spec, options, kwargs)


def from_spec(spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
    if not isinstance(spec, reg.EnvSpec):
        raise CaptureError(f"backend='gym' expects a gym EnvSpec, got {type(spec).__module__}."
                           f"{type(spec).__qualname__}; drop backend='gym' for a gymnasium spec")
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise CaptureError(f"gym.make has no option {', '.join(map(repr, unknown))}; its options "
                           f"are {', '.join(sorted(_OPTIONS))}")
    if spec.entry_point is None:
        raise CaptureError(f"the gym spec {spec.id!r} has no entry_point; register it with "
                           "entry_point='module:Class' or a callable")
    steps = options.get("max_episode_steps")
    if steps == -1:
        raise CaptureError(
            f"a step limit of -1 for the gym env {spec.id!r}: -1 means 'no TimeLimit' "
            "only in gymnasium; gym.make would wrap TimeLimit(env, -1) and truncate every "
            "episode at its first step.",
            python="Pass a positive max_episode_steps, or register the spec without "
            "max_episode_steps",
            cli="Give a positive --max-episode-steps N, or register the spec without "
            "max_episode_steps",
        )
    for key in ("autoreset", "apply_api_compatibility", "disable_env_checker"):
        value = options.get(key)
        if value is not None and not isinstance(value, bool):
            raise CaptureError(f"{key}={value!r} for {spec.id!r} must be True or False")
    compat = options.get("apply_api_compatibility")
    checker = options.get("disable_env_checker")
    layers: list[tuple[type, dict[str, Any]]] = []  # gym.make's order, innermost first
    if compat is True or (compat is None and spec.apply_api_compatibility is True):
        layers.append((EnvCompatibility, {}))  # its render_mode is decided at build time
    if checker is False or (checker is None and spec.disable_env_checker is False):
        layers.append((gym.wrappers.env_checker.PassiveEnvChecker, {}))
    if spec.order_enforce:
        layers.append((gym.wrappers.OrderEnforcing, {}))
    steps = spec.max_episode_steps if steps is None else steps
    if steps is not None:
        layers.append((gym.wrappers.TimeLimit, {"max_episode_steps": steps}))
    if options.get("autoreset"):
        layers.append((gym.wrappers.AutoResetWrapper, {}))
    layers.reverse()  # outermost first
    entry = spec.entry_point
    string = entry if isinstance(entry, str) else None
    if string is None and not callable(entry):
        raise CaptureError(f"the gym spec {spec.id!r} has entry_point={entry!r}, which is not "
                           "callable; use a class, a factory function or a 'module:Class' string")
    _refuse_numpy2([name_of(entry) if string is None else string,
                    *(name_of(c) for c, _ in layers)], CaptureError,
                   f"the gym env {spec.id!r} cannot run here")
    return Recipe(id=spec.id, entry=entry if string is None else None, entry_string=string,
                  kwargs={**spec.kwargs, **kwargs}, spec=spec_meta(spec), layers=layers,
                  auto_render=True)


def from_env(env: Any) -> Recipe:
    if not isinstance(env, gym.Env):
        raise CaptureError(f"expected a gym.Env, got {type(env).__name__}")
    layers: list[tuple[type, dict[str, Any]]] = []
    node: Any = env
    # gym's EnvCompatibility is an Env holding the old-API env, not a Wrapper.
    while isinstance(node, (gym.Wrapper, EnvCompatibility)):
        layers.append((type(node), wrapper_kwargs(node, type(node))))
        node = node.env
    spec = getattr(node, "spec", None)
    _refuse_numpy2([name_of(type(node)), *(name_of(c) for c, _ in layers)], CaptureError,
                   f"the live gym env {env!r} cannot be rebuilt here")
    return live_recipe(
        layers, node, spec if isinstance(spec, reg.EnvSpec) else None,
        spec_meta=spec_meta,
        base_fix="capture the class with its arguments, specpack.capture({cls}, backend='gym', "
        "...), or build the env with gym.make so its spec records them",
        make_inner=frozenset({"PassiveEnvChecker", "OrderEnforcing", "EnvCompatibility"}),
    )


class _Plan:
    """What every build of one blueprint in this process shares (the numpy-2 check done)."""

    __slots__ = ("compat", "creator", "spec", "steps")

    def __init__(self, bp: Blueprint) -> None:
        _refuse_numpy2([bp.entry.name, *(ref.name for ref, _, _ in bp.layers)], BuildError,
                       f"pack {bp.label} (a gym env) cannot be built here")
        self.creator = bp.entry.load()
        self.steps = load_steps(bp)
        # gym.make's apply_api_compatibility: the render mode goes to EnvCompatibility.
        self.compat = bool(bp.auto_render and bp.layers and bp.layers[0][0].name == _COMPAT
                           and not bp.layers[0][1])
        self.spec = _spec_template(bp, self.creator) if bp.spec else None


_plans = Plans(_Plan)


def build(bp: Blueprint, kwargs: dict[str, Any]) -> Any:
    """Build the env of ``bp`` with the final constructor ``kwargs`` (a dict of its own)."""
    plan = _plans.of(bp)
    creator = plan.creator
    human, collection = (_render_plan(creator, kwargs, bp.label) if bp.auto_render
                         else (False, False))
    compat_kwargs = {"render_mode": kwargs.pop("render_mode", None)} if plan.compat else None
    env = construct(bp.label, bp.entry.name, creator, kwargs,
                    gym.Env if compat_kwargs is None else None,
                    "for a gymnasium env capture without backend='gym'", _numpy2_hint)
    try:
        if plan.spec is not None:
            env.unwrapped.spec = fresh_spec(plan.spec, kwargs)
        for i, (wcls, fixed, lowered) in enumerate(plan.steps):
            if i == 0 and compat_kwargs is not None:
                env = wcls(env, **compat_kwargs)
            elif fixed is not None:
                env = wcls(env, **fixed)
            else:
                env = wcls(env, **materialize(dict(lowered)))
        if human:
            env = gym.wrappers.HumanRendering(env)
        elif collection:
            env = gym.wrappers.RenderCollection(env)
    except Exception as e:  # noqa: BLE001 - raise_wrapped re-raises it
        raise_wrapped(bp.label, e, _numpy2_hint)
    return env


def _render_plan(creator: Any, kwargs: dict[str, Any], label: str) -> tuple[bool, bool]:
    """gym.make's render-mode logic (0.26.2), warnings included; may rewrite ``render_mode``."""
    mode = kwargs.get("render_mode")
    if mode is None or not hasattr(creator, "metadata"):
        return False, False
    metadata = creator.metadata
    if not isinstance(metadata, dict):
        raise BuildError(f"pack {label}: the env creator's metadata must be a dict (gym.make "
                         f"asserts it), got {type(metadata).__name__}")
    if "render_modes" not in metadata:
        gym.logger.warn("The environment creator metadata doesn't include `render_modes`, "
                        f"contains: {list(metadata.keys())}")
        return False, False
    modes = metadata["render_modes"]
    if mode == "human" and "human" not in modes and ("rgb_array" in modes
                                                      or "rgb_array_list" in modes):
        gym.logger.warn(HUMAN_RENDERING)
        kwargs["render_mode"] = "rgb_array" if "rgb_array" in modes else "rgb_array_list"
        return True, False
    if mode not in modes and mode.endswith("_list") and mode[: -len("_list")] in modes:
        kwargs["render_mode"] = mode[: -len("_list")]
        return False, True
    if mode not in modes:
        gym.logger.warn(f"The environment is being initialised with mode ({mode}) that is not "
                        f"in the possible render_modes ({modes}).")
    return False, False


def _spec_template(bp: Blueprint, creator: Any) -> Any:
    """The whole ``EnvSpec`` every build copies (``gym.make`` deep-copies the spec)."""
    meta = {**_SPEC_DEFAULTS, **materialize(dict(bp.spec))}
    entry = meta.get("entry_point", bp.entry.name)  # None: the spec's entry was a callable
    return reg.EnvSpec(id=meta.get("id") or "env",
                       entry_point=creator if entry is None else entry,
                       **{k: meta[k] for k in _SPEC_DEFAULTS})


def build_vector(bp: Blueprint, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
    """gym 0.26 has no vector-only specs: a gym pack is never vector-only."""
    raise BuildError(f"pack {bp.label}: gym packs are never vector-only")


def _record_stats(node: Any) -> dict[str, Any]:
    return {"deque_size": vars(node)["return_queue"].maxlen}


# Where gym 0.26.2's own wrappers keep each constructor argument (read from their __init__; a
# stored value passed back yields the same wrapper). Wrappers taking only env need no entry.
_GYM_WRAPPERS: dict[str, Recorder] = {
    "gym.wrappers.time_limit:TimeLimit": attrs(max_episode_steps="_max_episode_steps"),
    "gym.wrappers.order_enforcing:OrderEnforcing":
        attrs(disable_render_order_enforcing="_disable_render_order_enforcing"),
    _COMPAT: same("render_mode"),
    "gym.wrappers.render_collection:RenderCollection": same("pop_frames", "reset_clean"),
    "gym.wrappers.step_api_compatibility:StepAPICompatibility": same("output_truncation_bool"),
    "gym.wrappers.atari_preprocessing:AtariPreprocessing":
        same("noop_max", "frame_skip", "screen_size", "terminal_on_life_loss", "grayscale_obs",
             "grayscale_newaxis", "scale_obs"),
    "gym.wrappers.filter_observation:FilterObservation": attrs(filter_keys="_filter_keys"),
    "gym.wrappers.frame_stack:FrameStack": same("num_stack", "lz4_compress"),
    "gym.wrappers.gray_scale_observation:GrayScaleObservation": same("keep_dim"),
    "gym.wrappers.normalize:NormalizeObservation": same("epsilon"),
    "gym.wrappers.normalize:NormalizeReward": same("gamma", "epsilon"),
    "gym.wrappers.record_episode_statistics:RecordEpisodeStatistics": _record_stats,
    "gym.wrappers.record_video:RecordVideo":
        same("video_folder", "episode_trigger", "step_trigger", "video_length", "name_prefix"),
    "gym.wrappers.rescale_action:RescaleAction": same("min_action", "max_action"),
    "gym.wrappers.resize_observation:ResizeObservation": same("shape"),
    "gym.wrappers.transform_observation:TransformObservation": same("f"),
    "gym.wrappers.transform_reward:TransformReward": same("f"),
    "gym.wrappers.pixel_observation:PixelObservationWrapper":
        attrs(pixels_only="_pixels_only", render_kwargs="_render_kwargs", pixel_keys="_pixel_keys"),
}
for _name, _recorder in _GYM_WRAPPERS.items():
    register_recorder(_name, _recorder)
