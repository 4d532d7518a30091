"""The pack as a value: immutable, deep-copied kwargs with exact types, hashable by content,
a stable fingerprint, a readable repr, and a __reduce__ every pickler can use."""

from __future__ import annotations

import pickle
import subprocess
import sys

import cloudpickle
import gymnasium
import numpy as np
import pytest
from _helpers import GYMNASIUM_0X

import specpack


class Goal(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, goal=1.0, table=None, fn=None):
        self.goal = goal
        self.table = table
        self.fn = fn

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.full(2, self.goal, np.float32).clip(-1, 1), {}

    def step(self, action):
        return np.zeros(2, np.float32), float(self.goal), False, False, {}


def test_kwargs_are_read_only_and_keep_exact_types():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    pack = specpack.capture(Goal, goal=5.0, table={"t": (1, 2), 3: arr, "s": {1, 2}})
    kwargs = pack.kwargs
    with pytest.raises(TypeError):
        kwargs["goal"] = 2.0  # type: ignore[index]
    table = kwargs["table"]
    assert type(table["t"]) is tuple and table[3].dtype == np.float32 and table[3].shape == (2, 3)
    assert type(table["s"]) is set
    with pytest.raises(AttributeError):
        pack.id = "x"  # type: ignore[misc]


def test_mutating_the_callers_objects_after_capture_changes_nothing():
    table = {"weights": [1, 2, 3]}
    arr = np.zeros(3)
    pack = specpack.capture(Goal, table=table, goal=arr)
    table["weights"].append(4)
    arr[:] = 9
    assert pack.kwargs["table"] == {"weights": [1, 2, 3]}
    assert pack.make().unwrapped.table == {"weights": [1, 2, 3]}
    assert np.all(pack.kwargs["goal"] == 0)


def test_each_make_gets_its_own_copy_of_mutable_kwargs():
    pack = specpack.capture(Goal, table={"weights": [1]})
    a, b = pack.make().unwrapped, pack.make().unwrapped
    a.table["weights"].append(2)
    assert b.table == {"weights": [1]}


def test_fingerprint_agrees_between_id_and_envspec_and_survives_pickle():
    a = specpack.capture("CartPole-v1")
    b = specpack.capture(gymnasium.spec("CartPole-v1"))
    assert a.fingerprint == b.fingerprint and a == b and hash(a) == hash(b)
    assert pickle.loads(pickle.dumps(a)).fingerprint == a.fingerprint
    assert cloudpickle.loads(cloudpickle.dumps(a)).fingerprint == a.fingerprint
    assert len({a, b}) == 1


@pytest.mark.parametrize(
    "other",
    [
        {"max_episode_steps": 10},
        {"disable_env_checker": True},
        {"render_mode": "rgb_array"},
        # gymnasium 0.28/0.29's CartPole takes no other kwarg (sutton_barto_reward came in 1.0)
        *([] if GYMNASIUM_0X else [{"sutton_barto_reward": True}]),
    ],
)
def test_fingerprint_differs_when_anything_that_shapes_the_env_differs(other):
    assert specpack.capture("CartPole-v1").fingerprint != specpack.capture(
        "CartPole-v1", **other
    ).fingerprint


def test_fingerprint_distinguishes_int_from_float_and_tuple_from_list():
    assert specpack.capture(Goal, goal=1).fingerprint != specpack.capture(Goal, goal=1.0).fingerprint
    assert (
        specpack.capture(Goal, table=(1, 2)).fingerprint
        != specpack.capture(Goal, table=[1, 2]).fingerprint
    )


def test_fingerprint_is_stable_across_processes_for_by_reference_packs():
    code = "import specpack; print(specpack.capture('CartPole-v1', max_episode_steps=7).fingerprint)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == specpack.capture("CartPole-v1", max_episode_steps=7).fingerprint


def test_repr_is_readable_and_says_state_is_not_captured():
    text = repr(specpack.capture("CartPole-v1", max_episode_steps=7))
    assert text.startswith("<SpecPack id='CartPole-v1' TimeLimit<OrderEnforcing<PassiveEnvChecker<")
    assert "no run-time state" in text


def test_properties_id_max_episode_steps_kwargs():
    pack = specpack.capture("CartPole-v1", max_episode_steps=7)
    assert pack.id == "CartPole-v1" and pack.max_episode_steps == 7 and dict(pack.kwargs) == {}
    assert specpack.capture("CartPole-v1").max_episode_steps == 500
    if GYMNASIUM_0X:  # 0.28/0.29's make would wrap TimeLimit(env, -1): capture refuses
        with pytest.raises(specpack.CaptureError, match=r"TimeLimit\(env, -1\)"):
            specpack.capture("CartPole-v1", max_episode_steps=-1)
    else:
        assert specpack.capture("CartPole-v1", max_episode_steps=-1).max_episode_steps is None


def test_class_capture_applies_make_semantics_and_callable_kwargs_rebuild():
    pack = specpack.capture(Goal, goal=0.5, fn=lambda x: x * 2, max_episode_steps=3)
    assert pack.id is None
    env = pickle.loads(pickle.dumps(pack)).make()
    assert [type(e).__name__ for e in (env, env.env, env.env.env)] == [
        "TimeLimit", "OrderEnforcing", "PassiveEnvChecker"]
    assert env.unwrapped.fn(21) == 42 and env.unwrapped.goal == 0.5


def test_factory_function_capture():
    def factory(goal=0.25):
        return Goal(goal=goal)

    pack = specpack.capture(factory, goal=0.75)
    assert pack.entry_point.by_value
    assert pickle.loads(pickle.dumps(pack)).make().unwrapped.goal == 0.75


def test_by_value_can_be_forced_for_importable_code():
    ref = specpack.capture("CartPole-v1")
    val = specpack.capture("CartPole-v1", by_value=True)
    assert not ref.entry_point.by_value and val.entry_point.by_value
    assert specpack.diff(val.make(), ref.make(), steps=20) == []
    # gymnasium's own wrappers stay by reference
    assert not any(layer.cls.by_value for layer in val.layers)


def test_capture_of_a_pack_returns_it():
    pack = specpack.capture("CartPole-v1")
    assert specpack.capture(pack) is pack


def test_fresh_importability_uses_files_not_sys_modules(tmp_path):
    from specpack._core._carry.importable import fresh_importable

    assert fresh_importable("gymnasium.envs.classic_control.cartpole")
    assert fresh_importable("json")
    assert not fresh_importable("__main__")
    assert not fresh_importable("test_core_value")  # pytest put tests/ on sys.path at run time


def test_repeated_capture_of_an_id_follows_re_registration_and_kwarg_types():
    gymnasium.register("Memo-v0", entry_point="kwenvs:KwCartPole",
                       max_episode_steps=10)
    try:
        a = specpack.capture("Memo-v0")
        assert specpack.capture("Memo-v0") == a
        gymnasium.registry["Memo-v0"].max_episode_steps = 20  # edited in place
        assert specpack.capture("Memo-v0").max_episode_steps == 20
        gymnasium.register("Memo-v0", entry_point="kwenvs:KwCartPole",
                           max_episode_steps=30)  # re-registered
        assert specpack.capture("Memo-v0").max_episode_steps == 30
        assert type(specpack.capture("Memo-v0", x=1.0).kwargs["x"]) is float
        assert type(specpack.capture("Memo-v0", x=1).kwargs["x"]) is int
    finally:
        gymnasium.registry.pop("Memo-v0")


def test_repr_stays_bounded_for_huge_kwargs():
    pack = specpack.capture(Goal, goal=10**6000, table=list(range(10_000)))
    text = repr(pack)
    assert "hex digits" in text and len(text) < 400


def test_by_value_code_from_another_python_is_refused_even_when_loaded_here():
    from specpack import CodeRef

    def factory():
        return Goal()

    ref = specpack.capture(factory).entry_point
    ref.load()  # cached in this process now
    other = CodeRef(ref.module, ref.qualname, ref.payload, "2.7")
    with pytest.raises(specpack.BuildError, match=r"under Python 2\.7"):
        other.load()
    with pytest.raises(specpack.BuildError, match="says nothing about the Python version"):
        CodeRef(ref.module, ref.qualname, ref.payload, None).load()


def test_flags_are_keyword_only_the_positional_forms_deprecated_for_0_3_are_gone(tmp_path):
    pack = specpack.capture("CartPole-v1")
    specpack.dump(pack, tmp_path / "p.pack", key=b"k" * 32)
    for call in (lambda: specpack.verify(pack, 5, 0),
                 lambda: specpack.dump(pack, tmp_path / "q.pack", b"k" * 32),
                 lambda: specpack.load(tmp_path / "p.pack", False, b"k" * 32),
                 lambda: specpack.diff(pack.make(), pack.make(), 5)):
        with pytest.raises(TypeError, match="positional"):
            call()
    assert specpack.load(tmp_path / "p.pack", key=b"k" * 32) == pack


def test_packs_with_one_fingerprint_but_different_recorded_spaces_unpickle_to_their_own_spaces(
) -> None:
    import dataclasses

    from specpack._core._surface import record_surface

    env = gymnasium.make("CartPole-v1")
    base = specpack.capture("CartPole-v1")
    surface = record_surface(env)
    env.close()
    other = dataclasses.replace(
        surface, observation_space=gymnasium.spaces.Box(-1.0, 1.0, (4,), dtype=np.float64),
        metadata={**surface.metadata, "render_fps": 7})
    a, b = base.evolve(surface=surface), base.evolve(surface=other)
    assert a.fingerprint == b.fingerprint
    for _ in range(2):  # the second round is served from the unpickle cache
        ua, ub = pickle.loads(pickle.dumps(a)), pickle.loads(pickle.dumps(b))
        assert ua is not ub
        assert ua.observation_space == a.observation_space
        assert ub.observation_space == b.observation_space != a.observation_space
        assert ub.metadata is not None and ub.metadata["render_fps"] == 7
        assert ua.metadata is not None and ua.metadata["render_fps"] != 7


def test_a_pickle_of_a_pack_without_requires_assets_or_seal_round_trips() -> None:
    pack = specpack.capture("CartPole-v1", max_episode_steps=5)
    assert pack.__reduce__()[1][:2] == (6, specpack.__version__)  # format 6, this version
    again = pickle.loads(pickle.dumps(pack))
    assert again == pack and (again.assets, again.sealed) == ((), None)
    assert dict(again.requires) == dict(pack.requires)


# -- one declaration of the fields --------------------------------------------------------------


def _init_fields() -> list[str]:
    import dataclasses

    return [f.name for f in dataclasses.fields(specpack.SpecPack) if f.init]


def test_the_pack_is_one_frozen_slotted_dataclass_without_mixins():
    import dataclasses

    pack = specpack.capture("CartPole-v1")
    assert dataclasses.is_dataclass(specpack.SpecPack)
    # no face mixins: the pack's class adds only methods (no slot, no field) to the one
    # dataclass that declares the fields, whose base holds only the slot for weak references
    # (what is derived from a pack is kept beside it, by identity: specpack._core._beside)
    cls, value_cls, base, top = specpack.SpecPack.__mro__
    assert (cls, top) == (specpack.SpecPack, object) and base.__slots__ == ("__weakref__",)
    assert cls.__slots__ == () and "__dataclass_fields__" not in vars(cls)
    assert dataclasses.fields(cls) == dataclasses.fields(value_cls)
    assert set(vars(base)) <= {"__module__", "__qualname__", "__doc__", "__slots__",
                               "__weakref__"}
    assert not hasattr(pack, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        pack.id = "Other-v0"
    assert _init_fields() == ["backend", "id", "entry_point", "_kwargs", "spec", "layers",
                              "auto_render", "versions", "notes", "vector", "surface",
                              "_requires", "assets", "sealed"]


def test_the_pickled_state_is_the_fingerprint_then_each_field_in_declaration_order():
    pack = specpack.capture("CartPole-v1", max_episode_steps=9, record_spaces=True)
    state = pack._state()
    # the fingerprint as its digest's 32 bytes (41 fewer than its text)
    assert "sha256:" + state[0].hex() == pack.fingerprint and len(state[0]) == 32
    assert len(state) == 1 + len(_init_fields())
    at = {name: state[i + 1] for i, name in enumerate(_init_fields())}
    assert (at["backend"], at["id"], at["surface"]) == ("gymnasium", "CartPole-v1",
                                                        pack.surface)
    assert at["versions"] == dict(pack.versions) and at["_requires"] == dict(pack.requires)


def test_the_manifest_fields_are_the_packs_constructor_fields():
    from specpack._core._fileformat.manifest import decode_fields, parse_manifest

    pack = specpack.capture(Goal, goal=0.5, max_episode_steps=5, record_spaces=True)
    fields = decode_fields(parse_manifest(pack.to_json()))
    assert list(fields) == _init_fields()
    assert specpack.SpecPack(**fields) == pack


def test_evolve_copies_with_changes_and_leaves_the_pack_as_it_was():
    pack = specpack.capture("CartPole-v1", max_episode_steps=9)
    # a version no venv has, so the pack's own requires (the installed gymnasium) differ
    noted = pack.evolve(notes=("checked",), requires={"gymnasium": "0.0.1"})
    assert noted.notes == ("checked",) and dict(noted.requires) == {"gymnasium": "0.0.1"}
    assert noted.fingerprint == pack.fingerprint and noted is not pack
    assert pack.notes == () and pack.requires.get("gymnasium") != "0.0.1"
    same = pack.evolve()
    assert all(getattr(same, name) == getattr(pack, name) for name in _init_fields())
    assert pack.evolve(id="Other-v1").fingerprint != pack.fingerprint
    with pytest.raises(TypeError):
        pack.evolve(colour="red")


def test_fields_given_in_other_forms_are_normalised_and_mappings_are_the_packs_own():
    pack = specpack.capture("CartPole-v1")
    requires = {"gymnasium": "0.0.1"}
    versions = dict(pack.versions)
    spec = dict(pack.spec)
    other = pack.evolve(layers=list(pack.layers), notes=["a"], assets=[], auto_render=1,
                        vector=0, requires=requires, versions=versions, spec=spec)
    assert type(other.layers) is tuple and other.layers == pack.layers
    assert other.notes == ("a",) and other.assets == ()
    assert other.auto_render is True and other.vector is False
    requires["gymnasium"] = "9"
    versions["gymnasium"] = "9"
    assert dict(other.requires) == {"gymnasium": "0.0.1"}
    assert other.versions["gymnasium"] == pack.versions["gymnasium"] != "9"
    before = (other.fingerprint, pickle.dumps(other))
    spec["max_episode_steps"] = 3
    assert other.spec == pack.spec and "max_episode_steps" not in other.spec
    assert (other.fingerprint, pickle.dumps(other)) == before and other == pack


def test_with_surface_still_works_for_one_release_with_a_deprecation_warning():
    pack = specpack.capture("CartPole-v1", record_spaces=True)
    with pytest.warns(DeprecationWarning, match=r"evolve\(surface=s\)") as warned:
        again = specpack.capture("CartPole-v1").with_surface(pack.surface)
    assert again.surface == pack.surface
    assert warned[0].filename == __file__  # the caller's line, past the keyword check


@pytest.mark.parametrize(("call", "typo", "meant"), [
    (lambda p: specpack.verify(p, stesp=3), "stesp", "steps"),
    (lambda p: specpack.seal(p, sed=1), "sed", "seed"),
    (lambda p: specpack.check(p, wher="here"), "wher", "where"),
])
def test_a_mistyped_keyword_of_a_proof_function_gets_a_did_you_mean(call, typo, meant):
    from specpack._core._errors import UnknownKeywordError

    with pytest.raises(UnknownKeywordError) as info:
        call(specpack.capture("CartPole-v1"))
    assert f"'{typo}'; did you mean '{meant}'?" in str(info.value)


@pytest.mark.parametrize(("call", "typo", "meant"), [
    (lambda p: p.register(idd="Typo-v0"), "idd", "id"),
    (lambda p: p.to_json(indnt=1), "indnt", "indent"),
    (lambda p: type(p).from_json(p.to_json(), trsut=True), "trsut", "trust"),
    (lambda p: p.with_surface(surfce="x"), "surfce", "surface"),
])
def test_a_mistyped_keyword_of_a_pack_method_gets_a_did_you_mean_without_self(call, typo, meant):
    from specpack._core._errors import UnknownKeywordError

    pack = specpack.capture("CartPole-v1")
    with pytest.raises(UnknownKeywordError) as info:
        call(pack)
    text = str(info.value)
    assert f"'{typo}'; did you mean '{meant}'?" in text and isinstance(info.value, TypeError)
    assert "self" not in text.split("It takes:")[1] and "cls" not in text.split("It takes:")[1]


def test_make_keeps_taking_any_env_kwarg_and_is_not_wrapped():
    # make() takes **kwargs for the env (its typo hint is the backend's): no wrapper, no cost.
    assert specpack.SpecPack.make.__name__ == "make"
    assert not hasattr(specpack.SpecPack.make, "__wrapped__")
    with pytest.raises(TypeError, match=r"did you mean 'render_mode'\?"):
        specpack.capture("CartPole-v1").make(rendr_mode="rgb_array")


# -- a value: nothing changes it after it is made ---------------------------------------------

#: A fresh interpreter: unpickle the parent's bytes, build, and pickle the pack again.
ELSEWHERE = """
import json, pickle, sys
pack = pickle.loads(open(sys.argv[1], "rb").read())
before = pickle.dumps(pack)
env = pack.make()
env.reset(seed=0)
env.close()
again = pickle.dumps(pack)
open(sys.argv[2], "wb").write(again)
print(json.dumps({"requires": dict(pack.requires), "fingerprint": pack.fingerprint,
                  "same": again == before}))
"""


def _fields(pack: specpack.SpecPack) -> dict[str, object]:
    import dataclasses

    return {f.name: getattr(pack, f.name) for f in dataclasses.fields(pack)}


@pytest.mark.parametrize("record_spaces", [False, True])
def test_make_changes_nothing_of_a_pack_here_or_in_another_process(tmp_path, record_spaces):
    """Pickle bytes, ``requires``, fingerprint, equality and every field (the very objects)
    are the same before and after ``make()``, here and in a fresh interpreter that unpickles
    and builds it. (Before, the first ``make()`` merged what the build imported into
    ``requires`` and the pickle: this failed.)"""
    pack = specpack.capture("CartPole-v1", max_episode_steps=7, record_spaces=record_spaces)
    blob, requires, fp = pickle.dumps(pack), dict(pack.requires), pack.fingerprint
    fields = _fields(pack)
    copy = pickle.loads(blob)
    env = pack.make()
    env.reset(seed=0)
    env.close()
    assert pickle.dumps(pack) == blob
    assert dict(pack.requires) == requires and pack.fingerprint == fp
    assert all(value is fields[name] for name, value in _fields(pack).items())
    assert pack == copy and hash(pack) == hash(copy)
    sent, back = tmp_path / "sent.pkl", tmp_path / "back.pkl"
    sent.write_bytes(blob)
    proc = subprocess.run([sys.executable, "-c", ELSEWHERE, str(sent), str(back)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    import json

    seen = json.loads(proc.stdout.splitlines()[-1])
    assert seen == {"requires": requires, "fingerprint": fp, "same": True}
    if not record_spaces:  # a round trip of numpy spaces may share their dtypes otherwise
        assert back.read_bytes() == blob
    assert pickle.loads(back.read_bytes()) == pack


def test_two_unpickles_of_the_same_bytes_are_two_equal_packs():
    """(Before, a memo of recent unpickles handed back one shared object: this failed.)"""
    blob = pickle.dumps(specpack.capture("CartPole-v1", max_episode_steps=5))
    first, second = pickle.loads(blob), pickle.loads(blob)
    assert first == second and first is not second
    assert pickle.dumps(first) == pickle.dumps(second) == blob
    first.make().close()
    assert pickle.dumps(first) == pickle.dumps(second) == blob


def test_what_is_derived_from_a_pack_is_kept_beside_it_and_goes_with_it():
    """The fingerprint, pickled state and build order are cached beside a pack, by identity:
    equal packs never share an entry, and an entry goes when its pack does."""
    import gc

    from specpack._core import _build, _state
    def tables() -> list[int]:
        return [len(_state._fingerprints), len(_state._reduced), len(_build._orders)]

    pack = specpack.capture("CartPole-v1", max_episode_steps=11)
    blob, order = pickle.dumps(pack), _build.order_of(pack)
    gc.collect()
    start = tables()
    twin = pickle.loads(blob)
    twin.make().close()
    assert _build.order_of(twin) is not order and _build.order_of(pack) is order
    assert tables() == [n + 1 for n in start]
    del twin
    gc.collect()
    assert tables() == start
