"""An id or an EnvSpec resolves in ``capture`` as in ``gymnasium.make``: the same env for an id
and for its spec, namespaces, unversioned and out-of-date ids (with gymnasium's warnings),
``module:Id`` ids that import their module, and gymnasium's error types and messages for ids
that do not resolve (raised at capture, before anything is built)."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from _helpers import GYMNASIUM_0X
from _make_parity import ThreeArgs, ours, raised, registered, wrapper_types
from gymnasium.envs.classic_control import CartPoleEnv
from gymnasium.error import DeprecatedEnv, NameNotFound, NamespaceNotFound, VersionNotFound

import specpack

NAMESPACED = "parity/ThreeArgs-v2"


@pytest.fixture
def namespaced() -> Any:
    """A namespaced, versioned id with a string entry point and registered kwargs."""
    with registered(NAMESPACED, entry_point=f"{ThreeArgs.__module__}:ThreeArgs",
                    kwargs={"first": 1, "second": 2, "third": 3}, max_episode_steps=7) as env_id:
        yield env_id


@pytest.mark.parametrize("env_id", ["CartPole-v1", "FrozenLake-v1", "Pendulum-v1", NAMESPACED])
@pytest.mark.parametrize("as_spec", [False, True], ids=["id", "EnvSpec"])
def test_an_id_and_its_envspec_build_what_gymnasium_make_builds(
    env_id: str, as_spec: bool, namespaced: str
) -> None:
    target = gymnasium.spec(env_id) if as_spec else env_id
    theirs = gymnasium.make(target)
    rebuilt = ours(target)
    assert wrapper_types(rebuilt) == wrapper_types(theirs)
    assert rebuilt.spec == theirs.spec and rebuilt.spec is not None
    assert rebuilt.spec.id == env_id
    assert rebuilt.spec == ours(env_id).spec == ours(gymnasium.spec(env_id)).spec
    if env_id != NAMESPACED:  # ThreeArgs has no reset/step: nothing to roll out
        assert specpack.diff(rebuilt, theirs, steps=20, seed=5) == []


def test_a_namespaced_id_keeps_its_namespace_name_and_version(namespaced: str) -> None:
    spec = ours(namespaced).spec
    assert spec is not None
    assert (spec.namespace, spec.name, spec.version) == ("parity", "ThreeArgs", 2)


@pytest.fixture
def aged() -> Any:
    """``parity/Aged`` in two versions, registered afresh for each test."""
    with registered("parity/Aged-v0", entry_point=CartPoleEnv), \
            registered("parity/Aged-v1", entry_point=CartPoleEnv, max_episode_steps=9):
        yield


@pytest.mark.parametrize(("env_id", "resolved", "category", "warning"), [
    ("parity/Aged", "parity/Aged-v1", UserWarning, "Using the latest versioned environment "
                                                   "`parity/Aged-v1` instead of the unversioned "
                                                   "environment `parity/Aged`."),
    ("parity/Aged-v0", "parity/Aged-v0", DeprecationWarning, "The environment parity/Aged-v0 is "
                                                             "out of date. You should consider "
                                                             "upgrading to version `v1`."),
], ids=["unversioned", "out-of-date"])
def test_unversioned_and_outdated_ids_resolve_and_warn_as_gymnasium_make(
    aged: None, env_id: str, resolved: str, category: type[Warning], warning: str
) -> None:
    with pytest.warns(category, match=re.escape(warning)):
        theirs = gymnasium.make(env_id)
    with pytest.warns(category, match=re.escape(warning)):
        pack = specpack.capture(env_id)
    rebuilt = pack.make()
    assert rebuilt.spec == theirs.spec and rebuilt.spec is not None
    assert rebuilt.spec.id == resolved


_REGISTERS_ON_IMPORT = '''
import gymnasium


class Imported(gymnasium.Env):
    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)


gymnasium.register("ImportedOnCapture-v0", entry_point=Imported)
'''


def test_a_module_prefixed_id_imports_the_module_that_registers_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "registers_on_import.py").write_text(_REGISTERS_ON_IMPORT)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "ImportedOnCapture-v0" not in gymnasium.registry
    try:
        rebuilt = ours("registers_on_import:ImportedOnCapture-v0")
        assert "ImportedOnCapture-v0" in gymnasium.registry
        theirs = gymnasium.make("registers_on_import:ImportedOnCapture-v0")
        assert type(rebuilt.unwrapped) is type(theirs.unwrapped)
        assert type(rebuilt.unwrapped).__module__ == "registers_on_import"
        assert rebuilt.spec == theirs.spec and rebuilt.spec is not None
        assert rebuilt.spec.id == "ImportedOnCapture-v0"
    finally:
        gymnasium.registry.pop("ImportedOnCapture-v0", None)
        sys.modules.pop("registers_on_import", None)


@pytest.mark.parametrize(("env_id", "kind"), [
    ("NoSuchEnvAnywhere-v0", NameNotFound),
    ("cartpole-v1", NameNotFound),
    ("CartPole-v9", VersionNotFound),
    ("nowhere/CartPole-v1", NamespaceNotFound),
    ("Acrobot-v0", DeprecatedEnv),
    ("Humanoid-v0", DeprecatedEnv),
])
def test_an_id_that_does_not_resolve_raises_gymnasiums_error_at_capture(
    env_id: str, kind: type[Exception]
) -> None:
    theirs = raised(lambda: gymnasium.make(env_id))
    assert type(theirs) is kind
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(kind) as caught:
            specpack.capture(env_id)
    assert isinstance(caught.value, specpack.UnknownEnvError)
    # gymnasium's first sentence is quoted in ours (its own "did you mean" is replaced by ours)
    first_sentence = str(theirs).split(". ")[0].rstrip(".")
    assert first_sentence in str(caught.value)
    assert repr(env_id) in str(caught.value)


def test_a_deprecated_version_names_the_version_to_use_as_gymnasium_does() -> None:
    theirs = raised(lambda: gymnasium.make("Acrobot-v0"))
    error = raised(lambda: specpack.capture("Acrobot-v0"))
    wording = "Environment version v0 for `Acrobot` is deprecated. Please use `Acrobot-v1` instead."
    assert str(theirs) == wording and wording in str(error)


@pytest.mark.parametrize("option", ["autoreset", "apply_api_compatibility"])
def test_make_options_gymnasium_1_removed_are_refused_at_capture_naming_the_way_out(
    option: str,
) -> None:
    if GYMNASIUM_0X:
        # gymnasium 0.28/0.29's make still takes both (deprecated): capture follows it for
        # autoreset (AutoResetWrapper) and refuses apply_api_compatibility naming backend='gym'
        # (EnvCompatibility is not rebuilt); test_make_parity_lines.py has the rollouts.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            made = gymnasium.make("CartPole-v1", **{option: True})
        assert isinstance(made, gymnasium.Env)
        if option == "autoreset":
            pack = specpack.capture("CartPole-v1", autoreset=True)
            assert type(pack.make()) is type(made) is gymnasium.wrappers.AutoResetWrapper
        else:
            error = raised(lambda: specpack.capture("CartPole-v1", apply_api_compatibility=True))
            assert isinstance(error, specpack.CaptureError)
            assert "EnvCompatibility" in str(error) and "backend='gym'" in str(error)
        return
    theirs = raised(lambda: gymnasium.make("CartPole-v1", **{option: True}))
    assert isinstance(theirs, TypeError)
    assert f"unexpected keyword argument '{option}'" in str(theirs)
    error = raised(lambda: specpack.capture("CartPole-v1", **{option: True}))
    assert isinstance(error, specpack.CaptureError) and isinstance(error, TypeError)
    assert str(error).startswith(f"{option}: only the legacy gym.make takes this option")
    assert "env_kwargs={...}" in str(error)


def test_errors_are_of_the_types_gymnasium_make_raises_for_the_same_mistake() -> None:
    """Code that catches what gymnasium.make raises keeps catching what capture/make raise:
    a target that is not an env, a ``module:Id`` whose module is not installed, an entry point
    that returns something other than an env."""
    cases = [
        (TypeError, lambda: gymnasium.make(3), lambda: specpack.capture(3)),  # type: ignore[arg-type]
        (ModuleNotFoundError, lambda: gymnasium.make("no_such_module_x:Thing-v0"),
         lambda: specpack.capture("no_such_module_x:Thing-v0")),
    ]
    for kind, theirs, ours_ in cases:
        # gymnasium 1.0 asserted on a target that is not an id or a spec; 1.1+ raises TypeError
        assert isinstance(raised(theirs), (kind, AssertionError))
        error = raised(ours_)
        assert isinstance(error, kind) and isinstance(error, specpack.CaptureError), error

    with registered("NotAnEnv-v0", entry_point=lambda: object()) as env_id:
        # gymnasium 0.28/0.29's make does not check: it fails setting the object's spec
        theirs_kind = AttributeError if GYMNASIUM_0X else TypeError
        assert isinstance(raised(lambda: gymnasium.make(env_id)), theirs_kind)
        pack = specpack.capture(env_id)
        error = raised(pack.make)
        assert isinstance(error, TypeError) and isinstance(error, specpack.BuildError), error
        assert "returned object, not a gymnasium.Env" in str(error)
