"""A pack's seal: made in a fresh interpreter, checked against a rebuild step by step.

Each scenario seals an env under one setting and checks it under another (an environment
variable the env reads stands for what another machine changes: a library version, a file),
with real fresh interpreters on both sides.
"""

from __future__ import annotations

import dataclasses
import re
import time

import gymnasium
import numpy as np
import pytest
import sealenvs  # noqa: F401 - registers SealCounter-v0 and SealNondeterministic-v0

import specpack
from specpack._core import _typedjson as typedjson
from specpack._core._errors import PackFormatError, SpecPackError
from specpack._tools._seal import CheckReport, Seal, check_seal, make_seal
from specpack._tools._verify.sealing import FIELDS

pytestmark = pytest.mark.integration

_VARS = ("SEALENV_DRIFT_AT", "SEALENV_INT_REWARD_AT", "SEALENV_NEGZERO_AT", "SEALENV_RAISE_AT",
         "SEALENV_HANG_AT", "SEALENV_WIDE", "SEALENV_LOCK_AT", "SEALENV_BROKEN")


@pytest.fixture(autouse=True)
def _plain_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def counter() -> tuple[specpack.SpecPack, Seal]:
    """The Counter env's pack and its seal (40 steps: one episode end and reset inside)."""
    pack = specpack.capture("SealCounter-v0")
    return pack, make_seal(pack, steps=40, seed=3, ignore_info=["clock"], timeout=60)


def _text(report: CheckReport) -> str:
    return str(report)


# -- what a seal holds ------------------------------------------------------------------------


def test_seal_of_cartpole_holds_one_digest_per_field_of_every_event_and_its_versions() -> None:
    pack = specpack.capture("CartPole-v1")
    seal = make_seal(pack, steps=30, seed=0, timeout=60)
    assert (seal.steps, seal.seed, seal.fields) == (30, 0, FIELDS)
    assert seal.digests[0][0] == "reset 0" and len(seal.digests[0]) == 3
    steps = [d for d in seal.digests if d[0].startswith("step")]
    assert [d[0] for d in steps] == [f"step {i}" for i in range(1, 31)]
    assert all(len(d) == 7 and all(re.fullmatch(r"[0-9a-f]{64}", x) for x in d[1:])
               for d in steps)
    assert seal.layers[-1] == "gymnasium.envs.classic_control.cartpole.CartPoleEnv"
    assert re.fullmatch(r"[0-9a-f]{64}", seal.spaces)
    assert seal.made_with["gymnasium"] == gymnasium.__version__
    assert seal.made_with["numpy"] == np.__version__
    assert {"python", "PYTHONHASHSEED"} <= set(seal.made_with)
    assert seal.ignore_info == ()


def test_seal_survives_the_pack_files_typed_json_and_a_malformed_one_is_refused(
        counter: tuple[specpack.SpecPack, Seal]) -> None:
    _, seal = counter
    data = typedjson.decode(typedjson.encode(seal.to_data()))
    assert Seal.from_data(data) == seal
    assert hash(Seal.from_data(data)) == hash(seal)
    for bad in ({**seal.to_data(), "digests": [[1, 2]]}, {**seal.to_data(), "steps": -1},
                {**seal.to_data(), "made_with": {"numpy": 2}}, {**seal.to_data(), "x": 1},
                [seal.to_data()]):
        with pytest.raises(PackFormatError, match="seal"):
            Seal.from_data(bad)


# -- identical ---------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["subprocess", "here"])
def test_check_of_an_unchanged_env_is_identical_in_a_fresh_interpreter_and_here(
        counter: tuple[specpack.SpecPack, Seal], where: str) -> None:
    pack, seal = counter
    report = check_seal(pack, seal, where=where, timeout=60)
    assert report, _text(report)
    assert report.status == "identical" and report.rollout_compared
    assert report.step is None and report.field is None
    assert "sealed and checked under" in _text(report)
    assert "'clock'" in _text(report)  # the ignored info key is named


def test_ignore_info_is_recorded_in_the_seal_and_without_it_the_clock_differs() -> None:
    pack = specpack.capture("SealCounter-v0")
    seal = make_seal(pack, steps=5, timeout=60)  # control: the wall-clock time is sealed
    report = check_seal(pack, seal, timeout=60)
    assert report.status == "not_identical", _text(report)
    assert (report.step, report.field) == (0, "reset info"), _text(report)
    sealed = make_seal(pack, steps=5, timeout=60, ignore_info=["clock"])
    assert sealed.ignore_info == ("clock",)
    assert check_seal(pack, sealed, timeout=60)


# -- not identical: the first step and field --------------------------------------------------


def test_check_names_step_17_observation_when_the_rebuild_drifts_from_step_17(
        counter: tuple[specpack.SpecPack, Seal], monkeypatch: pytest.MonkeyPatch) -> None:
    pack, seal = counter
    monkeypatch.setenv("SEALENV_DRIFT_AT", "17")
    report = check_seal(pack, seal, timeout=60)
    assert not report and report.status == "not_identical", _text(report)
    assert (report.step, report.field) == (17, "observation"), _text(report)
    assert report.differences[0].startswith("step 17: observation differs from the seal ("), \
        _text(report)
    assert f"gymnasium {gymnasium.__version__}" in report.differences[0]
    assert len(report.differences) == 1  # later steps follow from the first: not listed


@pytest.mark.parametrize(("variable", "field"), [("SEALENV_INT_REWARD_AT", "reward"),
                                                  ("SEALENV_NEGZERO_AT", "observation")])
def test_equal_but_not_identical_values_differ_from_the_seal(
        counter: tuple[specpack.SpecPack, Seal], monkeypatch: pytest.MonkeyPatch,
        variable: str, field: str) -> None:
    """``1`` for ``1.0``, ``-0.0`` for ``0.0``: == holds, the bits do not."""
    pack, seal = counter
    monkeypatch.setenv(variable, "3")
    report = check_seal(pack, seal, timeout=60)
    assert (report.status, report.step, report.field) == ("not_identical", 3, field), \
        _text(report)


def test_check_under_other_versions_names_both_in_the_first_difference(
        counter: tuple[specpack.SpecPack, Seal], monkeypatch: pytest.MonkeyPatch) -> None:
    pack, seal = counter
    old = dataclasses.replace(seal, made_with={**seal.made_with, "numpy": "1.26.4"})
    monkeypatch.setenv("SEALENV_DRIFT_AT", "5")
    line = check_seal(pack, old, timeout=60).differences[0]
    assert "sealed under" in line and "numpy 1.26.4; checked under" in line, line
    assert f"numpy {np.__version__})" in line, line


def test_a_seal_whose_digest_of_step_9_was_altered_is_caught_at_step_9(
        counter: tuple[specpack.SpecPack, Seal]) -> None:
    pack, seal = counter
    digests = list(seal.digests)
    i = next(i for i, d in enumerate(digests) if d[0] == "step 9")
    digests[i] = (*digests[i][:5], "0" * 64, digests[i][6])  # truncated
    report = check_seal(pack, dataclasses.replace(seal, digests=tuple(digests)), timeout=60)
    assert (report.step, report.field) == (9, "truncated"), _text(report)


def test_other_spaces_and_a_shorter_seal_are_named(
        counter: tuple[specpack.SpecPack, Seal], monkeypatch: pytest.MonkeyPatch) -> None:
    pack, seal = counter
    monkeypatch.setenv("SEALENV_WIDE", "1")
    report = check_seal(pack, seal, timeout=60)
    assert report.status == "not_identical"
    assert any("spaces" in d for d in report.differences), _text(report)
    monkeypatch.delenv("SEALENV_WIDE")
    short = dataclasses.replace(seal, digests=seal.digests[:-3])
    report = check_seal(pack, short, timeout=60)
    assert report.field == "length" and "rollout length differs" in _text(report), _text(report)


# -- the other verdicts ------------------------------------------------------------------------


def test_a_rollout_that_raises_where_the_seal_did_not_is_a_rollout_error(
        counter: tuple[specpack.SpecPack, Seal], monkeypatch: pytest.MonkeyPatch) -> None:
    pack, seal = counter
    monkeypatch.setenv("SEALENV_RAISE_AT", "12")
    report = check_seal(pack, seal, timeout=60)
    assert report.status == "rollout_error", _text(report)
    assert (report.step, report.field) == (12, "error")
    assert "ZeroDivisionError" in _text(report) and "at step 12" in _text(report)
    assert "the seal's rollout did not" in _text(report)


def test_a_value_with_no_exact_encoding_in_the_rebuild_is_not_compared(
        counter: tuple[specpack.SpecPack, Seal], monkeypatch: pytest.MonkeyPatch) -> None:
    pack, seal = counter
    monkeypatch.setenv("SEALENV_LOCK_AT", "4")
    report = check_seal(pack, seal, timeout=60)
    assert report.status == "not_compared" and not report.rollout_compared, _text(report)
    assert "no exact encoding" in _text(report) and "lock" in _text(report)


def test_a_nondeterministic_spec_is_not_compared_but_its_layers_and_spaces_are(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pack = specpack.capture("SealNondeterministic-v0")
    seal = make_seal(pack, steps=5, timeout=60)
    report = check_seal(pack, seal, timeout=60)
    assert report.status == "not_compared", _text(report)
    assert "nondeterministic=True" in _text(report)
    monkeypatch.setenv("SEALENV_WIDE", "1")
    assert check_seal(pack, seal, timeout=60).status == "not_identical"


def test_a_rebuild_that_hangs_is_killed_at_the_deadline(
        counter: tuple[specpack.SpecPack, Seal], monkeypatch: pytest.MonkeyPatch) -> None:
    pack, seal = counter
    monkeypatch.setenv("SEALENV_HANG_AT", "2")
    start = time.monotonic()
    report = check_seal(pack, seal, timeout=4)  # returns: the hang was killed at the deadline
    assert time.monotonic() - start > 3.5  # not before it
    assert report.status == "timeout" and "4 s" in _text(report), _text(report)


def test_a_pack_that_cannot_be_built_here_is_a_rebuild_error_naming_why(
        counter: tuple[specpack.SpecPack, Seal], monkeypatch: pytest.MonkeyPatch) -> None:
    pack, seal = counter
    monkeypatch.setenv("SEALENV_BROKEN", "1")
    report = check_seal(pack, seal, timeout=60)
    assert report.status == "rebuild_error" and "rebuild failed" in _text(report), _text(report)
    assert "long_ant.xml" in _text(report)
    with pytest.raises(specpack.BuildError, match=r"cannot seal.*long_ant\.xml"):
        make_seal(pack, steps=3, timeout=60)


# -- what cannot be sealed, and bad input -------------------------------------------------------


def test_make_seal_refuses_a_rollout_that_raises_and_values_with_no_exact_encoding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pack = specpack.capture("SealCounter-v0")
    monkeypatch.setenv("SEALENV_RAISE_AT", "6")
    with pytest.raises(SpecPackError, match=r"ZeroDivisionError.*step 6.*steps=5"):
        make_seal(pack, steps=10, timeout=60, ignore_info=["clock"])
    monkeypatch.delenv("SEALENV_RAISE_AT")
    monkeypatch.setenv("SEALENV_LOCK_AT", "2")
    with pytest.raises(SpecPackError, match=r"no exact encoding.*lock"):
        make_seal(pack, steps=5, timeout=60, ignore_info=["clock"])
    assert make_seal(pack, steps=5, timeout=60, ignore_info=["clock", "lock"])


def test_bad_options_are_refused_before_any_process_starts(
        counter: tuple[specpack.SpecPack, Seal]) -> None:
    pack, seal = counter
    for kwargs in ({"steps": -1}, {"seed": 1.5}, {"timeout": 0}, {"ignore_info": "clock"}):
        with pytest.raises(SpecPackError):
            make_seal(pack, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(SpecPackError, match=r"not a Seal.*make_seal"):
        check_seal(pack, seal.to_data())  # type: ignore[arg-type]
    with pytest.raises(SpecPackError, match="where='bogus'"):
        check_seal(pack, seal, where="bogus")


def test_a_sealed_pack_keeps_its_whole_seal_through_pickle() -> None:
    """Every field of the seal, ``ignore_info`` included, survives a pickle of the pack."""
    import pickle

    sealed = specpack.seal(specpack.capture("SealCounter-v0"), steps=5, seed=0,
                           ignore_info=["clock"])
    again = pickle.loads(pickle.dumps(sealed))
    assert again.sealed == sealed.sealed and again.sealed.ignore_info == ("clock",)
    assert specpack.check(again, where="here")


# -- what the fresh build loaded ----------------------------------------------------------------


def test_a_seal_made_before_any_make_records_the_distributions_its_build_loaded() -> None:
    """The rollout runs in a fresh interpreter: the seal names what that build loaded (mujoco
    for an Ant) with its version, whether or not this process ever built the pack, and a check
    reports the same names (no "absent"). (Before, a seal recorded only ``requires``, which
    named no mujoco until a ``make()`` here: this failed.)"""
    import pickle
    from importlib.metadata import version

    pytest.importorskip("mujoco")
    pack = specpack.capture("Ant-v5", max_episode_steps=5)
    sealed = specpack.seal(pack, steps=2, seed=0, timeout=120)
    seal = sealed.sealed
    assert seal is not None and {"mujoco", "gymnasium"} <= set(seal.loaded)
    assert seal.made_with["mujoco"] == version("mujoco")
    assert list(seal.loaded) == sorted(seal.loaded)
    again = pickle.loads(pickle.dumps(sealed))
    assert again.sealed == seal and again.sealed.loaded == seal.loaded
    assert specpack.SpecPack.from_json(sealed.to_json()).sealed == seal
    report = specpack.check(sealed, timeout=120)
    assert report, str(report)
    assert report.checked_with["mujoco"] == version("mujoco")
    assert "absent" not in str(report)


def test_a_seal_without_loaded_distributions_still_reads_and_writes_as_before(
        counter: tuple[specpack.SpecPack, Seal]) -> None:
    _, seal = counter
    old = {k: v for k, v in seal.to_data().items() if k != "loaded"}  # a seal of 0.3.0.dev0
    read = Seal.from_data(old)
    assert read.loaded == () and "loaded" not in read.to_data()
    assert dataclasses.replace(read, loaded=("numpy",)).to_data()["loaded"] == ("numpy",)
    with pytest.raises(PackFormatError, match="seal"):
        Seal.from_data({**old, "loaded": [1]})


# -- the one way: specpack.seal and specpack.check; the pack's methods deprecated -----------


def test_seal_returns_a_sealed_copy_and_check_compares_a_rebuild_with_it(
        counter: tuple[specpack.SpecPack, Seal]) -> None:
    pack, seal = counter
    sealed = specpack.seal(pack, seal.steps, seal.seed, ignore_info=["clock"], timeout=60)
    assert sealed.sealed == seal and sealed.fingerprint == pack.fingerprint
    assert pack.sealed is None  # the pack given is unchanged
    report = specpack.check(sealed, where="here")
    assert isinstance(report, CheckReport) and report, str(report)


def test_seal_and_check_refuse_what_is_not_a_pack_naming_capture() -> None:
    for function in (specpack.seal, specpack.check):
        with pytest.raises(specpack.ArgumentTypeError,
                           match=rf"^specpack\.{function.__name__} takes a SpecPack, got "
                                 rf"'SealCounter-v0'; capture it first: specpack\."
                                 rf"{function.__name__}\(specpack\.capture\('SealCounter-v0'\)\)"):
            function("SealCounter-v0")  # type: ignore[arg-type]


def test_pack_seal_is_deprecated_and_returns_what_specpack_seal_returns(
        counter: tuple[specpack.SpecPack, Seal]) -> None:
    pack, seal = counter
    with pytest.warns(DeprecationWarning, match=re.escape(
            "SpecPack.seal() is deprecated and stops working in specpack 0.4; use "
            "specpack.seal(pack, ...)")) as warned:
        sealed = pack.seal(seal.steps, seal.seed, ignore_info=["clock"], timeout=60)
    assert warned[0].filename == __file__  # the caller's line
    other = specpack.seal(pack, seal.steps, seal.seed, ignore_info=["clock"], timeout=60)
    assert sealed == other and sealed.sealed == other.sealed == seal


def test_pack_check_is_deprecated_and_returns_what_specpack_check_returns(
        counter: tuple[specpack.SpecPack, Seal]) -> None:
    pack, seal = counter
    sealed = pack.evolve(sealed=seal)
    with pytest.warns(DeprecationWarning, match=re.escape(
            "SpecPack.check() is deprecated and stops working in specpack 0.4; use "
            "specpack.check(pack, ...)")) as warned:
        report = sealed.check(where="here")
    assert warned[0].filename == __file__
    again = specpack.check(sealed, where="here")
    assert type(report) is type(again) and (report.status, bool(report)) == (again.status, True)


def test_pack_verify_is_deprecated_and_returns_what_specpack_verify_returns() -> None:
    pack = specpack.capture("CartPole-v1")
    with pytest.warns(DeprecationWarning, match=re.escape(
            "SpecPack.verify() is deprecated and stops working in specpack 0.4; use "
            "specpack.verify(pack, ...)")) as warned:
        report = pack.verify(steps=3, timeout=60)
    assert warned[0].filename == __file__
    again = specpack.verify(pack, steps=3, timeout=60)
    assert type(report) is type(again)
    assert (report.status, report.differences) == (again.status, again.differences) == (
        "identical", [])
