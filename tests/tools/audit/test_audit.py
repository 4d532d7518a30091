"""``specpack audit``: every env and wrapper that does not survive a process boundary, found.

The audits run as a user runs them: ``python -m specpack audit ...`` in a fresh interpreter,
with the fixture package ``tests/fixtures/auditpkg`` importable through ``PYTHONPATH`` (the
audit's own worker processes inherit it). Each fixture failure has a control showing it is real
without specpack.
"""

from __future__ import annotations

import json
import os
import pickle
import textwrap
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from _helpers import FIXTURES, run_python
from gymnasium import spaces

import specpack
from specpack._core._errors import SpecPackError, UnknownEnvError
from specpack._core._process.worker import label
from specpack._tools._audit.report import FAILING, STATUSES, AuditReport, Finding
from specpack.testing import assert_portable

pytestmark = pytest.mark.integration

AUDIT_ENV = {
    "PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES), os.environ.get("PYTHONPATH")]))
}


def run_audit(tmp_path: Path, *args: str, timeout: float = 300) -> tuple[int, Any, str]:
    """``python -m specpack audit ARGS --json`` in a fresh interpreter; (exit code, JSON, stderr)."""
    proc = run_python(
        ["-m", "specpack", "audit", *args, "--json"], cwd=tmp_path, timeout=timeout, env=AUDIT_ENV
    )
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(
            f"audit printed no JSON (exit {proc.returncode})\nstdout:\n{proc.stdout}\n"
            f"stderr:\n{proc.stderr[-4000:]}"
        ) from None
    return proc.returncode, doc, proc.stderr


def by_name(doc: Any, key: str = "envs") -> dict[str, Any]:
    return {f["name"]: f for f in doc[key]}


# -- gymnasium's own registry ----------------------------------------------------------------


def test_audit_of_gymnasiums_registry_finds_every_installable_env_identical(tmp_path: Path):
    code, doc, err = run_audit(tmp_path, "gymnasium", "--steps", "20")
    envs = by_name(doc)
    # Control, independent of specpack: which of these envs gymnasium.make builds here.
    buildable = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for env_id in envs:
            try:
                gymnasium.make(env_id).close()
            except Exception:  # noqa: BLE001 - a missing dependency
                continue
            buildable.add(env_id)
    assert len(buildable) >= 10, sorted(buildable)  # classic control and toy text at least
    assert {"CartPole-v1", "Pendulum-v1", "FrozenLake-v1", "Taxi-v4"} <= buildable
    for env_id, f in envs.items():
        if env_id in buildable:
            assert f["status"] == "identical", f
        else:
            assert f["status"] == "missing_dependency", f
            assert f["package"], f
    assert code == 0, err[-3000:]
    assert doc["portable"] is True
    assert sum(doc["counts"]["envs"].values()) == len(envs) == len(doc["envs"])


def test_missing_dependencies_of_gymnasium_envs_name_the_package(tmp_path: Path):
    # phys2d/ and tabular/ need jax, which this suite never installs; the mujoco-py envs were
    # moved out of gymnasium (their constructor raises ImportError naming the project).
    code, doc, _ = run_audit(tmp_path, "phys2d/", "tabular/", "Ant-v2", "GymV26Environment-v0")
    envs = by_name(doc)
    assert {f["status"] for f in envs.values()} == {"missing_dependency"}, envs
    assert envs["phys2d/CartPole-v1"]["package"] == "jax"
    assert envs["tabular/Blackjack-v0"]["package"] == "jax"
    assert envs["Ant-v2"]["package"] == "gymnasium-robotics"
    assert envs["GymV26Environment-v0"]["package"].startswith("shimmy[")
    assert code == 0  # skipped, not failing


# -- the fixture package -------------------------------------------------------------------------

FIXTURE_STATUS = {
    "auditpkg/Good-v0": "identical",
    "auditpkg/EzPickleGap-v0": "ezpickle_gap",
    "auditpkg/OwnPickle-v0": "identical",
    "auditpkg/WrapperGap-v0": "not_identical",
    "auditpkg/OffsetWrapped-v0": "identical",
    "auditpkg/HiddenWrapperGap-v0": "not_identical",
    "auditpkg/HashDependent-v0": "unseeded",
    "auditpkg/SetOrder-v0": "unseeded",
    "auditpkg/NeedsLaunch-v0": "rebuild_error",
    "auditpkg/MissingDep-v0": "missing_dependency",
    "auditpkg/VecHash-v0": "unseeded",
    "auditpkg/NeedsGoal-v0": "needs_arguments",
}


def check_fixture_findings(envs: dict[str, Any]) -> None:
    assert {k: envs[k]["status"] for k in FIXTURE_STATUS} == FIXTURE_STATUS
    ez = envs["auditpkg/EzPickleGap-v0"]["reason"]
    assert "EzPickle" in ez and "goal=5.0" in ez and "goal=1.0" in ez
    wrap = envs["auditpkg/WrapperGap-v0"]["reason"]
    assert "ScaleReward" in wrap and "scale=2.0" in wrap
    hidden = envs["auditpkg/HiddenWrapperGap-v0"]["reason"]
    assert "live instance" in hidden and "reward differs" in hidden
    for hashed in ("auditpkg/HashDependent-v0", "auditpkg/SetOrder-v0"):
        assert "PYTHONHASHSEED" in envs[hashed]["reason"]
        assert "reset observation differs" in envs[hashed]["reason"]
    launch = envs["auditpkg/NeedsLaunch-v0"]
    assert "not configured" in launch["reason"]
    assert "Traceback" in launch["detail"] and "RuntimeError" in launch["detail"]
    assert envs["auditpkg/MissingDep-v0"]["package"] == "auditpkg_physics_engine"
    vec = envs["auditpkg/VecHash-v0"]
    assert "reset observation differs" in vec["reason"] and vec["step"] == 0
    assert any("make_vec(pack, 2)" in n for n in vec["notes"])
    goal = envs["auditpkg/NeedsGoal-v0"]
    assert "'goal'" in goal["reason"] and "missing 1 required" in goal["reason"]


def test_audit_of_fixture_package_gives_each_failure_kind_its_status(tmp_path: Path):
    code, doc, _ = run_audit(tmp_path, "auditpkg/", "--import", "auditpkg.launch", "--steps", "20")
    envs = by_name(doc)
    assert set(envs) == set(FIXTURE_STATUS)
    check_fixture_findings(envs)
    assert code == 1
    assert doc["portable"] is False


def test_fixture_failures_are_real_without_specpack(tmp_path: Path):
    # Registers the fixture envs and runs the launcher, as a training script does first
    # (tests/ is on sys.path in this process).
    import auditpkg.launch  # noqa: F401

    # EzPickle gap: pickling the env rebuilds it with the default goal.
    env = gymnasium.make("auditpkg/EzPickleGap-v0")
    assert env.unwrapped.goal == 5.0
    assert pickle.loads(pickle.dumps(env.unwrapped)).goal == 1.0
    # An empty EzPickle record that pickling never uses (own __getstate__/__setstate__).
    own = gymnasium.make("auditpkg/OwnPickle-v0").unwrapped
    assert own._ezpickle_kwargs == {} and own._ezpickle_args == ()
    assert pickle.loads(pickle.dumps(own)).goal == 5.0
    # Unrecorded wrapper argument: rebuilding the wrapper from its own record loses scale.
    node = gymnasium.make("auditpkg/WrapperGap-v0")
    while type(node).__name__ != "ScaleReward":  # it sits inside make's own wrappers
        node = node.env
    assert node.scale == 2.0
    assert type(node)(node.env, **node._saved_kwargs).scale == 1.0
    # Process-dependent behaviour and a constructor that needs the launcher: fresh interpreters.
    probe = (
        "import gymnasium, auditpkg; "
        "print(gymnasium.make('auditpkg/HashDependent-v0').reset(seed=0)[0][0])"
    )
    starts = {run_python(["-c", probe], tmp_path, env=AUDIT_ENV).stdout for _ in range(3)}
    assert len(starts) > 1, starts
    fresh = run_python(
        ["-c", "import gymnasium, auditpkg; gymnasium.make('auditpkg/NeedsLaunch-v0')"],
        tmp_path,
        env=AUDIT_ENV,
    )
    assert fresh.returncode != 0 and "not configured" in fresh.stderr
    gymnasium.make("auditpkg/NeedsLaunch-v0").close()  # here, after the launcher: fine


@pytest.mark.parametrize("where", ["spawn", "forkserver"])
def test_fixture_failures_are_found_with_spawn_and_forkserver_workers(tmp_path: Path, where: str):
    ids = ["auditpkg/Good-v0", "auditpkg/HashDependent-v0", "auditpkg/NeedsLaunch-v0"]
    code, doc, _ = run_audit(
        tmp_path, *ids, "--import", "auditpkg.launch", "--steps", "10", "--where", where
    )
    envs = by_name(doc)
    # A spawn or forkserver child's hash seed is not the audit's to set (as in verify): there
    # is no hash control, and hash order shows as a rebuild that differs.
    expected = {**FIXTURE_STATUS, "auditpkg/HashDependent-v0": "not_identical"}
    assert {k: envs[k]["status"] for k in ids} == {k: expected[k] for k in ids}
    assert label(where) in envs["auditpkg/NeedsLaunch-v0"]["reason"]  # "spawn child"
    assert doc["where"] == where and code == 1


def test_references_built_here_find_the_same_failures_as_forked_ones(tmp_path: Path):
    code, doc, _ = run_audit(
        tmp_path,
        "auditpkg/",
        "--import",
        "auditpkg.launch",
        "--steps",
        "20",
        "--reference",
        "here",
        "--jobs",
        "1",
    )
    check_fixture_findings(by_name(doc))
    assert code == 1


def test_a_hanging_env_costs_its_own_slot_and_a_crashing_one_its_worker(tmp_path: Path):
    ids = ["auditfaults/Hang-v0", "auditfaults/Crash-v0", "auditpkg/Good-v0", "CartPole-v1"]
    code, doc, _ = run_audit(
        tmp_path,
        *ids,
        "--import",
        "auditpkg.launch",
        "--steps",
        "10",
        "--jobs",
        "1",
        "--timeout",
        "20",  # Hang hangs for good; the others must finish within it on a loaded machine
    )
    envs = by_name(doc)
    assert [envs[i]["status"] for i in ids] == [
        "timeout",
        "rebuild_error",
        "identical",
        "identical",
    ]
    assert "within 20 s" in envs["auditfaults/Hang-v0"]["reason"]
    crash = envs["auditfaults/Crash-v0"]["reason"]
    assert "died while rebuilding it" in crash and "exited with code 70" in crash, crash
    assert code == 1


def test_a_reference_that_hangs_here_times_out_without_stopping_the_audit(tmp_path: Path):
    # Without the launcher the fixture's Hang env hangs here too (in the reference fork).
    code, doc, _ = run_audit(
        tmp_path,
        "auditfaults/Hang-v0",
        "CartPole-v1",
        "--import",
        "auditpkg",
        "--steps",
        "5",
        "--timeout",
        "20",  # Hang hangs for good; CartPole must finish within it on a loaded machine
    )
    envs = by_name(doc)
    assert envs["auditfaults/Hang-v0"]["status"] == "timeout"
    assert "here" in envs["auditfaults/Hang-v0"]["reason"]
    assert envs["CartPole-v1"]["status"] == "identical"
    assert code == 1


# -- wrappers ------------------------------------------------------------------------------------

# Wrappers of gymnasium.wrappers that need nothing beyond gymnasium, with an argument the audit
# must give a non-default value.
CORE_WRAPPERS = {
    "TimeLimit": "max_episode_steps",
    "ClipReward": "max_reward",
    "DelayObservation": "delay",
    "FrameStackObservation": "stack_size",
    "MaxAndSkipObservation": "skip",
    "NormalizeObservation": "epsilon",
    "NormalizeReward": "gamma",
    "OrderEnforcing": "disable_render_order_enforcing",
    "RecordEpisodeStatistics": "buffer_length",
    "RepeatAction": "num_repeats",
    "RescaleAction": "max_action",
    "RescaleObservation": "max_obs",
    "ReshapeObservation": "shape",
    "StickyAction": "repeat_action_probability",
    "TimeAwareObservation": "normalize_time",
    "TransformReward": "func",
    "DtypeObservation": "dtype",
}


def public_wrappers() -> set[str]:
    import gymnasium.wrappers as gw

    out = set()
    for name in gw.__all__:
        try:
            obj = getattr(gw, name)
        except ImportError:
            out.add(name)  # needs jax/torch/array-api: reported as a missing dependency
            continue
        if isinstance(obj, type) and issubclass(obj, gymnasium.Wrapper):
            out.add(name)
    return out


def test_wrappers_audit_covers_every_gymnasium_wrapper_with_non_default_arguments(tmp_path: Path):
    code, doc, _ = run_audit(tmp_path, "--wrappers-only", "--steps", "20")
    assert doc["envs"] == []
    wrappers = {f["name"].rpartition(".")[2]: f for f in doc["wrappers"]}
    assert set(wrappers) == public_wrappers()
    # RecordEpisodeStatistics puts a wall-clock time in info['ep']['t']: every info value is
    # compared, so the local repeat already differs (not_reproducible, never identical).
    clock = wrappers["RecordEpisodeStatistics"]
    assert clock["status"] == "not_reproducible", clock
    assert "info['ep']['t'] differs: the first build here" in clock["reason"], clock
    for name, arg in CORE_WRAPPERS.items():
        f = wrappers[name]
        if name != "RecordEpisodeStatistics":
            assert f["status"] == "identical", f
        assert arg in f["args"], f
        assert f["base_env"], f
    if hasattr(gymnasium.wrappers, "DiscretizeAction"):  # gymnasium >= 1.1
        assert wrappers["DiscretizeAction"]["status"] == "identical"
        assert wrappers["DiscretizeAction"]["args"]["multidiscrete"] == "True"
    for f in wrappers.values():
        assert f["status"] in {"identical", "missing_dependency", "skipped", "not_compared",
                               "not_reproducible"}, f
        assert f["status"] != "not_reproducible" or f is clock, f
        if f["status"] == "missing_dependency":
            assert f["package"], f
    assert code == 0


def test_wrappers_audit_finds_wrappers_that_do_not_record_their_arguments(tmp_path: Path):
    code, doc, _ = run_audit(
        tmp_path, "--wrappers-only", "--import", "auditpkg.wrappers", "--steps", "20"
    )
    mine = {f["name"]: f for f in doc["wrappers"] if f["name"].startswith("auditpkg.wrappers.")}
    status = {k.rpartition(".")[2]: f["status"] for k, f in mine.items()}
    assert status == {
        "OffsetReward": "identical",
        "ScaleReward": "not_identical",
        "HiddenBonus": "not_identical",
        "RenamedArgs": "not_identical",
        "Unrecorded": "not_identical",
    }
    w = "auditpkg.wrappers."
    assert "does not record scale" in mine[w + "ScaleReward"]["reason"]
    # No visible evidence of the gap: the rebuilt wrapper's rollout shows it.
    assert any("reward differs" in d for d in mine[w + "HiddenBonus"]["differences"])
    assert any("'old_bonus'" in d for d in mine[w + "RenamedArgs"]["differences"])
    assert "RecordConstructorArgs" in mine[w + "Unrecorded"]["reason"]
    assert mine[w + "OffsetReward"]["args"] == {"offset": "0.5"}
    assert mine[w + "OffsetReward"]["base_env"] == "auditpkg/Good-v0"
    assert code == 1


def test_a_wrapper_a_recorder_covers_is_faithful(tmp_path: Path):
    """Issue 14: with a recorder registered (by an imported module), the audit reads the
    wrapper's arguments as capture does, and the unrecorded wrapper becomes identical."""
    code, doc, _ = run_audit(tmp_path, "--wrappers-only", "--import", "auditpkg.wrappers",
                             "--import", "auditpkg.recorders", "--steps", "20")
    mine = {f["name"].rpartition(".")[2]: f for f in doc["wrappers"]
            if f["name"].startswith("auditpkg.wrappers.")}
    assert mine["Unrecorded"]["status"] == "identical", mine["Unrecorded"]
    assert mine["Unrecorded"]["args"] == {"penalty": "0.5"}
    assert mine["ScaleReward"]["status"] == "not_identical"  # no recorder: still found
    assert code == 1


def test_every_minigrid_wrapper_is_faithful_with_the_built_in_recorders(tmp_path: Path):
    """Issue 14: 10 of minigrid's 15 wrappers record nothing; with specpack's built-in
    recorders all 15 record faithfully (NoDeath with a guessed ``no_death_types``). Issue 20:
    two of them raise in reset() around the audit's base env with its guessed arguments
    (DirectionObsWrapper needs a Goal object, ReseedWrapper's guessed seed_idx is out of range),
    so their rollouts are not compared, and they say so instead of passing as identical."""
    code, doc, _ = run_audit(tmp_path, "--wrappers-only", "--import", "minigrid", "--steps", "20")
    mine = {f["name"].rpartition(".")[2]: f for f in doc["wrappers"]
            if f["name"].startswith("minigrid.wrappers.")}
    assert len(mine) == 15
    raised = {"DirectionObsWrapper", "ReseedWrapper"}
    assert {k: f["status"] for k, f in mine.items()} == {
        k: "not_compared" if k in raised else "identical" for k in mine}
    for name in raised:
        reason = mine[name]["reason"]
        assert "in reset() at step 0 on both sides alike" in reason, reason
        assert "record and attributes match" in reason
        assert mine[name]["differences"] == []
    assert mine["ViewSizeWrapper"]["args"]["agent_view_size"] != "7"  # a non-default, read back
    assert code == 0


def test_a_recorder_that_misreads_or_fails_is_a_finding_not_a_pass() -> None:
    from auditpkg.wrappers import Unrecorded

    from specpack._core._backends.recorders import _RECORDERS
    from specpack._tools._audit.wrapper_job import record_check

    live = Unrecorded(gymnasium.make("CartPole-v1"), penalty=0.5)
    key = f"{Unrecorded.__module__}:{Unrecorded.__qualname__}"
    name = "auditpkg.wrappers.Unrecorded"
    saved = _RECORDERS.get(key)
    try:
        specpack.register_recorder(Unrecorded, lambda w: {"penalty": 0.0})
        assert record_check(name, Unrecorded, live, {"penalty": 0.5}, {}) == [
            f"{name} records penalty=0.0 but was given penalty=0.5"]
        specpack.register_recorder(Unrecorded, lambda w: {"penalty": w.gone})
        (found,) = record_check(name, Unrecorded, live, {"penalty": 0.5}, {})
        assert found.startswith(f"the recorder registered for {name} failed on an instance: ")
        assert "gone" in found
    finally:
        _RECORDERS.pop(key, None)
        if saved is not None:
            _RECORDERS[key] = saved


# -- the JSON report and exit codes -----------------------------------------------------------


def test_json_report_has_the_documented_schema(tmp_path: Path):
    code, doc, _ = run_audit(
        tmp_path,
        "CartPole-v1",
        "auditpkg/EzPickleGap-v0",
        "--import",
        "auditpkg",
        "--steps",
        "5",
        "--seed",
        "3",
    )
    assert code == 0  # an EzPickle gap does not fail the audit
    assert set(doc) == {
        "schema",
        "portable",
        "elapsed",
        "where",
        "steps",
        "seed",
        "jobs",
        "timeout",
        "versions",
        "output",
        "counts",
        "envs",
        "wrappers",
    }
    assert doc["schema"] == "specpack.audit/5"
    assert (doc["steps"], doc["seed"], doc["where"]) == (5, 3, "subprocess")
    assert isinstance(doc["elapsed"], float) and doc["jobs"] >= 1
    assert {"python", "specpack", "gymnasium", "numpy"} <= set(doc["versions"])
    assert list(doc["counts"]["envs"]) == list(STATUSES[:-1])
    assert list(doc["counts"]["wrappers"]) == list(STATUSES)
    assert doc["counts"]["envs"]["identical"] == 1
    assert doc["counts"]["envs"]["ezpickle_gap"] == 1
    for f in doc["envs"]:
        assert set(f) == {
            "kind",
            "name",
            "status",
            "reason",
            "differences",
            "step",
            "package",
            "detail",
            "notes",
            "elapsed",
            "output",
            "cause",
        }
        assert f["kind"] == "env" and f["status"] in STATUSES
        assert f["cause"] is None  # only an unseeded finding has one
        assert isinstance(f["differences"], list) and isinstance(f["notes"], list)
    gap = by_name(doc)["auditpkg/EzPickleGap-v0"]
    assert gap["reason"].startswith(gap["differences"][0])  # and the fix for the id follows


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["CartPole-v1", "--steps", "3"], 0, "portable"),
        (["auditpkg/HashDependent-v0", "--import", "auditpkg", "--steps", "3"], 1, "NOT portable"),
        (["CartPol-v1"], 2, "did you mean 'CartPole-v1'"),
        (["--import", "no_such_module_xyz"], 2, "no_such_module_xyz"),
        (["CartPole-v1", "--where", "thread"], 2, "invalid choice"),
        (["CartPole-v1", "--jobs", "0"], 2, "--jobs 0"),
        (["CartPole-v1", "--wrappers-only"], 2, "--wrappers-only takes no TARGET"),
    ],
)
def test_exit_codes(tmp_path: Path, args: list[str], code: int, message: str):
    proc = run_python(["-m", "specpack", "audit", *args], cwd=tmp_path, env=AUDIT_ENV)
    assert proc.returncode == code, proc.stderr[-3000:]
    assert message in proc.stdout + proc.stderr


def test_env_output_never_reaches_the_json_on_stdout(tmp_path: Path):
    noisy = tmp_path / "noisy_envs.py"
    noisy.write_text(
        textwrap.dedent("""
        import os
        import gymnasium
        from gymnasium.envs.classic_control.cartpole import CartPoleEnv

        class Noisy(CartPoleEnv):
            def __init__(self):
                print("hello from a noisy constructor")
                os.write(1, b"and from C level\\n")
                super().__init__()

        gymnasium.register("noisy/Noisy-v0", entry_point="noisy_envs:Noisy")
    """)
    )
    proc = run_python(
        ["-m", "specpack", "audit", "noisy/", "--import", "noisy_envs", "--steps", "3", "--json"],
        cwd=tmp_path,
        env={"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path),
                                                         os.environ.get("PYTHONPATH")]))},
    )
    doc = json.loads(proc.stdout)
    assert doc["envs"][0]["status"] == "identical"
    # issue #23: what an env prints is kept in its finding, not sent to stderr
    assert "hello from a noisy constructor" in doc["envs"][0]["output"]
    assert "and from C level" in doc["envs"][0]["output"]
    assert "hello from a noisy constructor" not in proc.stderr


# -- the Python API ------------------------------------------------------------------------------


def test_audit_api_returns_a_report_with_counts_table_and_progress():
    seen: list[tuple[str, int, int]] = []
    report = specpack.audit(
        ["CartPole-v1", "FrozenLake-v1"],
        steps=10,
        progress=lambda f, d, n: seen.append((f.name, d, n)),
    )
    assert isinstance(report, AuditReport) and bool(report)
    assert report.counts()["identical"] == 2
    assert isinstance(report["CartPole-v1"], Finding) and report["CartPole-v1"].portable
    assert sorted(name for name, _, _ in seen) == ["CartPole-v1", "FrozenLake-v1"]
    assert [(d, n) for _, d, n in seen] == [(1, 2), (2, 2)]
    text = str(report)
    assert "2 envs" in text and "identical" in text and text.endswith("portable")
    assert json.loads(report.to_json())["portable"] is True


def test_audit_api_raises_on_bad_input():
    with pytest.raises(UnknownEnvError, match="did you mean 'CartPole-v1'"):
        specpack.audit(["CartPol-v1"])
    with pytest.raises(SpecPackError, match="where="):
        specpack.audit(["CartPole-v1"], where="thread")
    with pytest.raises(SpecPackError, match="steps="):
        specpack.audit(["CartPole-v1"], steps=-1)
    with pytest.raises(SpecPackError, match="reference="):
        specpack.audit(["CartPole-v1"], reference="cloud")


def test_failing_statuses_are_the_ones_that_fail_the_audit():
    assert set(FAILING) == {
        "not_identical", "unseeded", "rollout_error", "capture_error", "rebuild_error", "timeout"}
    assert Finding("env", "x", "not_compared").portable
    assert Finding("env", "x", "ezpickle_gap").portable  # a warning about pickling the env
    assert not Finding("env", "x", "unseeded").portable
    assert not Finding("env", "x", "rollout_error").portable
    assert Finding("env", "x", "missing_dependency").portable
    assert not Finding("env", "x", "timeout").portable


# -- assert_portable -----------------------------------------------------------------------------


class HashWalk(gymnasium.Env):  # type: ignore[type-arg]
    """Defined in a test module (travels by value): starts where hash(str) says."""

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1e6, 1e6, (1,), np.float64)
        self.action_space = spaces.Discrete(2)
        self._x = 0.0

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self._x = float(hash("specpack-audit-test") % 997)
        return np.array([self._x]), {}

    def step(self, action: Any) -> Any:
        self._x += float(action)
        return np.array([self._x]), 0.0, False, False, {}


def test_assert_portable_passes_for_a_portable_env_and_a_live_wrapped_env():
    assert assert_portable("CartPole-v1", steps=10).status == "identical"
    env = gymnasium.wrappers.ClipReward(gymnasium.make("Pendulum-v1"), -1.0, 0.5)
    assert_portable(env, steps=10)
    order = env.env.env  # ClipReward < TimeLimit < OrderEnforcing: the live env was not stepped
    assert type(order).__name__ == "OrderEnforcing" and order._has_reset is False


def test_assert_portable_fails_with_the_finding_for_a_process_dependent_env():
    with pytest.raises(AssertionError) as info:
        assert_portable(HashWalk, steps=5)
    message = str(info.value)
    assert "HashWalk is not portable (unseeded)" in message  # the hash control's verdict
    assert "reset observation differs" in message and "PYTHONHASHSEED" in message


def test_assert_portable_fails_for_an_env_with_a_missing_dependency():
    with pytest.raises(AssertionError, match=r"missing_dependency.*jax"):
        assert_portable("phys2d/CartPole-v1")


def test_an_env_package_adds_one_assert_portable_test_per_env(tmp_path: Path):
    (tmp_path / "test_my_envs.py").write_text(
        textwrap.dedent("""
        import pytest
        import auditpkg
        import auditpkg.launch
        from specpack.testing import assert_portable

        @pytest.mark.parametrize("env_id", [
            "auditpkg/Good-v0", "auditpkg/EzPickleGap-v0", "auditpkg/NeedsLaunch-v0",
        ])
        def test_portable(env_id):
            assert_portable(env_id, steps=10)
    """)
    )
    proc = run_python(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_envs.py"],
        cwd=tmp_path,
        env=AUDIT_ENV,
    )
    out = proc.stdout
    assert "1 passed" in out and "2 failed" in out, out[-4000:]
    assert "EzPickleGap-v0 is not portable (ezpickle_gap): EzPickle gap" in out
    assert "NeedsLaunch-v0 is not portable (rebuild_error)" in out
    assert "not configured" in out
    assert proc.returncode == 1


def test_specpack_audit_stays_the_function_after_the_cli_and_testing_imports():
    import specpack._tools._cli
    import specpack.testing

    assert specpack.audit.__name__ == "audit" and callable(specpack.audit)
    report = specpack.audit("CartPole-v1", steps=3, jobs=1)
    assert report.counts()["identical"] == 1
    assert specpack.AuditReport is AuditReport


def test_an_unknown_backend_is_refused_naming_the_choices() -> None:
    with pytest.raises(SpecPackError, match="backend='rllib' is not one of gymnasium, pettingzoo"):
        specpack.audit(["CartPole-v1"], backend="rllib")


def test_backend_pettingzoo_without_pettingzoo_names_the_extra(tmp_path: Path) -> None:
    """PettingZoo blocked (``sys.modules`` entry None), as on a machine without the extra."""
    code = ("import sys; sys.modules['pettingzoo'] = None\n"
            "from specpack._tools._cli.main import main\n"
            "raise SystemExit(main(['audit', '--backend', 'pettingzoo', 'pettingzoo.butterfly']))")
    proc = run_python(["-c", code], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'specpack[pettingzoo]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_wrong_record_is_not_identical_even_when_the_rollouts_are_not_reproducible(tmp_path: Path):
    """A wrapper that forgets to record an argument is not_identical (what make(env.spec)
    rebuilds from is wrong) even when its info holds a wall-clock time, which makes two builds
    in one process differ: the repeat control must not hide the record bug (gymnasium 1.0's
    RecordEpisodeStatistics had both)."""
    code, doc, _ = run_audit(tmp_path, "--wrappers-only", "--import", "clockwrappers",
                             "--steps", "10")
    mine = {f["name"].rpartition(".")[2]: f for f in doc["wrappers"]
            if f["name"].startswith("clockwrappers.")}
    finding = mine["ClockedHiddenBonus"]
    assert finding["status"] == "not_identical", finding
    assert "does not record amount" in finding["reason"], finding
    assert any("not reproducible here either" in d for d in finding["differences"]), finding
    assert code == 1
