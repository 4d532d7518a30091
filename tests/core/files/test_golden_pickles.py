"""Pickles are messages between processes of one specpack version; pack files are what is stored.

A pickle of a pack made by this specpack unpickles to an equal pack that builds the same env,
and names only :mod:`specpack._pickled` of specpack. A pickle of a pack carries the specpack
version that made it (pack format 6): one made by any other version, or of another format,
fails with :class:`specpack.PackFormatError` saying to use ``specpack.dump``/``specpack.load``.
``tests/golden/pickles/<release>/`` keeps a few pickles of earlier releases to show it:
0.3.0.dev0's (format 3, naming ``specpack._pickled.restore_pack``) get that error; 0.1.0's and
0.2.0's name module paths that no longer exist (``specpack.pack._restore``) and, with no import
hook, fail with ``ModuleNotFoundError`` before any specpack code runs. Pack files written by
0.1 to 0.3 keep loading: ``tests/core/files/test_golden.py``.
"""

from __future__ import annotations

import pickle
import pickletools
import re
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from _helpers import GOLDEN, GYMNASIUM_0X

import specpack
from specpack import _pickled

PICKLES = GOLDEN / "pickles"
#: Pickles of 0.3.0.dev0 (pack format 3): they name specpack._pickled.restore_pack.
FORMAT_3 = sorted((PICKLES / "0.3.0.dev0").glob("*.pkl"))
#: Pickles of 0.1.0 and 0.2.0: they name specpack.pack._restore, a module that is gone.
REMOVED_MODULES = sorted([*(PICKLES / "0.1.0").glob("*.pkl"), *(PICKLES / "0.2.0").glob("*.pkl")])
USE_FILES = ("pickles are messages between processes of one specpack version; to store a pack "
             "or move it between versions, use specpack.dump(pack, path) and specpack.load(path)")

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
    return {f"specpack._pickled:{n}" for n in _pickled.__all__}


#: What a pack's pickle may name outside specpack: numpy (its dtype, scalar and array
#: rebuilders: numpy scalars among the lowered kwargs, arrays inside recorded spaces) and
#: gymnasium's space classes (a recorded surface). Nothing else: the kwargs are lowered (code
#: and objects travel as CodeRef/Blob, whose payloads are bytes here).
OUTER_ALLOWED = ("numpy:", "numpy.", "gymnasium.spaces.")


def _check_names(raw: bytes, pack: specpack.SpecPack) -> None:
    """``raw`` (a pickle of ``pack``) names only ``specpack._pickled`` of specpack, and so do
    its payloads (cloudpickle bytes, which otherwise name cloudpickle's rebuilders, builtins
    and whatever the carried code imports: not ours to limit)."""
    outer = pickled_globals(raw)
    ours = _restore_names()
    assert {g for g in outer if g.startswith("specpack")} <= ours, outer
    assert all(g in ours or g.startswith(OUTER_ALLOWED) for g in outer), outer
    for payload in [c.payload for c in pack.carried() if c.payload is not None]:
        named = pickled_globals(payload)
        assert {g for g in named if g.startswith("specpack")} <= ours, named


class _Local(gymnasium.Env):  # type: ignore[type-arg]
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, offsets: Any = None, path: str | None = None) -> None:
        self.offsets, self.path = offsets, path
        self.gain = 1.0 if path is None else float(Path(path).read_text())  # the asset

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return self.np_random.uniform(-1, 1, 2).astype(np.float32) * self.gain, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs = self.np_random.uniform(-1, 1, 2).astype(np.float32) * self.gain
        return obs, float(action) * self.gain, False, False, {}


def _packs(tmp_path: Path) -> list[specpack.SpecPack]:
    """A pack of every kind: by reference, by value, recorded spaces, a live env, assets and
    a seal."""
    asset = tmp_path / "level.txt"
    asset.write_text("0.5")
    live = gymnasium.wrappers.RecordEpisodeStatistics(gymnasium.make("CartPole-v1"))
    cartpole_kwargs = {} if GYMNASIUM_0X else {"sutton_barto_reward": True}  # a 1.x kwarg
    packs = [
        specpack.capture("CartPole-v1", max_episode_steps=50, **cartpole_kwargs),
        specpack.capture(_Local, by_value=True, offsets=np.arange(3, dtype=">f4")),
        specpack.capture("CartPole-v1", record_spaces=True),
        specpack.capture(live),
        specpack.seal(specpack.capture(_Local, by_value=True, path=str(asset),
                                       self_contained=True), steps=5, seed=0),
    ]
    assert packs[1].entry_point.by_value and packs[2].surface is not None
    assert packs[4].assets and packs[4].assets[0].carried and packs[4].sealed is not None
    return packs


def _rollout(env: Any) -> list[Any]:
    obs, _ = env.reset(seed=3)
    out = [np.asarray(obs).tolist()]
    for _ in range(5):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample() * 0 + 1)
        out.append([np.asarray(obs).tolist(), float(reward), terminated, truncated])
    env.close()
    return out


def test_a_pickle_of_this_version_unpickles_to_an_equal_pack_that_builds_the_same_env(
        tmp_path: Path) -> None:
    for pack in _packs(tmp_path):
        for protocol in (4, 5):
            raw = pickle.dumps(pack, protocol=protocol)
            _check_names(raw, pack)
            back = pickle.loads(raw)
            assert back == pack and back is not pack
            assert back.fingerprint == pack.fingerprint
            assert (back.assets, back.sealed) == (pack.assets, pack.sealed)
        assert _rollout(back.make()) == _rollout(pack.make())


def test_a_pickled_pack_carries_its_format_and_the_specpack_version() -> None:
    pack = specpack.capture("CartPole-v1")
    restore, args = pack.__reduce__()
    assert restore is _pickled.restore_pack
    assert args[:2] == (6, specpack.__version__)
    assert args[2] == pack._state()


def test_the_parts_of_a_pack_pickle_by_the_names_of_specpack_pickled(tmp_path: Path) -> None:
    packs = _packs(tmp_path)
    for part in (packs[0].layers[0], packs[0].entry_point, packs[2].surface, packs[4].assets[0]):
        named = pickled_globals(pickle.dumps(part))
        assert all(g in _restore_names() or g.startswith(OUTER_ALLOWED) for g in named), named
        assert pickle.loads(pickle.dumps(part)) == part


def _refused(excinfo: pytest.ExceptionInfo[specpack.PackFormatError], written_by: str) -> None:
    message = str(excinfo.value)
    assert f"pickled by {written_by}, but" in message, message
    assert f"this is specpack {specpack.__version__} (pack format 6)" in message, message
    assert message.endswith(USE_FILES), message


@pytest.mark.parametrize("path", FORMAT_3, ids=[p.name for p in FORMAT_3])
def test_a_pickle_of_0_3_0_dev0_fails_naming_dump_and_load(path: Path) -> None:
    assert "specpack._pickled:restore_pack" in pickled_globals(path.read_bytes())
    with pytest.raises(specpack.PackFormatError) as excinfo:
        pickle.loads(path.read_bytes())
    _refused(excinfo, "specpack 0.3.0.dev0 or earlier (pack format 3)")


@pytest.mark.parametrize("path", REMOVED_MODULES,
                         ids=[f"{p.parent.name}-{p.name}" for p in REMOVED_MODULES])
def test_a_pickle_of_0_1_or_0_2_names_a_module_that_is_gone(path: Path) -> None:
    # No import hook serves the old paths: pickle fails to import the first global the pickle
    # names (specpack.pack._restore), before any specpack code could say more.
    assert "specpack.pack:_restore" in pickled_globals(path.read_bytes())
    with pytest.raises(ModuleNotFoundError, match=re.escape("No module named 'specpack.pack'")):
        pickle.loads(path.read_bytes())


def _forged(raw: bytes, version: str) -> bytes:
    """``raw`` with the pickled specpack version replaced by ``version`` (the same length)."""
    here = specpack.__version__.encode()
    assert len(version) == len(here) and raw.count(here) >= 1
    return raw.replace(here, version.encode())


def test_a_pickle_with_another_specpack_version_in_it_fails_naming_both_versions() -> None:
    raw = pickle.dumps(specpack.capture("CartPole-v1", max_episode_steps=5))
    other = "9" * len(specpack.__version__)
    with pytest.raises(specpack.PackFormatError) as excinfo:
        pickle.loads(_forged(raw, other))
    _refused(excinfo, f"specpack {other} (pack format 6)")


def test_a_restore_of_another_format_or_layout_fails_with_the_same_advice() -> None:
    state = specpack.capture("CartPole-v1")._state()
    with pytest.raises(specpack.PackFormatError) as excinfo:
        _pickled.restore_pack(5, "9.0", state)
    _refused(excinfo, "specpack 9.0 (pack format 5)")
    with pytest.raises(specpack.PackFormatError) as excinfo:
        _pickled.restore_pack(1, state)
    _refused(excinfo, "specpack 0.1 (pack format 1)")
    with pytest.raises(specpack.PackFormatError) as excinfo:
        _pickled.restore_pack(4, state)  # no version: not this specpack's layout
    _refused(excinfo, "another specpack (pack format 4)")


def test_a_restore_of_this_format_with_an_unreadable_state_fails_with_the_same_advice() -> None:
    # format 6 holds the fingerprint as the digest's 32 bytes: its text (format 5's), a short
    # digest, or no state at all is not this layout
    pack = specpack.capture("CartPole-v1")
    state = pack._state()
    for bad in ((pack.fingerprint, *state[1:]), (state[0][:31], *state[1:]), (), [*state]):
        with pytest.raises(specpack.PackFormatError) as excinfo:
            _pickled.restore_pack(6, specpack.__version__, bad)
        assert str(excinfo.value).endswith(USE_FILES)
    again = _pickled.restore_pack(6, specpack.__version__, state)
    assert again == pack and again.fingerprint == pack.fingerprint


def test_a_pack_moves_between_versions_as_a_file(tmp_path: Path) -> None:
    pack = specpack.capture("CartPole-v1", max_episode_steps=5)
    specpack.dump(pack, tmp_path / "p.specpack")
    assert specpack.load(tmp_path / "p.specpack") == pack
