"""In real processes: registrations made in the main guard are invisible to
spawn/forkserver workers and fresh interpreters; a pack rebuilds the env everywhere."""

from __future__ import annotations

import pytest
from _helpers import run_script_json

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def rescue(tmp_path_factory):
    return run_script_json("registry_rescue.py", tmp_path_factory.mktemp("rescue"), timeout=300)


@pytest.mark.parametrize("env_id", ["MainAnt-v0", "FileAnt-v0"])
def test_control_plain_id_fails_in_spawn_and_forkserver_children(rescue, env_id):
    control = rescue[env_id]["control_id"]
    assert control["fork"] == "ok"
    for ctx in ("spawn", "forkserver"):
        assert control[ctx].startswith("NameNotFound"), control[ctx]


def test_control_envspec_with_main_string_entry_point_fails_in_spawn(rescue):
    control = rescue["MainAnt-v0"]["control_spec"]
    for ctx in ("spawn", "forkserver"):
        assert "module '__mp_main__' has no attribute 'MainAnt'" in control[ctx]


def test_control_envspec_with_file_loaded_module_fails_in_spawn(rescue):
    control = rescue["FileAnt-v0"]["control_spec"]
    for ctx in ("spawn", "forkserver"):
        assert control[ctx] == "ModuleNotFoundError: No module named 'antfile_mod'"


@pytest.mark.parametrize("env_id", ["MainAnt-v0", "FileAnt-v0"])
def test_pack_carries_main_guard_and_file_loaded_entry_points_by_value(rescue, env_id):
    assert rescue[env_id]["by_value"] is True
    assert rescue[env_id]["layers"][:3] == ["TimeLimit", "OrderEnforcing", "PassiveEnvChecker"]


@pytest.mark.parametrize("env_id", ["MainAnt-v0", "FileAnt-v0"])
@pytest.mark.parametrize("ctx", ["fork", "spawn", "forkserver"])
def test_pool_child_rebuilds_env_registered_in_main_guard(rescue, env_id, ctx):
    assert rescue[env_id]["pack"][ctx] == rescue[env_id]["parent"]


@pytest.mark.parametrize("env_id", ["MainAnt-v0", "FileAnt-v0"])
@pytest.mark.parametrize("ctx", ["spawn", "forkserver"])
def test_async_vector_env_workers_rebuild_pack(rescue, env_id, ctx):
    assert rescue[env_id]["vector"][ctx] == rescue[env_id]["vector_parent"]


@pytest.mark.parametrize("env_id", ["MainAnt-v0", "FileAnt-v0"])
def test_fresh_python_in_other_directory_loads_pickle_from_file(rescue, env_id):
    fresh = rescue[env_id]["fresh"]
    assert isinstance(fresh, dict), fresh
    assert fresh["preloaded"] is False
    assert fresh["rollout"] == rescue[env_id]["parent"]


@pytest.mark.parametrize("env_id", ["MainAnt-v0", "FileAnt-v0"])
def test_max_episode_steps_truncates_at_the_registered_step(rescue, env_id):
    parent = rescue[env_id]["parent"]
    truncated_at = [i for i, step in enumerate(parent) if step[3]]
    assert truncated_at == [7]
