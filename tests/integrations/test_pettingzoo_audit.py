"""Issue 15: ``specpack audit --backend pettingzoo`` runs every factory of every PettingZoo env
module through the audit's one scheduler and worker protocol: captured here, built twice here
(the repeat control), captured live, rebuilt in a fresh interpreter and compared per agent.

Runs in CI's pettingzoo venv only (``SPECPACK_PETTINGZOO_TESTS=1``); elsewhere the module
collects no tests.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ENABLED = os.environ.get("SPECPACK_PETTINGZOO_TESTS") == "1"
__test__ = ENABLED

if ENABLED:
    from _helpers import run_python

    import specpack

pytestmark = pytest.mark.integration

FAMILIES = ["pettingzoo.butterfly", "pettingzoo.classic", "pettingzoo.sisl", "pettingzoo.atari",
            "pettingzoo.mpe", "mpe2"]


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Any:
    cwd: Path = tmp_path_factory.mktemp("pz-audit")
    proc = run_python(["-m", "specpack", "audit", "--backend", "pettingzoo", "--steps", "40",
                       "--json", *FAMILIES], cwd=cwd, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


def statuses(audit: Any, family: str) -> dict[str, str]:
    return {f["name"]: f["status"] for f in audit["envs"]
            if f["name"].split(".")[1 if f["name"].startswith("pettingzoo.") else 0] == family}


def test_no_installed_env_fails_to_capture_rebuild_or_compare(audit: Any) -> None:
    bad = [f for f in audit["envs"]
           if f["status"] not in ("identical", "not_reproducible", "missing_dependency")]
    assert not bad, bad


def test_butterfly_and_sisl_factories_are_identical_in_a_fresh_interpreter(audit: Any) -> None:
    butterfly = statuses(audit, "butterfly")
    assert len(butterfly) == 6 and set(butterfly.values()) == {"identical"}
    assert "pettingzoo.butterfly.pistonball_v6.parallel_env" in butterfly
    sisl = statuses(audit, "sisl")
    assert len(sisl) == 4 and set(sisl.values()) == {"identical"}


def test_classic_games_are_identical_except_hanabi_which_reshuffles_on_unseeded_reset(
        audit: Any) -> None:
    classic = statuses(audit, "classic")
    assert classic["pettingzoo.classic.chess_v6.env"] == "identical"
    assert classic["pettingzoo.classic.connect_four_v3.env"] == "identical"
    assert classic["pettingzoo.classic.rps_v2.parallel_env"] == "identical"
    odd = {k: v for k, v in classic.items() if v != "identical"}
    assert set(odd) <= {"pettingzoo.classic.hanabi_v5.env"}, odd


def test_mpe_moved_to_mpe2_is_missing_dependency_and_mpe2_envs_are_identical(audit: Any) -> None:
    mpe = [f for f in audit["envs"] if f["name"].startswith("pettingzoo.mpe")]
    assert [(f["status"], f["package"]) for f in mpe] == [("missing_dependency", "mpe2")]
    mpe2 = statuses(audit, "mpe2")
    assert len(mpe2) >= 20 and set(mpe2.values()) == {"identical"}


def test_atari_without_its_emulator_is_missing_dependency_naming_it(audit: Any) -> None:
    atari = statuses(audit, "atari")
    assert len(atari) >= 20 and set(atari.values()) == {"missing_dependency"}
    assert {f["package"] for f in audit["envs"] if ".atari." in f["name"]} == {
        "multi_agent_ale_py"}


def test_a_setting_changed_in_the_parent_only_is_not_identical_across_the_boundary(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the same audit machinery reports the multi-agent form of the registry
    problem (a module setting changed after import, invisible to a fresh interpreter)."""
    from pzfamily import tuned_v0

    monkeypatch.setattr(tuned_v0, "SPEED", 3.0)  # as a training script might, after import
    report = specpack.audit(["pzfamily"], backend="pettingzoo", steps=10, jobs=1)
    found = {f.name: f for f in report.envs}
    assert found["pzfamily.steady_v0.parallel_env"].status == "identical"
    tuned = found["pzfamily.tuned_v0.parallel_env"]
    assert tuned.status == "not_identical" and tuned.step is not None, tuned
    assert "fresh interpreter" in tuned.reason
    native = found["pzfamily.native_v0"]
    assert (native.status, native.package) == ("missing_dependency", "specpack_absent_emulator")
    assert not report


def test_without_the_change_the_same_family_is_portable_but_for_the_missing_emulator() -> None:
    report = specpack.audit(["pzfamily.steady_v0", "pzfamily.tuned_v0"], backend="pettingzoo",
                            steps=10, jobs=1)
    assert {f.status for f in report.envs} == {"identical"} and report


def test_bad_input_is_refused_naming_the_fix() -> None:
    with pytest.raises(specpack.SpecPackError, match="no PettingZoo env module"):
        specpack.audit(["pzenvs.support"], backend="pettingzoo")
    with pytest.raises(specpack.SpecPackError, match="wrappers"):
        specpack.audit(["pzfamily"], backend="pettingzoo", wrappers=True)
    with pytest.raises(specpack.SpecPackError, match="not one of gymnasium, pettingzoo"):
        specpack.audit(["pzfamily"], backend="rllib")


def test_import_names_the_families_when_no_target_is_given(tmp_path: Path) -> None:
    """The issue's form: ``specpack audit --backend pettingzoo --import FAMILY ...``."""
    proc = run_python(["-m", "specpack", "audit", "--backend", "pettingzoo", "--steps", "10",
                       "--json", "--import", "pettingzoo.butterfly", "--import",
                       "pzfamily.steady_v0"],
                      cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    names = {f["name"]: f["status"] for f in json.loads(proc.stdout)["envs"]}
    assert len(names) == 7 and set(names.values()) == {"identical"}, names
    assert "pzfamily.steady_v0.parallel_env" in names
