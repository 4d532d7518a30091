"""``specpack run``: build a pack file's env and play a seeded rollout, its actions planned as
verify plans them; print the figures."""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from typing import Any

from ..._core._errors import RolloutError, SpecPackError
from ..._core._text import one_line, printable
from .._verify.trace import plan_actions
from .output import EXIT_OK, stdout_to_stderr
from .packfile import load_pack, preflight, run_imports

__all__ = ["command", "plan_actions", "rollout"]


def command(ns: argparse.Namespace) -> int:
    """Build the env from ``ns.file``, run ``ns.steps`` steps, print the figures."""
    if ns.steps < 1:
        raise SpecPackError(f"--steps {ns.steps}: must be 1 or more")
    run_imports(ns)
    pack = load_pack(ns)
    preflight(pack)
    with stdout_to_stderr():
        build_start = time.perf_counter()
        env = pack.make()
        build = time.perf_counter() - build_start
        try:
            figures = rollout(env, ns.steps, ns.seed, label=pack.label)
        finally:
            with contextlib.suppress(Exception):  # closing is best effort
                env.close()
    figures = {"file": ns.file, "id": pack.id, "build_seconds": round(build, 6), **figures}
    if ns.json:
        print(json.dumps(figures, indent=2, ensure_ascii=True))
        return EXIT_OK
    returns: list[float] = figures["returns"]
    rate = figures["steps_per_second"]
    speed = f"{rate:,.0f} steps/s" if rate is not None else "too fast to time"
    print(f"{printable(pack.label)}: built in {build * 1000:.1f} ms; {figures['steps']} steps in "
          f"{figures['seconds']:.3f} s ({speed}), seed {ns.seed}")
    if returns:
        mean = sum(returns) / len(returns)
        print(f"episodes: {len(returns)} finished, return mean {mean:.3f} "
              f"(min {min(returns):.3f}, max {max(returns):.3f}); mean length "
              f"{figures['mean_episode_length']:.1f} steps")
    else:
        print("episodes: none finished")
    if figures["open_episode_steps"]:
        print(f"          plus one in progress ({figures['open_episode_steps']} steps, return "
              f"{figures['open_episode_return']:.3f} so far)")
    return EXIT_OK


def _raised(label: str, method: str, step: int, e: Exception, after: str = "") -> RolloutError:
    text = one_line(e)
    message = text.partition(": ")[2] if text.startswith(type(e).__name__ + ":") else ""
    return RolloutError(
        f"{label}: env.{method} raised {type(e).__name__} at step {step}{after}"
        + (f": {message}" if message else "")
    )


def rollout(env: Any, steps: int, seed: int, *, label: str = "env") -> dict[str, Any]:
    """A seeded rollout with planned actions and auto-reset; episodes, returns, speed. Raises
    :class:`RolloutError` naming the method and the step (0: the first reset), chained."""
    try:
        actions = plan_actions(env.action_space, steps, seed)
    except Exception as e:
        raise _raised(label, "action_space.sample", 0, e, " (planning the actions)") from e
    try:
        env.reset(seed=seed)
    except Exception as e:
        raise _raised(label, "reset", 0, e, f" (the first reset, seed {seed})") from e
    returns: list[float] = []
    lengths: list[int] = []
    ret, length = 0.0, 0
    start = time.perf_counter()
    for i, action in enumerate(actions, start=1):
        try:
            _obs, reward, terminated, truncated, _info = env.step(action)
        except Exception as e:
            raise _raised(label, "step", i, e) from e
        ret += float(reward)
        length += 1
        if terminated or truncated:
            returns.append(ret)
            lengths.append(length)
            ret, length = 0.0, 0
            try:
                env.reset()
            except Exception as e:
                raise _raised(label, "reset", i, e, " (after the episode ended)") from e
    seconds = time.perf_counter() - start
    return {
        "steps": steps,
        "seconds": round(seconds, 6),
        "steps_per_second": round(steps / seconds, 1) if seconds > 0 else None,
        "seed": seed,
        "episodes": len(returns),
        "returns": returns,
        "mean_episode_length": sum(lengths) / len(lengths) if lengths else None,
        "open_episode_steps": length,
        "open_episode_return": ret,
    }
