"""Building a gymnasium env from a :class:`~specpack._core._backends.Blueprint` as
``gymnasium.make`` does (render-mode wrappers and ``env.unwrapped.spec`` included)."""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium
from gymnasium.envs.registration import EnvSpec, WrapperSpec

from ..._carry.tree import materialize
from ..._errors import BuildError, BuildGymnasiumError
from .._shared import HUMAN_RENDERING, Plans, construct, fresh_spec, load_steps, raise_wrapped
from ..recipe import Blueprint
from .compat import GYMNASIUM_VERSION, adapt_layer_kwargs, cross_line, vector_api
from .lines import line_hint, other_line_blueprint

__all__ = ["META_DEFAULTS", "build", "build_vector"]

#: EnvSpec field values that a pack's spec record leaves out (keeps pickles small).
META_DEFAULTS: dict[str, Any] = {
    "reward_threshold": None, "nondeterministic": False, "max_episode_steps": None,
    "order_enforce": False, "disable_env_checker": True, "additional_wrappers": (),
    "vector_entry_point": None,
}


class _Plan:
    """What every build of one blueprint in this process shares: classes, spec template, kwargs."""

    __slots__ = ("creator", "hint", "skewed", "spec", "steps")

    def __init__(self, bp: Blueprint) -> None:
        captured = bp.versions.get("gymnasium")
        cross = cross_line(captured)
        bp = other_line_blueprint(bp, captured) if cross else bp
        self.hint = line_hint(captured) if cross else ""
        self.creator = bp.entry.load()
        self.skewed = captured is not None and captured != GYMNASIUM_VERSION
        fit = partial(adapt_layer_kwargs, captured_under=captured, label=bp.label)
        self.steps = load_steps(bp, fit if self.skewed else None)
        self.spec = _spec_template(bp, self.creator) if bp.spec else None


_plans = Plans(_Plan)


def build(bp: Blueprint, kwargs: dict[str, Any]) -> Any:
    """Build the env of ``bp`` with the final constructor ``kwargs`` (a dict of its own)."""
    plan = _plans.of(bp)
    human, collection = (_render_plan(plan.creator, kwargs)
                         if bp.auto_render and "render_mode" in kwargs else (False, False))
    try:
        env = construct(bp.label, bp.entry.name, plan.creator, kwargs, gymnasium.Env,
                        "for a legacy gym env capture with backend='gym'", plan.hint)
    except BuildError as e:
        if human and isinstance(e.__cause__, TypeError) and "'render_mode'" in str(e.__cause__):
            raise BuildGymnasiumError(
                f"pack {bp.label}: you passed render_mode='human' although the env doesn't "
                "implement human rendering natively; HumanRendering was to be applied, but the "
                "env uses the old rendering API (no render_mode argument), which "
                "HumanRendering does not support") from e
        raise
    if plan.spec is not None:
        env.unwrapped.spec = fresh_spec(plan.spec, kwargs)
    steps = plan.steps if env is env.unwrapped else _not_applied(plan.steps, env)
    try:  # inline, not a context manager: it would cost ~1 µs per make
        for wcls, fixed, lowered in steps:
            if fixed is not None:
                env = wcls(env, **fixed) if fixed else wcls(env)
            else:  # fresh kwargs: callables loaded, containers copied, versions fitted
                kw = materialize(dict(lowered))
                if kw and plan.skewed:
                    kw = adapt_layer_kwargs(wcls, kw, bp.versions.get("gymnasium"), bp.label)
                env = wcls(env, **kw)
        if human:
            env = gymnasium.wrappers.HumanRendering(env)
        elif collection:
            env = gymnasium.wrappers.RenderCollection(env)
    except Exception as e:  # noqa: BLE001 - raise_wrapped re-raises it
        raise_wrapped(bp.label, e)
    return env


#: The wrappers ``gymnasium.make`` adds itself, under any spec's own wrappers.
_MAKES_OWN = ("PassiveEnvChecker", "OrderEnforcing", "TimeLimit")


def _not_applied(steps: tuple[Any, ...], env: Any) -> tuple[Any, ...]:
    """``steps`` less the spec wrappers an entry point returning a wrapped env already applied
    (its ``spec.additional_wrappers``, in order, right over make's own): ``make`` skips them."""
    try:
        prior = [w.name for w in env.spec.additional_wrappers]
    except Exception:  # noqa: BLE001 - an env whose spec cannot be read keeps every layer
        return steps
    start = next((i for i, s in enumerate(steps) if s[0].__name__ not in _MAKES_OWN), len(steps))
    end = start + len(prior)
    applied = [step[0].__name__ for step in steps[start:end]] == prior
    return steps[:start] + steps[end:] if applied else steps


def _render_plan(creator: Any, kwargs: dict[str, Any]) -> tuple[bool, bool]:
    """gymnasium.make's render-mode logic and warnings; may rewrite ``kwargs['render_mode']``."""
    render_mode = kwargs.get("render_mode")
    if render_mode is None:
        return False, False
    metadata = getattr(creator, "metadata", None)
    render_modes = metadata.get("render_modes") if isinstance(metadata, dict) else None
    if render_modes is None or render_mode in render_modes:
        return False, False
    displayable = {"rgb_array", "rgb_array_list"}.intersection(render_modes)
    if render_mode == "human" and displayable:
        gymnasium.logger.warn(HUMAN_RENDERING)
        kwargs["render_mode"] = displayable.pop()
        return True, False
    if render_mode.endswith("_list") and render_mode[: -len("_list")] in render_modes:
        kwargs["render_mode"] = render_mode[: -len("_list")]
        return False, True
    gymnasium.logger.warn(f"The environment is being initialised with render_mode={render_mode!r} "
                          f"that is not in the possible render_modes ({render_modes}).")
    return False, False


def _spec_template(bp: Blueprint, creator: Any) -> EnvSpec:
    """The ``env.unwrapped.spec`` every build copies (with its own kwargs)."""
    meta = {**META_DEFAULTS, **bp.spec}
    entry = meta.get("entry_point", bp.entry.name)  # None: the spec's entry was a callable
    wrappers = tuple(WrapperSpec(name, ep, materialize(kw) if kw is not None else None)
                     for name, ep, kw in materialize(meta["additional_wrappers"]))
    return EnvSpec(
        id=meta.get("id") or "env", entry_point=creator if entry is None else entry,
        reward_threshold=meta["reward_threshold"], nondeterministic=bool(meta["nondeterministic"]),
        max_episode_steps=meta["max_episode_steps"], order_enforce=bool(meta["order_enforce"]),
        disable_env_checker=bool(meta["disable_env_checker"]), additional_wrappers=wrappers,
        vector_entry_point=meta["vector_entry_point"])


def build_vector(bp: Blueprint, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
    """Build a vector-only pack's vector env as ``gymnasium.make_vec`` does in
    ``vector_entry_point`` mode: ``creator(num_envs=num_envs, **kwargs)``, then the spec."""
    creator = bp.entry.load()
    try:
        env = creator(num_envs=num_envs, **kwargs)
    except Exception as e:
        raise BuildError(f"the vector env creator of pack {bp.label} ({bp.entry.name}) raised "
                         f"{type(e).__name__}: {e}") from e
    # 0.28/0.29: a vector entry point may return either of that release's vector APIs
    kinds = tuple(dict.fromkeys((vector_api().VectorEnv, gymnasium.vector.VectorEnv)))
    if not isinstance(env, kinds):
        raise BuildError(f"the vector entry point of pack {bp.label} returned "
                         f"{type(env).__name__}, not a "
                         f"{' or '.join(f'{k.__module__}.VectorEnv' for k in kinds)}")
    meta = {**META_DEFAULTS, **bp.spec}
    env.unwrapped.spec = EnvSpec(
        id=meta.get("id") or "env", entry_point=None, reward_threshold=meta["reward_threshold"],
        nondeterministic=bool(meta["nondeterministic"]),
        vector_entry_point=meta["vector_entry_point"] or bp.entry.name,
        kwargs={**kwargs, **({"num_envs": num_envs} if num_envs != 1 else {}),
                "vectorization_mode": "vector_entry_point"})
    return env
