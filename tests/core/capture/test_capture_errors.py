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
from specpack._core import _errors as errors


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


@pytest.mark.parametrize(
    ("source", "entry", "gym_type"),
    [
        ("import gymnasium\nraise gymnasium.error.DependencyNotInstalled('Box9D is not installed')\n",
         "needs_dep_mod:Env", gymnasium.error.DependencyNotInstalled),
        (None, "no_such_module_for_specpack:Env", ImportError),
        ("X = 1\n", "has_no_env_mod:Env", AttributeError),
    ],
    ids=["dependency-not-installed", "missing-module", "missing-name"],
)
def test_entry_point_that_fails_to_load_is_also_the_error_gymnasium_make_lets_through(
        source, entry, gym_type, tmp_path, monkeypatch):
    """Code that catches what ``gymnasium.make`` raises for a missing dependency, module or
    name keeps catching it from capture (which also names the entry point and the fix)."""
    module = entry.partition(":")[0]
    if source is not None:
        (tmp_path / f"{module}.py").write_text(source)
        monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    gymnasium.register("LoadFails-v0", entry_point=entry)
    try:
        with pytest.raises(gym_type):
            gymnasium.make("LoadFails-v0")
        with pytest.raises(specpack.CaptureError, match=f"cannot load the entry point of "
                           f"'LoadFails-v0' '{entry}'") as caught:
            specpack.capture("LoadFails-v0")
        assert isinstance(caught.value, gym_type)
    finally:
        gymnasium.registry.pop("LoadFails-v0")
        sys.modules.pop(module, None)


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


def test_every_error_class_is_a_specpack_error():
    for name, cls in vars(errors).items():
        if (isinstance(cls, type) and cls.__module__.startswith("specpack")
                and name != "VersionSkewWarning"):
            assert issubclass(cls, specpack.SpecPackError), f"specpack._core._errors.{name}"
    assert issubclass(specpack.VersionSkewWarning, UserWarning)
    assert pickle.loads(pickle.dumps(specpack.UnknownEnvError("x"))).args == ("x",)


@pytest.mark.parametrize(("env_id", "gym_error"), [
    ("CartPol-v1", "NameNotFound"),
    ("CartPole-v9", "VersionNotFound"),
    ("NoSuchNamespace/Bar-v0", "NamespaceNotFound"),
])
def test_unknown_id_raises_what_gymnasium_make_raises_and_a_specpack_error(env_id, gym_error):
    with pytest.raises(getattr(gymnasium.error, gym_error)) as theirs:
        gymnasium.make(env_id)
    with pytest.raises(getattr(gymnasium.error, gym_error)) as ours:
        specpack.capture(env_id)
    assert isinstance(ours.value, specpack.UnknownEnvError)
    assert type(theirs.value) in type(ours.value).__mro__


def test_constructor_type_error_is_a_build_error_and_a_type_error_chained_to_the_cause():
    class Picky(gymnasium.Env):
        def __init__(self, n: int = 1) -> None:
            if not isinstance(n, int):
                raise TypeError("n must be an int")

    pack = specpack.capture(Picky)
    with pytest.raises(TypeError) as info:
        pack.make(n="x")
    assert isinstance(info.value, specpack.BuildError)
    assert isinstance(info.value.__cause__, TypeError) and "n must be an int" in str(info.value)
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, TypeError) and isinstance(again, specpack.BuildError)


def test_unversioned_id_takes_the_latest_version_with_gymnasiums_warning():
    with pytest.warns(UserWarning, match="latest versioned environment `CartPole-v1`"):
        pack = specpack.capture("CartPole")
    assert pack.id == "CartPole-v1"


def test_render_mode_outside_render_modes_warns_as_gymnasium_make_does():
    with pytest.warns(UserWarning, match="not in the possible render_modes") as theirs:
        gymnasium.make("CartPole-v1", render_mode="ascii").close()
    with pytest.warns(UserWarning, match="not in the possible render_modes") as ours:
        specpack.capture("CartPole-v1", render_mode="ascii").make().close()
    assert [str(w.message) for w in ours if "render_modes" in str(w.message)] == [
        str(w.message) for w in theirs if "render_modes" in str(w.message)]


@pytest.mark.parametrize(("typo", "option"), [("max_episode_step", "max_episode_steps"),
                                              ("record_space", "record_spaces"),
                                              ("disable_env_checkr", "disable_env_checker")])
def test_a_mistyped_capture_option_is_refused_with_a_suggestion_of_the_option(
        typo: str, option: str) -> None:
    with pytest.raises(specpack.UnexpectedKwargError) as info:
        specpack.capture("CartPole-v1", **{typo: 10})
    message = str(info.value)
    assert f"did you mean the capture option {option!r}?" in message, message


def test_a_missing_asset_is_a_file_not_found_error_naming_the_path(tmp_path):
    missing = tmp_path / "missing.xml"
    with pytest.raises(FileNotFoundError) as info:
        specpack.capture("CartPole-v1", assets=[missing])
    e = info.value
    assert isinstance(e, specpack.SpecPackError) and isinstance(e, errors.PackFileError)
    assert e.filename == str(missing) and str(missing) in str(e) and "does not exist" in str(e)
    assert pickle.loads(pickle.dumps(e)).filename == str(missing)


def test_a_dangling_link_inside_an_asset_folder_is_a_file_not_found_error_naming_the_link(
        tmp_path):
    folder = tmp_path / "meshes"
    folder.mkdir()
    (folder / "ok.stl").write_bytes(b"solid")
    (folder / "gone.stl").symlink_to(tmp_path / "nowhere.stl")
    for carry in (False, True):
        with pytest.raises(FileNotFoundError) as info:
            specpack.capture("CartPole-v1", assets=[folder], self_contained=carry)
        e = info.value
        assert isinstance(e, specpack.SpecPackError)
        assert e.filename == str(folder / "gone.stl") and "dangling link" in str(e)
