"""Make golden *pickles* of packs (run once per release; the outputs are checked in).

    python tests/golden/make_pickles.py

Pickled packs are what Ray, SB3 and multiprocessing store and ship, so a future specpack must
keep unpickling what this one pickled. This writes, under
``pickles/py<major><minor>/<specpack version>/``:

- ``cartpole_options.pkl``: ``CartPole-v1`` by reference with options and an env kwarg;
- ``rich_kwargs.pkl``: the by-value ``GoldenEnv`` of ``make_golden.py`` with kwargs of every
  type a pack carries;
- ``expected.json``: per pickle, the fingerprint, the wrapper stack and a seeded rollout.

By-value code is tied to the Python minor version, hence one folder per Python. Never
regenerate a folder to make a failing test pass: the point is that later versions keep
reading what this one wrote.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import make_golden  # noqa: E402
from make_golden import ROLLOUT_SEED, _record, rich_kwargs  # noqa: E402


class GoldenEnv(make_golden.GoldenEnv):  # type: ignore[misc,name-defined]
    """The golden env, defined in ``__main__`` so that it travels by value."""


def main() -> int:
    """Write the pickles and ``expected.json`` for this Python and specpack version."""
    import specpack

    if __name__ != "__main__":
        raise SystemExit("run this file as a script: python tests/golden/make_pickles.py")
    out = HERE / "pickles" / f"py{sys.version_info[0]}{sys.version_info[1]}" / specpack.__version__
    out.mkdir(parents=True, exist_ok=True)
    packs = {
        "cartpole_options.pkl": (
            specpack.capture("CartPole-v1", max_episode_steps=50, sutton_barto_reward=True),
            "balance",
        ),
        "rich_kwargs.pkl": (specpack.capture(GoldenEnv, **rich_kwargs()), "fixed"),
    }
    expected: dict[str, object] = {"seed": ROLLOUT_SEED, "specpack": specpack.__version__}
    for name, (pack, policy) in packs.items():
        (out / name).write_bytes(pickle.dumps(pack, protocol=4))
        expected[name] = _record(pack, policy)
        print(f"wrote {out / name}: {pack!r}")
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
