"""Bad input is refused in the parent at capture time, with a SpecPackError that names the
culprit and the fix; a constructor that raises inside make() names the pack."""

from __future__ import annotations

import io
import pickle
import sys
import threading

import gymnasium
import kwenvs  # noqa: F401 - registers KwCartPole-v0
import pytest

import specpack
from specpack import errors


class Boom(gymnasium.Env):
    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, fail=True):
        if fail:
            raise RuntimeError("the simulator license expired")


def test_unknown_id_suggests_the_closest_registered_id_in_full():
    with pytest.raises(specpack.UnknownEnvError) as info:
        specpack.capture("CartPol-v1")
    assert "did you mean 'CartPole-v1'?" in str(info.value)
    assert isinstance(info.value, specpack.SpecPackError)


def test_unknown_id_without_close_match_says_how_to_fix():
    with pytest.raises(specpack.UnknownEnvError, match="Register it first"):
        specpack.capture("Zzyzx-v9")


def test_module_id_form_that_fails_to_import_names_module_and_import_error():
    with pytest.raises(specpack.CaptureError) as info:
        specpack.capture("no_such_pkg_xyz.envs:Thing-v2")
    msg = str(info.value)
    assert "'no_such_pkg_xyz.envs'" in msg and "ModuleNotFoundError" in msg


def test_module_id_form_imports_module_and_resolves(tmp_path, monkeypatch):
    (tmp_path / "my_reg_pkg.py").write_text(
        "import gymnasium\n"
        "gymnasium.register('Thing-v2', entry_point='gymnasium.envs.classic_control:CartPoleEnv')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    pack = specpack.capture("my_reg_pkg:Thing-v2")
    assert pack.id == "Thing-v2"
    assert type(pack.make().unwrapped).__name__ == "CartPoleEnv"
    gymnasium.registry.pop("Thing-v2")


def _gen():
    yield 1


@pytest.mark.parametrize(
    "value, kind",
    [(_gen(), "generator"), (threading.Lock(), "lock"), (io.StringIO("x"), "StringIO"),
     (sys.stderr, "TextIOWrapper")],
)
def test_kwarg_that_cannot_cross_a_process_is_named(value, kind):
    with pytest.raises(specpack.UncarriableValueError) as info:
        specpack.capture("KwCartPole-v0", handle=value)
    msg = str(info.value)
    assert "kwargs['handle']" in msg and kind in msg and "cannot be carried" in msg


def test_nested_uncarriable_value_names_its_path():
    with pytest.raises(specpack.UncarriableValueError, match=r"\['cfg'\]\['inner'\]\[1\]"):
        specpack.capture("KwCartPole-v0", cfg={"inner": [1, threading.Lock()]})


def test_entry_point_that_is_not_callable_is_refused_at_capture():
    gymnasium.register("NotCallable-v0", entry_point="gymnasium.envs.classic_control.cartpole:CartPoleEnv.metadata")
    try:
        with pytest.raises(specpack.CaptureError, match="not callable"):
            specpack.capture("NotCallable-v0")
    finally:
        gymnasium.registry.pop("NotCallable-v0")


def test_entry_point_string_that_does_not_resolve_is_refused_at_capture():
    gymnasium.register("Dangling-v0", entry_point="json:NoSuchEnv")
    try:
        with pytest.raises(specpack.CaptureError, match="json:NoSuchEnv"):
            specpack.capture("Dangling-v0")
    finally:
        gymnasium.registry.pop("Dangling-v0")


def test_non_env_target_is_refused():
    with pytest.raises(specpack.CaptureError, match="cannot capture int"):
        specpack.capture(42)


def test_bad_max_episode_steps_is_refused():
    with pytest.raises(specpack.CaptureError, match="max_episode_steps"):
        specpack.capture("CartPole-v1", max_episode_steps="10")


def test_constructor_error_in_make_names_the_pack_and_chains_the_original():
    pack = specpack.capture(Boom)
    with pytest.raises(specpack.BuildError) as info:
        pack.make()
    assert "Boom" in str(info.value) and "license expired" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert pack.make(fail=False).unwrapped.__class__ is Boom


def test_constructor_error_of_registered_env_names_the_id():
    gymnasium.register("Boom-v0", entry_point=Boom)
    try:
        with pytest.raises(specpack.BuildError, match="pack Boom-v0"):
            specpack.capture("Boom-v0").make()
    finally:
        gymnasium.registry.pop("Boom-v0")


def test_by_value_false_for_a_lambda_is_refused():
    with pytest.raises(specpack.CaptureError, match="only travel by value"):
        specpack.capture(lambda: Boom(fail=False), by_value=False)


def test_capture_env_with_options_is_refused():
    env = gymnasium.make("CartPole-v1")
    with pytest.raises(specpack.CaptureError, match="takes no options"):
        specpack.capture(env, max_episode_steps=3)


def test_unpickling_a_future_format_says_upgrade():
    from specpack.pack import _restore

    with pytest.raises(specpack.SpecPackError, match="upgrade specpack"):
        _restore(99, ())


def test_every_error_class_is_a_specpack_error():
    for name in errors.__all__:
        cls = getattr(errors, name)
        if name != "VersionSkewWarning":
            assert issubclass(cls, specpack.SpecPackError), name
    assert issubclass(specpack.VersionSkewWarning, UserWarning)
    assert pickle.loads(pickle.dumps(specpack.UnknownEnvError("x"))).args == ("x",)
