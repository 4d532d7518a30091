"""The summary table at a given width: nothing cut, everything wrapped, output under its env.

Built from findings directly (what the scheduler returns); the same table as a user sees it,
from a real audit on a pipe and on a terminal, is in ``test_audit_screen.py``.
"""

from __future__ import annotations

import io
import json

import pytest

from specpack._tools._audit.output import sections
from specpack._tools._audit.report import AuditReport, Finding, summary
from specpack._tools._cli.output import AuditProgress

LONG = ("step 12: observation differs: here [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7] (float64) vs "
        "fresh interpreter [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8] (float64), which is where the "
        "two runs first part ways; THE-END")


def report(envs: list[Finding], wrappers: list[Finding] | None = None,
           output: str = "") -> AuditReport:
    return AuditReport(envs=envs, wrappers=wrappers or [], elapsed=1.0, where="subprocess",
                       steps=50, seed=0, jobs=2, timeout=60.0, output=output)


def joined(lines: list[str]) -> str:
    return " ".join(ln.strip() for ln in lines)


@pytest.mark.parametrize("width", [50, 57, 80, 131])
def test_every_reason_difference_note_and_argument_wraps_whole_within_the_width(
    width: int,
) -> None:
    rep = report(
        [Finding("env", "pkg/" + "VeryLong" * 7 + "-v0", "not_identical", reason=LONG,
                 differences=(LONG, "second: " + LONG)),
         Finding("env", "pkg/Noted-v0", "identical", notes=("note: " + LONG,)),
         Finding("env", "pkg/Flaky-v0", "not_reproducible", reason="flaky: " + LONG)],
        [Finding("wrapper", "pkg.wrappers.Wide", "not_identical", reason="wrapper: " + LONG,
                 args={f"argument_{i}": "'value'" for i in range(8)})],
    )
    lines = summary(rep, width=width).splitlines()
    assert max(map(len, lines)) <= width, [ln for ln in lines if len(ln) > width]
    text = joined(lines)
    for whole in (LONG, "second: " + LONG, "note: " + LONG, "flaky: " + LONG,
                  "wrapper: " + LONG, ", ".join(f"argument_{i}='value'" for i in range(8))):
        assert whole in text
    assert "..." not in text and "…" not in text


def test_a_reason_continues_indented_under_its_row() -> None:
    rep = report([Finding("env", "A-v0", "rollout_error", reason=LONG, differences=(LONG,))])
    lines = summary(rep, width=60).splitlines()
    row = next(i for i, ln in enumerate(lines) if ln.startswith("  A-v0"))
    assert lines[row].startswith("  A-v0  rollout_error      step 12: observation")
    assert lines[row + 1].startswith("      ") and not lines[row + 1].startswith("       ")
    # a short reason stays on its row, as before
    short = summary(report([Finding("env", "B-v0", "timeout", reason="slow")]), width=60)
    assert "  B-v0  timeout            slow" in short.splitlines()


def test_verbose_shows_each_envs_output_under_it_escaped_and_split_to_fit() -> None:
    said = sections([("reference (here)", "hello\x1b[31m red\n" + "x" * 100 + "\n", ""),
                     ("rebuild (fresh interpreter)", "", "warned\tonce\n")])
    rep = report([Finding("env", "A-v0", "identical", output=said),
                  Finding("env", "B-v0", "identical")],
                 output=sections([("importing and selecting (here)", "imported\n", "")]))
    quiet = summary(rep, width=60)
    assert "hello" not in quiet and "imported" not in quiet
    assert ("(1 of the 2 envs printed something, and so did the audit's process outside "
            "them: see report.summary(verbose=True), or each finding's .output)") in joined(
        quiet.splitlines())
    lines = rep.summary(verbose=True, width=60).splitlines()
    assert max(map(len, lines)) <= 60
    start = lines.index("  A-v0 (identical):")
    assert lines[start + 1:start + 7] == [
        "    [reference (here), stdout]",
        "      hello\\x1b[31m red",
        "      " + "x" * 54,
        "      " + "x" * 46,
        "    [rebuild (fresh interpreter), stderr]",
        "      warned  once",
    ]
    assert "  B-v0 (identical):" not in lines
    assert "    imported" in lines


def test_a_report_with_no_output_says_nothing_about_output() -> None:
    text = summary(report([Finding("env", "A-v0", "identical")]), verbose=True)
    assert "printed" not in text and text.endswith("portable")


def test_json_has_output_per_finding_and_of_the_report() -> None:
    rep = report([Finding("env", "A-v0", "identical", output="[x, stdout]\nhi\n")],
                 [Finding("wrapper", "W", "identical")], output="[y, stderr]\nho\n")
    doc = json.loads(rep.to_json())
    assert doc["schema"] == "specpack.audit/5" and doc["output"] == "[y, stderr]\nho\n"
    assert doc["envs"][0]["output"] == "[x, stdout]\nhi\n" and doc["wrappers"][0]["output"] == ""


def test_the_progress_bar_fits_the_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    stream = io.StringIO()
    show = AuditProgress(stream)
    findings = [Finding("env", "pkg/" + "Long" * 20 + "-v0", "identical"),
                Finding("env", "A-v0", "timeout")]
    for i, f in enumerate(findings, start=1):
        show(f, i, len(findings))
    frames = [f for f in stream.getvalue().rstrip("\n").split("\r") if f]
    assert frames and all(len(f) <= 59 for f in frames), frames
    assert frames[-1].startswith("[" + "#" * 10 + "] 2/2  1 not portable") and "A-v0" in frames[-1]
