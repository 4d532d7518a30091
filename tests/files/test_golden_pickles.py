"""Pickled packs from earlier releases keep unpickling and rebuilding the same env, and a new
pickle names only :mod:`specpack._pickled`.

Ray, SB3 and multiprocessing store and ship *pickled* packs, so a pickle is a format too.
``tests/golden/pickles/py<XY>/<folder>/`` holds pickles made by ``make_pickles.py`` (and its gym
and pettingzoo siblings) under that specpack release, never regenerated, with the fingerprint,
wrapper stack and seeded rollout each must still give (the folder's own ``expected.json``):
``0.1.0`` (format 1), ``0.2.0`` (format 2), ``0.3.0.dev0-main-5e9747d`` (format 3 as main wrote
it before :mod:`specpack._pickled`: old global names) and ``0.3.0.dev0`` (every kind of pack:
by reference, by value, recorded spaces, a live env, assets and a seal, the gym and pettingzoo
backends). Here every gymnasium pack is rebuilt; the gym and pettingzoo packs are unpickled
and fingerprinted here and rebuilt in their own venvs (``tests/gym/test_gym_golden_pickles.py``,
``tests/files/test_golden_pickles_pettingzoo.py``).
"""

from __future__ import annotations

import json
import pickle
import pickletools
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from _helpers import GOLDEN, GYMNASIUM_0X, refused_under_0x

import specpack

PY = f"py{sys.version_info[0]}{sys.version_info[1]}"
RELEASES = sorted(p for p in (GOLDEN / "pickles" / PY).glob("*") if p.is_dir())
ALL = [(d, p.name) for d in RELEASES for p in sorted(d.glob("*.pkl"))]
#: The pickles rebuilt here: gymnasium's (the gym and pettingzoo ones need their own venvs).
BUILT = [(d, n) for d, n in ALL
         if json.loads((d / "expected.json").read_text())[n].get("backend", "gymnasium")
         == "gymnasium"]
#: Every kind of pack the current folder must hold.
KINDS = {"cartpole_options.pkl", "rich_kwargs.pkl", "spaces.pkl", "live_env.pkl",
         "sealed_assets.pkl", "gym_cartpole.pkl", "pettingzoo_tictactoe.pkl"}

_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING", "BINSTRING",
            "SHORT_BINSTRING"}


def pickled_globals(data: bytes) -> set[str]:
    """Every ``module:name`` a pickle names (GLOBAL, INST and STACK_GLOBAL), read with
    :func:`pickletools.genops` only: nothing is imported or unpickled. The memo is followed,
    since STACK_GLOBAL's strings are often memo references."""
    found: set[str] = set()
    pushed: list[Any] = []  # the last value each op pushed (a string, or None)
    memo: dict[int, Any] = {}
    for op, arg, _ in pickletools.genops(data):
        name = op.name
        if name in _STRINGS:
            pushed.append(arg)
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            pushed.append(memo.get(arg))
        elif name == "MEMOIZE":
            memo[len(memo)] = pushed[-1] if pushed else None
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[arg] = pushed[-1] if pushed else None
        elif name == "STACK_GLOBAL":
            found.add(f"{pushed[-2]}:{pushed[-1]}")
            pushed.append(None)
        elif name in ("GLOBAL", "INST"):
            found.add(str(arg).replace(" ", ":", 1))
            pushed.append(None)
        elif op.stack_after:
            pushed.append(None)
    return found


def _restore_names() -> set[str]:
    from specpack import _pickled

    return {f"specpack._pickled:{n}" for n in _pickled.__all__}


#: What a pack's pickle may name outside specpack: numpy (its dtype, scalar and array
#: rebuilders, which move between numpy versions: numpy scalars among the lowered kwargs,
#: arrays inside recorded spaces) and
#: gymnasium's space classes (a recorded surface). Nothing else: the kwargs are lowered (code
#: and objects travel as CodeRef/Blob, whose payloads are bytes here).
OUTER_ALLOWED = ("numpy:", "numpy.", "gymnasium.spaces.")


def _payloads(pack: specpack.SpecPack) -> list[bytes]:
    return [c.payload for c in pack.carried() if c.payload is not None]


def _check_names(raw: bytes, pack: specpack.SpecPack, old_payloads: bool = False) -> None:
    """``raw`` (a pickle of ``pack``) names only ``specpack._pickled`` of specpack, and its
    payloads too (``old_payloads``: payloads made by an older release, which keep the names
    they were made with: legacy names are accepted in them)."""
    outer = pickled_globals(raw)
    ours = _restore_names()
    assert {g for g in outer if g.startswith("specpack")} <= ours, outer
    assert all(g in ours or g.startswith(OUTER_ALLOWED) for g in outer), outer
    # A payload is cloudpickle bytes: it names cloudpickle's rebuilders
    # (cloudpickle.cloudpickle:_make_function, _make_skeleton_class, subimport...), builtins
    # and whatever the carried code itself imports (gymnasium.core:Env, fractions:Fraction):
    # not ours to limit. Of specpack it names only restore_sources (code whose source travels).
    if old_payloads:
        from specpack._pickled import LEGACY_NAMES

        ours = ours | {k.replace(".restore_sources", ":restore_sources") for k in LEGACY_NAMES}
    for payload in _payloads(pack):
        named = pickled_globals(payload)
        assert {g for g in named if g.startswith("specpack")} <= ours, named


def test_there_are_golden_pickles_of_every_kind_for_this_python() -> None:
    assert RELEASES, f"no golden pickles under {GOLDEN / 'pickles' / PY}"
    for folder in ("0.3.0.dev0", "0.3.0.dev0-main-5e9747d"):
        assert {p.name for p in (GOLDEN / "pickles" / PY / folder).glob("*.pkl")} == KINDS
    formats = {json.loads((d / "expected.json").read_text())[n].get("format", 1 if
               d.name == "0.1.0" else 2) for d, n in ALL}
    assert formats == {1, 2, 3}


@pytest.mark.parametrize(("release", "name"), ALL, ids=[f"{d.name}-{n}" for d, n in ALL])
def test_golden_pickle_unpickles_with_its_fingerprint_and_repickles_under_todays_names(
        release: Path, name: str) -> None:
    expected = json.loads((release / "expected.json").read_text())[name]
    pack = pickle.loads((release / name).read_bytes())
    assert isinstance(pack, specpack.SpecPack)
    assert pack.fingerprint == expected["fingerprint"]
    again = pickle.dumps(pack, protocol=4)
    assert pickle.loads(again) == pack
    _check_names(again, pack, old_payloads=release.name != "0.3.0.dev0")


@pytest.mark.parametrize(("release", "name"), BUILT, ids=[f"{d.name}-{n}" for d, n in BUILT])
def test_golden_pickle_unpickles_and_rebuilds_the_recorded_env(release: Path, name: str) -> None:
    expected = json.loads((release / "expected.json").read_text())[name]
    pack = pickle.loads((release / name).read_bytes())
    if refused_under_0x(pack):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", specpack.VersionSkewWarning)
        env = pack.make()
    node, stack = env, []
    while hasattr(node, "env") and node is not node.unwrapped:
        stack.append(type(node).__name__)
        node = node.env
    assert [*stack, type(node).__name__] == expected["stack"]
    want = expected["rollout"]
    got = _maker().rollout(env, want["policy"])
    assert (got["steps"], got["terminated"], got["truncated"]) == (
        want["steps"], want["terminated"], want["truncated"])
    np.testing.assert_allclose(got["obs"], want["obs"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got["rewards"], want["rewards"], rtol=1e-6, atol=1e-7)


def test_golden_pickles_of_the_current_folder_name_only_specpack_pickled() -> None:
    for path in (GOLDEN / "pickles" / PY / "0.3.0.dev0").glob("*.pkl"):
        raw = path.read_bytes()
        _check_names(raw, pickle.loads(raw))


def test_every_old_name_a_golden_pickle_holds_is_a_legacy_name_that_still_answers() -> None:
    import importlib

    from specpack._pickled import LEGACY_NAMES

    for release, name in ALL:
        if release.name == "0.3.0.dev0":
            continue
        raw = (release / name).read_bytes()
        pack = pickle.loads(raw)
        for payload in [raw, *_payloads(pack)]:
            for g in pickled_globals(payload):
                if g.startswith("specpack") and not g.startswith("specpack._pickled:"):
                    assert g.replace(":", ".") in LEGACY_NAMES, (release.name, name, g)
    for path, obj in LEGACY_NAMES.items():
        module, _, attr = path.rpartition(".")
        assert getattr(importlib.import_module(module), attr) is obj, path


class _Local(gymnasium.Env):  # type: ignore[type-arg]
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, offsets: Any = None, path: str | None = None) -> None:
        self.offsets, self.path = offsets, path


def test_fresh_pickles_of_every_kind_of_pack_name_only_specpack_pickled(tmp_path: Path) -> None:
    asset = tmp_path / "level.txt"
    asset.write_text("1")
    live = gymnasium.wrappers.RecordEpisodeStatistics(gymnasium.make("CartPole-v1"))
    cartpole_kwargs = {} if GYMNASIUM_0X else {"sutton_barto_reward": True}  # a 1.x kwarg
    packs = [
        specpack.capture("CartPole-v1", max_episode_steps=50, **cartpole_kwargs),
        specpack.capture(_Local, by_value=True, offsets=np.arange(3, dtype=">f4")),
        specpack.capture("CartPole-v1", record_spaces=True),
        specpack.capture(live),
        specpack.capture(_Local, by_value=True, path=str(asset), self_contained=True),
    ]
    assert packs[1].entry_point.by_value and packs[2].surface is not None
    assert packs[4].assets and packs[4].assets[0].carried
    for pack in packs:
        _check_names(pickle.dumps(pack, protocol=4), pack)
        _check_names(pickle.dumps(pack, protocol=5), pack)
    for part in (packs[0].layers[0], packs[0].entry_point, packs[2].surface, packs[4].assets[0]):
        named = pickled_globals(pickle.dumps(part))
        assert all(g in _restore_names() or g.startswith(OUTER_ALLOWED) for g in named), named


def _maker() -> Any:  # the rollout helper of the golden files
    import importlib.util

    spec = importlib.util.spec_from_file_location("golden_maker", GOLDEN / "make_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
