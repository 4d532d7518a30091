"""The multi-agent rollout verify and the audit compare: a seeded plan and a recorded trace.

Under an ``action_mask`` a planned action ``a`` picks ``legal[a % len(legal)]`` (:func:`choose`):
a classic game is played, not ended by an illegal move. A parallel step is recorded as ``["step",
n, actions, observations, rewards, terminations, truncations, infos]``, an AEC step the same for
the acting agent (``[agent, action]``, then :meth:`last` before it). The engine passes its own
``describe`` and ``plain``, so this module imports nothing above the backends.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
from pettingzoo.utils.env import ParallelEnv

from ..._core._text import one_line, public_name
from .stack import inner

__all__ = ["choose", "layer_names", "plan_actions", "record"]

Describe = Callable[[Any], Any]
Plain = Callable[[Any], Any]


def layer_names(env: Any) -> list[str]:
    """``module.QualName`` of every object of the stack, outermost first."""
    names: list[str] = []
    node = env
    while node is not None and len(names) < 1000:
        names.append(f"{type(node).__module__}.{type(node).__qualname__}")
        node = inner(node)
    return names


def plan_actions(env: Any, steps: int, seed: int) -> list[dict[str, Any]]:
    """``steps`` joint actions ``{agent: action}`` for every possible agent, sampled from copies
    of the fresh env's spaces (agent ``i``'s seeded with ``seed + i``)."""
    spaces = []
    for i, agent in enumerate(env.possible_agents):
        space = copy.deepcopy(env.action_space(agent))
        space.seed(seed + i)
        spaces.append((agent, space))
    return [{agent: space.sample() for agent, space in spaces} for _ in range(steps)]


def choose(planned: Any, obs: Any, info: Any) -> Any:
    """The action an agent takes: the planned one, or the legal action it picks under a mask."""
    mask = next((h["action_mask"] for h in (obs, info)
                 if isinstance(h, dict) and "action_mask" in h), None)
    if mask is None or not isinstance(planned, (int, np.integer)):
        return planned
    legal = np.flatnonzero(np.asarray(mask))
    if legal.size == 0:
        return planned
    return type(planned)(legal[int(planned) % legal.size])


class _Recorder:
    """One trace being recorded: spaces as ``describe`` shows them, values as ``plain`` records
    them, infos without the ignored keys (noting those seen), and where the rollout is."""

    def __init__(self, describe: Describe, plain: Plain, ignore: Collection[str]) -> None:
        self.describe, self.plain, self.ignore = describe, plain, frozenset(ignore)
        self.events: list[Any] = []
        self.ignored: list[str] = []
        self.after_reset: dict[str, Any] | None = None
        self.state = {"method": "reset", "step": 0}

    def spaces(self, env: Any, which: str, agents: list[Any]) -> dict[str, Any]:
        out = []
        for agent in agents:
            try:
                out.append([self.plain(agent), self.describe(getattr(env, which)(agent))])
            except Exception as e:  # noqa: BLE001 - a space that raises is shown as such
                out.append([self.plain(agent), {"error": one_line(e, 200)}])
        return {"type": "pettingzoo.agents", "spaces": out}

    def drop(self, info: Any) -> Any:
        if not self.ignore or type(info) is not dict:
            return info
        for k in info:
            if type(k) is str and k in self.ignore and k not in self.ignored:
                self.ignored.append(k)
        return {k: v for k, v in info.items() if not (type(k) is str and k in self.ignore)}

    def infos(self, infos: Any) -> Any:
        if type(infos) is dict:
            infos = {a: self.drop(info) for a, info in infos.items()}
        return self.plain(infos)


def record(env: Any, actions: list[dict[str, Any]], seed: int, *, describe: Describe,
           plain: Plain, ignore_info: Collection[str] = ()) -> dict[str, Any]:
    """Record a fresh ``env``'s multi-agent trace (as ``Trace.to_dict()``), running ``actions``
    after a reset with ``seed``; info keys in ``ignore_info`` are left out (those seen are listed
    under ``"ignored_info"``), and a failing rollout is recorded under ``"error"``."""
    agents = list(env.possible_agents)
    parallel = isinstance(env, ParallelEnv)
    rec = _Recorder(describe, plain, ignore_info)
    t: dict[str, Any] = {
        "layers": layer_names(env),
        "observation_space": rec.spaces(env, "observation_space", agents),
        "action_space": rec.spaces(env, "action_space", agents),
        "action_space_after_reset": None,
        "render_mode": plain(getattr(env, "render_mode", None)),
        "spec": {"api": "parallel" if parallel else "aec", "possible_agents": plain(agents),
                 "metadata": plain(dict(getattr(env, "metadata", None) or {}))},
        "nondeterministic": False,
        "events": rec.events,
        "error": None,
        "ignored_info": rec.ignored,
    }
    try:
        (_parallel if parallel else _aec)(env, actions, seed, rec)
    except Exception as e:  # noqa: BLE001 - a failing rollout is part of the trace
        text = one_line(e)
        name = public_name(type(e))
        t["error"] = {"method": rec.state["method"], "step": rec.state["step"],
                      "type": f"{type(e).__module__}.{type(e).__qualname__}",
                      "message": text[len(name) + 2:] if text.startswith(f"{name}: ") else ""}
    t["action_space_after_reset"] = rec.after_reset
    return t


def _parallel(env: Any, actions: list[dict[str, Any]], seed: int, rec: _Recorder) -> None:
    events, plain, state = rec.events, rec.plain, rec.state
    obs, infos = env.reset(seed=seed)
    events.append(["reset", 0, plain(obs), rec.infos(infos)])
    rec.after_reset = rec.spaces(env, "action_space", list(env.possible_agents))
    for step, planned in enumerate(actions, 1):
        state.update(method="step", step=step)
        # copies: the plan is shared, and an env may change an action (or clip it) in place
        joint = {a: copy.deepcopy(choose(planned.get(a), obs.get(a), infos.get(a)))
                 for a in env.agents}
        shown = plain(joint)  # before the step: an env may change its action in place
        obs, rewards, terms, truncs, infos = env.step(joint)
        events.append(["step", step, shown, plain(obs), plain(rewards), plain(terms),
                       plain(truncs), rec.infos(infos)])
        if not env.agents:
            state["method"] = "reset"
            obs, infos = env.reset()
            events.append(["reset", step, plain(obs), rec.infos(infos)])


def _aec(env: Any, actions: list[dict[str, Any]], seed: int, rec: _Recorder) -> None:
    events, plain, state = rec.events, rec.plain, rec.state
    env.reset(seed=seed)
    events.append(["reset", 0, _observations(env, plain), rec.infos(env.infos)])
    rec.after_reset = rec.spaces(env, "action_space", list(env.possible_agents))
    for step, planned in enumerate(actions, 1):
        state.update(method="step", step=step)
        agent = env.agent_selection
        obs, reward, term, trunc, info = env.last()
        action = None if term or trunc else copy.deepcopy(choose(planned.get(agent), obs, info))
        shown = plain([agent, action])  # before the step (see _parallel)
        seen = [plain(obs), plain(reward), plain(term), plain(trunc), plain(rec.drop(info))]
        env.step(action)
        events.append(["step", step, shown, *seen])
        if not env.agents:
            state["method"] = "reset"
            env.reset()
            events.append(["reset", step, _observations(env, plain), rec.infos(env.infos)])


def _observations(env: Any, plain: Plain) -> Any:
    return {str(a): plain(env.observe(a)) for a in env.agents}
