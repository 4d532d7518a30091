"""Another machine: a Ray node without the user's project builds CustomAnt from a pack.

Needs ray, mujoco (gymnasium[mujoco]), root and ``unshare`` (util-linux): CI runs as root.
tests/scripts/ray_another_machine_driver.py runs once (module fixture) as a script: a Ray head
here and a worker node started in a private mount namespace where the folder holding the user's
project (``robots/long_ant.xml`` including ``robots/parts.xml``, and ``my_envs.py`` registering
``CustomAnt-v0``) is an empty tmpfs. Tasks pinned to each node run three jobs: no specpack
(the control), a pack that names the robot files by path, and a self-contained pack, both
given through ``specpack.ray.runtime_env``. About 30 s on 2 cores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _helpers import SCRIPTS
from custom_ant import LEG_SCALE
from ray_procs import DriverRun, run_driver

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def run() -> DriverRun:
    return run_driver(SCRIPTS / "ray_another_machine_driver.py", timeout=240)


@pytest.fixture(scope="module")
def result(run: DriverRun) -> dict[str, Any]:
    out: dict[str, Any] = run.result
    assert "error" not in out, (out["error"]["text"], out.get("bare_log"))
    return out


def job(result: dict[str, Any], name: str) -> dict[str, Any]:
    """The reports of job ``name`` (``head``, ``bare``), or a failure naming why it is missing."""
    jobs = result["jobs"]
    if name not in jobs:
        raise AssertionError(f"job {name!r} did not run: the driver could not capture its "
                             f"pack: {result['packs'][name]['error']['text']}")
    assert "error" not in jobs[name], jobs[name]["error"]["text"]
    got: dict[str, Any] = jobs[name]
    return got


def test_the_bare_node_joins_the_head_from_its_own_mount_namespace(
    result: dict[str, Any],
) -> None:
    control = job(result, "control")
    assert result["bare_mnt_ns"] != result["driver_mnt_ns"]
    assert control["bare"]["node"] == result["bare_node_id"]
    assert control["bare"]["mnt_ns"] == result["bare_mnt_ns"]
    assert control["head"]["node"] != result["bare_node_id"]
    assert control["head"]["mnt_ns"] == result["driver_mnt_ns"]


def test_the_project_folder_is_hidden_on_the_bare_node_only(result: dict[str, Any]) -> None:
    control = job(result, "control")
    assert control["bare"]["project_exists"] is False
    assert control["bare"]["my_envs_importable"] is False
    # On the head node the project is there, and Ray put the driver's cwd (it) on sys.path.
    assert control["head"]["project_exists"] is True
    assert control["head"]["my_envs_importable"] is True
    # The tmpfs never showed on this machine, and the project is intact.
    assert result["host_mounts_on_hidden"] == []
    assert result["project_intact"] is True


def test_control_plain_gymnasium_make_fails_with_name_not_found_on_the_bare_node(
    result: dict[str, Any],
) -> None:
    for node in ("bare", "head"):  # registered in the driver only: no worker has the id
        error = job(result, "control")[node]["error"]
        assert error["type"] == "NameNotFound", (node, error["text"])
        assert "Environment `CustomAnt` doesn't exist" in error["message"], node


def test_the_project_xml_builds_a_longer_legged_ant_than_ant_v5(result: dict[str, Any]) -> None:
    here = result["here"]
    assert here["by_id"]["xml"] == result["xml"]
    assert here["by_id"]["leg"] == pytest.approx(LEG_SCALE * here["ant_v5"]["leg"])
    assert here["by_id"]["digest"] != here["ant_v5"]["digest"]


def test_a_self_contained_pack_rebuilds_the_projects_ant_on_the_bare_node(
    result: dict[str, Any],
) -> None:
    pack = result["packs"]["self_contained"]
    assert "error" not in pack, pack["error"]["text"]
    reference = pack["make"]
    assert reference["digest"] == result["here"]["by_id"]["digest"]
    reports = job(result, "self_contained")
    bare = reports["bare"]
    assert "error" not in bare, bare["error"]["text"]
    assert bare["node"] == result["bare_node_id"] and bare["project_exists"] is False
    assert bare["digest"] == reference["digest"]
    assert bare["leg"] == reference["leg"]
    # Built from the files the pack carried, materialised in that node's own cache.
    assert Path(bare["xml"]).name == "long_ant.xml"
    assert bare["xml"].startswith(result["bare_cache"] + "/"), bare["xml"]
    assert reports["head"]["digest"] == reference["digest"]


def test_control_a_pack_by_path_fails_on_the_bare_node_with_asset_error(
    result: dict[str, Any],
) -> None:
    pack = result["packs"]["by_path"]
    assert "error" not in pack, pack["error"]["text"]
    assert pack["make"]["digest"] == result["here"]["by_id"]["digest"]
    reports = job(result, "by_path")
    assert reports["head"]["digest"] == pack["make"]["digest"]  # where the files are: fine
    error = reports["bare"]["error"]
    assert error["type"] == "AssetError" and "BuildError" in error["mro"], error["text"]
    # Names the missing robot file (or its folder) and the fix; raised before MuJoCo ran.
    assert str(Path(result["xml"]).parent) in error["message"], error["message"]
    assert "self_contained" in error["message"], error["message"]
    assert not any("/envs/mujoco/" in frame for frame in error["frames"]), error["frames"]


def test_no_process_of_the_cluster_outlives_the_driver(
    run: DriverRun, result: dict[str, Any]
) -> None:
    # The node's processes ran in the driver's session, which run_driver would end anyway.
    assert result["bare_sessions"] == [result["driver_session"]]
    assert result["bare_survivors"] == []  # `ray start --block` stopped its own processes
    assert result["bare_ns_after_kill"] == []
    assert run.returncode == 0
    assert run.leftovers == []
