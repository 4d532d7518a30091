"""Issue 31's proof items, each in real processes (a fork here, fresh interpreters there):

- an env that draws from a global generator (``random``, numpy's legacy global one, torch's
  default one) is ``unseeded`` every time, naming the generator and the call, never
  ``identical`` and never hash order; one that seeds the global generator from its own seed is
  identical;
- a ``not_identical`` is confirmed by a second rebuild (chance gives ``not_reproducible``), and
  so is the hash control's verdict;
- ``rollout_compared`` is true only when rollout values were compared;
- NaN is compared by its bits in every container and a difference shows them;
- verify's own probing sets off no wrapper ``__getattr__`` (gymnasium 0.29 warns there).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import specpack

TESTS = Path(__file__).resolve().parents[2]
FIXTURES = TESTS / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import trustenvs  # noqa: E402
import verifyenvs  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _fixtures_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Children (fresh interpreters, spawn) import ``verifyenvs`` by name."""
    parts = [str(FIXTURES)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(dict.fromkeys(parts)))


def _text(report: object) -> str:
    return "\n".join(map(str, getattr(report, "differences", []))) + "\n" + str(report)


# -- global generators ----------------------------------------------------------------------


@pytest.mark.parametrize("cls, call, generator", [
    (verifyenvs.DrawsNumpyGlobal, "step 3", "numpy.random's global generator"),
    (verifyenvs.DrawsRandomGlobal, "step 2", "Python's random module's global generator"),
])
def test_an_env_drawing_from_a_global_generator_is_unseeded_every_time_naming_it(
        cls: type, call: str, generator: str) -> None:
    # before: the verdict was chance (identical, not_identical advising PYTHONHASHSEED,
    # not_reproducible naming hash randomisation): the draws rarely show in the rollout
    pack = specpack.capture(cls)
    for _ in range(5):
        report = specpack.verify(pack, steps=10, timeout=60)
        text = _text(report)
        assert not report, text
        assert report.status == "unseeded", text
        assert report.cause == "global_generator", text
        first = report.differences[0]
        assert first.startswith(f"{call} drew from {generator}"), text
        assert "seed it" in first and "its own generator" in first, text
        assert "hash" not in first.lower(), text
        assert not report.rollout_compared, text


def test_an_env_seeding_the_global_generator_from_its_own_seed_is_identical() -> None:
    # it draws from np.random in every step, after np.random.seed(seed) in reset: its rollout
    # follows its seed, in every process
    report = specpack.verify(specpack.capture(verifyenvs.SeedsNumpyGlobal), steps=10, timeout=60)
    assert report, _text(report)
    assert getattr(report, "cause", None) is None


def test_an_env_seeding_the_global_generator_and_drawing_in_reset_only_is_identical() -> None:
    # the second build's reset starts where the first build's left the generator, and seeding
    # then drawing ends there again: no change of state, yet it drew (as the first build did)
    report = specpack.verify(specpack.capture(verifyenvs.SeedsNumpyGlobalInReset), steps=10,
                             timeout=60)
    assert report, _text(report)
    assert getattr(report, "cause", None) is None


def test_the_unseeded_status_is_one_defined_place_with_its_causes() -> None:
    from specpack._tools._verify import report as r

    assert r.UNSEEDED == "unseeded" and r.UNSEEDED in r.STATUSES
    assert r.UNSEEDED_CAUSES == ("global_generator", "hash_order")
    with pytest.raises(ValueError, match="cause"):
        r.VerifyReport(status="unseeded", identical=False, differences=[], where="subprocess",
                       steps=1, seed=0, rollout_compared=False, elapsed=0.0)
    with pytest.raises(ValueError, match="cause"):
        r.VerifyReport(status="not_identical", identical=False, differences=[],
                       where="subprocess", steps=1, seed=0, rollout_compared=True, elapsed=0.0,
                       cause="hash_order")


# -- confirmation ---------------------------------------------------------------------------


def test_a_difference_that_is_not_the_boundary_is_not_reported_not_identical() -> None:
    # a number drawn from the OS at import: two builds here agree, and every fresh interpreter
    # differs from here *and from another*. With no hash control (spawn) one rebuild said
    # not_identical; a second rebuild shows the rebuild is not reproducible itself.
    report = specpack.verify(specpack.capture(verifyenvs.ImportTimeEntropy), steps=5,
                             where="spawn", timeout=60)
    text = _text(report)
    assert report.status == "not_reproducible", text
    assert report.differences[0].startswith("two rebuilds, each in a"), text
    assert not report.rollout_compared, text


def test_per_process_entropy_is_not_taken_for_hash_order() -> None:
    # the rebuild and the hash control differ, but not because of their hash seeds: a second
    # rebuild under the rebuild's seed differs too
    report = specpack.verify(specpack.capture(verifyenvs.ImportTimeEntropy), steps=5, timeout=60)
    text = _text(report)
    if report.hash_seeds.get("control") is None:
        pytest.skip("no hash control on this machine (one CPU)")
    assert report.status == "not_reproducible", text
    assert report.cause is None, text
    assert "PYTHONHASHSEED=1" in report.differences[0], text
    assert "hash randomisation" not in text, text


def test_a_real_difference_is_confirmed_by_a_second_rebuild(monkeypatch) -> None:
    monkeypatch.setattr(verifyenvs, "NAN_BITS", 0x7FF8000000000001)  # here only
    report = specpack.verify(specpack.capture(verifyenvs.NaNs, place="float"), steps=4, timeout=60)
    text = _text(report)
    assert report.status == "not_identical", text
    assert any(n.startswith("confirmed: a second ") for n in report.notes), text


def test_the_hash_control_verdict_is_unseeded_confirmed_and_names_the_fix() -> None:
    report = specpack.verify(specpack.capture(verifyenvs.HashOrder), steps=10, timeout=60)
    text = _text(report)
    if report.hash_seeds.get("control") is None:
        pytest.skip("no hash control on this machine (one CPU)")
    assert report.status == "unseeded" and report.cause == "hash_order", text
    assert "PYTHONHASHSEED" in report.differences[0].split("; ", 1)[-1], text
    assert any("the hash seed decides it" in n for n in report.notes), text


# -- rollout_compared -----------------------------------------------------------------------


def test_a_reset_that_raises_on_both_sides_compared_no_rollout() -> None:
    report = specpack.verify(specpack.capture(verifyenvs.ResetRaises), steps=5, timeout=60)
    text = _text(report)
    assert report.status == "rollout_error", text
    assert report.rollout_compared is False, text
    # values before a later error were compared
    later = specpack.verify(specpack.capture(trustenvs.RaisesAtStep, raise_at=3), steps=5, timeout=60)
    assert later.status == "rollout_error" and later.rollout_compared is True, _text(later)


# -- NaN by its bits --------------------------------------------------------------------------


@pytest.mark.parametrize("place, field", [
    ("float", "reward"), ("array", "observation"), ("nested", "info"), ("scalar", "reward"),
])
def test_nans_with_other_bits_differ_and_are_shown_by_their_bits(monkeypatch, place, field):
    pack = specpack.capture(verifyenvs.NaNs, place=place)
    same_bits = specpack.verify(pack, steps=4, timeout=60)
    assert same_bits, _text(same_bits)  # equal NaN bits: identical, in every container
    monkeypatch.setattr(verifyenvs, "NAN_BITS", 0x7FF8000000000001)  # the build here only
    report = specpack.verify(pack, steps=4, timeout=60)
    text = _text(report)
    assert report.status == "not_identical", text
    first = report.differences[0]
    assert first.startswith(f"step 2: {field}"), text
    assert "nan (0x7ff8000000000001)" in first and "nan (0x7ff8000000000000)" in first, text


def test_a_negative_nan_is_not_a_positive_one(monkeypatch) -> None:
    monkeypatch.setattr(verifyenvs, "NAN_BITS", 0xFFF8000000000000)
    report = specpack.verify(specpack.capture(verifyenvs.NaNs, place="array"), steps=4, timeout=60)
    assert report.status == "not_identical", _text(report)
    assert "nan (0xfff8000000000000)" in report.differences[0], _text(report)


# -- no wrapper __getattr__ probing -----------------------------------------------------------


class _Nosy(gymnasium.Wrapper):
    """A wrapper that warns on every attribute looked up through it, as gymnasium 0.29's does."""

    def __getattr__(self, name):
        if not name.startswith("_"):
            import warnings

            warnings.warn(f"NOSY: env.{name} looked up through a wrapper", stacklevel=2)
        return getattr(self.env, name)


def test_verify_looks_up_nothing_through_a_wrapper(capfd) -> None:
    env = _Nosy(gymnasium.make("CartPole-v1"))
    pack = specpack.capture(env)
    report = specpack.verify(pack, steps=10, timeout=60)
    out, err = capfd.readouterr()
    assert report, _text(report)
    assert "NOSY" not in out + err + report.stderr + report.stdout


def test_verify_prints_no_gymnasium_deprecation_warning(tmp_path) -> None:
    """On every supported line (CI runs tests/tools/verify under 0.28/0.29, where a wrapper's
    attribute lookup of ``possible_agents`` warns, and under 1.x), specpack's own probing warns
    nothing."""
    script = textwrap.dedent("""
        import warnings
        import gymnasium, specpack
        warnings.simplefilter("always")
        pack = specpack.capture("CartPole-v1")
        for _ in range(2):
            report = specpack.verify(pack, steps=10)
            assert report, str(report)
            print(report.stderr)
        print("DONE")
    """)
    path = tmp_path / "probe.py"
    path.write_text(script)
    env = {**os.environ, "PYTHONPATH": str(Path(specpack.__file__).parents[1])}
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                          timeout=300, cwd=tmp_path)
    assert "DONE" in done.stdout, done.stdout + done.stderr
    assert "deprecated" not in done.stdout + done.stderr, done.stdout + done.stderr


def test_nan_bits_are_kept_by_the_exact_encoding() -> None:
    from specpack._tools._verify.compare import same

    a, b = verifyenvs.nan_of(0x7FF8000000000001), verifyenvs.nan_of(0x7FF8000000000000)
    assert same(a, verifyenvs.nan_of(0x7FF8000000000001))
    assert same(np.array([a]), np.array([a])) and same({"x": [(a,)]}, {"x": [(a,)]})
    assert not same(a, b)
    assert not same({"x": [(1, a)]}, {"x": [(1, b)]})
    assert not same(np.float64(a), np.float64(b))
    assert not same(complex(a, 0.0), complex(b, 0.0))


# -- the watch itself (in this process) --------------------------------------------------------


def test_the_watch_reads_the_generators_fast_where_it_checked_the_raw_state() -> None:
    import platform
    import random

    from specpack._tools._verify import generators

    readers = generators._readers()
    if platform.python_implementation() == "CPython":
        # the raw readers were checked against getstate()/get_state() and are used
        assert readers[0] is not generators._random_state
        assert readers[1] is not generators._numpy_state
    state = random.getstate()
    np_state = np.random.get_state()
    try:
        watch = generators.Watch()
        watch.after("make", 0)
        random.random()
        watch.after("reset", 0)
        np.random.rand()
        watch.after("step", 1)
        watch.after("step", 2)
        np.random.seed(5)
        watch.after("step", 3)
    finally:
        random.setstate(state)
        np.random.set_state(np_state)
    assert [t[:3] for t in watch.touches] == [
        ["reset", 0, "random"], ["step", 1, "numpy.random"], ["step", 3, "numpy.random"]]


def test_two_builds_disagree_first_where_a_draw_depended_on_the_state_found() -> None:
    from specpack._tools._verify.generators import first_unseeded

    seeded = [["reset", 0, "numpy.random", "aa"], ["step", 1, "numpy.random", "bb"]]
    assert first_unseeded(seeded, [list(t) for t in seeded]) is None
    drawn = [["reset", 0, "numpy.random", "aa"], ["step", 3, "random", "cc"]]
    other = [["reset", 0, "numpy.random", "aa"], ["step", 3, "random", "dd"]]
    assert first_unseeded(drawn, other) == ("step", 3, "random")
    assert first_unseeded(drawn, drawn[:1]) == ("step", 3, "random")
    assert first_unseeded([["x"]], "not a list") is None  # malformed answers are data
