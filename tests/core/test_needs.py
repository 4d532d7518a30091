"""What a pack needs where it is built: its files (assets), distributions (requires), its seal.

A tiny env in a throwaway "project folder" on sys.path reads a file named by a kwarg or by its
constructor's default; these tests prove the wiring: capture finds the file, make() checks it
(or passes the carried copy), a self-contained pack builds in a fresh interpreter after the
project is gone, and a missing distribution is named with its pip install line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import subprocess
import sys
import textwrap
import uuid
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from _helpers import run_python

import specpack
from specpack._core._assets import Asset
from specpack._tools._cli.describe import render_description
from specpack.files import describe

ENV_CODE = '''
import os
import gymnasium
import numpy as np
import numpy as np
from HELPERS import first_byte

HERE = os.path.dirname(os.path.abspath(__file__))


class FileEnv(gymnasium.Env):
    """Observes the first byte of the file it is given."""

    observation_space = gymnasium.spaces.Box(0, 255, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, data_file=os.path.join(HERE, "assets", "layout.txt")):
        self.value = first_byte(data_file)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([self.value], np.float32), {}

    def step(self, action):
        return np.array([self.value], np.float32), 0.0, True, False, {}
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A user project folder with an env module (a unique name) and its data files."""
    name = f"proj_envs_{uuid.uuid4().hex[:8]}"
    root = tmp_path / "project"
    (root / "assets").mkdir(parents=True)
    (root / f"{name}.py").write_text(ENV_CODE.replace("HELPERS", f"{name}_helpers"))
    (root / f"{name}_helpers.py").write_text(
        "def first_byte(path):\n    with open(path, 'rb') as fh:\n"
        "        return float(fh.read()[0])\n")
    (root / "assets" / "layout.txt").write_bytes(b"A default layout")
    (root / "robot.txt").write_bytes(b"Robot")
    monkeypatch.syspath_prepend(str(root))
    env_id = f"{name}/File-v0"
    gymnasium.register(env_id, entry_point=f"{name}:FileEnv")
    yield root, name, env_id
    gymnasium.registry.pop(env_id, None)
    sys.modules.pop(name, None)
    sys.modules.pop(f"{name}_helpers", None)


def _first(pack: specpack.SpecPack) -> float:
    env = pack.make()
    try:
        return float(env.reset(seed=0)[0][0])
    finally:
        env.close()


def test_capture_records_the_kwarg_file_and_make_refuses_another_file_at_that_path(
        project) -> None:  # type: ignore[no-untyped-def]
    root, _, env_id = project
    robot = root / "robot.txt"
    pack = specpack.capture(env_id, data_file=str(robot))
    [asset] = pack.assets
    assert (asset.path, asset.size, asset.carried) == (str(robot), 5, False)
    assert _first(pack) == ord("R")
    robot.write_bytes(b"Xrobot, an older version")
    with pytest.raises(specpack.AssetError) as e:
        pack.make()
    assert asset.sha256 in str(e.value)
    robot.unlink()
    with pytest.raises(specpack.AssetError, match=str(robot)) as e:
        pack.make()
    assert "self_contained=True" in str(e.value)


def test_entry_point_default_file_next_to_the_code_is_an_asset(project) -> None:  # type: ignore[no-untyped-def]
    root, _, env_id = project
    pack = specpack.capture(env_id)
    assert [a.path for a in pack.assets] == [str(root / "assets" / "layout.txt")]
    assert "data_file" not in pack.kwargs  # not carried: the default stays the env's own
    carried = specpack.capture(env_id, self_contained=True)
    assert carried.kwargs["data_file"] == str(root / "assets" / "layout.txt")
    assert carried.assets[0].carried and carried.assets[0].data == b"A default layout"


def test_assets_digests_shape_the_fingerprint_requires_and_seal_do_not(project) -> None:  # type: ignore[no-untyped-def]
    root, _, env_id = project
    pack = specpack.capture(env_id, data_file=str(root / "robot.txt"))
    (root / "robot.txt").write_bytes(b"Other robot")
    other = specpack.capture(env_id, data_file=str(root / "robot.txt"))
    assert pack.fingerprint != other.fingerprint
    assert other.evolve(requires={"x": "1"}).fingerprint == other.fingerprint
    # a pack without files keeps the fingerprint it had before assets existed
    cart = specpack.capture("CartPole-v1")
    assert cart.evolve(assets=()).fingerprint == cart.fingerprint


def test_requires_names_the_distributions_of_the_code_not_their_dependencies() -> None:
    pack = specpack.capture("CartPole-v1")
    # its module imports numpy, which gymnasium depends on: installing gymnasium installs it
    assert dict(pack.requires) == {"gymnasium": gymnasium.__version__}
    built = specpack.capture("CartPole-v1", record_spaces=True)
    assert built.requires == pack.requires


HYPOTHESIS_ENV = """
import gymnasium
import hypothesis


class Guessing(gymnasium.Env):
    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        return 0, 0.0, True, False, {}
"""


def test_requires_names_what_a_users_env_module_imports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's module is no distribution; the distributions it imports at module level
    are required. (Before, only the distributions of the code's own modules were: this
    failed.)"""
    from importlib.metadata import version

    name = f"guessing_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(HYPOTHESIS_ENV)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__(name)
    try:
        pack = specpack.capture(module.Guessing)
        assert pack.requires.get("hypothesis") == version("hypothesis")
        assert pack.requires["gymnasium"] == gymnasium.__version__
    finally:
        sys.modules.pop(name, None)


def test_new_fields_survive_pickle_and_the_pack_file(project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, _, env_id = project
    pack = specpack.capture(env_id, data_file=str(root / "robot.txt"), self_contained=True)
    sealed = specpack.seal(pack, steps=3, seed=0)
    assert sealed.sealed is not None and sealed == pack
    back = pickle.loads(pickle.dumps(sealed))
    assert (back.requires, back.assets, back.sealed) == (
        sealed.requires, sealed.assets, sealed.sealed)
    assert back.assets[0].data == b"Robot"
    path = tmp_path / "env.specpack"
    specpack.dump(sealed, path, key=b"k" * 32)
    loaded = specpack.load(path, key=b"k" * 32)
    assert (loaded.requires, loaded.assets, loaded.sealed) == (
        sealed.requires, sealed.assets, sealed.sealed)
    assert loaded.assets[0].data == b"Robot"
    assert bool(specpack.check(loaded))


def test_unpickle_cache_tells_packs_apart_by_requires_and_seal() -> None:
    pack = specpack.capture("CartPole-v1")
    other = pack.evolve(requires={"gymnasium": "0.0"})
    assert pickle.loads(pickle.dumps(other)).requires == {"gymnasium": "0.0"}
    assert pickle.loads(pickle.dumps(pack)).requires == dict(pack.requires)


def test_check_without_a_seal_names_pack_seal() -> None:
    with pytest.raises(specpack.SpecPackError, match=r"pack\.seal\("):
        specpack.check(specpack.capture("CartPole-v1"))


def test_inspect_shows_requires_and_assets(project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, _, env_id = project
    pack = specpack.capture(env_id, data_file=str(root / "robot.txt"))
    path = tmp_path / "env.specpack"
    specpack.dump(pack, path)
    text = render_description(str(path), describe(path))
    assert f"gymnasium=={gymnasium.__version__}" in text
    [row] = [line for line in text.splitlines() if line.startswith("assets")]
    assert str(root / "robot.txt") in row and f"sha256 {pack.assets[0].sha256[:12]}" in row
    assert "not carried" in row


def test_version_skew_warning_points_at_check_not_verify() -> None:
    pack = specpack.capture("CartPole-v1")
    skewed = pack.evolve(versions={**pack.versions, "numpy": "0.0.1"})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        skewed.make().close()
    text = " ".join(str(w.message) for w in seen)
    assert "specpack.check(pack)" in text and "specpack.verify(pack)" not in text


def _fresh(script: str, cwd: Path, *path: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh interpreter in ``cwd`` that sees this specpack and ``path``."""
    home = str(Path(specpack.__file__).parent.parent)
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True,
                          text=True, timeout=120,
                          env={"PYTHONPATH": os.pathsep.join([home, *path]), "PATH": ""})


def test_self_contained_pack_builds_in_a_fresh_interpreter_after_the_project_is_gone(
        project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, name, env_id = project
    made = _fresh(textwrap.dedent(f"""
        import pickle, gymnasium, specpack
        gymnasium.register({env_id!r}, entry_point="{name}:FileEnv")
        robot = {str(root / "robot.txt")!r}
        pack = specpack.capture({env_id!r}, data_file=robot, self_contained=True)
        plain = specpack.capture({env_id!r}, data_file=robot)
        open({str(tmp_path / "a.pkl")!r}, "wb").write(pickle.dumps(pack))
        open({str(tmp_path / "b.pkl")!r}, "wb").write(pickle.dumps(plain))
        import specpack.ray  # Ray's worker hook: the pack travels whole in it
        hook = specpack.ray.runtime_env(pack)["worker_process_setup_hook"]
        open({str(tmp_path / "hook.pkl")!r}, "wb").write(pickle.dumps(hook))
        print(pack.entry_point.by_value, plain.entry_point.by_value)
    """), root, str(root))
    assert made.returncode == 0, made.stderr
    # the project is on PYTHONPATH: its code travels by reference unless self-contained
    assert made.stdout.split() == ["True", "False"]
    (root / "robot.txt").rename(tmp_path / "moved.txt")
    (root / f"{name}.py").unlink()
    (root / f"{name}_helpers.py").unlink()  # a module the env's module imports travels too
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = textwrap.dedent(f"""
        import json, os, pickle, sys
        os.environ["SPECPACK_CACHE"] = {str(tmp_path / "cache")!r}
        out = {{}}
        for name in ("a", "b"):
            pack = pickle.load(open({str(tmp_path)!r} + "/" + name + ".pkl", "rb"))
            try:
                out[name] = float(pack.make().reset(seed=0)[0][0])
            except Exception as e:
                out[name] = type(e).__name__
        import gymnasium
        pickle.load(open({str(tmp_path / "hook.pkl")!r}, "rb"))()  # as a Ray worker runs it
        out["ray"] = float(gymnasium.make({env_id!r}).reset(seed=0)[0][0])
        print(json.dumps(out))
    """)
    done = _fresh(script, elsewhere)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # b: the control, the same pack not self-contained; ray: through specpack.ray.runtime_env
    assert got == {"a": ord("R"), "b": "AssetError", "ray": ord("R")}


def test_missing_required_distribution_is_named_with_pip_install_in_a_fresh_interpreter(
        tmp_path: Path) -> None:
    pack = specpack.capture("CartPole-v1")
    needy = pack.evolve(requires={**pack.requires, "no-such-dist-w21": "1.2.3"})
    (tmp_path / "p.pkl").write_bytes(pickle.dumps(needy))
    script = textwrap.dedent(f"""
        import pickle, specpack
        pack = pickle.load(open({str(tmp_path / "p.pkl")!r}, "rb"))
        try:
            pack.make()
        except specpack.BuildError as e:
            print("BuildError:", e)
    """)
    done = _fresh(script, tmp_path)
    assert "BuildError:" in done.stdout, done.stderr
    assert "pip install no-such-dist-w21==1.2.3" in done.stdout


def test_named_assets_are_recorded_one_path_alone_too(project) -> None:  # type: ignore[no-untyped-def]
    root, _, env_id = project
    extra = root / "robot.txt"
    for given in ([extra], str(extra)):
        pack = specpack.capture(env_id, assets=given)
        assert str(extra) in [a.path for a in pack.assets]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        specpack.capture(env_id, assets=[root / "nowhere.xml"])


def test_capture_refuses_contradictory_or_bad_file_options(project) -> None:  # type: ignore[no-untyped-def]
    root, _, env_id = project
    with pytest.raises(specpack.CaptureError, match="by_value=False"):
        specpack.capture(env_id, self_contained=True, by_value=False)
    with pytest.raises(specpack.CaptureError, match="max_asset_bytes"):
        specpack.capture(env_id, max_asset_bytes="64MB")
    with pytest.raises(specpack.CaptureError, match="max_asset_bytes"):  # 5 bytes over 3
        specpack.capture(env_id, data_file=str(root / "robot.txt"), self_contained=True,
                         max_asset_bytes=3)


def test_unpickle_cache_tells_a_carried_asset_from_a_checked_one() -> None:
    data = b"robot"
    common = {"path": "/project/robot.xml", "kind": "file", "size": 5,
              "sha256": hashlib.sha256(data).hexdigest()}
    pack = specpack.capture("CartPole-v1")
    checked = pack.evolve(assets=(Asset(**common, carried=False),))
    carried = pack.evolve(assets=(Asset(**common, carried=True, data=data),))
    assert checked == carried  # the same env: the same file
    assert pickle.loads(pickle.dumps(checked)).assets[0].carried is False
    assert pickle.loads(pickle.dumps(carried)).assets[0].data == data


def test_a_pathlib_kwarg_is_found_and_a_carried_copy_is_passed_as_a_path(
        project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    root, _, env_id = project
    monkeypatch.setenv("SPECPACK_CACHE", str(tmp_path / "cache"))
    pack = specpack.capture(env_id, data_file=root / "robot.txt", self_contained=True)
    assert [a.path for a in pack.assets] == [str(root / "robot.txt")]
    (root / "robot.txt").unlink()
    env = pack.make()
    assert env.unwrapped.value == ord("R")
    env.close()


def test_one_version_difference_gives_one_warning() -> None:
    pack = specpack.capture("CartPole-v1")
    skewed = pack.evolve(versions={**pack.versions, "gymnasium": "0.0.1"},
                          requires={**pack.requires, "gymnasium": "0.0.1"})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        skewed.make().close()
    skews = [w for w in seen if issubclass(w.category, specpack.VersionSkewWarning)]
    assert len(skews) == 1 and "gymnasium 0.0.1" in str(skews[0].message)


def test_check_compares_with_the_carried_seal_and_names_the_first_differing_step() -> None:
    sealed = specpack.seal(specpack.capture("CartPole-v1"), steps=3, seed=0)
    assert sealed.sealed is not None and sealed.sealed.steps == 3
    assert bool(specpack.check(sealed))
    first, *rest = sealed.sealed.digests
    forged = dataclasses.replace(sealed.sealed, digests=(("0" * 64,) * len(first), *rest))
    report = specpack.check(sealed.evolve(sealed=forged))
    assert not report and report.step == 0


def test_a_relative_kwarg_path_is_made_absolute_so_another_cwd_reads_the_checked_file(
        project, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    root, _, env_id = project
    monkeypatch.chdir(root)
    pack = specpack.capture(env_id, data_file="robot.txt")
    assert pack.kwargs["data_file"] == str(root / "robot.txt")
    assert [a.path for a in pack.assets] == [str(root / "robot.txt")]
    elsewhere = root / "assets"
    monkeypatch.chdir(elsewhere)
    (elsewhere / "robot.txt").write_bytes(b"Zother robot in the other cwd")
    assert _first(pack) == ord("R")


def test_a_word_kwarg_is_not_taken_for_a_file_of_that_name_in_the_cwd(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rgb_array").write_text("not a render mode")
    (tmp_path / "4x4").write_text("not a map")
    for carried in (False, True):
        pack = specpack.capture("CartPole-v1", render_mode="rgb_array", self_contained=carried)
        assert pack.kwargs["render_mode"] == "rgb_array" and pack.assets == ()
        env = pack.make()  # 1161eb9 built render_mode="<cwd>/rgb_array" here
        assert env.unwrapped.render_mode == "rgb_array"
        env.close()
        lake = specpack.capture("FrozenLake-v1", map_name="4x4", self_contained=carried).make()
        assert lake.unwrapped.desc.shape == (4, 4)  # 1161eb9: KeyError '<cwd>/4x4'
        lake.close()


def test_a_live_env_adds_the_distributions_of_what_it_holds() -> None:
    from importlib.metadata import version

    env = gymnasium.make("CartPole-v1")
    env.reset(seed=0)  # its state is a numpy array now: numpy, which gymnasium brings
    pack = specpack.capture(env)
    env.close()
    assert dict(pack.requires) == {"gymnasium": gymnasium.__version__}
    held = specpack.capture(HoldsAStrategy())  # its constructor imported hypothesis
    assert held.requires.get("hypothesis") == version("hypothesis")


class HoldsAStrategy(gymnasium.Env):  # type: ignore[type-arg]
    """An env whose build needs a distribution its entry point's module does not name:
    the constructor imports it and keeps one of its objects."""

    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self) -> None:
        import hypothesis.strategies

        self.strategy = hypothesis.strategies.integers()

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        return 0, {}

    def step(self, action: Any) -> Any:
        return 0, 0.0, False, False, {}


def test_requires_is_decided_at_capture_and_a_build_changes_nothing() -> None:
    """``requires`` names the code's distributions at capture; ``make()`` changes neither it
    nor the pack's pickle. The constructor imports hypothesis (inside ``__init__``: no module
    of the code names it), so only a capture that builds (recorded spaces) sees it, from the
    object the env holds. (Before, a build merged what it imported into ``requires``: these
    asserts failed.)"""
    from importlib.metadata import version

    pack = specpack.capture(HoldsAStrategy)
    before, blob = dict(pack.requires), pickle.dumps(pack)
    assert "hypothesis" not in before and before["gymnasium"] == gymnasium.__version__
    pack.make().close()
    assert dict(pack.requires) == before and pickle.dumps(pack) == blob
    assert dict(pickle.loads(blob).requires) == before
    recorded = specpack.capture(HoldsAStrategy, record_spaces=True)
    assert recorded.requires.get("hypothesis") == version("hypothesis")


#: The mission's env: a user's subclass of a MuJoCo env, registered by id, defined in the
#: script (``__main__``: carried by value) or in a module of the user's project.
CUSTOM_ANT = """
import importlib.metadata, json, pickle, sys
import gymnasium
import specpack

if sys.argv[1] == "main":
    from gymnasium.envs.mujoco.ant_v5 import AntEnv

    class CustomAnt(AntEnv):
        pass

    gymnasium.register("CustomAnt-v0", entry_point=CustomAnt, max_episode_steps=10)
else:
    import userants  # registers CustomAnt-v0 as "userants:CustomAnt"

pack = specpack.capture("CustomAnt-v0")
before, blob = dict(pack.requires), pickle.dumps(pack)
env = pack.make()
env.reset(seed=0)
env.close()
print(json.dumps({"before": before, "after": dict(pack.requires),
                  "same_pickle": pickle.dumps(pack) == blob,
                  "by_value": pack.entry_point.by_value,
                  "mujoco": importlib.metadata.version("mujoco")}))
"""

USER_ANTS = """
import gymnasium
from gymnasium.envs.mujoco.ant_v5 import AntEnv


class CustomAnt(AntEnv):
    pass


gymnasium.register("CustomAnt-v0", entry_point="userants:CustomAnt", max_episode_steps=10)
"""


@pytest.mark.parametrize("where", ["main", "user_module"])
def test_a_users_subclass_of_a_mujoco_env_requires_mujoco_before_any_make(
        tmp_path: Path, where: str) -> None:
    """Its module names no mujoco; the class's MRO reaches gymnasium's MuJoCo env, whose module
    imports mujoco. (Before, ``requires`` was ``{gymnasium}`` until a ``make()`` in the same
    process added what the build imported: this failed.)"""
    pytest.importorskip("mujoco")
    (tmp_path / "userants.py").write_text(USER_ANTS)
    proc = run_python(["-c", CUSTOM_ANT, where], cwd=tmp_path,
                      env={**os.environ, "PYTHONPATH": os.pathsep.join(
                          [str(tmp_path), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["by_value"] is (where == "main")
    assert got["before"].get("mujoco") == got["mujoco"], got["before"]
    assert got["before"]["gymnasium"] == gymnasium.__version__
    assert got["after"] == got["before"] and got["same_pickle"]


SESSION = """
import json
import gymnasium
import hypothesis  # the script's session imports it; the env's code never uses it
import specpack


class Still(gymnasium.Env):
    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        return 0, 0.0, True, False, {}


print(json.dumps(dict(specpack.capture(Still).requires)))
"""


def test_a_scripts_own_imports_are_not_required_by_a_class_it_defines(tmp_path: Path) -> None:
    """``__main__`` is a session, not a module a worker imports: what it imported is not
    required unless the class's MRO reaches it (a guard of the design, not a regression)."""
    proc = run_python(["-c", SESSION], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == {"gymnasium": gymnasium.__version__}
