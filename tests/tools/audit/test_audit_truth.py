"""The audit's verdict on each ``truthpkg`` case (issue #16): one fixture env per behaviour
found in a real package (highway-env, gymnasium-robotics, Meta-World), each checked without
specpack by ``test_truthpkg_fixtures.py``.

The audits run as a user runs them: ``python -m specpack audit ... --json`` in a fresh
interpreter, with ``tests/fixtures`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _helpers import run_python
from truthpkg import FLAKY_STEP, RESET_MESSAGE, STEP_MESSAGE

from specpack.testing import assert_portable

pytestmark = pytest.mark.integration


def audit_json(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """(exit code, JSON report, stderr) of ``specpack audit ARGS --import truthpkg --json``."""
    proc = run_python(
        ["-m", "specpack", "audit", *args, "--import", "truthpkg", "--json"], cwd=tmp_path,
        timeout=300,
    )
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(
            f"no JSON (exit {proc.returncode})\nstdout:\n{proc.stdout}\nstderr:\n"
            f"{proc.stderr[-4000:]}"
        ) from None
    return proc.returncode, doc, proc.stderr


@pytest.fixture(scope="module")
def truth_doc(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    """One audit of every truthpkg id (2 workers per side, 30 steps): exit code, JSON."""
    code, doc, _ = audit_json(tmp_path_factory.mktemp("truth"), "truthpkg/", "--steps", "30",
                              "--jobs", "2")
    return code, doc


@pytest.fixture(scope="module")
def truth(truth_doc: tuple[int, dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    """The same audit: exit code, findings by name."""
    code, doc = truth_doc
    return code, {f["name"]: f for f in doc["envs"]}


def test_every_truthpkg_id_gets_its_verdict(truth: tuple[int, dict[str, Any]]) -> None:
    import truthpkg

    code, envs = truth
    expected = dict(truthpkg.IDS)
    expected["truthpkg/VecOnly-v0"] = "identical"  # audited through make_vec on both sides
    assert {k: f["status"] for k, f in envs.items()} == expected
    assert code == 1  # ResetRaises-v0 and StepRaises-v0 fail it (GapSparse-v0 is a warning)


def test_new_action_space_on_every_reset_is_identical(truth: tuple[int, dict[str, Any]]) -> None:
    # The old protocol seeded the env's action space after the first reset, so a space
    # replaced on reset sampled unseeded actions: 28/31 highway-env envs "not identical".
    f = truth[1]["truthpkg/NewActionSpace-v0"]
    assert f["status"] == "identical" and f["differences"] == [] and f["step"] is None


def test_env_not_reproducible_in_one_process_names_the_first_step(
    truth: tuple[int, dict[str, Any]],
) -> None:
    f = truth[1]["truthpkg/Flaky-v0"]
    assert f["status"] == "not_reproducible"
    assert f["step"] == FLAKY_STEP
    assert f"step {FLAKY_STEP}: reward differs" in f["reason"]
    assert "two builds in this process" in f["reason"]


def test_ezpickle_gap_at_the_default_is_a_note_on_an_identical_env(
    truth: tuple[int, dict[str, Any]],
) -> None:
    f = truth[1]["truthpkg/GapDefault-v0"]
    assert f["status"] == "identical" and f["differences"] == []
    [note] = [n for n in f["notes"] if "EzPickle" in n]
    assert "sparse" in note and "sparse=False, its default" in note


def test_ezpickle_gap_that_changes_the_env_names_argument_values_and_step(
    truth: tuple[int, dict[str, Any]],
) -> None:
    f = truth[1]["truthpkg/GapSparse-v0"]
    assert f["status"] == "ezpickle_gap"
    reason = f["reason"]
    assert "truthpkg.envs.SparseRewardEnv" in reason
    assert "sparse=True" in reason and "sparse=False" in reason
    assert "step 1: reward differs" in reason and f["step"] == 1


def test_missing_mujoco_py_is_named_in_both_message_forms(
    truth: tuple[int, dict[str, Any]],
) -> None:
    for env_id in ("truthpkg/NeedsDep-v0", "truthpkg/NeedsDepArgs-v0"):
        f = truth[1][env_id]
        assert (f["status"], f["package"]) == ("missing_dependency", "mujoco_py"), f


def test_lambda_entry_points_travel_by_registry_reference(
    truth: tuple[int, dict[str, Any]],
) -> None:
    ok, needs = truth[1]["truthpkg/Lambda-v0"], truth[1]["truthpkg/LambdaNeedsArg-v0"]
    assert ok["status"] == "identical"
    assert needs["status"] == "needs_arguments"
    assert "'task'" in needs["reason"] and "TypeError" in needs["reason"]


def test_a_needs_arguments_reason_says_how_to_check_in_python_and_on_the_command_line(
    truth: tuple[int, dict[str, Any]],
) -> None:
    # The reason is read in the CLI's table and in Python's report alike: it says both.
    reason = truth[1]["truthpkg/LambdaNeedsArg-v0"]["reason"]
    assert "in Python, specpack.testing.assert_portable(specpack.capture(" in reason
    assert ("on the command line, specpack capture truthpkg/LambdaNeedsArg-v0 --kwarg KEY=JSON "
            "-o FILE, then specpack verify FILE") in reason


def test_vector_only_id_is_audited_through_make_vec(truth: tuple[int, dict[str, Any]]) -> None:
    f = truth[1]["truthpkg/VecOnly-v0"]
    assert f["status"] == "identical"
    assert any("vector-only" in n and "make_vec" in n for n in f["notes"])


def test_a_vector_creator_with_its_own_count_is_built_with_it(
        truth: tuple[int, dict[str, Any]]) -> None:
    """Meta-World's ML10-test refuses num_envs=2 ("Invalid division of subtasks"): asking it
    for the audit's count reported the audit's choice as the env's fault (capture_error)."""
    f = truth[1]["truthpkg/VecOwnCount-v0"]
    assert f["status"] == "identical", f
    assert any("its own num_envs" in n for n in f["notes"])


def test_a_vector_creator_missing_a_required_argument_needs_arguments(
        truth: tuple[int, dict[str, Any]]) -> None:
    f = truth[1]["truthpkg/VecNeedsName-v0"]
    assert f["status"] == "needs_arguments", f
    assert "'env_name'" in f["reason"]


def test_an_env_reading_another_envs_leftovers_is_judged_in_clean_workers(
    tmp_path: Path,
) -> None:
    # One worker per side: the reader's rebuild runs in the worker that just rebuilt the
    # writer, which left a class attribute behind. The audit runs it again in a worker that
    # ran nothing else, and says so.
    ids = ["truthpkg/ClassStateWriter-v0", "truthpkg/ClassStateReader-v0"]
    code, doc, _ = audit_json(tmp_path, *ids, "--steps", "20", "--jobs", "1")
    envs = {f["name"]: f for f in doc["envs"]}
    assert [envs[i]["status"] for i in ids] == ["identical", "identical"]
    [note] = envs["truthpkg/ClassStateReader-v0"]["notes"]
    assert "a first rebuild in a worker that had rebuilt other envs before" in note
    assert "not_identical" in note and "step 1: observation differs" in note
    assert code == 0


def test_not_reproducible_and_needs_arguments_do_not_fail_the_audit(tmp_path: Path) -> None:
    ids = ["truthpkg/Flaky-v0", "truthpkg/LambdaNeedsArg-v0", "truthpkg/NewActionSpace-v0"]
    proc = run_python(
        ["-m", "specpack", "audit", *ids, "--import", "truthpkg", "--steps", "20"],
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    out = proc.stdout
    assert "not reproducible in one process" in out and "truthpkg/Flaky-v0" in out
    assert "need arguments" in out and "truthpkg/LambdaNeedsArg-v0" in out
    assert out.rstrip().endswith("portable")


def test_references_built_here_give_the_same_verdicts(tmp_path: Path) -> None:
    ids = ["truthpkg/NewActionSpace-v0", "truthpkg/Flaky-v0", "truthpkg/GapSparse-v0",
           "truthpkg/Lambda-v0"]
    code, doc, _ = audit_json(tmp_path, *ids, "--steps", "20", "--reference", "here",
                              "--jobs", "1")
    assert [f["status"] for f in doc["envs"]] == [
        "identical", "not_reproducible", "ezpickle_gap", "identical",
    ]
    assert code == 0  # an EzPickle gap is a warning


# -- rollouts that raise, specs that say nondeterministic (issue #20) ---------------------------


def test_an_env_whose_reset_raises_on_every_build_is_a_rollout_error_not_identical(
    truth: tuple[int, dict[str, Any]],
) -> None:
    # 0.2.0 called it identical: both sides raised alike, and nothing was compared.
    f = truth[1]["truthpkg/ResetRaises-v0"]
    assert f["status"] == "rollout_error", f
    assert f"RuntimeError: {RESET_MESSAGE} in reset() at step 0" in f["reason"]
    assert "on both sides alike" in f["reason"] and "nothing after it was compared" in f["reason"]
    assert f["step"] == 0 and f["differences"] == [f["reason"]]


def test_an_env_whose_first_step_raises_is_a_rollout_error_at_that_step(
    truth: tuple[int, dict[str, Any]],
) -> None:
    f = truth[1]["truthpkg/StepRaises-v0"]
    assert f["status"] == "rollout_error", f
    assert f"ValueError: {STEP_MESSAGE} in step() at step 1" in f["reason"]
    assert f["step"] == 1


def test_a_rollout_that_raises_a_missing_dependency_names_the_package(
    truth: tuple[int, dict[str, Any]],
) -> None:
    # minigrid's MiniGrid-WFC-* envs without imageio: the audit of 0.2.0 called them identical
    f = truth[1]["truthpkg/RolloutNeedsDep-v0"]
    assert (f["status"], f["package"]) == ("missing_dependency", "truthpkg[maps]"), f
    assert "DependencyNotInstalled" in f["reason"] and "reset() at step 0" in f["reason"]
    assert f["step"] == 0


def test_a_nondeterministic_spec_is_not_compared_and_not_counted_identical(
    truth_doc: tuple[int, dict[str, Any]],
) -> None:
    import truthpkg

    doc = truth_doc[1]
    f = next(f for f in doc["envs"] if f["name"] == "truthpkg/Nondeterministic-v0")
    assert f["status"] == "not_compared", f
    assert "nondeterministic=True" in f["reason"] and "not compared" in f["reason"]
    counts = doc["counts"]["envs"]
    expected = dict(truthpkg.IDS)
    expected["truthpkg/VecOnly-v0"] = "identical"
    assert counts["identical"] == list(expected.values()).count("identical")
    assert counts["not_compared"] == 1 and counts["rollout_error"] == 2
    assert doc["schema"] == "specpack.audit/5"


def test_a_rollout_error_fails_the_audit_and_not_compared_does_not(tmp_path: Path) -> None:
    kept = ["truthpkg/Nondeterministic-v0", "truthpkg/RolloutNeedsDep-v0"]
    proc = run_python(["-m", "specpack", "audit", *kept, "--import", "truthpkg", "--steps", "5"],
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "rollout not compared: the spec says nondeterministic=True" in proc.stdout
    assert proc.stdout.rstrip().endswith("portable")
    failed = run_python(["-m", "specpack", "audit", "truthpkg/ResetRaises-v0", "--import",
                         "truthpkg", "--steps", "5"], cwd=tmp_path)
    assert failed.returncode == 1, failed.stdout + failed.stderr[-3000:]
    assert "rollout_error" in failed.stdout and "NOT portable" in failed.stdout


@pytest.mark.parametrize(
    ("env_id", "status"),
    [("truthpkg/ResetRaises-v0", "rollout_error"),
     ("truthpkg/StepRaises-v0", "rollout_error"),
     ("truthpkg/Nondeterministic-v0", "not_compared")],
)
def test_assert_portable_fails_for_an_env_that_never_ran_or_was_not_compared(
    env_id: str, status: str
) -> None:
    with pytest.raises(AssertionError, match=rf"{env_id} is not portable \({status}\)"):
        assert_portable(env_id, steps=5)
