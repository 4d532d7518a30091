"""Make the golden pack files of format specpack/1 (run once; the outputs are checked in).

    python tests/golden/make_golden.py

writes, beside this script:

- ``cartpole_options.specpack``: ``CartPole-v1`` by reference, with make-style options
  (``max_episode_steps=50``) and an env kwarg (``sutton_barto_reward=True``); unsigned, loads
  with ``trust=False``.
- ``rich_kwargs.specpack``: an env class carried by value (defined here, in ``__main__``)
  with kwargs of every type the manifest carries (:func:`rich_kwargs`); unsigned, loads with
  ``trust=True``.
- ``signed_by_value.specpack``: the same env class with plain kwargs, signed with
  :data:`GOLDEN_KEY`; loads with ``key=GOLDEN_KEY``.
- ``expected.json``: per file, the fingerprint, the wrapper stack and a seeded rollout
  (``reset(seed=...)`` then fixed actions) that ``tests/core/files/test_golden.py`` compares with.

``sources_payload.specpack`` (and its ``expected.json`` entry, the same record) was not made
here: it is the sealed by-value ``FileEnv`` pack that specpack 0.3.0.dev0 (main at 5e9747d)
pickled, dumped to a file before the import hook for old pickle paths was removed. Its code
payload names ``specpack.carry.sources.restore_sources``, the path 0.3.0.dev0 wrote into
by-value payloads whose sources travel with them (``tests/core/files/test_golden.py``).

Never regenerate these to make a failing golden test pass: the point of the files is that a
future specpack keeps reading what this one wrote. A new format version gets new files.
"""

from __future__ import annotations

import collections
import datetime
import fractions
import http
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

HERE = Path(__file__).resolve().parent

#: The key ``signed_by_value.specpack`` is signed with (a test key, not a secret).
GOLDEN_KEY = b"specpack golden test key 1 - not a secret"

ROLLOUT_SEED = 7
ROLLOUT_STEPS = 60


def rich_kwargs() -> dict[str, Any]:
    """Kwargs of every type a specpack/1 manifest carries (also used by the golden test)."""
    return {
        "none": None,
        "flag": True,
        "count": 3,
        "big": 2**100,
        "negative_big": -(2**70) - 1,
        "gain": 1.5,
        "nan": math.nan,
        "inf": math.inf,
        "minus_inf": -math.inf,
        "minus_zero": -0.0,
        "text": "ünïcode ✓",
        "raw": b"\x00\xffbytes",
        "pair": (1, (2.5, "x")),
        "items": [1, [2, 3]],
        "tags": {"a", "b"},
        "frozen": frozenset({1, 2}),
        "by_int": {1: "one", 2: "two"},
        "by_tuple": {(0, 1): "edge", None: "nothing", "$dollar": 4},
        "offsets": np.array([0.5, -0.25, 0.125], dtype=np.float32),
        "grid": np.arange(6, dtype=">i4").reshape(2, 3),
        "mask": np.array([True, False]),
        "labels": np.array(["ab", "c"]),
        "wide": np.array([2**64 - 1, 0], dtype=np.uint64),
        "record": np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", ">f8")]),
        "decay": np.float32(0.9),
        "index": np.int64(-2),
        "status": http.HTTPStatus.NOT_FOUND,
        "flags": re.IGNORECASE | re.MULTILINE,
        "squash": math.tanh,
        "container": collections.OrderedDict,
        "dtype_class": np.float64,
        "fraction": fractions.Fraction(1, 3),
        "day": datetime.date(2024, 2, 29),
    }


class GoldenEnv(gymnasium.Env):  # type: ignore[type-arg]
    """A small deterministic env whose dynamics read a few of its kwargs.

    Defined in ``__main__`` when this script runs, so it travels by value.
    """

    metadata = {"render_modes": []}

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.gain = float(options.get("gain", 1.0))
        self.decay = float(options.get("decay", 0.95))
        self.offsets = np.asarray(options.get("offsets", np.zeros(3)), dtype=np.float32)
        self.observation_space = gymnasium.spaces.Box(-10.0, 10.0, (3,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(3)
        self.state = np.zeros(3, dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.state = (self.np_random.uniform(-1, 1, 3) * self.gain).astype(np.float32)
        return self.state.copy(), {}

    def step(self, action: Any) -> Any:
        push = (int(action) - 1) * 0.1
        noise = self.np_random.normal(0.0, 0.01, 3)
        self.state = np.clip(self.state * self.decay + push + self.offsets * 0.01 + noise,
                             -10, 10).astype(np.float32)
        reward = float(-np.abs(self.state).sum())
        terminated = bool(np.abs(self.state).max() > 2.0)
        return self.state.copy(), reward, terminated, False, {}


def actions(n: int = ROLLOUT_STEPS) -> list[int]:
    """The fixed action sequence of the golden rollouts."""
    return [(i * 7 + i // 3) % 2 for i in range(n)]


def balance(obs: Any) -> int:
    """CartPole's golden policy: push towards where the pole is falling."""
    return int(obs[2] + 0.5 * obs[3] > 0)


def rollout(env: Any, policy: str) -> dict[str, Any]:
    """``reset(seed=ROLLOUT_SEED)``, then act until the episode ends or ROLLOUT_STEPS.

    ``policy`` is ``"balance"`` (:func:`balance`) or ``"fixed"`` (:func:`actions`).
    """
    obs, _ = env.reset(seed=ROLLOUT_SEED)
    out: dict[str, Any] = {"policy": policy, "obs": [np.asarray(obs, dtype=np.float64).tolist()],
                           "rewards": [], "terminated": False, "truncated": False, "steps": 0}
    for a in actions():
        action = balance(obs) if policy == "balance" else a
        obs, reward, terminated, truncated, _ = env.step(action)
        out["obs"].append(np.asarray(obs, dtype=np.float64).tolist())
        out["rewards"].append(float(reward))
        out["steps"] += 1
        if terminated or truncated:
            out["terminated"], out["truncated"] = bool(terminated), bool(truncated)
            break
    env.close()
    return out


def _record(pack: Any, policy: str) -> dict[str, Any]:
    env = pack.make()
    stack = []
    node = env
    while isinstance(node, gymnasium.Wrapper):
        stack.append(type(node).__name__)
        node = node.env
    stack.append(type(node).__name__)
    return {"fingerprint": pack.fingerprint, "stack": stack,
            "rollout": rollout(env, policy), "versions": dict(pack.versions)}


def main() -> int:
    """Write the golden files and ``expected.json`` beside this script."""
    import specpack

    if __name__ != "__main__" or GoldenEnv.__module__ != "__main__":
        raise SystemExit("run this file as a script: python tests/golden/make_golden.py")
    cartpole = specpack.capture("CartPole-v1", max_episode_steps=50, sutton_barto_reward=True)
    rich = specpack.capture(GoldenEnv, **rich_kwargs())
    signed = specpack.capture(GoldenEnv, max_episode_steps=40, gain=2.0, decay=0.9,
                              offsets=np.array([1.0, 0.0, -1.0], dtype=np.float32))
    assert not cartpole.entry_point.by_value and rich.entry_point.by_value
    files = {
        "cartpole_options.specpack": (cartpole, None, "balance"),
        "rich_kwargs.specpack": (rich, None, "fixed"),
        "signed_by_value.specpack": (signed, GOLDEN_KEY, "fixed"),
    }
    expected: dict[str, Any] = {"format": "specpack/1", "seed": ROLLOUT_SEED,
                                "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    for name, (pack, key, policy) in files.items():
        specpack.dump(pack, HERE / name, key=key)
        expected[name] = _record(pack, policy)
        print(f"wrote {name}: {pack!r}")
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    print("wrote expected.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
