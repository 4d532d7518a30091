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
from pathlib import Path

import pytest
from _helpers import run_python

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
