"""Shared by the tests/tools/cli modules: run ``specpack`` as a user does, and the env modules.

``specpack(...)`` is ``python -m specpack`` in a fresh interpreter; ``console(...)`` is the
installed ``specpack`` console script, which (unlike ``python -m``) does not put the working
directory on the module path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ANT_MODULE = '''
import gymnasium
import numpy as np


class Ant(gymnasium.Env):
    """A custom env in a module loaded from a file path (not importable by name)."""

    def __init__(self, legs=4, scale=(1.0, 1.0), payload=None):
        self.legs = legs
        self.scale = scale
        self.observation_space = gymnasium.spaces.Box(-100.0, 100.0, (legs,), np.float64)
        self.action_space = gymnasium.spaces.Discrete(legs)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-1.0, 1.0, self.legs)
        return self.pos.copy(), {}

    def step(self, action):
        self.pos[action] += self.scale[0] * 0.5
        return self.pos.copy(), float(self.pos.sum()), bool(self.pos.max() > 3.0), False, {}


class HashAnt(Ant):
    """Behaviour depends on per-process state: hash(str) under hash randomisation."""

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        self.pos += hash("specpack") % 1000
        return self.pos.copy(), info


def touch(path):
    open(path, "w").close()
    return path


class Marker:
    """Unpickling this object creates a file: proof that code ran."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (touch, (self.path,))


gymnasium.register("CliAnt-v0", entry_point=Ant, max_episode_steps=40)
gymnasium.register("CliHashAnt-v0", entry_point=HashAnt, max_episode_steps=40)
'''

BOOM_MODULE = '''
import os

import gymnasium
import numpy as np


class Boom(gymnasium.Env):
    """Raises ZeroDivisionError at step ``at`` (or in reset when at == 0); prints as it goes."""

    def __init__(self, at=3):
        print("boom: constructed")
        os.write(1, b"boom: constructed, said from C level\\n")
        self.at = at
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float64)
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        print("boom: reset")
        self.t = 0
        if self.at == 0:
            raise KeyError("no reset today")
        return np.zeros(1), {}

    def step(self, action):
        self.t += 1
        if self.t == self.at:
            1 / 0
        return np.zeros(1), 1.0, self.t % 7 == 0, False, {}


gymnasium.register("CliBoom-v0", entry_point=Boom)
gymnasium.register("CliNoisy-v0", entry_point=Boom, kwargs={"at": -1})
gymnasium.register("CliBadReset-v0", entry_point=Boom, kwargs={"at": 0})
'''


def specpack(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """``python -m specpack ARGS`` in a fresh interpreter."""
    return _run([sys.executable, "-m", "specpack", *args], cwd, env, timeout)


def console_script() -> Path:
    """The installed ``specpack`` console script (next to the interpreter)."""
    return Path(sys.executable).parent / "specpack"


def console(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """``specpack ARGS`` through the console script: the working directory is not on the path."""
    return _run([str(console_script()), *args], cwd, env, timeout)


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None,
         timeout: float) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=full_env)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str,
                          prefix: str = "specpack", env_printed: bool = False) -> str:
    """Exit code 2, one ``<prefix>: error:`` line on stderr, no traceback; returns the line.

    With ``env_printed`` the env's own prints (moved to stderr) may come before that line.
    """
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines and (env_printed or len(lines) == 1), proc.stderr
    assert lines[-1].startswith(f"{prefix}: error: "), proc.stderr
    assert sum(ln.startswith(f"{prefix}: error: ") for ln in lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[-1], (needle, lines[-1])
    return lines[-1]


def assert_error(proc: subprocess.CompletedProcess[str], *needles: str,
                 prefix: str = "specpack") -> list[str]:
    """Exit code 2, one ``<prefix>: error:`` line on stderr, then only the message's further
    lines (a list, one item a line), no traceback; returns the error's lines."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines and lines[0].startswith(f"{prefix}: error: "), proc.stderr
    assert sum(ln.startswith(f"{prefix}: error: ") for ln in lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)
    return lines


def env_modules(d: Path) -> Path:
    """Write the env modules into ``d/envs`` (and ``cli_ant_envs.py`` into ``d``); return d."""
    (d / "envs").mkdir(exist_ok=True)
    (d / "envs" / "cli_ant_envs.py").write_text(ANT_MODULE)
    (d / "envs" / "cli_boom_envs.py").write_text(BOOM_MODULE)
    (d / "cli_ant_envs.py").write_text(ANT_MODULE)
    return d
