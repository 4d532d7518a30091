"""Resolving a gym 0.26 env exactly as ``gym.make`` would: id, spec, class, live stack.

Unlike gymnasium's, ``gym.make`` gives the env a copy of the *whole* ``EnvSpec``, wraps
``EnvCompatibility`` innermost (it takes the ``render_mode``), has no ``max_episode_steps=-1``
and ignores ``spec.autoreset``; the render wrappers are decided at build time.
"""

from __future__ import annotations

from typing import Any

import gym as _gym
from gym.envs import registration as reg
from gym.envs.registration import EnvSpec as GymSpec
from gym.wrappers.compatibility import EnvCompatibility

from ..._errors import CaptureError, UnknownEnvError
from ..._text import suggest
from .._args import wrapper_kwargs
from .._live import live_recipe
from .._registry import import_id_module, versioned_spec
from .._shared import name_of
from ..recipe import Recipe
from . import wrappers  # noqa: F401 - registers the recorders of gym's own wrappers
from .numpy2 import SPEC_DEFAULTS, numpy2_problem

#: gym's partial type hints do not help here: treat the package as untyped.
gym: Any = _gym

__all__ = ["from_env", "from_id", "from_spec", "spec_meta"]

_OPTIONS = frozenset({"max_episode_steps", "disable_env_checker", "autoreset",
                      "apply_api_compatibility"})


def spec_meta(spec: Any) -> dict[str, Any]:
    """The ``EnvSpec`` fields ``gym.make`` copies onto ``env.unwrapped.spec`` (non-defaults;
    ``entry_point`` left out when a string, else ``None``: the rebuild puts the callable)."""
    meta: dict[str, Any] = {"id": spec.id}
    if not isinstance(spec.entry_point, str):
        meta["entry_point"] = None
    meta.update((k, v) for k, d in SPEC_DEFAULTS.items() if (v := getattr(spec, k, d)) != d)
    return meta


def from_id(env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
    full_id = import_id_module(env_id)
    spec, (ns, name, version) = versioned_spec(reg, full_id, library=gym,
                                               outdated=gym.logger.warn,
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
    if not isinstance(spec, GymSpec):
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
    entry_name = name_of(entry) if string is None else string
    problem = numpy2_problem([entry_name, *(name_of(c) for c, _ in layers)])
    if problem:
        raise CaptureError(f"the gym env {spec.id!r} cannot run here: {problem.problem}",
                           python=problem.python, cli=problem.cli)
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
        cls = type(node)
        layers.append((cls, wrapper_kwargs(node, cls)))
        node = node.env
    spec = getattr(node, "spec", None)
    problem = numpy2_problem([name_of(type(node)), *(name_of(c) for c, _ in layers)])
    if problem:
        raise CaptureError(f"the live gym env {env!r} cannot be rebuilt here: "
                           f"{problem.problem}", python=problem.python, cli=problem.cli)
    return live_recipe(
        layers, node, spec if isinstance(spec, GymSpec) else None,
        spec_meta=spec_meta,
        base_fix="capture the class with its arguments, specpack.capture({cls}, backend='gym', "
        "...), or build the env with gym.make so its spec records them",
        make_inner=frozenset({"PassiveEnvChecker", "OrderEnforcing", "EnvCompatibility"}),
    )
