"""The legacy gym 0.26.2 under numpy 2 (this venv): the real failures, and the SpecPackErrors
that say why and what to do instead. Also: without gym, backend="gym" is a clear error.

gym 0.26.2 predates numpy 2: its PassiveEnvChecker tests ``isinstance(x, np.bool8)`` at the
first step and Acrobot integrates with ``np.float_``; numpy 2 removed both aliases. Each test
first shows the raw failure (the control), then what specpack says.
"""

from __future__ import annotations

import json
import subprocess
import sys

import gym
import gymnasium
import numpy as np
import pytest

import specpack

pytestmark = pytest.mark.integration


def test_this_venv_really_has_gym_026_under_numpy_2():
    assert gym.__version__ == "0.26.2"
    assert int(np.__version__.split(".")[0]) >= 2


def test_control_gym_make_steps_into_np_bool8_under_numpy_2():
    env = gym.make("CartPole-v1")  # make itself works
    env.reset(seed=0)
    with pytest.raises(AttributeError, match="bool8"):
        env.step(0)


def test_capture_of_a_gym_id_with_the_env_checker_says_why_and_how_to_fix():
    with pytest.raises(specpack.CaptureError) as info:
        specpack.capture("CartPole-v1", backend="gym")
    msg = str(info.value)
    assert isinstance(info.value, specpack.SpecPackError)
    assert "'CartPole-v1'" in msg and "np.bool8" in msg and "PassiveEnvChecker" in msg
    assert f"numpy {np.__version__}" in msg
    assert "pip install 'numpy<2'" in msg and "disable_env_checker=True" in msg


def test_capture_of_a_live_gym_env_with_the_checker_says_the_same():
    with pytest.raises(specpack.CaptureError, match=r"np\.bool8.*disable_env_checker=True"):
        specpack.capture(gym.make("CartPole-v1"))


def test_the_suggested_fix_disable_env_checker_gives_a_working_env_under_numpy_2():
    pack = specpack.capture("CartPole-v1", backend="gym", disable_env_checker=True)
    env = pack.make()
    assert [type(env).__name__, type(env.env).__name__] == ["TimeLimit", "OrderEnforcing"]
    env.reset(seed=0)
    obs, reward, terminated, truncated, _ = env.step(0)
    assert reward == 1.0 and obs.shape == (4,) and not (terminated or truncated)
    live = specpack.capture(gym.make("CartPole-v1", disable_env_checker=True))
    live.make().reset(seed=0)


def test_acrobot_needs_numpy_below_2_whatever_the_options():
    control = gym.make("Acrobot-v1", disable_env_checker=True)
    control.reset(seed=0)
    with pytest.raises(AttributeError, match="float_"):
        control.step(0)
    with pytest.raises(specpack.CaptureError) as info:
        specpack.capture("Acrobot-v1", backend="gym", disable_env_checker=True)
    msg = str(info.value)
    assert "np.float_" in msg and "pip install 'numpy<2'" in msg and "no option helps" in msg


def test_a_gym_pack_made_elsewhere_with_the_checker_fails_at_make_with_the_fix():
    # A pack captured under numpy<2 carries the PassiveEnvChecker layer; build it here.
    ok = specpack.capture("CartPole-v1", backend="gym", disable_env_checker=True)
    data = json.loads(ok.to_json())
    data["layers"].append(
        {"class": {"$ref": "gym.wrappers.env_checker:PassiveEnvChecker"}, "kwargs": {}}
    )
    data.pop("fingerprint", None)
    pack = specpack.SpecPack.from_json(json.dumps(data))
    assert [layer.name for layer in pack.layers][-1] == "PassiveEnvChecker"
    with pytest.raises(specpack.BuildError) as info:
        pack.make()
    msg = str(info.value)
    assert "pack CartPole-v1" in msg and "np.bool8" in msg
    assert "pip install 'numpy<2'" in msg and "disable_env_checker=True" in msg


def test_with_the_alias_put_back_the_checker_runs_and_no_error_is_raised(monkeypatch):
    monkeypatch.setattr(np, "bool8", np.bool_, raising=False)
    env = specpack.capture("CartPole-v1", backend="gym").make()
    assert type(env.env.env).__name__ == "PassiveEnvChecker"
    env.reset(seed=0)
    assert env.step(0)[1] == 1.0


class LegacyNumpyEnv(gym.Env):
    """gym-era code that uses a removed alias in its constructor."""

    def __init__(self):
        self.buf = np.zeros(3, np.float_)  # AttributeError under numpy 2
        self.observation_space = gym.spaces.Box(-1, 1, (3,))
        self.action_space = gym.spaces.Discrete(2)


def test_a_numpy_2_error_in_a_gym_env_constructor_comes_back_with_the_fix():
    with pytest.raises(AttributeError, match="float_"):
        LegacyNumpyEnv()  # the control
    pack = specpack.capture(LegacyNumpyEnv, disable_env_checker=True)
    assert pack.backend == "gym"
    with pytest.raises(specpack.BuildError) as info:
        pack.make()
    msg = str(info.value)
    assert "LegacyNumpyEnv" in msg and "np.float_" in msg and "pip install 'numpy<2'" in msg
    assert isinstance(info.value.__cause__, AttributeError)


NO_GYM = r"""
import json, sys
sys.modules["gym"] = None  # gym absent: importing it raises ImportError
import gymnasium, specpack
out = {}
try:
    specpack.capture("CartPole-v1", backend="gym")
except specpack.SpecPackError as e:
    out["error"] = [type(e).__name__, str(e)]
out["gymnasium_live"] = specpack.capture(gymnasium.make("CartPole-v1")).backend
out["gymnasium_class"] = specpack.capture(gymnasium.envs.classic_control.CartPoleEnv).backend
print(json.dumps(out))
"""


def test_without_gym_backend_gym_is_a_clear_backend_unavailable_error(tmp_path):
    proc = subprocess.run([sys.executable, "-c", NO_GYM], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    kind, msg = out["error"]
    assert kind == "BackendUnavailableError"
    assert "backend='gym' needs the legacy gym package" in msg
    assert "pip install 'specpack[gym]' 'numpy<2'" in msg
    # gymnasium envs are unaffected by the missing gym
    assert out["gymnasium_live"] == out["gymnasium_class"] == "gymnasium"


def test_gym_only_make_options_are_refused_for_gymnasium_envs():
    with pytest.raises(specpack.CaptureError, match=r"only the legacy gym\.make"):
        specpack.capture("CartPole-v1", apply_api_compatibility=True)
    with pytest.raises(specpack.CaptureError, match="autoreset"):
        specpack.capture(gymnasium.spec("CartPole-v1"), autoreset=False)


def test_on_the_command_line_the_numpy_2_fix_names_disable_env_checker_not_python(tmp_path):
    # The CLI's capture has --disable-env-checker: its message names that, not Python keywords.
    proc = subprocess.run(
        [sys.executable, "-m", "specpack", "capture", "--backend", "gym", "CartPole-v1",
         "-o", "x.pack"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert "np.bool8" in line and "pip install 'numpy<2'" in line
    assert "specpack capture --backend gym ID --disable-env-checker -o FILE" in line
    assert "disable_env_checker=True)" not in line and "gym.make(" not in line
    with pytest.raises(specpack.CaptureError) as info:
        specpack.capture(gym.make("CartPole-v1"))
    assert "--disable-env-checker" not in str(info.value)
    assert "--disable-env-checker" in info.value.for_surface("cli")
