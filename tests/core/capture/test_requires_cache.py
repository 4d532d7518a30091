"""A first capture reuses what earlier captures read about modules (issue 32), and gives the
very pack it gave before that reuse existed.

What a module's code refers to is read once per module object (``specpack._core._reach``) and a
capture makes one pack (``specpack._core._draft``). These tests hold the result to what matters: the
same pack (equal, same fingerprint, same pickle bytes, same ``requires``) whether those caches
are cold or warm, and ``requires`` that still follows the code when a module is replaced.
"""

from __future__ import annotations

import importlib
import pickle
import sys
import uuid
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import gymnasium
import pytest

import specpack
from specpack._core import _capture, _provenance, _reach
from specpack._core._backends import _registry


def _cold() -> None:
    """Forget everything capture keeps between calls (as a fresh process would have it)."""
    _capture._memo.clear()
    _reach._requires_memo.clear()
    _reach._EXPANDED.clear()
    _reach._HELD.clear()
    _reach._PACKS.clear()
    _provenance._distributions.clear()
    _registry._highest.clear()
    _registry._flat.clear()


def _live_env() -> Any:
    return gymnasium.make("MountainCar-v0")


TARGETS: dict[str, Callable[[], Any]] = {
    "id": lambda: "CartPole-v1",
    "id with kwargs": lambda: "FrozenLake-v1",
    "class": lambda: importlib.import_module(
        "gymnasium.envs.classic_control.cartpole").CartPoleEnv,
    "spec": lambda: gymnasium.spec("Acrobot-v1"),
    "live env": _live_env,
}
KWARGS: dict[str, dict[str, Any]] = {"id with kwargs": {"map_name": "4x4",
                                                        "is_slippery": False}}


def _same(a: specpack.SpecPack, b: specpack.SpecPack) -> None:
    assert a == b
    assert a.fingerprint == b.fingerprint
    assert pickle.dumps(a) == pickle.dumps(b)
    assert dict(a.requires) == dict(b.requires)
    assert a.assets == b.assets and a.notes == b.notes and dict(a.versions) == dict(b.versions)
    assert (a.surface is None) == (b.surface is None)


@pytest.mark.parametrize("what", sorted(TARGETS))
def test_a_capture_is_the_same_pack_with_the_module_caches_cold_or_warm(what: str) -> None:
    kwargs = KWARGS.get(what, {})
    _cold()
    cold = specpack.capture(TARGETS[what](), **kwargs)
    _capture._memo.clear()  # a first capture again, now with the module caches warm
    warm = specpack.capture(TARGETS[what](), **kwargs)
    _same(cold, warm)
    assert cold.requires["gymnasium"] == gymnasium.__version__


def test_a_memoised_capture_is_the_same_object_and_a_first_one_a_new_equal_one() -> None:
    _capture._memo.clear()
    first = specpack.capture("CartPole-v1")
    assert specpack.capture("CartPole-v1") is first
    _capture._memo.clear()
    again = specpack.capture("CartPole-v1")
    assert again is not first
    _same(first, again)


def test_a_live_env_pack_keeps_its_surface_and_the_requires_of_what_it_holds() -> None:
    env = _live_env()
    pack = specpack.capture(env)
    assert pack.surface is not None
    assert pack.observation_space == env.observation_space
    assert pack.requires["gymnasium"] == gymnasium.__version__


#: A user's env module: ``imports`` at its top, ``Thing`` derived from ``base``.
PLAIN_ENV = """
import gymnasium
{imports}


class Thing({base}):
    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return 0, {{}}

    def step(self, action):
        return 0, 0.0, True, False, {{}}
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Any]]:
    """Write (or rewrite) a user's env module on sys.path and import it afresh."""
    name = f"reach_{uuid.uuid4().hex[:8]}"
    monkeypatch.syspath_prepend(str(tmp_path))

    def load(imports: str) -> Any:
        (tmp_path / f"{name}.py").write_text(PLAIN_ENV.format(imports=imports, base="gymnasium.Env"))
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        return importlib.import_module(name)

    yield load
    sys.modules.pop(name, None)


def test_requires_follows_a_module_replaced_after_it_was_read(
        user_module: Callable[[str], Any]) -> None:
    """The reading of a module is kept per module object: a new module under the same name
    (reloaded after an edit) is read again, whichever way its imports changed."""
    plain = user_module("")
    assert "hypothesis" not in specpack.capture(plain.Thing).requires
    importing = user_module("import hypothesis")
    pack = specpack.capture(importing.Thing)
    assert pack.requires.get("hypothesis") == version("hypothesis")
    assert pack.requires["gymnasium"] == gymnasium.__version__
    assert "hypothesis" not in specpack.capture(user_module("").Thing).requires


def test_requires_of_an_entry_point_module_that_imports_another_distribution(
        user_module: Callable[[str], Any]) -> None:
    """An id whose entry point's module imports a distribution names it, on a first capture
    with the caches warm from another id of the same package as on a cold one."""
    module = user_module("import hypothesis")
    env_id = f"{module.__name__}/Thing-v0"
    gymnasium.register(env_id, entry_point=f"{module.__name__}:Thing")
    try:
        _cold()
        cold = specpack.capture(env_id)
        _capture._memo.clear()
        warm = specpack.capture(env_id)
        for pack in (cold, warm):
            assert pack.requires.get("hypothesis") == version("hypothesis")
        _same(cold, warm)
    finally:
        gymnasium.registry.pop(env_id, None)


def test_requires_follows_a_class_whose_bases_were_reassigned(
        user_module: Callable[[str], Any], tmp_path: Path) -> None:
    """A class's MRO is read again once its ``__bases__`` change (a new ``__mro__``): a base
    from a module that imports a distribution then names it."""
    plain = user_module("")
    (tmp_path / "reach_mixin_mod.py").write_text(
        "import gymnasium\nimport hypothesis\n\n\nclass Mixin(gymnasium.Env):\n    pass\n")
    sys.modules.pop("reach_mixin_mod", None)
    importlib.invalidate_caches()
    mixin = importlib.import_module("reach_mixin_mod").Mixin
    try:
        assert "hypothesis" not in specpack.capture(plain.Thing).requires
        plain.Thing.__bases__ = (mixin,)
        pack = specpack.capture(plain.Thing)
        assert pack.requires.get("hypothesis") == version("hypothesis")
    finally:
        sys.modules.pop("reach_mixin_mod", None)


def test_requires_names_the_code_a_kwarg_holds(
        user_module: Callable[[str], Any], tmp_path: Path) -> None:
    """A pack's references are the entry point and the wrapper classes only while no kwarg
    holds code: a class given as a kwarg names what its module imports too, on a first
    capture after one of the same env without it."""
    importing = user_module("import hypothesis")
    (tmp_path / "reach_kwenv_mod.py").write_text(
        "import gymnasium\n\n\nclass KwEnv(gymnasium.Env):\n"
        "    observation_space = gymnasium.spaces.Discrete(2)\n"
        "    action_space = gymnasium.spaces.Discrete(2)\n\n"
        "    def __init__(self, fn=None):\n        self.fn = fn\n")
    sys.modules.pop("reach_kwenv_mod", None)
    importlib.invalidate_caches()
    env = importlib.import_module("reach_kwenv_mod").KwEnv
    try:
        assert "hypothesis" not in specpack.capture(env).requires
        with_code = specpack.capture(env, fn=importing.Thing)
        assert with_code.requires.get("hypothesis") == version("hypothesis")
        wrapped = specpack.capture(gymnasium.wrappers.TransformReward(
            gymnasium.make("CartPole-v1"), importing.Thing))
        assert wrapped.requires.get("hypothesis") == version("hypothesis")
    finally:
        sys.modules.pop("reach_kwenv_mod", None)
