"""A pack's build order (:mod:`specpack._core._build`): what spawn and forkserver workers are sent.

The order is everything ``make()`` reads of a pack. It is pickled in the parent and built in a
fresh interpreter (a real one, as a spawn worker is): the env must be the one the pack builds,
down to the types of equal-but-not-identical kwargs, without the pack's class ever loading.
A worker factory sent as an order answers ``label`` and ``make`` and refuses ``pack`` with the
fix.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from _helpers import run_python

#: Both sides' account of a kwargs tree: value and type all the way down (``1`` is not ``1.0``).
DESCRIBE = r"""
import numpy as np

def describe(value):
    if isinstance(value, np.ndarray):
        return ["ndarray", value.dtype.str, list(value.shape), value.tobytes().hex()]
    if isinstance(value, dict):
        return {k: describe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [describe(v) for v in value]]
    return [type(value).__name__, repr(value)]
"""

#: Run as ``__main__``: its env class is carried by value; it writes the order and, as the
#: control, what ``pack.make()`` gives here.
PARENT = r"""
import json, pickle, sys
import gymnasium
import numpy as np
import specpack
from specpack._core._vector._factory import WorkerEnvFn, order_blob

class Kw(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 0.0, False, False, {}

kwargs = {"one": 1, "float_one": 1.0, "true": True, "minus_zero": -0.0,
          "big_endian": np.arange(3, dtype=">f4"), "nested": {"t": (1, [2.5, None])}}
pack = specpack.capture(Kw, **kwargs)
env = pack.make(extra=-0.0)
open(sys.argv[1], "wb").write(order_blob(pack))
open(sys.argv[2], "wb").write(pickle.dumps(WorkerEnvFn(pack, {"extra": 0.0})))
print(json.dumps({"kwargs": describe(env.unwrapped.kwargs), "wrappers": str(env),
                  "label": pack.label}))
"""

#: A fresh interpreter: builds from the order alone, and from the unpickled worker factory.
WORKER = r"""
import json, pickle, sys
import gymnasium
import numpy as np
import specpack


order = pickle.loads(open(sys.argv[1], "rb").read())
env = order.make({"extra": -0.0})
fn = pickle.loads(open(sys.argv[2], "rb").read())
try:
    fn.pack
    refused = None
except specpack.SpecPackError as e:
    refused = str(e)
built = fn.make()
print(json.dumps({
    "kwargs": describe(env.unwrapped.kwargs), "wrappers": str(env),
    "fn_kwargs": describe(built.unwrapped.kwargs), "label": fn.label, "refused": refused,
    "called": str(fn()),
    "modules": sorted(m for m in sys.modules if m.split(".")[0] == "specpack"),
}))
"""


def test_an_order_builds_in_a_fresh_interpreter_the_env_its_pack_builds(tmp_path: Path) -> None:
    order, fn = tmp_path / "order.pkl", tmp_path / "fn.pkl"
    parent = run_python(["-c", DESCRIBE + PARENT, str(order), str(fn)], cwd=tmp_path)
    assert parent.returncode == 0, parent.stderr
    here = json.loads(parent.stdout.splitlines()[-1])
    worker = run_python(["-c", DESCRIBE + WORKER, str(order), str(fn)], cwd=tmp_path)
    assert worker.returncode == 0, worker.stderr
    there = json.loads(worker.stdout.splitlines()[-1])
    # The same kwargs, in value and in type: 1, 1.0 and True stay apart, -0.0 keeps its sign,
    # a big-endian array its byte order, a tuple inside a dict its type.
    assert there["kwargs"] == here["kwargs"]
    assert here["kwargs"]["minus_zero"] == ["float", "-0.0"]
    assert here["kwargs"]["big_endian"][1] == ">f4"
    assert there["wrappers"] == here["wrappers"]
    # The factory's own kwargs are merged over the pack's: 0.0 here, not the order's -0.0.
    assert there["fn_kwargs"]["extra"] == ["float", "0.0"]
    assert there["fn_kwargs"]["one"] == ["int", "1"]
    assert there["label"] == here["label"] == "__main__:Kw"
    assert there["called"] == there["wrappers"]
    # In the worker the factory holds the order: the pack is refused, with the fix.
    assert there["refused"] is not None and "fn.make(" in there["refused"]
    assert "fn.label" in there["refused"]
    # Built without the pack's class, its pickled state or the record machinery.
    assert not {"specpack._core._pack", "specpack._core._state", "specpack._core._layer"} & set(
        there["modules"]), there["modules"]
    assert "specpack._core._build" in there["modules"]  # the control: this is the builder's list


def test_an_order_of_a_vector_only_pack_refuses_make_with_the_fix() -> None:
    import specpack
    from specpack._core._build import order_of

    pack = specpack.capture("CartPole-v1").evolve(vector=True)
    order = pickle.loads(pickle.dumps(order_of(pack)))
    try:
        order.make({})
    except specpack.SpecPackError as e:
        assert "make_vec" in str(e)
    else:
        raise AssertionError("an order of a vector-only pack built a single env")
