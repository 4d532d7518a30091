"""Across gymnasium versions: a pack made under one gymnasium 1.x release rebuilds
under another with a VersionSkewWarning, not an error, and the rebuild is the same env.

The other release runs in another venv: set ``SPECPACK_OTHER_PYTHON`` to its python (CI sets it
to a gymnasium 1.0.0 venv and runs this file from the latest-gymnasium venv). Both directions
are checked, through pickle files and JSON manifests, in fresh interpreters started in a
temporary directory. The script below is run as ``__main__``, so its env class travels by
value as well.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _helpers import run_venv_script

pytestmark = pytest.mark.integration

SCRIPT = r'''
import json, pickle, sys, warnings
from pathlib import Path

import gymnasium
import numpy as np

import specpack
from specpack._core._errors import BuildError, VersionSkewWarning


class Drift(gymnasium.Env, gymnasium.utils.EzPickle):
    """Defined in __main__: travels by value (cloudpickle) between the two venvs."""

    metadata = {"render_modes": []}

    def __init__(self, speed=1.0):
        gymnasium.utils.EzPickle.__init__(self, speed=speed)
        self.speed = speed
        self.observation_space = gymnasium.spaces.Box(-100, 100, (2,), np.float64)
        self.action_space = gymnasium.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = self.np_random.uniform(-1, 1, 2)
        return self.x.copy(), {}

    def step(self, action):
        self.x = self.x + self.speed * (action - 1) + self.np_random.normal(0, 0.1, 2)
        return self.x.copy(), float(-abs(self.x).sum()), bool(abs(self.x).max() > 5), False, {}


class Pix(gymnasium.Env):
    """Renders rgb arrays without pygame, for AddRenderObservation."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 7}

    def __init__(self, render_mode=None):
        self.render_mode = render_mode
        self.observation_space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.np_random.uniform(-1, 1, 2).astype(np.float32), {}

    def step(self, action):
        return self.np_random.uniform(-1, 1, 2).astype(np.float32), float(action), False, False, {}

    def render(self):
        return np.full((3, 3, 3), 7, np.uint8)


def packs():
    W = gymnasium.wrappers
    stacked = W.TimeLimit(
        W.RecordEpisodeStatistics(
            W.StickyAction(gymnasium.make("CartPole-v1"), 0.25), buffer_length=5, stats_key="ep"
        ),
        20,
    )
    out = {
        "cartpole_id": specpack.capture("CartPole-v1", max_episode_steps=25),
        "frozenlake_kwargs": specpack.capture("FrozenLake-v1", is_slippery=False),
        "live_stack": specpack.capture(stacked),
        "main_guard_class": specpack.capture(W.ClipReward(W.TimeLimit(Drift(speed=0.5), 9), -3, 0)),
        "render_observation": specpack.capture(
            W.AddRenderObservation(Pix(render_mode="rgb_array"), render_only=False, render_key="px")
        ),
    }
    try:
        out["sticky_duration_3"] = specpack.capture(
            W.StickyAction(gymnasium.make("CartPole-v1"), 0.25, repeat_action_duration=3)
        )
    except TypeError:  # this release has no repeat_action_duration
        pass
    return out


def describe(env, steps=40, seed=5):
    names, node = [], env
    while hasattr(node, "env"):
        names.append(type(node).__name__)
        node = node.env
    names.append(type(node).__name__)
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    trace = [plain(obs)]
    for _ in range(steps):
        obs, r, term, trunc, _ = env.step(env.action_space.sample())
        trace.append([plain(obs), float(r), bool(term), bool(trunc)])
        if term or trunc:
            trace.append(plain(env.reset()[0]))
    extra = {}
    for node in [env, *_chain(env)]:
        if type(node).__name__ == "RecordEpisodeStatistics":
            extra["buffer_length"] = node.return_queue.maxlen
            extra["stats_key"] = node._stats_key
    return {"layers": names, "trace": trace, "extra": extra,
            "spaces": [repr(env.observation_space), repr(env.action_space)]}


def plain(obs):
    if isinstance(obs, dict):
        return {k: plain(v) for k, v in sorted(obs.items())}
    return np.asarray(obs).tolist()


def _chain(env):
    while hasattr(env, "env"):
        env = env.env
        yield env


def main(mode, folder):
    folder = Path(folder)
    out = {"gymnasium": gymnasium.__version__, "results": {}}
    if mode == "dump":
        for name, pack in packs().items():
            (folder / f"{name}.pkl").write_bytes(pickle.dumps(pack))
            (folder / f"{name}.json").write_text(pack.to_json())
            out["results"][name] = describe(pack.make())
    else:
        for path in sorted(folder.glob("*.pkl")):
            name = path.stem
            for kind, load in (
                ("pickle", lambda: pickle.loads(path.read_bytes())),
                # trust=True: the by-value pack was written by this test's own dump step
                ("json", lambda: specpack.SpecPack.from_json((folder / f"{name}.json").read_text(),
                                                             trust=True)),
            ):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        result = describe(load().make())
                    except BuildError as e:
                        result = {"error": f"{type(e).__name__}: {e}"}
                result["skew_warnings"] = [
                    str(w.message) for w in caught if issubclass(w.category, VersionSkewWarning)
                ]
                out["results"][f"{name}/{kind}"] = result
    try:
        specpack.capture("CartPole-v1", backend="gym")
        out["gym_backend"] = "available"
    except specpack.BackendUnavailableError as e:
        out["gym_backend"] = f"BackendUnavailableError: {e}"
    except specpack.SpecPackError as e:
        out["gym_backend"] = f"available ({type(e).__name__})"
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''


def _other_python() -> str:
    other = os.environ.get("SPECPACK_OTHER_PYTHON")
    if other:
        return other
    if os.environ.get("CI") == "true":
        pytest.fail("CI must set SPECPACK_OTHER_PYTHON to the python of a gymnasium 1.0.0 venv")
    pytest.skip("set SPECPACK_OTHER_PYTHON to the python of a venv with another gymnasium 1.x")




@pytest.fixture(scope="module")
def script(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("matrix") / "matrix_worker.py"
    path.write_text(SCRIPT)
    return path


@pytest.mark.parametrize("direction", ["here_to_other", "other_to_here"])
def test_pack_from_one_gymnasium_release_rebuilds_under_another_with_a_skew_warning(
    direction, script, tmp_path
):
    other = _other_python()
    maker, loader = (sys.executable, other) if direction == "here_to_other" else (other, sys.executable)
    made = run_venv_script(maker, "dump", tmp_path, script)
    loaded = run_venv_script(loader, "load", tmp_path, script)
    assert made["gymnasium"] != loaded["gymnasium"], (
        f"both sides run gymnasium {made['gymnasium']}: SPECPACK_OTHER_PYTHON must point at "
        "a venv with another gymnasium release"
    )
    expected = {"cartpole_id", "frozenlake_kwargs", "live_stack", "main_guard_class",
                "render_observation"}
    assert expected <= set(made["results"])
    for name, ref in made["results"].items():
        for kind in ("pickle", "json"):
            got = loaded["results"][f"{name}/{kind}"]
            assert got["skew_warnings"], f"{name}/{kind}: no VersionSkewWarning"
            assert "gymnasium" in got["skew_warnings"][0]
            if name == "sticky_duration_3":
                # Made by a release with repeat_action_duration; an older one cannot honour 3.
                if "error" in got:
                    assert "repeat_action_duration=3" in got["error"]
                    assert f"gymnasium {loaded['gymnasium']} here does not take" in got["error"]
                    continue
            assert "error" not in got, f"{name}/{kind}: {got.get('error')}"
            assert got["layers"] == ref["layers"], name
            assert got["spaces"] == ref["spaces"], name
            assert got["extra"] == ref["extra"], name
            assert got["trace"] == ref["trace"], f"{name}/{kind}: rollout differs"
    live = made["results"]["live_stack"]
    assert live["layers"][:4] == ["TimeLimit", "RecordEpisodeStatistics", "StickyAction", "TimeLimit"]
    assert live["extra"] == {"buffer_length": 5, "stats_key": "ep"}


def _has_gym(python: str) -> bool:
    probe = subprocess.run(
        [python, "-c", "import importlib.util as u; print(u.find_spec('gym') is not None)"],
        capture_output=True, text=True, timeout=60,
    )
    return probe.stdout.strip() == "True"


def test_a_venv_without_gym_says_backend_gym_is_unavailable(script, tmp_path):
    """Really without gym (not a blocked import): CI's gymnasium 1.0 venv has none."""
    candidates = [p for p in (_other_python(), sys.executable) if not _has_gym(p)]
    if not candidates:
        pytest.fail("both venvs have gym installed; one of them must not (CI's gymnasium "
                    "1.0 venv has no gym)")
    (tmp_path / "empty").mkdir()
    result = run_venv_script(candidates[0], "load", tmp_path / "empty", script)
    assert result["gym_backend"].startswith("BackendUnavailableError: backend='gym' needs")
    assert "pip install 'specpack[gym]'" in result["gym_backend"]
