"""By-value payloads are reused only while pickling again would give the same bytes.

``capture`` of an env carried by value reuses the payload (and the whole pack, for an identical
call) while the payload's witness holds. Every way the code or what it reads can change between
two captures must give a new payload that carries the change: a method replaced, a global
rebound (also to an equal value of another type), a closure cell, a dict the code reads, the
source file; objects the witness cannot compare (arrays) are pickled again every time.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import pickle
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import gymnasium
import pytest
from _helpers import run_python

import specpack
from specpack._core._carry.code import code_ref, witness_of
from specpack._core._carry.payload import dumps_witnessed, portable_dumps

_count = itertools.count()

SOURCE = """
import gymnasium
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

SCALE = 2
CONFIG = {"bonus": 1}
ARR = np.zeros(2)


def make_counter(start):
    value = start

    def counter():
        return value

    def bump(to):
        nonlocal value
        value = to

    return counter, bump


counter, bump = make_counter(10)


class FileEnv(CartPoleEnv):
    def __init__(self, render_mode=None, k=1.0):
        super().__init__(render_mode=render_mode)
        self.k = k

    def facts(self):
        return {"scale": SCALE, "bonus": CONFIG["bonus"], "counter": counter(),
                "arr": float(ARR[0]), "where": "original"}
"""


def load_file_module(tmp_path: Path, source: str = SOURCE) -> ModuleType:
    """A module loaded from a file path: a fresh interpreter could not import it by name, so
    its classes travel by value."""
    name = f"payload_mod_{next(_count)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def mod(tmp_path):
    m = load_file_module(tmp_path)
    env_id = f"PayloadEnv{m.__name__}-v0"
    gymnasium.register(env_id, entry_point=m.FileEnv, max_episode_steps=20)
    m.ENV_ID = env_id
    yield m
    gymnasium.registry.pop(env_id, None)
    sys.modules.pop(m.__name__, None)


def facts(tmp_path: Path, *packs: specpack.SpecPack) -> list[dict]:
    """What envs rebuilt from the pickled packs report, in a fresh interpreter (here,
    cloudpickle would hand back the live class, with the live module's globals)."""
    blob = tmp_path / "packs.pkl"
    blob.write_bytes(pickle.dumps(list(packs)))
    code = ("import json, pickle, sys\n"
            "packs = pickle.loads(open(sys.argv[1], 'rb').read())\n"
            "print(json.dumps([[repr(type(v).__name__), v] for p in packs\n"
            "                  for v in [p.make().unwrapped.facts()]]))\n")
    proc = run_python(["-c", code, str(blob)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return [v for _, v in json.loads(proc.stdout.splitlines()[-1])]


def test_an_unchanged_by_value_capture_is_served_again_with_the_same_payload(tmp_path):
    m = load_file_module(tmp_path, SOURCE.replace("np.zeros(2)", "(0.0, 0.0)"))
    gymnasium.register("PayloadPlain-v0", entry_point=m.FileEnv, max_episode_steps=20)
    try:
        first = specpack.capture("PayloadPlain-v0", k=2.0)
        assert first.entry_point.by_value and witness_of(first.entry_point) is not None
        again = specpack.capture("PayloadPlain-v0", k=2.0)
        assert again is first  # the memo: the registry and the payload's witness both hold
        other = specpack.capture("PayloadPlain-v0", k=3.0)  # another call: payload reused
        assert other is not first and other.entry_point is first.entry_point
        m.SCALE = 2.0  # equal, not identical: a new payload, and the memo is not used
        changed = specpack.capture("PayloadPlain-v0", k=2.0)
        assert changed is not first and changed.entry_point.payload != first.entry_point.payload
        assert changed.fingerprint != first.fingerprint
        assert facts(tmp_path, first, changed) == [
            {"scale": 2, "bonus": 1, "counter": 10, "arr": 0.0, "where": "original"},
            {"scale": 2.0, "bonus": 1, "counter": 10, "arr": 0.0, "where": "original"}]
    finally:
        gymnasium.registry.pop("PayloadPlain-v0", None)


def test_every_change_between_captures_reaches_the_new_payload(mod, tmp_path):
    """Replaced method, rebound global (to equal values of other types too), dict item,
    closure cell, array changed in place: each capture carries the state at its call."""
    packs = [specpack.capture(mod.ENV_ID)]
    assert witness_of(packs[0].entry_point) is None  # ARR is an array: pickled every time
    mod.SCALE = 2.0
    packs.append(specpack.capture(mod.ENV_ID))
    mod.SCALE = True
    packs.append(specpack.capture(mod.ENV_ID))
    mod.CONFIG["bonus"] = 5
    packs.append(specpack.capture(mod.ENV_ID))
    mod.bump(11)
    packs.append(specpack.capture(mod.ENV_ID))
    mod.ARR[0] = 7.0
    packs.append(specpack.capture(mod.ENV_ID))
    mod.FileEnv.facts = lambda self: {"where": "replaced"}
    packs.append(specpack.capture(mod.ENV_ID))
    got = facts(tmp_path, *packs)
    assert [(type(g.get("scale")).__name__, g.get("scale")) for g in got[:3]] == [
        ("int", 2), ("float", 2.0), ("bool", True)]
    assert [g.get("bonus") for g in got[2:4]] == [1, 5]
    assert [g.get("counter") for g in got[3:5]] == [10, 11]
    assert [g.get("arr") for g in got[4:6]] == [0.0, 7.0]
    assert got[6] == {"where": "replaced"}
    assert len({p.entry_point.payload for p in packs}) == len(packs)


def test_a_changed_dict_item_and_closure_cell_break_a_witness(tmp_path):
    m = load_file_module(tmp_path, SOURCE.replace("np.zeros(2)", "(0.0, 0.0)"))
    ref = code_ref(m.FileEnv)
    w = witness_of(ref)
    assert w is not None and w.holds() and code_ref(m.FileEnv) is ref
    m.CONFIG["bonus"] = 1  # the same object back in place: still the same bytes
    assert w.holds()
    m.CONFIG["bonus"] = 5
    assert not w.holds()
    ref2 = code_ref(m.FileEnv)
    w2 = witness_of(ref2)
    assert ref2 is not ref and w2 is not None and w2.holds()
    m.bump(12)
    assert not w2.holds()


def test_an_edited_source_file_gives_a_new_payload(tmp_path):
    """The payload carries the source text for tracebacks: an edit on disk (the class object
    unchanged) changes the bytes a new pickle would write."""
    m = load_file_module(tmp_path, "def f():\n    return 1\n")
    ref = code_ref(m.f)
    w = witness_of(ref)
    assert w is not None and w.holds() and code_ref(m.f) is ref
    path = Path(m.__file__)
    path.write_text(path.read_text() + "# edited\n")
    os.utime(path, ns=(1, 1))
    assert not w.holds()
    again = code_ref(m.f)
    assert again is not ref and again.payload != ref.payload


def test_a_witness_holds_exactly_when_a_new_pickle_is_byte_identical(tmp_path):
    m = load_file_module(tmp_path, SOURCE)
    data, w = dumps_witnessed(m.make_counter)
    assert w is not None and w.holds()
    assert portable_dumps(m.make_counter) == data
    m.make_counter.__defaults__ = (1,)
    assert not w.holds() and portable_dumps(m.make_counter) != data


def test_a_static_type_or_a_library_class_never_breaks_a_witness(tmp_path):
    m = load_file_module(tmp_path, "import types\n\ndef f():\n    return types.CodeType\n")
    _, w = dumps_witnessed(m.f)
    assert w is not None and w.holds()


def test_a_payload_names_the_pickled_rebuilders_even_before_specpack_pickled_is_imported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # cloudpickle carries by value a function whose module is not in sys.modules: the
    # rebuilders are labelled specpack._pickled where their class is defined, so a payload
    # made before that module is imported must still name them, not carry a copy.
    import numpy as np

    from specpack._core._carry.tree import pickle_exact, restore_array

    monkeypatch.delitem(sys.modules, "specpack._pickled")
    data = portable_dumps([pickle_exact(np.arange(3, dtype=">i4"))])
    assert b"specpack._pickled" in data and b"restore_array" in data
    assert "specpack._pickled" in sys.modules  # pickle imported it to check the name
    loaded = pickle.loads(data)[0]
    assert loaded.dtype == np.dtype(">i4") and loaded.tolist() == [0, 1, 2]
    assert sys.modules["specpack._pickled"].restore_array is restore_array
