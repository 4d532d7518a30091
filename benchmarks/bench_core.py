"""In-process figures: ``make``, ``capture`` and pickling, next to what users run today.

* ``pack.make()`` vs ``gymnasium.make("CartPole-v1")`` vs the floor: ``CartPoleEnv`` with the
  same wrappers built by hand (``TimeLimit(OrderEnforcing(PassiveEnvChecker(CartPoleEnv())))``);
* ``capture("CartPole-v1")`` vs ``gymnasium.make``;
* ``pickle.dumps(pack)``: size, dumps and loads time vs the pickled ``EnvSpec``;
* how make, capture and pickle size grow with the number of env kwargs (0, 10, 100) and of
  wrappers (0, 5, 20 ``ClipReward`` layers in the spec's ``additional_wrappers``).

Usage: ``python benchmarks/bench_core.py [--quick] [--json]``.
"""

from __future__ import annotations

import importlib
import itertools
import pickle
import sys
from typing import Any

import gymnasium
from _bench import median_round, part_main, row, side_by_side, size, us
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from gymnasium.envs.registration import WrapperSpec
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker, TimeLimit

import specpack

GOAL_MAKE_VS_GYM = 0.9
GOAL_MAKE_VS_FLOOR = 1.1
GOAL_CAPTURE_VS_GYM = 0.1
GOAL_PICKLE_TIME_VS_SPEC = 1.5
GOAL_BY_VALUE_VS_GYM = 1.0
GOAL_PICKLE_VS_SPEC = 1.5
#: Issue 32: a first capture (memo cleared) of an id with no file in its kwargs.
GOAL_FIRST_CAPTURE_VS_GYM = 0.5


class KwargsEnv(CartPoleEnv):
    """CartPole that accepts (and keeps) any number of extra kwargs."""

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        super().__init__(render_mode=render_mode)
        self.extra = kwargs


def _uncached_capture() -> Any:
    """A capture that cannot be served by the memo of identical by-reference captures."""
    _capture_module._memo.clear()
    return specpack.capture("CartPole-v1")


_capture_module = importlib.import_module("specpack._core._capture")


def _floor() -> Any:
    return TimeLimit(OrderEnforcing(PassiveEnvChecker(CartPoleEnv())), max_episode_steps=500)


def headline(rounds: int) -> list[dict[str, Any]]:
    """CartPole-v1: make vs gymnasium.make vs floor; capture; pickle size and time."""
    env_id = "CartPole-v1"
    pack = specpack.capture(env_id)
    assert [type(e).__name__ for e in _layers(pack.make())] == [
        type(e).__name__ for e in _layers(_floor())]
    if "KwargsPole-v0" not in gymnasium.registry:
        gymnasium.register("KwargsPole-v0", entry_point=KwargsEnv, max_episode_steps=500)
    fresh = itertools.count(3)  # new kwargs each call: no memo hit, the payload is reused
    t = side_by_side({
        "gym": lambda: gymnasium.make(env_id),
        "pack": pack.make,
        "floor": _floor,
        "capture": lambda: specpack.capture(env_id),
        "capture_cold": _uncached_capture,
        "gym_local": lambda: gymnasium.make("KwargsPole-v0", k=2.0),
        "capture_by_value": lambda: specpack.capture("KwargsPole-v0", k=2.0),
        "capture_by_value_new": lambda: specpack.capture("KwargsPole-v0", k=next(fresh)),
    }, rounds)
    spec = gymnasium.spec(env_id)
    pack_blob = pickle.dumps(pack)
    spec_blob = pickle.dumps(spec)
    p = side_by_side({
        "dumps_pack": lambda: pickle.dumps(pack),
        "dumps_spec": lambda: pickle.dumps(spec),
        "loads_pack": lambda: pickle.loads(pack_blob),
        "loads_spec": lambda: pickle.loads(spec_blob),
    }, rounds)
    return [
        _timed("core", "make CartPole-v1 vs gymnasium.make", t["pack"], t["gym"],
               "gymnasium.make", GOAL_MAKE_VS_GYM),
        _timed("core", "make CartPole-v1 vs the floor (by hand)", t["pack"], t["floor"],
               "floor", GOAL_MAKE_VS_FLOOR),
        _timed("core", "capture(id) vs gymnasium.make", t["capture"], t["gym"],
               "gymnasium.make", GOAL_CAPTURE_VS_GYM),
        _timed("core", "capture(id), memo cleared (first capture) vs gymnasium.make",
               t["capture_cold"], t["gym"], "gymnasium.make", GOAL_FIRST_CAPTURE_VS_GYM),
        _timed("core", "capture(id) of a __main__ env (by value) vs gymnasium.make of it",
               t["capture_by_value"], t["gym_local"], "gymnasium.make", GOAL_BY_VALUE_VS_GYM),
        _timed("core", "by-value capture with new kwargs each call vs gymnasium.make",
               t["capture_by_value_new"], t["gym_local"], "gymnasium.make"),
        row("core", "pickle size (by reference) vs EnvSpec", size(len(pack_blob)),
            f"EnvSpec {size(len(spec_blob))}", len(pack_blob) / len(spec_blob),
            GOAL_PICKLE_VS_SPEC),
        _timed("core", "pickle.dumps time vs EnvSpec", p["dumps_pack"], p["dumps_spec"],
               "EnvSpec", GOAL_PICKLE_TIME_VS_SPEC),
        _timed("core", "pickle.loads time vs EnvSpec", p["loads_pack"], p["loads_spec"],
               "EnvSpec", GOAL_PICKLE_TIME_VS_SPEC),
    ]


def _timed(bench: str, figure: str, ours: list[float], theirs: list[float], name: str,
           goal: float | None = None) -> dict[str, Any]:
    """A timing row: the median round's two times and their ratio."""
    a, b, ratio = median_round(ours, theirs)
    return row(bench, figure, us(a), f"{name} {us(b)}", ratio, goal)


def _layers(env: Any) -> list[Any]:
    out = [env]
    while isinstance(out[-1], gymnasium.Wrapper):
        out.append(out[-1].env)
    return out


def growth(rounds: int) -> list[dict[str, Any]]:
    """make, capture and pickle size as kwargs and wrappers grow (vs gymnasium.make/EnvSpec)."""
    rows: list[dict[str, Any]] = []
    configs: list[tuple[str, str, dict[str, Any]]] = []
    for n in (0, 10, 100):
        env_id = f"SpecpackBenchKwargs{n}-v0"
        gymnasium.register(env_id, entry_point=KwargsEnv, max_episode_steps=500,
                           kwargs={f"k{i}": i * 0.5 for i in range(n)})
        configs.append((f"{n} kwargs", env_id, {}))
    for n in (0, 5, 20):
        env_id = f"SpecpackBenchWrappers{n}-v0"
        # n distinct layers on both sides: one WrapperSpec object repeated n times would pickle
        # once (pickle's memo) while the pack holds n layers, comparing unlike with unlike.
        clips = tuple(WrapperSpec("ClipReward", "gymnasium.wrappers:ClipReward",
                                  {"min_reward": -1.0 - i, "max_reward": 1.0 + i})
                      for i in range(n))
        gymnasium.register(env_id, entry_point=CartPoleEnv, max_episode_steps=500,
                           additional_wrappers=clips)
        configs.append((f"{n} wrappers", env_id, {}))
    for label, env_id, _ in configs:
        # KwargsEnv lives in this (non-installed) script: carry it by reference so the figures
        # show kwargs and wrappers, not by-value code (bench_carry measures that).
        pack = specpack.capture(env_id, by_value=False)
        assert len(_layers(pack.make())) == len(_layers(gymnasium.make(env_id)))
        t = side_by_side({
            "gym": lambda env_id=env_id: gymnasium.make(env_id),
            "pack": pack.make,
            "capture": lambda env_id=env_id: specpack.capture(env_id, by_value=False),
        }, rounds)
        pack_size = len(pickle.dumps(pack))
        spec_size = len(pickle.dumps(gymnasium.spec(env_id)))
        rows += [
            _timed("growth", f"{label}: make vs gymnasium.make", t["pack"], t["gym"],
                   "gymnasium.make"),
            _timed("growth", f"{label}: capture vs gymnasium.make", t["capture"], t["gym"],
                   "gymnasium.make"),
            row("growth", f"{label}: pickle size vs EnvSpec", size(pack_size),
                f"EnvSpec {size(spec_size)}", pack_size / spec_size),
        ]
    return rows


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Every in-process figure, as table rows."""
    rounds = 7 if quick else 21
    return headline(rounds) + growth(5 if quick else 11)


def main(argv: list[str] | None = None) -> int:
    return part_main(run, "in-process make/capture/pickle figures", argv)


if __name__ == "__main__":
    sys.exit(main())
