"""CustomAnt on another machine: Ant-v5 with the project's own robot file (needs mujoco).

gymnasium's "load a custom quadruped" pattern registers ``AntEnv`` with ``xml_file`` pointing
into the user's project. These tests prove, with the real mujoco env and real fresh
interpreters, that the pack records the file and mujoco, refuses another file at that path, and
that a self-contained pack builds the same robot where the project folder is gone (in another
working directory), while the same pack without ``self_contained`` stops with ``AssetError``
rather than a mujoco traceback.
"""

from __future__ import annotations

import importlib.metadata
import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.mujoco import ant_v5

import specpack

ANT_XML = Path(ant_v5.__file__).parent / "assets" / "ant.xml"


@pytest.fixture
def custom_ant(tmp_path: Path):  # type: ignore[no-untyped-def]
    """``CustomAnt-v0``: Ant-v5 with a longer front-left leg, from the project folder."""
    robots = tmp_path / "project" / "robots"
    robots.mkdir(parents=True)
    xml = robots / "long_ant.xml"
    text = ANT_XML.read_text()
    longer = text.replace('fromto="0.0 0.0 0.0 0.2 0.2 0.0" name="left_leg_geom"',
                          'fromto="0.0 0.0 0.0 0.3 0.3 0.0" name="left_leg_geom"')
    assert longer != text
    xml.write_text(longer)
    gymnasium.register("CustomAnt-v0", entry_point="gymnasium.envs.mujoco.ant_v5:AntEnv",
                       kwargs={"xml_file": str(xml)}, max_episode_steps=1000)
    yield xml
    gymnasium.registry.pop("CustomAnt-v0", None)


def _rollout(env: gymnasium.Env, steps: int = 5) -> list[list[float]]:  # type: ignore[type-arg]
    obs, _ = env.reset(seed=3)
    out = [obs.tolist()]
    for i in range(steps):
        obs, *_ = env.step(np.full(env.action_space.shape, 0.1 * (i % 3 - 1), np.float32))
        out.append(obs.tolist())
    env.close()
    return out


def _fresh(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    home = str(Path(specpack.__file__).parent.parent)
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={"PYTHONPATH": home, "PATH": "",
                                                       "MUJOCO_GL": "egl"})


def test_custom_ant_pack_records_the_robot_file_and_mujoco(custom_ant: Path) -> None:
    pack = specpack.capture("CustomAnt-v0", record_spaces=True)
    [asset] = pack.assets
    assert (asset.path, asset.carried) == (str(custom_ant), False)
    # the build needed mujoco (one wheel ships as several distributions: any of them)
    found = {k: v for k, v in pack.requires.items() if k.lower().startswith("mujoco")}
    assert found and all(v == importlib.metadata.version(k) for k, v in found.items())
    assert pack.requires["gymnasium"] == gymnasium.__version__


def test_an_older_robot_file_at_the_same_path_is_refused(custom_ant: Path) -> None:
    pack = specpack.capture("CustomAnt-v0")
    custom_ant.write_text(ANT_XML.read_text())  # the stock robot under the project's name
    with pytest.raises(specpack.AssetError, match=r"sha256|digest|bytes"):
        pack.make()


def test_self_contained_custom_ant_builds_the_same_robot_where_the_project_is_gone(
        custom_ant: Path, tmp_path: Path) -> None:
    here = _rollout(gymnasium.make("CustomAnt-v0"))
    carried = specpack.capture("CustomAnt-v0", self_contained=True)
    plain = specpack.capture("CustomAnt-v0")
    (tmp_path / "a.pkl").write_bytes(pickle.dumps(carried))
    (tmp_path / "b.pkl").write_bytes(pickle.dumps(plain))
    custom_ant.unlink()
    elsewhere = tmp_path / "node"
    elsewhere.mkdir()
    done = _fresh(textwrap.dedent(f"""
        import json, os, pickle
        import numpy as np
        os.environ["SPECPACK_CACHE"] = {str(tmp_path / "cache")!r}
        out = {{}}
        for name in ("a", "b"):
            pack = pickle.load(open({str(tmp_path)!r} + "/" + name + ".pkl", "rb"))
            try:
                env = pack.make()
            except Exception as e:
                out[name] = type(e).__name__ + ": " + str(e)
                continue
            obs, _ = env.reset(seed=3)
            rows = [obs.tolist()]
            for i in range(5):
                obs, *_ = env.step(np.full(env.action_space.shape, 0.1 * (i % 3 - 1),
                                           np.float32))
                rows.append(obs.tolist())
            out[name] = rows
        print(json.dumps(out))
    """), elsewhere)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["a"] == here  # the project's robot, built from the carried bytes
    assert got["b"].startswith("AssetError") and str(custom_ant) in got["b"]  # the control
