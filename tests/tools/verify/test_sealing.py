"""Where two sealed rollouts part, and how a check report says it (data only: no process)."""

from __future__ import annotations

from specpack._tools._verify.report import CheckReport, versions_text
from specpack._tools._verify.sealing import NO_DIGEST, first_divergence

A, B = "a" * 64, "b" * 64
_STEP = ("step 1", A, A, A, A, A, A)


def test_first_divergence_names_the_step_and_field_of_the_first_digest_that_differs() -> None:
    sealed = [("reset 0", A, A), _STEP, ("step 2", A, A, A, A, A, A)]
    assert first_divergence(sealed, list(sealed)) is None
    changed = [sealed[0], _STEP, ("step 2", A, A, B, A, A, B)]
    step, field, line = first_divergence(sealed, changed) or (0, "", "")
    assert (step, field) == (2, "reward") and line == "step 2: reward differs from the seal"


def test_a_reset_field_a_different_event_and_a_shorter_rollout_are_named_as_such() -> None:
    sealed = [("reset 0", A, A), _STEP, ("reset 1", A, A)]
    found = first_divergence(sealed, [("reset 0", A, B)])
    assert found is not None and found[:2] == (0, "reset info")
    other = [("reset 0", A, A), _STEP, ("step 2", A, A, A, A, A, A)]
    step, field, line = first_divergence(sealed, other) or (0, "", "")
    assert (step, field) == (1, "event") and "the seal did reset but the rebuild did step" in line
    step, field, line = first_divergence(sealed, sealed[:2]) or (0, "", "")
    assert (step, field) == (1, "length") and "the seal has 3 events, the rebuild 2" in line


def test_a_field_without_a_digest_never_matches_even_itself() -> None:
    sealed = [("reset 0", NO_DIGEST, A)]
    found = first_divergence(sealed, sealed)
    assert found is not None and found[:2] == (0, "reset observation")


def test_versions_text_names_python_backend_numpy_and_every_other_version_that_differs() -> None:
    sealed = {"python": "3.11.7", "gymnasium": "1.4.0", "numpy": "2.3.1", "mujoco": "3.1.0",
              "cloudpickle": "3.1", "PYTHONHASHSEED": "1"}
    same = versions_text(sealed, dict(sealed))
    assert same == "sealed and checked under python 3.11.7, gymnasium 1.4.0, numpy 2.3.1"
    text = versions_text(sealed, {**sealed, "gymnasium": "1.0.0", "mujoco": "3.2.0"})
    assert text == ("sealed under python 3.11.7, gymnasium 1.4.0, numpy 2.3.1, mujoco 3.1.0; "
                    "checked under python 3.11.7, gymnasium 1.0.0, numpy 2.3.1, mujoco 3.2.0")
    checked = {k: v for k, v in sealed.items() if k != "PYTHONHASHSEED"}
    assert "PYTHONHASHSEED" not in versions_text(sealed, checked)  # the checker has none


def test_check_report_is_truthy_only_when_identical_and_its_text_stays_on_one_screen() -> None:
    ok = CheckReport("identical", [], "subprocess", 10, 0, rollout_compared=True)
    assert ok and "identical" in str(ok)
    trace = "rebuild failed: OSError\n" + "\n".join(f"line {i}" for i in range(200))
    bad = CheckReport("rebuild_error", [trace], "here", 10, 0)
    assert not bad
    text = str(bad)
    assert len(text.splitlines()) < 20 and "(188 more lines)" in text, text
    assert "this process" in text
