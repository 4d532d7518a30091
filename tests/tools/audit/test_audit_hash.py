"""The audit has verify's hash control: an env that follows hash order gets one status of its
own in verify and the audit alike, which fails the audit and names the fix (PYTHONHASHSEED).

``auditpkg/SetOrder-v0`` heads for its goals in the iteration order of a set of strings
(gymnasium-robotics' ``FrankaKitchen-v1`` does with ``tasks_to_complete``). The audit's remote
workers run under a fixed ``PYTHONHASHSEED`` (verify's rebuild seed) and a control under the
next (verify's control seed): fresh interpreters that differ in their hash seed alone. Before,
the audit had no control and called such an env ``not_identical`` while verify said
``not_reproducible`` naming hash randomisation.

Verify's own status for hash order and global generators is another change; until it is
there, verify names the hash cause inside ``not_reproducible`` and the audit's status is
:data:`specpack._tools._audit.report.UNSEEDED` (see the marked spot there). :func:`verify_status`
says which status verify must give, so these tests tighten by themselves when it lands.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _hang import run_process
from _helpers import FIXTURES, run_python

from specpack._tools._audit.report import FAILING, UNSEEDED
from specpack._tools._verify.judge import control_is_cheap
from specpack._tools._verify.report import NOT_REPRODUCIBLE, STATUSES

pytestmark = pytest.mark.integration

ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES),
                                                   os.environ.get("PYTHONPATH")]))}
ENV_ID = "auditpkg/SetOrder-v0"

#: What verify says of it in a fresh interpreter (its hash seed as the environment sets it).
VERIFY = textwrap.dedent('''
    import json, sys
    import auditpkg
    import specpack
    report = specpack.verify(specpack.capture(sys.argv[1]), steps=20)
    print(json.dumps({"status": report.status, "differences": report.differences}))
''')

#: The env's first goal in a fresh interpreter (no specpack).
FIRST_GOAL = ("import gymnasium, auditpkg; "
              "print(gymnasium.make('auditpkg/SetOrder-v0').reset(seed=0)[0][1])")


def verify_status() -> str:
    """Verify's status for hash order: the audit's once verify has it, else the hash cause of
    ``not_reproducible``."""
    return UNSEEDED if UNSEEDED in STATUSES else NOT_REPRODUCIBLE


def run(tmp_path: Path, args: list[str], seed: str | None = None,
        prefix: list[str] | None = None) -> Any:
    env = dict(ENV)
    if seed is not None:
        env["PYTHONHASHSEED"] = seed
    if prefix:  # e.g. taskset: the same interpreter under another command
        return run_process([*prefix, sys.executable, *args], cwd=tmp_path, timeout=300,
                           env={**os.environ, **env})
    return run_python(args, cwd=tmp_path, timeout=300, env=env)


def audit(tmp_path: Path, seed: str | None = None,
          prefix: list[str] | None = None) -> tuple[int, dict[str, Any]]:
    proc = run(tmp_path, ["-m", "specpack", "audit", ENV_ID, "auditpkg/Good-v0", "--import",
                          "auditpkg", "--steps", "20", "--json"], seed, prefix)
    doc = json.loads(proc.stdout)
    return proc.returncode, {f["name"]: f for f in doc["envs"]}


def test_control_the_env_follows_hash_order_without_specpack(tmp_path: Path) -> None:
    goals = {seed: {run(tmp_path, ["-c", FIRST_GOAL], seed).stdout for _ in range(2)}
             for seed in ("1", "2")}
    assert all(len(g) == 1 for g in goals.values()), goals  # one seed, one order
    assert goals["1"] != goals["2"], goals  # another seed, another order


@pytest.mark.skipif(not control_is_cheap(), reason="verify runs no hash control on one CPU")
@pytest.mark.parametrize("seed", [None, "0"], ids=["random-hash-seed", "PYTHONHASHSEED=0"])
def test_verify_and_the_audit_give_it_the_same_status_that_fails_and_names_the_fix(
        tmp_path: Path, seed: str | None) -> None:
    proc = run(tmp_path, ["-c", VERIFY, ENV_ID], seed)
    assert proc.returncode == 0, proc.stderr
    verified = json.loads(proc.stdout.splitlines()[-1])
    assert verified["status"] == verify_status(), verified
    assert "hash randomisation" in verified["differences"][0]
    code, envs = audit(tmp_path, seed)
    found = envs[ENV_ID]
    assert found["status"] == UNSEEDED, found
    assert found["cause"] == "hash_order", found  # verify's cause, in the JSON finding
    if UNSEEDED in STATUSES:  # verify's status has landed: one status, both sides
        assert found["status"] == verified["status"]
    assert UNSEEDED in FAILING and code == 1  # it fails the audit
    reason = found["reason"]
    assert "hash order" in reason and "Fix: set PYTHONHASHSEED" in reason
    rebuild, control = ("0", "1") if seed == "0" else ("1", "2")  # verify's seeds
    assert f"PYTHONHASHSEED={rebuild} and PYTHONHASHSEED={control}" in reason
    assert found["step"] == 0
    assert envs["auditpkg/Good-v0"]["status"] == "identical"  # the control costs no verdict


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset")
def test_on_one_cpu_a_rebuild_that_differs_gets_the_hash_control(tmp_path: Path) -> None:
    # One CPU: no control beside every rebuild (as verify), but a rebuild that differs from the
    # reference is held against one before it is called not_identical.
    code, envs = audit(tmp_path, prefix=["taskset", "-c", "0"])
    assert envs[ENV_ID]["status"] == UNSEEDED, envs[ENV_ID]
    assert "PYTHONHASHSEED=1 and PYTHONHASHSEED=2" in envs[ENV_ID]["reason"]
    assert envs["auditpkg/Good-v0"]["status"] == "identical" and code == 1
