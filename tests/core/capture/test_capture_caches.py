"""What a first capture keeps between captures follows every change it depends on.

A first capture keeps, per entry point and per wrapper, what cannot differ from one capture to
the next while nothing changes: the ``requires`` of the same code (checked against its classes'
MROs, the module objects in ``sys.modules`` and which of the modules found are loaded), the
newest registered version of an id (checked against the very specs the registry holds), a
library wrapper's checked layer, an entry module's distribution. Each test changes one thing
these depend on and asks, through the public face, for the answer a cold process would give.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
import uuid
import warnings
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from gymnasium.envs.registration import register, registry
from test_requires_cache import PLAIN_ENV

import specpack
from specpack._core._capture import _memo
from specpack._core._carry import importable

BASE = "import gymnasium\n{imports}\n\n\nclass Base(gymnasium.Env):\n    pass\n"
CARTPOLE = "gymnasium.envs.classic_control.cartpole:CartPoleEnv"


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    """Write a user's module (an env module, or its base's) where a fresh interpreter finds it
    too (``PYTHONPATH``: its code travels by reference, as an installed package's does) and
    import it afresh; the same name again replaces the module in ``sys.modules``."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path),
                                                      os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(str(tmp_path))
    importable._installation_paths.cache_clear()
    importable._fresh_importable_cached.cache_clear()
    names: list[str] = []

    def load(name: str, text: str) -> Any:
        (tmp_path / f"{name}.py").write_text(text)
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        names.append(name)
        return importlib.import_module(name)

    yield load
    for name in names:
        sys.modules.pop(name, None)
    importable._installation_paths.cache_clear()
    importable._fresh_importable_cached.cache_clear()


def _names() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"caches_env_{tag}", f"caches_base_{tag}"


def _env(load: Callable[..., Any], imports: str = "", base_imports: str = "",
         name: str | None = None) -> Any:
    env_name, base_name = _names()
    load(base_name, BASE.format(imports=base_imports))
    return load(name or env_name, PLAIN_ENV.format(
        imports=f"{imports}\nfrom {base_name} import Base", base="Base"))


def test_an_id_registered_again_with_an_entry_point_of_another_module_names_its_requires(
        modules: Callable[..., Any], ids: list[str]) -> None:
    plain = _env(modules)
    importing = _env(modules, imports="import hypothesis")
    env_id = f"CachesSwap{uuid.uuid4().hex[:6]}-v0"
    ids.append(env_id)
    for module, expected in ((plain, None), (importing, version("hypothesis")), (plain, None)):
        registry.pop(env_id, None)
        register(env_id, entry_point=f"{module.__name__}:Thing")
        for _ in range(2):  # through the memo, then a first capture with the caches warm
            pack = specpack.capture(env_id)
            assert pack.entry_point.module == module.__name__ and not pack.entry_point.by_value
            assert pack.requires.get("hypothesis") == expected
            assert pack.requires["gymnasium"] == gymnasium.__version__
            _memo.clear()


def test_requires_follows_a_base_class_module_replaced_in_sys_modules(
        modules: Callable[..., Any]) -> None:
    """The class and its MRO stay the same objects; the module its base comes from is another
    one now (reloaded after an edit): what that module imports is read again."""
    env_name, base_name = _names()
    modules(base_name, BASE.format(imports=""))
    thing = modules(env_name, PLAIN_ENV.format(imports=f"from {base_name} import Base",
                                               base="Base")).Thing
    assert not specpack.capture(thing).entry_point.by_value
    assert "hypothesis" not in specpack.capture(thing).requires
    modules(base_name, BASE.format(imports="import hypothesis"))
    assert specpack.capture(thing).requires.get("hypothesis") == version("hypothesis")
    modules(base_name, BASE.format(imports=""))
    assert "hypothesis" not in specpack.capture(thing).requires


def test_requires_follows_a_class_whose_bases_were_reassigned(
        modules: Callable[..., Any]) -> None:
    """The same class object with new ``__bases__`` (a new ``__mro__``): the new base's module
    is read, and the old one's again once they are put back."""
    thing = _env(modules).Thing
    _, mixin_name = _names()
    mixin = modules(mixin_name, BASE.format(imports="import hypothesis")).Base
    assert "hypothesis" not in specpack.capture(thing).requires
    bases = thing.__bases__
    thing.__bases__ = (mixin,)
    assert specpack.capture(thing).requires.get("hypothesis") == version("hypothesis")
    thing.__bases__ = bases
    assert "hypothesis" not in specpack.capture(thing).requires


def test_requires_follows_a_module_the_code_imports_leaving_sys_modules(
        modules: Callable[..., Any]) -> None:
    """A module the env's module imports that is no longer loaded names nothing (as a cold
    process that never loaded it would find), and names its distribution again once back."""
    thing = _env(modules, imports="import iniconfig").Thing
    expected = version("iniconfig")
    assert specpack.capture(thing).requires.get("iniconfig") == expected
    iniconfig = sys.modules.pop("iniconfig")
    try:
        assert "iniconfig" not in specpack.capture(thing).requires
    finally:
        sys.modules["iniconfig"] = iniconfig
    assert specpack.capture(thing).requires.get("iniconfig") == expected


def _captured(target: str, **options: Any) -> tuple[specpack.SpecPack, list[str]]:
    """A first capture of ``target`` and the warnings it gave."""
    _memo.clear()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pack = specpack.capture(target, **options)
    return pack, [str(w.message) for w in seen]


def test_the_newest_version_of_an_id_follows_each_registration(ids: list[str]) -> None:
    name = f"CachesPole{uuid.uuid4().hex[:6]}"
    first, newer, newest = f"{name}-v1", f"{name}-v3", f"{name}-v2"
    register(first, entry_point=CARTPOLE)
    ids.extend((first, newer, newest))
    seen = _captured(first)[1]
    assert not any("out of date" in text for text in seen)
    assert _captured(name)[0].id == first
    register(newer, entry_point=CARTPOLE)
    seen = _captured(first)[1]
    assert any(f"{first} is out of date" in text and "`v3`" in text for text in seen)
    assert _captured(name)[0].id == newer
    registry.pop(newer)
    register(newest, entry_point=CARTPOLE)  # as many specs as before, one of them another
    seen = _captured(first)[1]
    assert any(f"{first} is out of date" in text and "`v2`" in text for text in seen)
    assert _captured(name)[0].id == newest
    registry.pop(newest)
    seen = _captured(first)[1]
    assert not any("out of date" in text for text in seen)
    assert _captured(name)[0].id == first


def test_a_library_wrapper_of_an_id_is_checked_until_its_kwargs_pass(ids: list[str]) -> None:
    """A wrapper's layer is kept only once its kwargs passed the check: a kwarg it cannot take
    is refused at every first capture, and the same wrapper with kwargs it takes is then kept."""
    from gymnasium.envs.registration import WrapperSpec

    env_id = f"CachesWrapped{uuid.uuid4().hex[:6]}-v0"
    ids.append(env_id)
    bad = WrapperSpec("TimeLimit", "gymnasium.wrappers:TimeLimit", {"max_episode_step": 3})
    register(env_id, entry_point=CARTPOLE, additional_wrappers=(bad,))
    for _ in range(2):
        with pytest.raises(specpack.UnexpectedKwargError, match="max_episode_step"):
            _captured(env_id)
    registry.pop(env_id)
    good = WrapperSpec("TimeLimit", "gymnasium.wrappers:TimeLimit", {"max_episode_steps": 3})
    register(env_id, entry_point=CARTPOLE, additional_wrappers=(good,))
    for _ in range(2):
        assert _captured(env_id)[0].layers[0].kwargs == {"max_episode_steps": 3}


def test_the_versions_record_follows_the_entry_module_registered_by_value_or_replaced(
        tmp_path: Path) -> None:
    """The distribution of the entry point in ``versions`` is its module's (any callable from
    an installed distribution, here pytest's iniconfig): none while that module is registered
    by value, none while ``sys.modules`` holds another module under its name (one from no
    distribution), the distribution's again after either."""
    import cloudpickle
    import iniconfig

    expected = {"env_distribution": "iniconfig", "env_version": version("iniconfig")}

    def recorded() -> dict[str, str]:
        versions = specpack.capture(iniconfig.IniConfig).versions
        return {k: versions[k] for k in ("env_distribution", "env_version") if k in versions}

    assert recorded() == expected
    cloudpickle.register_pickle_by_value(iniconfig)
    try:
        assert recorded() == {}
    finally:
        cloudpickle.unregister_pickle_by_value(iniconfig)
    assert recorded() == expected
    stand_in = types.ModuleType("iniconfig")
    stand_in.__file__ = str(tmp_path / "iniconfig.py")
    sys.modules["iniconfig"] = stand_in
    try:
        assert recorded() == {}
    finally:
        sys.modules["iniconfig"] = iniconfig
    assert recorded() == expected
