"""Independent control for the real-packages audit test: is each env reproducible in ONE process?

For each id: build it twice with plain ``gymnasium.make``, plan the actions once from a seeded
deep copy of the first build's fresh action space, roll both out (``reset(seed=0)``, the
actions, auto-reset), and compare observations, rewards and flags exactly. Prints one JSON line
``{id: true|false}``. No specpack involved.

    python tests/scripts/audit_real_control.py MODULE... -- ID...
"""

from __future__ import annotations

import copy
import importlib
import json
import sys
import warnings
from typing import Any

import numpy as np

STEPS = 50


def rollout(env: Any, actions: list[Any]) -> list[Any]:
    out: list[Any] = [env.reset(seed=0)[0]]
    for a in actions:
        obs, reward, terminated, truncated, _ = env.step(copy.deepcopy(a))
        out += [obs, reward, terminated, truncated]
        if terminated or truncated:
            out.append(env.reset()[0])
    return out


def same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))


def main(argv: list[str]) -> None:
    warnings.simplefilter("ignore")
    split = argv.index("--")
    for name in argv[:split]:
        importlib.import_module(name)
    import gymnasium

    result = {}
    for env_id in argv[split + 1:]:
        first = gymnasium.make(env_id)
        space = copy.deepcopy(first.action_space)
        space.seed(0)
        actions = [space.sample() for _ in range(STEPS)]
        second = gymnasium.make(env_id)
        result[env_id] = same(rollout(first, actions), rollout(second, actions))
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
