"""Add the pettingzoo backend's golden pickle to a folder of ``make_pickles.py``.

    /path/to/pettingzoo-venv/bin/python tests/golden/make_pickles_pettingzoo.py [--folder NAME]

Writes ``pettingzoo_tictactoe.pkl`` (PettingZoo's ``tictactoe_v3.env``, an AEC env with its
wrapper stack) and its ``expected.json`` entry (fingerprint, wrapper stack and a seeded game:
each agent plays its first legal move), which ``tests/files/test_golden_pickles_pettingzoo.py``
checks in CI's pettingzoo venv. Never regenerated.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_golden import ROLLOUT_SEED
from make_pickles import folder, write


def game(env: Any) -> dict[str, Any]:
    """Reset with the golden seed and play each agent's first legal move to the end."""
    import numpy as np

    env.reset(seed=ROLLOUT_SEED)
    moves: list[Any] = []
    for agent in env.agent_iter(max_iter=40):
        obs, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            action = None
        else:
            action = int(np.flatnonzero(obs["action_mask"])[0])
        moves.append([agent, np.asarray(obs["observation"], float).ravel().tolist(),
                      float(reward), action])
        env.step(action)
    env.close()
    return {"moves": moves}


def stack_of(env: Any) -> list[str]:
    """The class names from the outermost wrapper in."""
    names, node = [], env
    while hasattr(node, "env") and node is not getattr(node, "unwrapped", node):
        names.append(type(node).__name__)
        node = node.env
    return [*names, type(node).__name__]


def main() -> int:
    """Write ``pettingzoo_tictactoe.pkl`` and its entry."""
    from pettingzoo.classic import tictactoe_v3

    import specpack

    out = folder(specpack.__version__)
    pack = specpack.capture(tictactoe_v3.env)
    assert pack.backend == "pettingzoo"
    env = pack.make()
    record = {"fingerprint": pack.fingerprint, "stack": stack_of(env), "game": game(env),
              "versions": dict(pack.versions)}
    write(out, {"pettingzoo_tictactoe.pkl": (pack, record)}, specpack.__version__)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
