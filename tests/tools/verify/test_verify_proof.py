"""verify is a proof (issue 20): a verdict chance cannot flip, one deadline that bounds this
process too, and a truthy report only when both rollouts were compared and matched.

Each scenario runs real processes: fresh ``python`` parents for the hash-seed cases (a parent's
hash secret is fixed at its start), a fresh interpreter and a fork for every verify.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from _helpers import run_python
from proofenvs import OpaqueObservation, SpySpaces

import specpack
from specpack._tools._verify.report import VerifyReport

HERE = str(Path(__file__).resolve().parent)  # proofenvs, for the children

pytestmark = pytest.mark.integration

# -- hash seeds ---------------------------------------------------------------------------------

HASH_ORDER = '''
import json, os, sys
import gymnasium
import numpy as np
import specpack

WORDS = {words!r}


class SetOrder(gymnasium.Env):
    """The observation is the order in which a set of strings iterates (hash order)."""

    observation_space = gymnasium.spaces.Box(0, 100, (len(WORDS),), np.int64)
    action_space = gymnasium.spaces.Discrete(2)

    def _obs(self):
        print("PYTHONHASHSEED=" + os.environ.get("PYTHONHASHSEED", "unset"))
        return np.array([WORDS.index(w) for w in set(WORDS)], np.int64)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs(), {{}}

    def step(self, action):
        return self._obs(), 0.0, False, False, {{}}


class Steady(SetOrder):
    def _obs(self):
        return np.arange(len(WORDS), dtype=np.int64)


if __name__ == "__main__":
    out = {{}}
    for cls in (SetOrder, Steady):
        report = specpack.verify(specpack.capture(cls), steps=3, timeout=60)
        out[cls.__name__] = {{"status": report.status, "seeds": report.hash_seeds,
                              "first": (report.differences or [""])[0],
                              "stdout": report.stdout, "text": str(report)}}
    print("RESULT " + json.dumps(out))
'''


def _run_hash_script(tmp_path: Path, words: list[str], hash_seed: str | None) -> dict:
    script = tmp_path / "hash_order.py"
    script.write_text(HASH_ORDER.format(words=words))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = hash_seed
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, timeout=180, env=env,
                          capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(lines[-1][len("RESULT "):])


WORDS = [f"w{i}" for i in range(12)]  # 12 strings: two hash seeds order them alike by no chance


def test_hash_order_env_is_unseeded_naming_hash_randomisation_in_every_parent(tmp_path):
    # three parents, each with its own random hash secret: before issue 20 the verdict was
    # whatever this process's secret and the fresh interpreter's random one happened to give
    verdicts = [_run_hash_script(tmp_path, WORDS, None) for _ in range(3)]
    for result in verdicts:
        order = result["SetOrder"]
        assert order["status"] == "unseeded", order["text"]
        assert "hash randomisation" in order["first"], order["text"]
        assert "PYTHONHASHSEED=1" in order["first"] and "PYTHONHASHSEED=2" in order["first"]
        assert order["seeds"] == {"here": None, "rebuild": 1, "control": 2}
        assert result["Steady"]["status"] == "identical", result["Steady"]["text"]


def test_a_parent_with_a_fixed_hash_seed_rebuilds_under_it_and_controls_under_the_next(tmp_path):
    result = _run_hash_script(tmp_path, WORDS, "7")
    order = result["SetOrder"]
    assert order["seeds"] == {"here": 7, "rebuild": 7, "control": 8}, order["text"]
    assert "PYTHONHASHSEED=7" in order["stdout"]  # what the rebuild itself saw
    # here and the rebuild hash alike (seed 7); the control (seed 8) shows the dependence
    assert order["status"] == "unseeded", order["text"]
    assert "PYTHONHASHSEED=7 and PYTHONHASHSEED=8" in order["first"], order["text"]
    assert result["Steady"]["status"] == "identical", result["Steady"]["text"]
    assert "hash seeds: here 7, rebuild 7, control 8" in result["Steady"]["text"]


# -- one deadline, this process included --------------------------------------------------------


@pytest.fixture
def proofenvs_importable(monkeypatch):
    """Children import ``proofenvs`` (tests/tools/verify) by name, as a package installed there."""
    from specpack._core._carry import importable

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([HERE, os.environ["PYTHONPATH"]]))
    importable._installation_paths.cache_clear()
    importable._fresh_importable_cached.cache_clear()
    yield
    importable._installation_paths.cache_clear()
    importable._fresh_importable_cached.cache_clear()


@pytest.mark.usefixtures("proofenvs_importable")
def test_recorded_space_whose_repr_and_pickling_hang_here_run_in_no_parent_within_the_deadline(
        tmp_path, monkeypatch):
    pack = specpack.capture(SpySpaces())  # a live env: its spaces are recorded in the pack
    assert pack.surface is not None
    log = tmp_path / "spy.log"
    monkeypatch.setenv("SPY_LOG", str(log))
    monkeypatch.setenv("SPY_HANG_PID", str(os.getpid()))  # the space hangs only in this process
    report = specpack.verify(pack, steps=5, timeout=60)  # generous: this verify must pass under load
    # before issue 20 the parent pickled the pack and described its recorded spaces itself:
    # 20 s each, past the deadline (the pids below say who ran the space's code)
    pids = {int(p) for p in log.read_text().split()}
    assert pids and os.getpid() not in pids, "the parent ran the space's code"
    assert report.status == "identical", str(report)  # described in the child, compared here


@pytest.mark.usefixtures("proofenvs_importable")
def test_recorded_space_that_differs_from_the_rebuilt_one_is_still_a_finding():
    env = SpySpaces()
    pack = specpack.capture(env)
    surface = pack.surface
    changed = type(surface)(gymnasium.spaces.Box(-2.0, 2.0, (2,), np.float64),
                            surface.action_space, surface.metadata, surface.render_mode)
    report = specpack.verify(pack.evolve(surface=changed), steps=3, timeout=60)
    assert report.status == "not_identical", str(report)
    assert "observation_space recorded in the pack differs" in report.differences[0]


class Sleeps(gymnasium.Env):
    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        time.sleep(3600)  # until killed: a verify that returns was ended by its deadline
        return 0, {}

    def step(self, action):
        return 0, 0.0, False, False, {}


def test_env_that_sleeps_for_an_hour_gives_a_timeout_at_the_deadline():
    start = time.monotonic()
    report = specpack.verify(specpack.capture(Sleeps), steps=3, timeout=5)
    assert report.status == "timeout" and not report, str(report)
    assert time.monotonic() - start > 4.5  # not before it


# -- a truthy report compared both rollouts --------------------------------------------------


def test_an_identical_report_without_a_compared_rollout_cannot_be_made():
    fields = dict(differences=[], where="subprocess", steps=5, seed=0, elapsed=0.1)
    with pytest.raises(ValueError, match="rollout_compared"):
        VerifyReport(status="identical", identical=True, rollout_compared=False, **fields)
    report = VerifyReport(status="not_compared", identical=False, rollout_compared=False,
                          **fields)
    assert not report and "rollout NOT compared" in str(report)


def test_rollout_that_raised_on_both_sides_stays_falsy():
    class Raises(gymnasium.Env):
        observation_space = gymnasium.spaces.Discrete(2)
        action_space = gymnasium.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return 0, {}

        def step(self, action):
            raise RuntimeError("always")

    report = specpack.verify(specpack.capture(Raises), steps=3, timeout=60)
    assert not report and report.status == "rollout_error", str(report)


# -- info keys left out ------------------------------------------------------------------------


class Clocked(gymnasium.Env):
    """``info["t"]`` is a wall-clock time (it varies by nature); ``info["n"]`` does not."""

    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {"t": time.time(), "n": 1}

    def step(self, action):
        return 0, 0.0, False, False, {"t": time.time(), "n": 1}


def test_info_keys_left_out_are_named_in_the_report():
    report = specpack.verify(specpack.capture(Clocked), steps=3, timeout=60, ignore_info=["t", "t"])
    assert report, str(report)
    assert report.ignore_info == ["t"]
    assert "info keys left out: 't'" in str(report)
    assert report.to_dict()["ignore_info"] == ["t"]


@pytest.mark.parametrize("bad, match", [
    ("t", "not one string: use ignore_info=\\['t'\\]"),
    (3, "must be a list of info keys"),
    (["t", 3], "holds 3 \\(int\\)"),
    ([b"t"], "holds b't' \\(bytes\\)"),
])
def test_ignore_info_that_is_not_a_list_of_strings_is_refused_naming_it(bad, match):
    with pytest.raises(specpack.SpecPackError, match=match):
        specpack.verify(specpack.capture("CartPole-v1"), steps=1, ignore_info=bad)


def test_cli_verify_ignore_info_is_repeatable_and_in_the_json(tmp_path):
    path = tmp_path / "cartpole.pack"
    specpack.dump(specpack.capture("CartPole-v1"), path)
    proc = run_python(["-m", "specpack", "verify", str(path), "--steps", "5", "--json",
                       "--ignore-info", "t", "--ignore-info", "episode"], cwd=tmp_path,
                      timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["ignore_info"] == ["t", "episode"]
    assert doc["hash_seeds"]["control"] is not None


ONE_CPU = '''
import json, os
import specpack

if __name__ == "__main__":
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    report = specpack.verify(specpack.capture("CartPole-v1"), steps=5, timeout=60)
    print("RESULT " + json.dumps({"status": report.status, "seeds": report.hash_seeds,
                                  "notes": report.notes}))
'''


def test_a_process_with_one_cpu_runs_no_hash_control_and_the_report_notes_it(tmp_path):
    script = tmp_path / "one_cpu.py"
    script.write_text(ONE_CPU)
    proc = run_python([str(script)], cwd=tmp_path, timeout=120)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["status"] == "identical"
    assert "control" not in result["seeds"] and result["seeds"]["rebuild"] is not None
    assert any("no hash control ran" in n for n in result["notes"]), result["notes"]


@pytest.mark.usefixtures("proofenvs_importable")
def test_a_value_with_no_exact_encoding_makes_the_verdict_not_compared():
    pack = specpack.capture(OpaqueObservation, disable_env_checker=True)
    report = specpack.verify(pack, steps=3, timeout=120)
    assert report.status == "not_compared" and not report, report
    assert not report.rollout_compared
    assert "no exact encoding" in report.notes[0], report.notes
    assert "_thread.lock" in report.notes[0], report.notes
