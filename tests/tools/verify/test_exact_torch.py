"""Torch tensors are compared exactly, through their numpy view (torch is in the main venv only;
the gymnasium 1.0.0 venv of CI runs the other exact-value tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from _helpers import run_python

import specpack
from specpack._tools._verify.trace import record

pytestmark = pytest.mark.integration


class ToTorch(gymnasium.ObservationWrapper):  # type: ignore[type-arg]
    """Observations as torch tensors (gymnasium's NumpyToTorch needs array_api_compat, which
    this venv does not have; the tensor is the same kind)."""

    def observation(self, observation: Any) -> Any:
        import torch

        return torch.from_numpy(np.asarray(observation))


def test_torch_tensor_observations_compare_exactly() -> None:
    import torch

    def build(offset: float) -> Any:
        env = gymnasium.make("CartPole-v1")
        env = gymnasium.wrappers.TransformObservation(
            env, lambda o: (o + np.float32(offset)).astype(np.float32), env.observation_space)
        return ToTorch(env)

    assert specpack.diff(build(0.0), build(0.0), steps=5) == []
    found = specpack.diff(build(0.0), build(1e-7), steps=5)
    assert found[0].startswith("step 0: reset observation differs: a torch.Tensor([ 0.013696169,")
    assert found[0].endswith("first difference at [0]: 0.013696169 vs 0.013696268")
    t = record(build(0.0), [0, 1], 0)
    assert t.events[0][2][:3] == ["tensor", "torch.Tensor", "torch.float32"]
    assert isinstance(build(0.0).reset(seed=0)[0], torch.Tensor)


def test_verify_of_a_torch_observation_env_is_identical() -> None:
    report = specpack.verify(specpack.capture(ToTorch(gymnasium.make("CartPole-v1"))), steps=20)
    assert report, report.differences


# (here, not in test_verify_unseeded.py: the gymnasium 1.0/0.29 venvs have no torch and ignore
# this file, where a skip would fail CI)
def test_an_env_drawing_from_torch_default_generator_is_unseeded() -> None:
    from verifyenvs import DrawsTorchGlobal

    report = specpack.verify(specpack.capture(DrawsTorchGlobal), steps=6, timeout=120)
    text = "\n".join([str(report), *report.differences])
    assert report.status == "unseeded" and report.cause == "global_generator", text
    assert report.differences[0].startswith("step 4 drew from torch's default generator"), text
    assert "torch.manual_seed" in report.differences[0], text


#: A program whose process has not imported torch when it verifies: its envs import torch in
#: their first ``reset``, so of the two builds in one process (the reproducibility control)
#: only the first loads it.
LAZY_TORCH = """
import json, sys
import gymnasium, numpy as np, specpack

class LazyTorch(gymnasium.ObservationWrapper):
    def observation(self, observation):
        import torch
        return torch.from_numpy(np.asarray(observation))

class LazyTorchDraws(gymnasium.Wrapper):
    def reset(self, **kwargs):
        import torch
        torch.rand(1)
        return self.env.reset(**kwargs)

if __name__ == "__main__":
    assert "torch" not in sys.modules
    out = {}
    for name, env in (("loads", LazyTorch(gymnasium.make("CartPole-v1"))),
                      ("draws", LazyTorchDraws(gymnasium.make("CartPole-v1")))):
        report = specpack.verify(specpack.capture(env), steps=10, timeout=120)
        out[name] = [report.status, report.cause, list(report.differences)]
    print(json.dumps(out))
"""


def test_an_env_that_first_imports_torch_in_reset_is_identical_and_one_that_then_draws_is_not(
        tmp_path: Path) -> None:
    """Loading a generator's module in a call is not a draw from it: a build that loads torch
    in ``reset`` and one that finds it loaded agree; an unseeded draw right after the load is
    still found, in the build that found torch loaded."""
    script = tmp_path / "lazy_torch.py"
    script.write_text(LAZY_TORCH)
    proc = run_python([str(script)], cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["loads"][0] == "identical", out["loads"]
    status, cause, differences = out["draws"]
    assert (status, cause) == ("unseeded", "global_generator"), out["draws"]
    assert "torch's default generator" in differences[0], differences
