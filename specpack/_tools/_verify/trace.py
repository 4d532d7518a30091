"""Recording what an env shows from outside: the action plan and the :class:`Trace` (layers,
spaces, ``render_mode``, spec fields and a seeded rollout, every value by its exact encoding)."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Collection
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._core._exact.describe import describe_space, plain, type_name
from ..._core._text import one_line, public_name

if TYPE_CHECKING:
    from .generators import Watch

__all__ = ["Trace", "info_value", "plan_actions", "record", "writable"]

_SPEC_FIELDS = ("id", "reward_threshold", "nondeterministic", "max_episode_steps")


@dataclass
class Trace:
    """What an env shows from outside over a seeded rollout (typed-JSON-able data).

    ``events`` holds ``["reset", step, observation, info]`` and
    ``["step", step, action, observation, reward, terminated, truncated, info]`` lists;
    ``error`` is ``None`` or ``{"method", "step", "type", "message"}``; ``ignored_info`` lists
    the ignored info keys the env did return, in the order first seen.
    """

    layers: list[str]
    observation_space: dict[str, Any]
    action_space: dict[str, Any]
    action_space_after_reset: dict[str, Any] | None
    render_mode: Any
    spec: dict[str, Any]
    nondeterministic: bool
    events: list[list[Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    ignored_info: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The trace as a dict of its fields, not copies (``dataclasses.asdict``'s deep copy
        cost twice the rollout it copied: 100 CartPole steps)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        """The trace sent back by a worker (a dict from :meth:`to_dict`)."""
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k != "ignored_info"}
        return cls(**fields, ignored_info=list(data.get("ignored_info") or []))


def plan_actions(action_space: Any, steps: int, seed: int) -> list[Any]:
    """The actions both sides run: ``steps`` samples from a copy of the freshly built env's
    action space seeded with ``seed`` (the env's own space is not touched)."""
    space = copy.deepcopy(action_space)
    space.seed(seed)
    return [space.sample() for _ in range(steps)]


def writable(value: Any) -> Any:
    """``value`` with every array a writable copy (decoded ones are read-only; envs may write)."""
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if type(value) is list:
        return [writable(v) for v in value]
    if type(value) is tuple:
        return tuple(writable(v) for v in value)
    if type(value) is dict:
        return {k: writable(v) for k, v in value.items()}
    return value


def _layers(env: Any) -> list[str]:
    names = []
    node = env
    for _ in range(1000):
        names.append(type_name(type(node)))
        inner = getattr(node, "env", None)
        if (inner is None or inner is node or not hasattr(node, "unwrapped")
                or node is getattr(node, "unwrapped", node)):
            break
        node = inner
    return names


def _spec(env: Any) -> dict[str, Any]:
    spec = getattr(env, "spec", None)
    if spec is None:
        return {}
    out = {name: plain(getattr(spec, name, None)) for name in _SPEC_FIELDS}
    kwargs = getattr(spec, "kwargs", None) or {}
    try:
        items = sorted(kwargs.items(), key=lambda kv: str(kv[0]))
    except Exception:  # noqa: BLE001
        items = []
    out["kwargs"] = {str(k): _kwarg(v) for k, v in items}
    return out


def _kwarg(v: Any) -> Any:
    """A spec kwarg's exact encoding; a class or callable by its name (what it does shows in
    the rollout; a lambda kwarg has no exact encoding, and is no reason not to compare)."""
    if isinstance(v, type):
        return ["<class>", type_name(v)]
    if callable(v) and not isinstance(v, np.ndarray):
        return ["<callable>", str(getattr(v, "__qualname__", type_name(type(v))))]
    return plain(v)


def _error(method: str, step: int, e: BaseException) -> dict[str, Any]:
    text = one_line(e)
    name = public_name(type(e))
    message = text[len(name) + 2:] if text.startswith(f"{name}: ") else ""
    return {"method": method, "step": step, "type": type_name(type(e)), "message": message}


def info_value(info: Any, ignore: Collection[str], ignored: list[str]) -> Any:
    """``info``'s exact encoding without the keys named in ``ignore`` (those dropped are
    appended to ``ignored``, once each)."""
    if ignore and isinstance(info, dict):
        kept = {k: v for k, v in info.items() if not (type(k) is str and k in ignore)}
        ignored += [k for k in info if type(k) is str and k in ignore and k not in ignored]
        if type(info) is not dict:  # a dict of info's own type when it builds from a dict
            with contextlib.suppress(Exception):  # a dict subclass with another constructor
                kept = type(info)(kept)
        return plain(kept)
    return plain(info)


def record(env: Any, actions: list[Any], seed: int, *,
           ignore_info: Collection[str] = (), watch: Watch | None = None) -> Trace:
    """Record ``env``'s trace (give it a freshly built env), running ``actions`` after
    ``reset(seed=seed)``; a failing rollout is recorded in ``Trace.error``, not raised.
    ``watch`` records which calls changed a global generator (:class:`~.generators.Watch`)."""
    ignore = frozenset(k for k in ignore_info if type(k) is str)
    spec = _spec(env)
    t = Trace(
        layers=_layers(env),
        observation_space=describe_space(_attr(env, "observation_space")),
        action_space=describe_space(_attr(env, "action_space")),
        action_space_after_reset=None,
        render_mode=plain(_attr(env, "render_mode")),
        spec=spec,
        nondeterministic=bool(spec.get("nondeterministic", False)),
    )
    dropped = t.ignored_info
    method, step = "reset", 0
    try:
        obs, info = _call(env, watch, "reset", 0, seed=seed)
        t.events.append(["reset", 0, plain(obs), info_value(info, ignore, dropped)])
        t.action_space_after_reset = describe_space(_attr(env, "action_space"))
        for step, action in enumerate(actions, 1):
            method = "step"
            shown = plain(action)  # before the step: an env may change its action in place
            obs, reward, terminated, truncated, info = _call(env, watch, "step", step, action)
            t.events.append(["step", step, shown, plain(obs), plain(reward),
                             plain(terminated), plain(truncated),
                             info_value(info, ignore, dropped)])
            if terminated or truncated:
                method = "reset"
                obs, info = _call(env, watch, "reset", step)
                t.events.append(["reset", step, plain(obs), info_value(info, ignore, dropped)])
    except Exception as e:  # noqa: BLE001 - a failing rollout is part of the trace
        t.error = _error(method, step, e)
    return t


def _call(env: Any, watch: Watch | None, method: str, step: int, *args: Any,
          **kwargs: Any) -> Any:
    """``env.<method>(*args, **kwargs)``, then ``watch.after(method, step)`` when watched."""
    try:
        return getattr(env, method)(*args, **kwargs)
    finally:
        if watch is not None:
            watch.after(method, step)


def _attr(env: Any, name: str) -> Any:
    try:
        return getattr(env, name, None)
    except Exception as e:  # noqa: BLE001 - a property that raises is shown as such
        return (f"<{name} raised>", one_line(e, 200))
