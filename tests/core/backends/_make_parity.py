"""Envs, wrappers and helpers of the side-by-side tests of ``capture(...).make()`` and
``gymnasium.make`` (tests/core/backends/test_make_parity_*.py).

The envs are small on purpose: each has the one trait a behaviour of ``gymnasium.make`` turns
on (required constructor arguments, a render mode it lacks, no ``render_mode`` parameter, no
render modes declared), so a test says which trait it is about by naming the env.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv
from gymnasium.utils.env_checker import data_equivalence

import specpack

_BOX = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)


class ThreeArgs(gymnasium.Env):  # type: ignore[type-arg]
    """Takes three required arguments and keeps them, to see which values reached it."""

    observation_space = _BOX
    action_space = _BOX

    def __init__(self, first: Any, second: Any, third: Any) -> None:
        self.first, self.second, self.third = first, second, third


class FramesOnly(gymnasium.Env):  # type: ignore[type-arg]
    """Renders ``rgb_array`` frames only: ``render_mode="human"`` needs HumanRendering."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}
    observation_space = _BOX
    action_space = _BOX

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = render_mode


class OldRenderApi(gymnasium.Env):  # type: ignore[type-arg]
    """Declares render modes but takes no ``render_mode`` argument (gym's old rendering API)."""

    metadata = {"render_modes": ["rgb_array_list"], "render_fps": 4}
    observation_space = _BOX
    action_space = _BOX

    def __init__(self) -> None:
        pass


class UndeclaredModes(gymnasium.Env):  # type: ignore[type-arg]
    """Takes ``render_mode`` but keeps ``gymnasium.Env``'s metadata (no render modes listed)."""

    observation_space = _BOX
    action_space = _BOX

    def __init__(self, render_mode: str | None) -> None:
        self.render_mode = render_mode


class Unrecorded(gymnasium.ObservationWrapper):  # type: ignore[type-arg]
    """A wrapper that does not inherit RecordConstructorArgs: its spec has no kwargs."""

    def observation(self, observation: Any) -> Any:
        return observation


def wrapped_by_entry_point() -> gymnasium.Env:  # type: ignore[type-arg]
    """An entry point that returns a CartPole already inside a recording wrapper."""
    return gymnasium.wrappers.NormalizeReward(CartPoleEnv())


def unrecorded_by_entry_point() -> gymnasium.Env:  # type: ignore[type-arg]
    """An entry point that returns a CartPole inside a wrapper that records nothing."""
    return Unrecorded(CartPoleEnv())


def ours(target: Any, **options: Any) -> gymnasium.Env:  # type: ignore[type-arg]
    """What these tests compare with ``gymnasium.make(target, **options)``."""
    return specpack.capture(target, **options).make()


def wrapper_types(env: Any) -> list[type]:
    """The classes of ``env``'s stack, outermost first, down to the unwrapped env."""
    types = []
    while isinstance(env, gymnasium.Wrapper):
        types.append(type(env))
        env = env.env
    return [*types, type(env)]


def spec_key(spec: Any) -> Any:
    """``spec`` with a callable entry point replaced by its ``module:qualname``.

    A callable a fresh interpreter cannot import travels in the pack by value, so the rebuilt
    spec holds an equal copy of it, not the same object; its name is what can be compared.
    """
    entry = spec.entry_point
    if callable(entry):
        entry = f"{entry.__module__}:{entry.__qualname__}"
    return dataclasses.replace(spec, entry_point=entry)


def raised(call: Callable[[], Any]) -> BaseException:
    """The exception ``call`` raises (an AssertionError if it returns)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except Exception as error:  # noqa: BLE001 - the tests compare what each side raised
        return error
    raise AssertionError(f"{call} raised nothing")


def transitions(env: Any, steps: int, seed: int) -> list[tuple[Any, ...]]:
    """What ``env`` returns from a seeded reset and ``steps`` seeded actions (stops at the end
    of the episode): for comparing two envs by behaviour alone, whatever their stacks."""
    actions = copy.deepcopy(env.action_space)
    actions.seed(seed)
    seen: list[tuple[Any, ...]] = [env.reset(seed=seed)]
    for _ in range(steps):
        seen.append(env.step(actions.sample()))
        if seen[-1][2] or seen[-1][3]:
            break
    return seen


def same_transitions(a: Any, b: Any, steps: int = 40, seed: int = 0) -> bool:
    """``a`` and ``b`` give equal observations, rewards, flags and infos, step by step."""
    return bool(data_equivalence(transitions(a, steps, seed), transitions(b, steps, seed)))


@contextlib.contextmanager
def registered(env_id: str, **spec: Any) -> Iterator[str]:
    """Register ``env_id`` with ``gymnasium.register(env_id, **spec)`` for the ``with`` block."""
    gymnasium.register(env_id, **spec)
    try:
        yield env_id
    finally:
        gymnasium.registry.pop(env_id, None)
