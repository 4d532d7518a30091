"""Building a gym 0.26 env from a :class:`~specpack._core._backends.Blueprint` as ``gym.make``
does, from a plan per blueprint; each build gets a fresh copy of the whole spec (``TimeLimit``
writes into it, as in ``gym.make``).
"""

from __future__ import annotations

from typing import Any

import gym as _gym
from gym.envs.registration import EnvSpec as GymSpec

from ..._carry.values import materialize
from ..._errors import BuildError
from .._shared import HUMAN_RENDERING, Plans, construct, fresh_spec, load_steps, raise_wrapped
from ..recipe import Blueprint
from .numpy2 import COMPAT, SPEC_DEFAULTS, numpy2_hint, numpy2_problem

#: gym's partial type hints do not help here: treat the package as untyped.
gym: Any = _gym

__all__ = ["build", "build_vector"]


class _Plan:
    """What every build of one blueprint in this process shares (the numpy-2 check done)."""

    __slots__ = ("compat", "creator", "spec", "steps")

    def __init__(self, bp: Blueprint) -> None:
        problem = numpy2_problem([bp.entry.name, *(ref.name for ref, _, _ in bp.layers)])
        if problem:
            raise BuildError(f"pack {bp.label} (a gym env) cannot be built here: "
                             f"{problem.problem}", python=problem.python, cli=problem.cli)
        self.creator = bp.entry.load()
        self.steps = load_steps(bp)
        # gym.make's apply_api_compatibility: the render mode goes to EnvCompatibility.
        first = bp.layers[0] if bp.layers else None
        self.compat = bool(bp.auto_render and first is not None and first[0].name == COMPAT
                           and not first[1])
        self.spec = _spec_template(bp, self.creator) if bp.spec else None


_plans = Plans(_Plan)


def build(bp: Blueprint, kwargs: dict[str, Any]) -> Any:
    """Build the env of ``bp`` with the final constructor ``kwargs`` (a dict of its own)."""
    plan = _plans.of(bp)
    creator = plan.creator
    human = collection = False
    if bp.auto_render:
        human, collection = _render_plan(creator, kwargs, bp.label)
    compat_kwargs = {"render_mode": kwargs.pop("render_mode", None)} if plan.compat else None
    env = construct(bp.label, bp.entry.name, creator, kwargs,
                    gym.Env if compat_kwargs is None else None,
                    "for a gymnasium env capture without backend='gym'", numpy2_hint)
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
        raise_wrapped(bp.label, e, numpy2_hint)
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
    meta = {**SPEC_DEFAULTS, **materialize(dict(bp.spec))}
    entry = meta.get("entry_point", bp.entry.name)  # None: the spec's entry was a callable
    return GymSpec(id=meta.get("id") or "env", entry_point=creator if entry is None else entry,
                   **{k: meta[k] for k in SPEC_DEFAULTS})


def build_vector(bp: Blueprint, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
    """gym 0.26 has no vector-only specs: a gym pack is never vector-only."""
    raise BuildError(f"pack {bp.label}: gym packs are never vector-only")
