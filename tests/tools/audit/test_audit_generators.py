"""The audit watches the global generators, as verify does (issue 31): an env whose rollout
draws from one ``reset(seed=)`` does not seed is ``unseeded`` (cause ``global_generator``) in
the audit and verify alike, fails the audit and names the generator, the call and the fix.

``auditrng/NumpyGlobal-v0`` draws ``np.random.rand()`` into its observation (before, the audit
called it ``not_reproducible``); ``auditrng/RandomGlobal-v0`` draws ``random.random()`` and
almost never shows it (before, the audit called it ``identical`` in most runs: a verdict by
chance); ``auditrng/SeedsNumpyGlobal-v0`` seeds numpy's global generator from its reset seed
and stays ``identical``. The audits run as a user runs them: the CLI in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import random
import textwrap
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from _helpers import FIXTURES, run_python

from specpack._tools._audit.control import Build, control
from specpack._tools._audit.report import FAILING, UNSEEDED
from specpack._tools._verify.trace import Trace

pytestmark = pytest.mark.integration

ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES),
                                                   os.environ.get("PYTHONPATH")]))}
NUMPY, RANDOM, SEEDED = ("auditrng/NumpyGlobal-v0", "auditrng/RandomGlobal-v0",
                         "auditrng/SeedsNumpyGlobal-v0")
#: What each drawing env's finding must name: the generator and its fix.
NAMED = {NUMPY: ("numpy.random's global generator", "np.random.seed(...)"),
         RANDOM: ("Python's random module's global generator", "random.seed(...)")}

#: verify's status and cause of each id, in a fresh interpreter.
VERIFY = textwrap.dedent('''
    import json, sys
    import auditpkg
    import specpack
    out = {}
    for env_id in sys.argv[1:]:
        report = specpack.verify(specpack.capture(env_id), steps=20)
        out[env_id] = [report.status, report.cause]
    print(json.dumps(out))
''')


def audit(tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    proc = run_python(["-m", "specpack", "audit", NUMPY, RANDOM, SEEDED, "--import",
                       "auditpkg", "--steps", "20", "--json", *extra], tmp_path, timeout=300,
                      env=ENV)
    assert proc.stdout, proc.stderr
    return proc.returncode, {f["name"]: f for f in json.loads(proc.stdout)["envs"]}


def test_control_the_envs_draw_from_global_generators_without_specpack() -> None:
    import auditpkg  # noqa: F401 - registers the ids (tests/fixtures is on sys.path)

    def rollout(env_id: str) -> tuple[list[float], Any, Any]:
        env = gymnasium.make(env_id)
        before = (random.getstate(), np.random.get_state(legacy=True)[1].tobytes())
        obs = [float(env.reset(seed=0)[0][1])]
        obs += [float(env.step(1)[0][1]) for _ in range(3)]
        after = (random.getstate(), np.random.get_state(legacy=True)[1].tobytes())
        env.close()
        return obs, before, after

    a, b = rollout(NUMPY)[0], rollout(NUMPY)[0]
    assert a[0] == b[0] and a[1:] != b[1:]  # reset(seed=0) alike, the steps' draws not
    _, before, after = rollout(RANDOM)
    assert before[0] != after[0]  # it drew from random's global generator
    assert rollout(SEEDED)[0] == rollout(SEEDED)[0]  # seeded from its own seed: repeats


def test_verify_calls_them_unseeded_with_the_global_generator_cause(tmp_path: Path) -> None:
    proc = run_python(["-c", VERIFY, NUMPY, RANDOM, SEEDED], tmp_path, env=ENV)
    assert proc.returncode == 0, proc.stderr
    verified = json.loads(proc.stdout.splitlines()[-1])
    assert verified == {NUMPY: [UNSEEDED, "global_generator"],
                        RANDOM: [UNSEEDED, "global_generator"], SEEDED: ["identical", None]}


@pytest.mark.parametrize("run", [1, 2, 3])
def test_the_audit_calls_them_unseeded_every_time_fails_and_names_the_fix(
        tmp_path: Path, run: int) -> None:
    # the third run builds the references in the audit's own process (--reference here)
    extra = ("--reference", "here", "--jobs", "1") if run == 3 else ()
    code, envs = audit(tmp_path, *extra)
    for env_id, (generator, seed_it) in NAMED.items():
        found = envs[env_id]
        assert found["status"] == UNSEEDED, found
        assert found["cause"] == "global_generator", found
        reason = found["reason"]
        assert reason.startswith("step 1 drew from " + generator), reason
        assert "reset(seed=...) does not seed" in reason and seed_it in reason
        assert "self.np_random" in reason  # the env's own generator: the other fix
        assert found["differences"][0] == reason and found["step"] == 1
        assert "PYTHONHASHSEED" not in reason  # not a hash cause
    assert envs[SEEDED]["status"] == "identical" and envs[SEEDED]["cause"] is None
    assert UNSEEDED in FAILING and code == 1  # it fails the audit


# -- control() itself, with stand-in builds (no env: which builds' touches decide) ------------


def _trace() -> dict[str, Any]:
    return Trace(layers=[], observation_space={}, action_space={}, action_space_after_reset=None,
                 render_mode=None, spec={}, nondeterministic=False).to_dict()


def _touch(step: int, digest: str) -> list[Any]:
    return [["step", step, "numpy.random", digest]]


def test_two_clean_builds_whose_touches_disagree_are_unseeded() -> None:
    builds = [Build(_trace(), _touch(2, "b")), Build(_trace(), _touch(2, "c"))]
    found = control(Build(_trace(), _touch(2, "a")), lambda: builds.pop(0))
    assert found["unseeded"] == ["step", 2, "numpy.random"] and found["repeat"] == []
    assert builds == []  # the checked build's disagreement was confirmed by a third build


def test_a_checked_builds_disagreement_alone_is_not_taken_at_its_word() -> None:
    # The checks' reads changed which call drew (the clean builds agree): not unseeded.
    builds = [Build(_trace(), _touch(3, "s")), Build(_trace(), _touch(3, "s"))]
    found = control(Build(_trace(), _touch(2, "s")), lambda: builds.pop(0))
    assert found["unseeded"] is None and found["repeat"] == [] and builds == []


def test_builds_that_agree_on_their_touches_cost_no_third_build() -> None:
    builds = [Build(_trace(), _touch(2, "s")), Build(_trace(), _touch(2, "other"))]
    found = control(Build(_trace(), _touch(2, "s")), lambda: builds.pop(0))
    assert found["unseeded"] is None and len(builds) == 1
    # unchecked builds (no checks read the first): one disagreement is the answer
    builds = [Build(_trace(), _touch(2, "b"))]
    found = control(Build(_trace(), _touch(2, "a")), lambda: builds.pop(0), checked=False)
    assert found["unseeded"] == ["step", 2, "numpy.random"] and builds == []
