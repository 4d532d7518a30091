"""What a ``make_vec`` worker loads: only what building the pack needs.

A spawn or forkserver worker starts a fresh interpreter and unpickles its env factory from
``specpack._core._vector._factory``; that must not drag in ``make_vec``'s own imports (capture, the
forkserver machinery) nor the verifier behind the exact space check, which is only needed when
the built spaces do not pickle as the parent's did.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from _helpers import run_python

from specpack._core._surface import record_surface
from specpack._core._vector._factory import mismatch, spaces_pickle

#: What a worker that builds a pack never needs.
NEVER = ("specpack._core._process", "specpack._tools._verify", "specpack._tools._audit", "specpack._core._fileformat",
         "specpack._core._typedjson", "specpack._tools._cli", "specpack.adapters", "specpack._core._capture",
         "specpack._core._vector._make", "specpack._core._vector._forkserver", "specpack._core._vector._envs",
         # the parent's view of the spaces
         "specpack._core._vector._view",
         # the pack's class and its state: a worker is sent the pack's build order
         "specpack._core._pack", "specpack._core._state", "specpack._core._layer", "specpack._core._keywords")

#: Run as ``__main__``: the env reports its worker's modules through ``venv.call``.
PARENT = """
import json, sys
import gymnasium
import numpy as np
import specpack

class Modules(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 0.0, False, False, {}

    def specpack_modules(self):
        return sorted(m for m in sys.modules if m.split(".")[0] == "specpack")

if __name__ == "__main__":
    pack = specpack.capture(Modules, record_spaces=sys.argv[2] == "recorded")
    venv = specpack.make_vec(pack, 2, context=sys.argv[1])
    try:
        print(json.dumps(venv.call("specpack_modules")))
    finally:
        venv.close()
"""


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
@pytest.mark.parametrize("spaces", ["recorded", "built_in_parent"])
def test_make_vec_worker_loads_neither_make_vec_nor_the_verifier(
    tmp_path: Path, context: str, spaces: str
) -> None:
    proc = run_python(["-c", PARENT, context, spaces], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    per_worker = json.loads(proc.stdout.splitlines()[-1])
    assert len(per_worker) == 2
    for modules in per_worker:
        assert "specpack._core._vector._factory" in modules  # the control: this is a worker's list
        loaded = [m for m in modules if m in NEVER or m.startswith(tuple(p + "." for p in NEVER))]
        assert loaded == [], f"a {context} worker loaded {loaded}"


def test_space_check_compares_structurally_when_the_pickles_differ() -> None:
    zeros = np.zeros(3, np.float32)
    env = gymnasium.make("CartPole-v1")
    env.observation_space = gymnasium.spaces.Box(zeros.copy(), zeros.copy())
    surface = record_surface(env)
    shown = spaces_pickle(surface)
    # The same space with low and high one array: it pickles otherwise.
    aliased = gymnasium.spaces.Box(zeros.copy(), zeros.copy())
    aliased.high = aliased.low
    env.observation_space = aliased
    assert spaces_pickle(record_surface(env)) != shown
    assert mismatch(env, surface, shown) is None
    # The control: a bound one float away is told apart, and named.
    env.observation_space = gymnasium.spaces.Box(zeros, np.nextafter(zeros, np.float32(1)))
    assert (mismatch(env, surface, shown) or "").startswith("observation_space: built Box(")


def test_fork_make_vec_pickles_nothing_and_spawn_pickles_the_order_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fork workers inherit their factories; pickling would be work for nothing. Spawn workers
    # are sent the pack's build order, pickled once for all of them, and never the pack.
    import specpack
    from specpack._core._build import Order
    from specpack._core._pack import SpecPack

    pack = specpack.capture("CartPole-v1", record_spaces=True)
    calls: list[str] = []
    reduce_pack, reduce_order = SpecPack.__reduce__, Order.__reduce__

    def counted_pack(self: SpecPack) -> object:
        calls.append(f"pack {self.label}")
        return reduce_pack(self)

    def counted_order(self: Order) -> object:
        calls.append(f"order {self.label}")
        return reduce_order(self)

    monkeypatch.setattr(SpecPack, "__reduce__", counted_pack)
    monkeypatch.setattr(Order, "__reduce__", counted_order)
    specpack.make_vec(pack, 2, context="fork").close()
    assert calls == []
    specpack.make_vec(pack, 2, context="spawn").close()
    assert calls == ["order CartPole-v1"]
