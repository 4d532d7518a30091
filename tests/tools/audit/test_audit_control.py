"""The local repeat control (``specpack/_audit/control.py``): the build the constructor-argument
checks read runs the first rollout, a clean build the second, and a third clean build decides
when they differ.

The audit runs as a user runs it: ``python -m specpack audit ... --json`` in a fresh
interpreter, with the env module written to the test's directory.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from _helpers import FIXTURES, run_python
from coinpkg import COPIES

from specpack._tools._audit.control import CONFIRM_BUILDS, confirm
from specpack._tools._verify.trace import Trace

pytestmark = pytest.mark.integration

READ_COUNTING = textwrap.dedent('''
    import gymnasium
    import numpy as np
    from gymnasium import spaces


    class ReadCounting(gymnasium.Env):
        """Its observation_space property counts its reads; reset() observes the count."""

        def __init__(self):
            self._space = spaces.Box(-1e9, 1e9, (1,), np.float64)
            self.action_space = spaces.Discrete(2)
            self.reads = 0

        @property
        def observation_space(self):
            self.reads += 1
            return self._space

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.array([float(self.reads)]), {}

        def step(self, action):
            return np.array([float(self.reads)]), 0.0, False, False, {}


    gymnasium.register("readcount/ReadCounting-v0", entry_point="readcount_envs:ReadCounting",
                       max_episode_steps=20)
''')


@pytest.fixture
def read_counting(tmp_path: Path) -> Path:
    (tmp_path / "readcount_envs.py").write_text(READ_COUNTING, encoding="utf-8")
    return tmp_path


def test_reading_the_env_before_its_rollout_changes_it_without_specpack(
    read_counting: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Control: the scenario is real; an extra read of observation_space before reset()
    # changes the reset observation, while two untouched builds agree.
    monkeypatch.syspath_prepend(str(read_counting))
    import gymnasium

    module = importlib.import_module("readcount_envs")
    try:
        plain = [gymnasium.make("readcount/ReadCounting-v0").reset(seed=0)[0] for _ in range(2)]
        read = gymnasium.make("readcount/ReadCounting-v0")
        _ = read.observation_space, read.unwrapped.observation_space
        assert plain[0].tolist() == plain[1].tolist()
        assert read.reset(seed=0)[0].tolist() != plain[0].tolist()
    finally:
        gymnasium.registry.pop("readcount/ReadCounting-v0", None)
        sys.modules.pop(module.__name__, None)


def test_an_env_the_checks_reads_change_is_judged_by_two_clean_builds(
    read_counting: Path,
) -> None:
    # The checks (capture of the live instance, the EzPickle record) read the first build
    # before its rollout; here that changes it. Two clean builds agree, so the env is
    # reproducible and identical across the boundary: it must not be called not_reproducible.
    proc = run_python(
        ["-m", "specpack", "audit", "readcount/", "--import", "readcount_envs", "--steps", "5",
         "--json"],
        cwd=read_counting,
        env={"PYTHONPATH": os.pathsep.join(filter(None, [str(read_counting),
                                                        os.environ.get("PYTHONPATH")]))},
    )
    doc = json.loads(proc.stdout)
    [f] = doc["envs"]
    assert f["status"] == "identical", f
    [note] = f["notes"]
    assert "constructor-argument checks' reads of the env changed its rollout" in note
    assert "step 0: reset observation differs" in note and "clean builds" in note
    assert proc.returncode == 0


# -- the confirmation: a rebuild that differs is held against more clean builds here ----------


def test_coin_envs_toss_alike_in_one_process_only_by_chance_without_specpack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Control: two builds reset with one seed put the same coin in their reset info only
    # sometimes (an unseeded generator), and the observation says whether the launcher ran.
    monkeypatch.syspath_prepend(str(FIXTURES))
    import coinpkg
    import gymnasium

    coins = {int(gymnasium.make("coin/Coin-0-v0").reset(seed=0)[1]["coin"]) for _ in range(64)}
    assert coins == {0, 1}
    assert gymnasium.make("coin/Launched-v0").reset(seed=0)[0][1] == 0.0
    importlib.import_module("coinpkg.launch")
    assert coinpkg.LAUNCHED
    assert gymnasium.make("coin/Launched-v0").reset(seed=0)[0][1] == 1.0


def test_a_rebuild_that_differs_is_confirmed_before_the_pack_is_blamed(tmp_path: Path) -> None:
    """Envs whose reset info holds an unseeded coin (highway-env's reset info holds an
    unseeded action): the repeat control's two builds agree half the time, and when the rebuild
    then differs it is the coin again, not the pack. 2 x 24 such ids: before the confirmation,
    each coin/CoinLaunched-* id (its rebuild always differs) was not_identical with probability
    1/2 and each coin/Coin-* id with 1/4, so this audit passed with probability about 6e-11.
    coin/CoinGap-* ids forget an argument in their EzPickle record: ezpickle_gap always (they
    were not_reproducible whenever the repeat control's two builds differed).
    The control coin/Launched-v0 differs across the boundary for real (a module global only
    the launcher sets) and must stay not_identical, with the confirmation's note."""
    proc = run_python(
        ["-m", "specpack", "audit", "coin/", "--import", "coinpkg.launch", "--steps", "5",
         "--jobs", "2", "--json"],
        cwd=tmp_path,
        env={"PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES),
                                                        os.environ.get("PYTHONPATH")]))},
        timeout=600,
    )
    doc = json.loads(proc.stdout)
    envs = {f["name"]: f for f in doc["envs"]}
    assert len(envs) == 3 * COPIES + 1
    wrong = {k: (f["status"], f["reason"]) for k, f in envs.items() if f["status"] == "not_identical"
             and k != "coin/Launched-v0" and not k.startswith("coin/CoinGap-")}
    assert not wrong, wrong
    for i in range(COPIES):
        launched = envs[f"coin/CoinLaunched-{i}-v0"]
        assert launched["status"] == "not_reproducible", launched
        assert "info['coin'] differs" in launched["reason"], launched
        assert envs[f"coin/Coin-{i}-v0"]["status"] in ("not_reproducible", "identical")
        # a wrong EzPickle record is ezpickle_gap whatever the coin does, and says the rest
        gap = envs[f"coin/CoinGap-{i}-v0"]
        assert gap["status"] == "ezpickle_gap", gap
        assert gap["reason"].startswith("EzPickle gap") and "launched=True" in gap["reason"], gap
        assert "info['coin'] differs" in gap["differences"][-1], gap
        assert "not reproducible here either" in gap["differences"][-1], gap
    # a confirmed not_reproducible names both: the clean builds' difference and the rebuild's
    confirmed = [f for f in envs.values() if "agreed by chance" in f["reason"]]
    assert confirmed
    for f in confirmed:
        assert f["step"] == 0 and "clean build" in f["differences"][0], f
        # what the confirmation ran for: the rebuild, or the hash control (a fresh interpreter
        # under the next PYTHONHASHSEED) when only that differed
        assert any(d.startswith(("the rebuild: ", "the hash control: "))
                   for d in f["differences"]), f
    real = envs["coin/Launched-v0"]
    assert real["status"] == "not_identical", real
    assert real["step"] == 0 and "reset observation differs" in real["reason"], real
    assert any(f"confirmed: {CONFIRM_BUILDS} more clean builds here" in n
               for n in real["notes"]), real
    assert proc.returncode == 1


def test_a_wrapper_whose_rebuild_differs_is_confirmed_before_it_is_blamed(tmp_path: Path) -> None:
    """The wrappers audit confirms the same way: 24 wrappers that toss an unseeded coin into
    the reset info were each not_identical with probability 1/4 before the confirmation (the
    audit passed with probability 0.1 %); now each is not_reproducible, or identical when
    every build tossed alike."""
    proc = run_python(
        ["-m", "specpack", "audit", "--wrappers-only", "--import", "coinpkg.wrappers",
         "--steps", "5", "--jobs", "2", "--json"],
        cwd=tmp_path,
        env={"PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES),
                                                        os.environ.get("PYTHONPATH")]))},
        timeout=600,
    )
    doc = json.loads(proc.stdout)
    mine = {f["name"]: f for f in doc["wrappers"] if f["name"].startswith("coinpkg.")}
    assert len(mine) == COPIES
    wrong = {k: f["reason"] for k, f in mine.items()
             if f["status"] not in ("not_reproducible", "identical")}
    assert not wrong, wrong
    assert any(f["status"] == "not_reproducible" for f in mine.values())
    for f in mine.values():
        if "agreed by chance" in f["reason"]:
            assert "info['coin'] differs" in f["reason"] and f["step"] == 0, f


# -- confirm() itself, with stand-in builds (no env: the loop's stopping rules) ---------------


def _trace(mode: str | None = None) -> dict[str, Any]:
    return Trace(layers=[], observation_space={}, action_space={}, action_space_after_reset=None,
                 render_mode=mode, spec={}, nondeterministic=False).to_dict()


def test_confirm_stops_at_the_first_build_that_differs_and_names_it() -> None:
    builds = [_trace(), _trace(), _trace("human"), _trace()]
    found = confirm(_trace(), lambda: builds.pop(0), builds=16, budget=1e9)
    assert found["builds"] == 3 and len(builds) == 1
    assert found["repeat"] == ["render_mode differs: the reference build here None vs clean "
                               "build 3 of the confirmation 'human'"]


def test_confirm_runs_every_build_when_all_agree() -> None:
    calls: list[int] = []
    found = confirm(_trace(), lambda: calls.append(1) or _trace(), builds=5, budget=1e9)
    assert found == {"builds": 5, "repeat": []} and len(calls) == 5


def test_confirm_starts_no_build_that_would_end_past_its_budget() -> None:
    # each build takes ~0.2 s; a budget of 0.5 s holds two (the third would end past it)
    def slow() -> dict[str, Any]:
        time.sleep(0.2)
        return _trace()

    found = confirm(_trace(), slow, builds=16, budget=0.5)
    assert found == {"builds": 2, "repeat": []}
    assert confirm(_trace(), slow, builds=16, budget=0.0)["builds"] == 1  # one always runs


def test_a_confirmation_build_that_raises_is_a_difference() -> None:
    def broken() -> dict[str, Any]:
        raise ValueError("no more")

    found = confirm(_trace(), broken, builds=16, budget=1e9)
    assert found["builds"] == 1
    assert found["repeat"] == ["clean build 1 of the confirmation raised ValueError: no more; "
                               "the reference build here did not"]
