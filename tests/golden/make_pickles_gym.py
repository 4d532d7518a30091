"""Add the gym backend's golden pickle to a folder of ``make_pickles.py`` (run with gym 0.26).

    /path/to/gym-venv/bin/python tests/golden/make_pickles_gym.py [--folder NAME]

Writes ``gym_cartpole.pkl`` (``CartPole-v1`` of the legacy ``gym`` package, by reference, with
options) and its ``expected.json`` entry (fingerprint, wrapper stack, seeded rollout), which
``tests/gym/test_gym_golden_pickles.py`` checks in CI's gym venv. Never regenerated.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_golden import ROLLOUT_SEED, actions, balance
from make_pickles import folder, write


def record(pack: Any) -> dict[str, Any]:
    """The fingerprint, gym wrapper stack and seeded rollout of ``pack.make()``."""
    import gym
    import numpy as np

    env = pack.make()
    stack, node = [], env
    while isinstance(node, gym.Wrapper):
        stack.append(type(node).__name__)
        node = node.env
    stack.append(type(node).__name__)
    obs, _ = env.reset(seed=ROLLOUT_SEED)
    run: dict[str, Any] = {"policy": "balance", "obs": [np.asarray(obs, float).tolist()],
                           "rewards": [], "terminated": False, "truncated": False, "steps": 0}
    for _ in actions():
        obs, reward, terminated, truncated, _ = env.step(balance(obs))
        run["obs"].append(np.asarray(obs, float).tolist())
        run["rewards"].append(float(reward))
        run["steps"] += 1
        if terminated or truncated:
            run["terminated"], run["truncated"] = bool(terminated), bool(truncated)
            break
    env.close()
    return {"fingerprint": pack.fingerprint, "stack": stack, "rollout": run,
            "versions": dict(pack.versions)}


def main() -> int:
    """Write ``gym_cartpole.pkl`` and its entry."""
    import specpack

    out = folder(specpack.__version__)
    pack = specpack.capture("CartPole-v1", backend="gym", max_episode_steps=30)
    assert pack.backend == "gym"
    write(out, {"gym_cartpole.pkl": (pack, record(pack))}, specpack.__version__)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
