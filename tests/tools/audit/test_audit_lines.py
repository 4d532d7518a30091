"""The wrappers audit's fixtures exist on the gymnasium line it runs under, so its verdicts are
about the wrappers: on 0.28/0.29 (no ``AddRenderObservation``) the image and dict wrappers are
built around seeded frames that need no renderer, and a missing dependency is the wrapper's
own (opencv for ``ResizeObservation``), never a 1.x-only fixture. Runs in every venv (the
gymnasium 0.29.1 CI step lists this file).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from _helpers import FIXTURES, GYMNASIUM_0X, run_python

import specpack
from specpack._tools._audit.wrapper_fixtures import FramesEnv, bases

pytestmark = pytest.mark.integration

AUDIT_ENV = {
    "PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES), os.environ.get("PYTHONPATH")]))
}


def test_the_image_and_dict_wrappers_are_judged_around_a_fixture_this_line_has(
        tmp_path: Path) -> None:
    proc = run_python(["-m", "specpack", "audit", "--wrappers-only", "--steps", "20", "--json"],
                      cwd=tmp_path, timeout=300, env=AUDIT_ENV)
    doc = json.loads(proc.stdout)
    wrappers = {f["name"].rpartition(".")[2]: f for f in doc["wrappers"]}
    for f in wrappers.values():
        assert "cannot import name" not in (f["reason"] or ""), f  # a fixture this line lacks
        if f["status"] == "missing_dependency":
            assert f["package"] != "gymnasium", f
    dict_base = ("FramesEnv(state=True)" if GYMNASIUM_0X
                 else "AddRenderObservation(CartPole-v1, render_only=False)")
    filtered = wrappers["FilterObservation"]
    assert filtered["status"] == "identical" and filtered["base_env"].startswith(dict_base)
    resize = wrappers["ResizeObservation"]
    pixels = "FramesEnv (16x16" if GYMNASIUM_0X else "AddRenderObservation(CartPole-v1)"
    if resize["status"] == "missing_dependency":  # opencv: the wrapper's own need
        assert "cv2" in resize["reason"] or "opencv" in resize["reason"], resize
    else:
        assert resize["status"] == "identical" and resize["base_env"].startswith(pixels), resize


def test_the_frames_fixture_is_seeded_and_rebuilds_identically_in_a_fresh_interpreter() -> None:
    for state in (False, True):
        name, build = next((n, b) for n, b in bases("FilterObservation" if state else
                                                     "ResizeObservation", ())
                           if n.startswith("FramesEnv" if GYMNASIUM_0X else "AddRender"))
        env = build()
        first, _ = env.reset(seed=3)
        again, _ = build().reset(seed=3)
        assert np.array_equal(
            *(o["pixels"] if isinstance(o, dict) else o for o in (first, again))), name
    env = gymnasium.make(gymnasium.envs.registration.EnvSpec(
        "SpecpackFrames-v0", entry_point=FramesEnv, kwargs={"state": True}))
    report = specpack.verify(specpack.capture(env), steps=25)
    assert report, report
