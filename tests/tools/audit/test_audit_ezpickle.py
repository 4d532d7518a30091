"""A wrong EzPickle record is ``ezpickle_gap``: a finding about pickling the env, not the pack.

A natural ``AntEnv`` subclass (``tests/fixtures/auditpkg/ants.py``: ``class MyAnt(AntEnv)``
with an extra constructor argument) inherits an EzPickle record of ``AntEnv``'s arguments,
which does not match ``MyAnt``'s constructor: ``pickle.dumps(env)`` cannot be loaded. A pack
never rebuilds from that record; ``verify`` says identical, and the audit now says
``ezpickle_gap`` (not ``not_identical``), does not fail for it, and names a fix that works for a
registered id: pickle a pack, ``specpack.capture('<id>')``.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import gymnasium
import pytest
from _helpers import FIXTURES, run_python

import specpack

pytestmark = pytest.mark.integration
pytest.importorskip("mujoco")

ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES),
                                                   os.environ.get("PYTHONPATH")]))}
ANT = "auditants/MyAnt-v0"


def test_control_pickling_a_my_ant_fails_while_its_pack_rebuilds_it() -> None:
    import auditpkg.ants  # noqa: F401 - registers the id

    env = gymnasium.make(ANT)
    try:
        assert env.unwrapped.legs_scale == 1.5
        with pytest.raises(TypeError, match="positional arguments"):
            pickle.loads(pickle.dumps(env.unwrapped))
    finally:
        env.close()
    pack = specpack.capture(ANT)
    report = specpack.verify(pack, steps=10)
    assert report.status == "identical", report  # the pack is portable
    rebuilt = pickle.loads(pickle.dumps(pack)).make()  # the fix the audit names
    try:
        assert rebuilt.unwrapped.legs_scale == 1.5
    finally:
        rebuilt.close()


def test_the_audit_of_a_wrong_ezpickle_record_is_its_own_status_with_a_fix_for_the_id(
        tmp_path: Path) -> None:
    proc = run_python(["-m", "specpack", "audit", ANT, "auditpkg/Good-v0", "--import",
                       "auditpkg.ants", "--import", "auditpkg", "--steps", "10", "--json"],
                      cwd=tmp_path, timeout=300, env=ENV)
    doc = json.loads(proc.stdout)
    envs = {f["name"]: f for f in doc["envs"]}
    ant = envs[ANT]
    assert ant["status"] == "ezpickle_gap", ant
    reason = ant["reason"]
    assert "auditpkg.ants.MyAnt's EzPickle record" in reason
    assert "does not match its constructor" in reason
    assert f"pickle a pack instead of the env: specpack.capture('{ANT}')" in reason
    assert "capture(EnvClass" not in reason  # the old fix, which no audit of an id can follow
    assert envs["auditpkg/Good-v0"]["status"] == "identical"
    # a warning about pickling the env, not a failure of packs: the audit passes
    assert doc["counts"]["envs"]["ezpickle_gap"] == 1
    assert proc.returncode == 0 and doc["portable"] is True


def test_the_summary_lists_an_ezpickle_gap_apart_from_what_fails(tmp_path: Path) -> None:
    proc = run_python(["-m", "specpack", "audit", "auditpkg/EzPickleGap-v0", "--import",
                       "auditpkg", "--steps", "10"], cwd=tmp_path, timeout=300,
                      env={**ENV, "COLUMNS": "400"})
    lines = proc.stdout.splitlines()
    title = next(i for i, line in enumerate(lines) if "EzPickle record is wrong" in line)
    assert lines[title].endswith("a pack does (not a failure of the audit) (1):")
    assert lines[title + 1].split()[:2] == ["auditpkg/EzPickleGap-v0", "ezpickle_gap"]
    assert not any(line.startswith("not portable") for line in lines)
    assert lines[-1] == "portable" and proc.returncode == 0
