"""Recording what an env shows from outside: the action plan and the trace.

A :class:`Trace` is an env's wrapper layers (outside in), its spaces (described structurally,
before and after the first reset), ``render_mode``, the ``spec`` fields that shape it, and a
seeded rollout: ``reset(seed=seed)``, then the planned actions one by one with auto-reset on
termination or truncation. A rollout that raises is recorded (method, step, exception), not
raised. Every value the env returns (observation, reward, flags, each info item) and every
action is recorded by its exact encoding (:func:`.describe.plain`), so a trace crosses processes
as typed-JSON-able data whose size is bounded per value; info keys a caller names in
``ignore_info`` are left out (and listed in ``Trace.ignored_info``).

Both sides of a comparison get the same actions: :func:`plan_actions` samples them once from a
seeded copy of the freshly built env's action space, before any reset.
"""

from __future__ import annotations

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
    ``["step", step, action, observation, reward, terminated, truncated, info]`` lists of
    exact encodings (the info without the keys named in ``ignore_info``); ``error`` is ``None``
    or ``{"method": "reset"|"step", "step": n, "type": ..., "message": ...}`` for a rollout
    that raised; ``ignored_info`` lists the info keys left out that the env did return, in the
    order first seen.
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
        """The trace as a dict (what a worker sends back): its fields, not copies of them.

        Every caller encodes it (or hands it on to be encoded) as it is; a deep copy
        (``dataclasses.asdict``) cost twice the rollout it copied (100 CartPole steps).
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        """The trace sent back by a worker (a dict from :meth:`to_dict`)."""
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k != "ignored_info"}
        return cls(**fields, ignored_info=list(data.get("ignored_info") or []))


def plan_actions(action_space: Any, steps: int, seed: int) -> list[Any]:
    """The actions both sides run: ``steps`` samples from a seeded deep copy of the space.

    Parameters
    ----------
    action_space
        The freshly built env's action space (it is copied; the env's own is not touched).
    steps
        How many actions.
    seed
        Seed of the copy's random generator.
    """
    space = copy.deepcopy(action_space)
    space.seed(seed)
    return [space.sample() for _ in range(steps)]


def writable(value: Any) -> Any:
    """``value`` with every array a writable copy (decoded arrays are read-only; an env may
    change its action in place)."""
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
        if inner is None or inner is node or not hasattr(node, "unwrapped"):
            break
        if node is getattr(node, "unwrapped", node):
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
        kept = {}
        for k, v in info.items():
            if type(k) is str and k in ignore:
                if k not in ignored:
                    ignored.append(k)
            else:
                kept[k] = v
        return plain(kept if type(info) is dict else _like(info, kept))
    return plain(info)


def _like(info: dict[Any, Any], items: dict[Any, Any]) -> Any:
    """``items`` as a dict of ``info``'s own type when it builds from a dict (else a dict)."""
    try:
        return type(info)(items)
    except Exception:  # noqa: BLE001 - a dict subclass with another constructor
        return items


def record(env: Any, actions: list[Any], seed: int, *,
           ignore_info: Collection[str] = (), watch: Watch | None = None) -> Trace:
    """Record ``env``'s trace, running ``actions`` after ``reset(seed=seed)``.

    This runs a rollout on ``env`` (it changes the env's state). Describe a freshly built env
    to compare construction too: the spaces are described before the first reset and again
    after it.

    Parameters
    ----------
    env
        The env.
    actions
        The planned actions (:func:`plan_actions`), one per step.
    seed
        The seed of the first reset (later auto-resets are unseeded).
    ignore_info
        Info keys left out of the trace (values that vary by nature, such as wall-clock
        times); those the env returned are listed in ``Trace.ignored_info``.
    watch
        Records which ``reset``/``step`` calls changed a global generator's state
        (:class:`~.generators.Watch`).

    Returns
    -------
    Trace
        Never raises for a failing rollout: the exception is recorded in ``Trace.error``.
    """
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
    calls = _Calls(watch)
    try:
        obs, info = calls.reset(env, 0, seed=seed)
        t.events.append(["reset", 0, plain(obs), info_value(info, ignore, dropped)])
        t.action_space_after_reset = describe_space(_attr(env, "action_space"))
        for step, action in enumerate(actions, 1):
            method = "step"
            shown = plain(action)  # before the step: an env may change its action in place
            obs, reward, terminated, truncated, info = calls.step(env, step, action)
            t.events.append(["step", step, shown, plain(obs), plain(reward),
                             plain(terminated), plain(truncated),
                             info_value(info, ignore, dropped)])
            if terminated or truncated:
                method = "reset"
                obs, info = calls.reset(env, step)
                t.events.append(["reset", step, plain(obs), info_value(info, ignore, dropped)])
    except Exception as e:  # noqa: BLE001 - a failing rollout is part of the trace
        t.error = _error(method, step, e)
    return t


class _Calls:
    """``env.reset``/``env.step``, each watched when there is a :class:`~.generators.Watch`."""

    def __init__(self, watch: Watch | None) -> None:
        self.watch = watch

    def reset(self, env: Any, step: int, **kwargs: Any) -> Any:
        if self.watch is None:
            return env.reset(**kwargs)
        try:
            return env.reset(**kwargs)
        finally:
            self.watch.after("reset", step)

    def step(self, env: Any, step: int, action: Any) -> Any:
        if self.watch is None:
            return env.step(action)
        try:
            return env.step(action)
        finally:
            self.watch.after("step", step)


def _attr(env: Any, name: str) -> Any:
    try:
        return getattr(env, name, None)
    except Exception as e:  # noqa: BLE001 - a property that raises is shown as such
        return (f"<{name} raised>", one_line(e, 200))
