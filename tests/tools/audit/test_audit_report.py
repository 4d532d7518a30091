"""The audit's report as a user reads it: the summary table, ``--json``'s dict, lookups.

The report is built directly from findings (what the scheduler returns), so every section of
the table is exercised without running envs.
"""

from __future__ import annotations

import json

import pytest

from specpack._tools._audit.report import SCHEMA, AuditReport, Finding, clip, summary


def report(envs: list[Finding], wrappers: list[Finding] | None = None, jobs: int = 2) -> AuditReport:
    return AuditReport(envs=envs, wrappers=wrappers or [], elapsed=1.25, where="spawn",
                       steps=50, seed=7, jobs=jobs, timeout=60.0, versions={"gymnasium": "1"})


def test_a_finding_prints_as_name_status_and_reason() -> None:
    assert str(Finding("env", "A-v0", "identical")) == "A-v0: identical"
    assert str(Finding("env", "A-v0", "timeout", reason="slow")) == "A-v0: timeout: slow"


def test_a_report_finds_a_finding_by_name_and_names_a_missing_one() -> None:
    rep = report([Finding("env", "A-v0", "identical")],
                 [Finding("wrapper", "W", "identical", base_env="A-v0")])
    assert rep["W"].kind == "wrapper" and rep["A-v0"].kind == "env"
    with pytest.raises(KeyError, match="B-v0"):
        rep["B-v0"]


def test_the_table_lists_failures_with_their_extra_differences_capped_at_five() -> None:
    diffs = tuple(f"step {i}: reward differs" for i in range(8))
    rep = report([
        Finding("env", "Bad-v0", "not_identical", reason=diffs[0], differences=diffs, step=0),
        Finding("env", "Good-v0", "identical"),
    ])
    text = summary(rep)
    lines = text.splitlines()
    assert lines[0] == (
        "specpack audit: 2 envs in 1.2 s (2 spawn workers, 50 steps, seed 7)"
    )
    assert "not portable (1):" in lines
    row = next(ln for ln in lines if ln.startswith("  Bad-v0"))
    assert "not_identical" in row and "step 0: reward differs" in row
    # differences 1..5 listed, then how many more there are
    for i in range(1, 6):
        assert f"      - step {i}: reward differs" in lines
    assert "      - step 6: reward differs" not in lines
    assert "        ... and 2 more (see --json)" in lines
    assert lines[-1] == "NOT portable: 1 finding(s) fail the audit"
    assert str(rep) == text and not rep


def test_the_table_has_sections_for_what_does_not_fail_the_audit() -> None:
    noted = [Finding("env", f"Noted{i}-v0", "identical", notes=(f"note {i}",)) for i in range(12)]
    missing = [Finding("env", f"Box{i}-v0", "missing_dependency", package="box2d")
               for i in range(5)]
    rep = report([
        Finding("env", "Rand-v0", "not_reproducible", reason="two builds differ at step 3"),
        Finding("env", "Args-v0", "needs_arguments", reason="its registration gives no 'x'"),
        Finding("env", "Mj-v0", "missing_dependency", package=None),
        *noted,
        *missing,
    ], jobs=1)
    text = summary(rep, width=100)
    assert "(1 spawn worker, 50 steps, seed 7)" in text.splitlines()[0]
    assert ("not reproducible in one process (a property of the env, not a failure of the "
            "audit) (1):") in text
    assert "two builds differ at step 3" in text
    assert "need arguments to be built (not a failure of the audit) (1):" in text
    # at most ten noted envs are shown, then a count of the rest
    assert "identical, with notes (10):" in text
    assert "note 9" in text and "note 10" not in text
    assert "  ... and 2 more (see --json)" in text
    assert "missing dependencies (skipped, 6 envs):" in text
    assert "  box2d: Box0-v0, Box1-v0, Box2-v0, Box3-v0, ... (5 envs)" in text
    assert "  unknown: Mj-v0" in text
    assert text.splitlines()[-1] == "portable" and rep


def test_the_wrapper_table_marks_faithful_wrappers_and_explains_the_others() -> None:
    rep = report(
        [Finding("env", "A-v0", "identical")],
        [
            Finding("wrapper", "gymnasium.wrappers.ClipReward", "identical", base_env="A-v0",
                    args={"min_reward": "-1.0"}),
            Finding("wrapper", "mypkg.Broken", "rebuild_error", reason="TypeError in worker",
                    differences=("TypeError in worker", "and this"), base_env="A-v0"),
            Finding("wrapper", "mypkg.NoBuild", "skipped", reason="needs a Dict space"),
        ],
    )
    lines = summary(rep).splitlines()
    assert lines[0].startswith("specpack audit: 1 env and 3 wrappers in 1.2 s")
    assert ("wrappers (arguments given; '*' marks a wrapper that records them faithfully):"
            in lines)
    clip_row = next(ln for ln in lines if "ClipReward" in ln)
    assert clip_row.startswith(" *gymnasium.wrappers.ClipReward") and "min_reward=-1.0" in clip_row
    broken = lines.index(next(ln for ln in lines if "mypkg.Broken" in ln))
    assert lines[broken].startswith("  mypkg.Broken") and lines[broken].rstrip().endswith("-")
    assert lines[broken + 1] == "      - TypeError in worker"
    assert lines[broken + 2] == "      - and this"
    assert "      - needs a Dict space" in lines
    assert "  (identical 1, rebuild_error 1, skipped 1)" in lines
    assert lines[-1] == "NOT portable: 1 finding(s) fail the audit"


def test_a_report_of_only_wrappers_has_no_env_table() -> None:
    rep = report([], [Finding("wrapper", "W", "identical", args={"k": "1"})])
    text = summary(rep)
    assert text.splitlines()[0].startswith("specpack audit: 0 envs and 1 wrappers")
    assert "status" not in text and text.endswith("portable")


def test_json_report_has_the_schema_counts_and_wrapper_fields() -> None:
    rep = report(
        [Finding("env", "A-v0", "timeout", reason="slow", elapsed=1.234567)],
        [Finding("wrapper", "W", "identical", base_env="A-v0", args={"k": "1"},
                 defaulted={"j": "2"})],
    )
    doc = json.loads(rep.to_json())
    assert doc["schema"] == SCHEMA and doc["portable"] is False
    assert doc["counts"]["envs"]["timeout"] == 1 and "skipped" not in doc["counts"]["envs"]
    assert doc["counts"]["wrappers"]["skipped"] == 0
    env, = doc["envs"]
    assert env["elapsed"] == 1.2346 and "base_env" not in env
    wrapper, = doc["wrappers"]
    assert wrapper["base_env"] == "A-v0"
    assert wrapper["args"] == {"k": "1"} and wrapper["defaulted"] == {"j": "2"}
    assert json.loads(rep.to_json(indent=None)) == doc


def test_clip_puts_text_on_one_line_within_the_width() -> None:
    assert clip("a\n  b\tc", 80) == "a b c"
    assert len(clip("x" * 500, 40)) <= 40
    assert "\x1b" not in clip("red \x1b[31m text", 80)


def test_audit_statuses_are_verifys_verdicts_plus_the_audits_own() -> None:
    from specpack._tools._audit import report as audit_report
    from specpack._tools._verify import report as verify_report

    assert set(verify_report.STATUSES) <= set(audit_report.STATUSES)
    extra = set(audit_report.STATUSES) - set(verify_report.STATUSES)
    own = {"needs_arguments", "capture_error", "missing_dependency", "skipped", "ezpickle_gap"}
    # the hash-order status is verify's once verify has it (see findings.UNSEEDED)
    if audit_report.UNSEEDED not in verify_report.STATUSES:
        own.add(audit_report.UNSEEDED)
    assert extra == own
    for name in ("IDENTICAL", "NOT_IDENTICAL", "NOT_REPRODUCIBLE", "NOT_COMPARED",
                 "ROLLOUT_ERROR", "REBUILD_ERROR", "TIMEOUT"):
        assert getattr(audit_report, name) is getattr(verify_report, name)
