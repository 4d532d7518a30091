"""Make golden *pickles* of packs (run once per release; the outputs are checked in).

    python tests/golden/make_pickles.py [--folder NAME]
    /path/to/gym-venv/bin/python tests/golden/make_pickles_gym.py [--folder NAME]
    /path/to/pettingzoo-venv/bin/python tests/golden/make_pickles_pettingzoo.py [--folder NAME]

Pickled packs are what Ray, SB3 and multiprocessing store and ship, so a future specpack must
keep unpickling what this one pickled. This writes, under
``pickles/py<major><minor>/<folder>/`` (``folder``: the specpack version unless given), one
pickle of every kind of pack:

- ``cartpole_options.pkl``: ``CartPole-v1`` by reference with options and an env kwarg;
- ``rich_kwargs.pkl``: the by-value ``GoldenEnv`` of ``make_golden.py`` with kwargs of every
  type a pack carries;
- ``spaces.pkl``: ``CartPole-v1`` captured with ``record_spaces=True`` (a recorded surface);
- ``live_env.pkl``: a live, wrapped env captured as it is (its wrappers and surface);
- ``sealed_assets.pkl``: a by-value env reading a carried file, sealed (assets and a seal);
- ``expected.json``: per pickle, the fingerprint, the wrapper stack and a seeded rollout.

The gym and pettingzoo backends' pickles need their own venvs: the two sibling scripts add
them, and their entries, to the same folder. By-value code is tied to the Python minor version,
hence one folder per Python. Never regenerate a folder to make a failing test pass: the point
is that later versions keep reading what this one wrote.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import make_golden  # noqa: E402
from make_golden import ROLLOUT_SEED, _record, rich_kwargs  # noqa: E402


class GoldenEnv(make_golden.GoldenEnv):  # type: ignore[misc,name-defined]
    """The golden env, defined in ``__main__`` so that it travels by value."""


class FileEnv(make_golden.GoldenEnv):  # type: ignore[misc,name-defined]
    """The golden env whose gain is read from a file (an asset), by value."""

    def __init__(self, path: str, **options: Any) -> None:
        with open(path, encoding="ascii") as f:
            gain = float(f.read())
        super().__init__(gain=gain, **options)


def folder(default: str) -> Path:
    """The output folder named by ``--folder`` (default: ``default``), created."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--folder", default=default)
    name = parser.parse_args().folder
    out = HERE / "pickles" / f"py{sys.version_info[0]}{sys.version_info[1]}" / name
    out.mkdir(parents=True, exist_ok=True)
    return out


def write(out: Path, packs: dict[str, tuple[Any, Any]], version: str) -> None:
    """Pickle each pack (protocol 4) and merge what it gives into ``out/expected.json``."""
    path = out / "expected.json"
    expected: dict[str, Any] = (json.loads(path.read_text()) if path.exists()
                                else {"seed": ROLLOUT_SEED, "specpack": version})
    for name, (pack, record) in packs.items():
        (out / name).write_bytes(pickle.dumps(pack, protocol=4))
        expected[name] = {**record, "backend": pack.backend,
                          "format": pack.__reduce__()[1][0]}
        print(f"wrote {out / name}: {pack!r}")
    path.write_text(json.dumps(expected, indent=1) + "\n")


def main() -> int:
    """Write the gymnasium pickles and their ``expected.json`` entries."""
    import gymnasium

    import specpack

    if __name__ != "__main__":
        raise SystemExit("run this file as a script: python tests/golden/make_pickles.py")
    out = folder(specpack.__version__)
    live = gymnasium.wrappers.RecordEpisodeStatistics(
        gymnasium.make("CartPole-v1", max_episode_steps=40))
    with tempfile.TemporaryDirectory() as tmp:
        gain = Path(tmp) / "gain.txt"
        gain.write_text("1.25")
        with_file = specpack.capture(FileEnv, path=str(gain), decay=0.9, self_contained=True)
        sealed = with_file.seal(steps=10, seed=0)
    assert sealed.assets and sealed.assets[0].carried and sealed.sealed is not None
    packs = {
        "cartpole_options.pkl": (
            specpack.capture("CartPole-v1", max_episode_steps=50, sutton_barto_reward=True),
            "balance"),
        "rich_kwargs.pkl": (specpack.capture(GoldenEnv, **rich_kwargs()), "fixed"),
        "spaces.pkl": (specpack.capture("CartPole-v1", record_spaces=True), "balance"),
        "live_env.pkl": (specpack.capture(live), "balance"),
        "sealed_assets.pkl": (sealed, "fixed"),
    }
    assert packs["spaces.pkl"][0].surface is not None
    assert packs["live_env.pkl"][0].surface is not None
    write(out, {name: (pack, _record(pack, policy)) for name, (pack, policy) in packs.items()},
          specpack.__version__)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
