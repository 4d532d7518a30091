"""Across gymnasium's two lines (0.28/0.29 and 1.x), in real interpreters of both: a pack
captured under one line either rebuilds the same env under the other (same layers, spaces,
``env.spec`` id and seeded rollout; a VersionSkewWarning says the versions differ) or
``make()`` refuses with a BuildError that names what differs, both versions and the fix.

Runs where ``SPECPACK_OTHER_LINE_PYTHON`` names the python of a venv on the other line (CI's
gymnasium 0.29.1 step sets it to its gymnasium 1.0.0 venv); elsewhere the module collects no
tests (``__test__``), and with the variable set a venv of the same line is a failure, never a
skip. Both directions run, through pickle files and JSON manifests, in fresh interpreters.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from _helpers import run_venv_script

OTHER = os.environ.get("SPECPACK_OTHER_LINE_PYTHON", "")
__test__ = bool(OTHER)

pytestmark = pytest.mark.integration

SCRIPT = r'''
import json, pickle, sys, warnings
from pathlib import Path

import gymnasium
import numpy as np

import specpack
from specpack._core._errors import BuildError, VersionSkewWarning

W = gymnasium.wrappers
LINE = "0" if gymnasium.__version__.startswith("0.") else "1"


class Drift(gymnasium.Env, gymnasium.utils.EzPickle):
    """Defined in __main__: travels by value (cloudpickle) between the two venvs."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, speed=1.0, render_mode=None):
        gymnasium.utils.EzPickle.__init__(self, speed=speed, render_mode=render_mode)
        self.speed = speed
        self.render_mode = render_mode
        self.observation_space = gymnasium.spaces.Box(-100, 100, (2,), np.float64)
        self.action_space = gymnasium.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = self.np_random.uniform(-1, 1, 2)
        return self.x.copy(), {}

    def step(self, action):
        self.x = self.x + self.speed * (action - 1) + self.np_random.normal(0, 0.1, 2)
        return self.x.copy(), float(-abs(self.x).sum()), bool(abs(self.x).max() > 5), False, {}

    def render(self):
        return np.full((2, 2, 3), int(abs(self.x[0]) * 10) % 255, np.uint8)


def packs():
    """name -> (pack, what the other line does: "same"; "same but spaces" for an env of
    gymnasium itself whose space that release changed (CartPole's unbounded Box dimensions are
    float32's max in 0.29 and inf in 1.x: the pack names the env, the installed gymnasium
    provides it); or a text its refusal names)."""
    out = {
        "cartpole_id": (specpack.capture("CartPole-v1", max_episode_steps=25),
                        "same but spaces"),
        "frozenlake_kwargs": (specpack.capture("FrozenLake-v1", is_slippery=False), "same"),
        "pendulum_live_make": (specpack.capture(gymnasium.make("Pendulum-v1")), "same"),
        "main_class_in_makes_wrappers": (
            specpack.capture(W.TimeLimit(W.OrderEnforcing(W.PassiveEnvChecker(Drift(0.5))), 9)),
            "same",
        ),
        "render_collection": (specpack.capture(Drift, render_mode="rgb_array_list"), "same"),
        "render_collection_live": (
            specpack.capture(W.RenderCollection(Drift(0.25, render_mode="rgb_array"))), "same",
        ),
        # a wrapper 1.0 renamed or changed: refused, never rebuilt as another env
        "normalize_observation": (
            specpack.capture(W.NormalizeObservation(gymnasium.make("CartPole-v1"))),
            "NormalizeObservation",
        ),
    }
    if LINE == "1":  # an env argument that gymnasium 0.28/0.29's CartPole does not take
        out["cartpole_sutton_barto"] = (
            specpack.capture("CartPole-v1", sutton_barto_reward=True), "sutton_barto_reward",
        )
    return out


def describe(env, steps=40, seed=5):
    names, node = [], env
    while hasattr(node, "env"):
        names.append(type(node).__name__)
        node = node.env
    names.append(type(node).__name__)
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    trace = [np.asarray(obs).tolist()]
    for _ in range(steps):
        obs, r, term, trunc, _ = env.step(env.action_space.sample())
        trace.append([np.asarray(obs).tolist(), float(r), bool(term), bool(trunc)])
        if term or trunc:
            trace.append(np.asarray(env.reset()[0]).tolist())
    frames = None
    if type(env).__name__ == "RenderCollection":
        frames = [np.asarray(f).tolist() for f in env.render()]
    return {"layers": names, "trace": trace, "frames": frames,
            "spec_id": env.spec.id if env.spec is not None else None,
            "spaces": [repr(env.observation_space), repr(env.action_space)]}


def main(mode, folder):
    folder = Path(folder)
    out = {"gymnasium": gymnasium.__version__, "results": {}, "expect": {}}
    if mode == "dump":
        for name, (pack, expect) in packs().items():
            (folder / f"{name}.pkl").write_bytes(pickle.dumps(pack))
            (folder / f"{name}.json").write_text(pack.to_json())
            out["results"][name] = describe(pack.make())
            out["expect"][name] = expect
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
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''




@pytest.fixture(scope="module")
def script(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lines") / "lines_worker.py"
    path.write_text(SCRIPT)
    return path


@pytest.mark.parametrize("direction", ["here_to_other", "other_to_here"])
def test_a_pack_from_the_other_gymnasium_line_rebuilds_the_same_env_or_is_refused_naming_both(
    direction, script, tmp_path
):
    maker, loader = (sys.executable, OTHER) if direction == "here_to_other" else (OTHER, sys.executable)
    made = run_venv_script(maker, "dump", tmp_path, script)
    loaded = run_venv_script(loader, "load", tmp_path, script)
    lines = {v.partition(".")[0] for v in (made["gymnasium"], loaded["gymnasium"])}
    assert lines == {"0", "1"}, (
        f"gymnasium {made['gymnasium']} and {loaded['gymnasium']} are on the same line: "
        "SPECPACK_OTHER_LINE_PYTHON must point at a venv on the other gymnasium line"
    )
    same = {n for n, e in made["expect"].items() if e.startswith("same")}
    assert {"cartpole_id", "main_class_in_makes_wrappers", "render_collection",
            "render_collection_live"} <= same
    assert "normalize_observation" in made["expect"]
    for name, ref in made["results"].items():
        for kind in ("pickle", "json"):
            got = loaded["results"][f"{name}/{kind}"]
            assert got["skew_warnings"], f"{name}/{kind}: no VersionSkewWarning"
            assert f"gymnasium {made['gymnasium']} (captured)" in got["skew_warnings"][0]
            if name not in same:
                error = got.get("error", "")
                assert error.startswith("Build"), f"{name}/{kind} was rebuilt: {got}"
                assert made["expect"][name] in error, error
                assert f"captured under gymnasium {made['gymnasium']}" in error, error
                assert f"gymnasium {loaded['gymnasium']}" in error, error
                assert f"gymnasium=={made['gymnasium']}" in error, error  # the fix
                continue
            assert "error" not in got, f"{name}/{kind}: {got.get('error')}"
            for key in ("layers", "spaces", "spec_id", "frames"):
                if key == "spaces" and made["expect"][name] == "same but spaces":
                    assert got[key][1] == ref[key][1], f"{name}/{kind}: action space"
                    continue
                assert got[key] == ref[key], f"{name}/{kind}: {key}"
            assert got["trace"] == ref["trace"], f"{name}/{kind}: rollout differs"
    assert made["results"]["main_class_in_makes_wrappers"]["layers"] == [
        "TimeLimit", "OrderEnforcing", "PassiveEnvChecker", "Drift"]
    assert made["results"]["render_collection"]["frames"]
    assert made["results"]["render_collection_live"]["layers"] == ["RenderCollection", "Drift"]
