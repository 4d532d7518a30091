"""Golden pack files of format specpack/1 keep loading and rebuilding.

``tests/golden/`` holds files written by specpack 0.1.0 (``make_golden.py`` made them), one
whose by-value payload 0.3.0.dev0 made (``sources_payload.specpack``: it names
``specpack.carry.sources.restore_sources``, a path that no longer exists, which the payload
reader maps to today's), and ``expected.json`` with their fingerprints, wrapper stacks and
seeded rollouts. These tests
read them as a user would, today and after every future change: a new format version must
keep reading these files, the way cloudpickle keeps loading its old pickles.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import json
import sys
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from _helpers import TESTS, assert_same, refused_under_0x

import specpack
from specpack import Blob, files
from specpack._core._carry.values import materialize

GOLDEN = TESTS / "golden"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text())
RUNNING_PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _maker() -> Any:
    spec = importlib.util.spec_from_file_location("golden_maker", GOLDEN / "make_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKER = _maker()


def _load(name: str) -> specpack.SpecPack:
    path = GOLDEN / name
    if name == "cartpole_options.specpack":
        return specpack.load(path)
    if name in ("rich_kwargs.specpack", "sources_payload.specpack"):
        return specpack.load(path, trust=True)
    return specpack.load(path, key=MAKER.GOLDEN_KEY)


def _stack(env: Any) -> list[str]:
    names = []
    while isinstance(env, gymnasium.Wrapper):
        names.append(type(env).__name__)
        env = env.env
    return [*names, type(env).__name__]


def _skew_expected(versions: dict[str, str]) -> bool:
    for dist in ("gymnasium", "numpy"):
        try:
            here = md.version(dist)
        except md.PackageNotFoundError:
            here = "not installed"
        if dist in versions and versions[dist] != here:
            return True
    return False


@pytest.mark.parametrize("name", ["cartpole_options.specpack", "rich_kwargs.specpack",
                                  "signed_by_value.specpack", "sources_payload.specpack"])
def test_golden_file_loads_and_rebuilds_the_recorded_env(name: str) -> None:
    expected = EXPECTED[name]
    pack = _load(name)
    assert pack.fingerprint == expected["fingerprint"]
    assert dict(pack.versions) == expected["versions"]
    if refused_under_0x(pack):
        return
    if pack.entry_point.by_value and pack.entry_point.python != RUNNING_PY:
        with pytest.raises(specpack.BuildError, match=f"Python {pack.entry_point.python}"):
            pack.make()
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = pack.make()
    skewed = [w for w in caught if issubclass(w.category, specpack.VersionSkewWarning)]
    assert bool(skewed) == _skew_expected(expected["versions"]), [str(w.message) for w in skewed]
    assert _stack(env) == expected["stack"]
    want = expected["rollout"]
    got = MAKER.rollout(env, want["policy"])
    assert (got["steps"], got["terminated"], got["truncated"]) == (
        want["steps"], want["terminated"], want["truncated"])
    np.testing.assert_allclose(got["obs"], want["obs"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got["rewards"], want["rewards"], rtol=1e-6, atol=1e-7)


def test_golden_cartpole_keeps_its_options() -> None:
    pack = _load("cartpole_options.specpack")
    assert pack.id == "CartPole-v1"
    assert pack.max_episode_steps == 50
    assert dict(pack.kwargs) == {"sutton_barto_reward": True}
    assert not pack.entry_point.by_value


def test_golden_rich_kwargs_decode_to_the_same_values_and_types() -> None:
    pack = _load("rich_kwargs.specpack")
    expected = MAKER.rich_kwargs()
    assert list(pack._kwargs) == list(expected)
    for name, lowered in pack._kwargs.items():
        if isinstance(lowered, Blob) and lowered.python != RUNNING_PY:
            with pytest.raises(specpack.BuildError, match=f"Python {lowered.python}"):
                lowered.load()  # pickles are tied to their Python minor version
        else:
            assert_same(materialize(lowered), expected[name], name)
    if pack.entry_point.python == RUNNING_PY:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", specpack.VersionSkewWarning)
            env = pack.make()
        assert_same(env.unwrapped.options, MAKER.rich_kwargs())
        env.close()


def test_golden_files_with_code_are_refused_without_trust_or_key() -> None:
    for name in ("rich_kwargs.specpack", "signed_by_value.specpack"):
        with pytest.raises(specpack.UntrustedPackError, match="by-value payload"):
            specpack.load(GOLDEN / name)
    with pytest.raises(specpack.SignatureError, match="another key"):
        specpack.load(GOLDEN / "signed_by_value.specpack", key=b"not the golden key")
    with pytest.raises(specpack.SignatureError, match="not signed"):
        specpack.load(GOLDEN / "rich_kwargs.specpack", key=MAKER.GOLDEN_KEY)


def test_golden_signed_file_describes_as_valid_with_its_key() -> None:
    path = GOLDEN / "signed_by_value.specpack"
    assert files.describe(path)["signature"]["status"] == "signed (not checked)"
    assert files.describe(path, key=MAKER.GOLDEN_KEY)["signature"]["status"] == "valid"


def test_every_golden_file_is_checked() -> None:
    names = {p.name for p in GOLDEN.glob("*.specpack")}
    assert names == {k for k in EXPECTED if k.endswith(".specpack")}


def test_a_payload_naming_the_path_0_3_gave_restore_sources_loads_with_its_sources() -> None:
    import linecache

    from test_golden_pickles import pickled_globals

    pack = _load("sources_payload.specpack")
    ref = pack.entry_point
    assert ref.by_value and ref.payload is not None
    named = {g for g in pickled_globals(ref.payload) if g.startswith("specpack")}
    assert named == {"specpack.carry.sources:restore_sources"}  # a module that no longer exists
    if ref.python != RUNNING_PY:
        return
    cls = ref.load()
    assert cls.__name__ == "FileEnv"
    code = cls.__init__.__code__
    assert "gain = float(f.read())" in "".join(linecache.getlines(code.co_filename))
