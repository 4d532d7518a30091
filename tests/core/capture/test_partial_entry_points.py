"""A ``functools.partial`` entry point travels as the function it wraps plus its arguments.

Env packages register dozens of ids as ``entry_point=partial(make, variant=...)``
(tests/fixtures/partialenvs.py does the same). The function travels by reference when a fresh
interpreter can import it, each bound argument is carried exactly like a kwarg (``-0.0``, a
big-endian array), and the pack survives pickle and its file; a partial of code with no
importable name travels by value as a whole.
"""

from __future__ import annotations

import functools
import json
import pickle
import textwrap
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import partialenvs
import pytest
from _helpers import run_python

import specpack
from specpack import CaptureError

BOUND_IDS = ("PartialPole-short-v0", "PartialPole-long-v0", "PartialPolePositional-v0",
             "PartialPoleClass-v0", "PartialClassMethodPole-v0")

# A fresh interpreter: gymnasium.make(id) and the pack read from its file, the same rollout;
# prints the digest of each.
ROLLOUTS = textwrap.dedent('''
    import json, sys
    import gymnasium
    import specpack
    from partialenvs import rollout_digest

    out = {}
    for env_id, path in json.loads(sys.argv[1]).items():
        out[env_id] = [rollout_digest(gymnasium.make(env_id)),
                       rollout_digest(specpack.load(path).make())]
    print(json.dumps(out))
''')
_digest = partialenvs.rollout_digest


@pytest.mark.parametrize("env_id", BOUND_IDS)
def test_a_partial_entry_point_travels_by_reference_with_its_arguments_and_verifies(
        env_id: str) -> None:
    pack = specpack.capture(env_id)
    assert not pack.entry_point.by_value and pack.entry_point.bound is not None
    assert pack.entry_point.module == "partialenvs"
    assert specpack.capture(env_id, by_value=False) == pack  # the way forward by reference
    assert _digest(pack.make()) == _digest(gymnasium.make(env_id))
    report = specpack.verify(pack, steps=40)
    assert report, report


def test_packs_of_partial_ids_rebuild_in_a_fresh_interpreter_as_gymnasium_make_does_there(
        tmp_path: Path) -> None:
    paths = {}
    for env_id in (*BOUND_IDS, "PartialPoleString-v0"):
        path = tmp_path / f"{env_id}.json"
        specpack.dump(specpack.capture(env_id), path)
        paths[env_id] = str(path)
    proc = run_python(["-c", ROLLOUTS, json.dumps(paths)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    here = {env_id: _digest(gymnasium.make(env_id)) for env_id in paths}
    for env_id, (made, rebuilt) in got.items():
        assert made == rebuilt == here[env_id], env_id
    assert len(set(here.values())) == len(here)  # the variants really differ


def test_a_partial_entry_point_round_trips_through_pickle_and_the_pack_file_exactly(
        tmp_path: Path) -> None:
    pack = specpack.capture("PartialPolePositional-v0")
    args, keywords = pack.entry_point.bound  # type: ignore[misc]
    assert args == ("long",)
    assert keywords["offset"].dtype == np.dtype(">f8")
    node = json.loads(pack.to_json())["entry_point"]
    assert node["$ref"] == "partialenvs:make_variant" and node["args"] == ["long"]
    path = tmp_path / "pack.json"
    specpack.dump(pack, path)
    for copy in (pickle.loads(pickle.dumps(pack)), specpack.SpecPack.from_json(pack.to_json()),
                 specpack.load(path)):
        assert copy == pack and copy.fingerprint == pack.fingerprint
        offset = copy.entry_point.bound[1]["offset"]  # type: ignore[index]
        assert offset.dtype == np.dtype(">f8") and offset.tolist() == [0.25, -0.5]
        assert copy.make().unwrapped.gravity == 9.55


def test_bound_arguments_are_carried_exactly_signed_zeros_and_types_apart() -> None:
    fps = set()
    for scale in (0.0, -0.0, 0, False):
        pack = specpack.capture(functools.partial(partialenvs.make_variant, "short",
                                                  scale=scale))
        kept = pack.entry_point.bound[1]["scale"]  # type: ignore[index]
        assert type(kept) is type(scale) and repr(kept) == repr(scale)
        assert not pack.entry_point.by_value
        again = specpack.SpecPack.from_json(pack.to_json())
        assert repr(again.entry_point.bound[1]["scale"]) == repr(scale)  # type: ignore[index]
        fps.add(pack.fingerprint)
    assert len(fps) == 4


def test_a_partial_of_code_with_no_importable_name_travels_by_value_as_a_whole() -> None:
    def local_factory(variant: str, **kwargs: Any) -> Any:
        return partialenvs.VariantPole(variant=variant, **kwargs)

    pack = specpack.capture(functools.partial(local_factory, "long"))
    assert pack.entry_point.by_value
    env = pickle.loads(pickle.dumps(pack)).make()
    assert env.unwrapped.length == 2.0
    env.close()
    with pytest.raises(CaptureError, match="drop by_value=False"):
        specpack.capture(functools.partial(local_factory, "long"), by_value=False)


def test_a_partial_with_attributes_set_on_it_is_not_reduced_to_a_reference() -> None:
    entry = functools.partial(partialenvs.make_variant, "long")
    entry.metadata = {"render_modes": []}  # type: ignore[attr-defined]
    pack = specpack.capture(entry)
    assert pack.entry_point.by_value  # a reference would lose .metadata
    assert pack.entry_point.load().metadata == {"render_modes": []}
    with pytest.raises(CaptureError, match="metadata"):
        specpack.capture(entry, by_value=False)


def test_a_reference_hidden_in_a_partials_arguments_is_checked_against_allow(
        tmp_path: Path) -> None:
    pack = specpack.capture("PartialPole-short-v0")
    doc = json.loads(pack.to_json())
    doc["entry_point"]["keywords"]["variant"] = {"$ref": "os:system"}
    path = tmp_path / "pack.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(specpack.UntrustedPackError, match="os"):
        specpack.load(path, allow=["partialenvs", "gymnasium"])
    assert specpack.load(path, allow=["partialenvs", "gymnasium", "os"])  # nothing imported


def test_a_classmethod_of_an_importable_class_travels_by_reference() -> None:
    pack = specpack.capture("ClassMethodPole-v0", by_value=False)
    assert pack.entry_point.name == "partialenvs:Variants.long"
    assert pack == specpack.capture("ClassMethodPole-v0")  # by reference when left to decide
    assert _digest(pickle.loads(pickle.dumps(pack)).make()) == _digest(
        gymnasium.make("ClassMethodPole-v0"))


# -- a partial of a LOCAL function (shimmy's dm_control ids) -------------------------------------

# A fresh interpreter that never imports partialenvs (so never registers the ids): the pickled
# pack alone builds the env; prints the rollout digest (partialenvs.rollout_digest, inlined)
# and whether the module or the registration were needed.
FRESH_LOCAL = textwrap.dedent('''
    import hashlib, json, pickle, sys
    import gymnasium

    pack = pickle.loads(open(sys.argv[1], "rb").read())
    env = pack.make()
    h = hashlib.sha256()
    obs, _ = env.reset(seed=7)
    h.update(obs.tobytes())
    for t in range(80):
        obs, r, term, trunc, _ = env.step(t % 2)
        h.update(obs.tobytes() + repr((r, term, trunc)).encode())
        if term or trunc:
            obs, _ = env.reset()
            h.update(obs.tobytes())
    print(json.dumps({"digest": h.hexdigest(), "length": env.unwrapped.length,
                      "registered": pack.id in gymnasium.registry}))
''')


@pytest.mark.parametrize("env_id", partialenvs.LOCAL_IDS)
def test_a_partial_of_a_local_function_travels_by_value_with_its_arguments(
        env_id: str, tmp_path: Path) -> None:
    entry = gymnasium.spec(env_id).entry_point
    assert type(entry) is functools.partial and "<locals>" in entry.func.__qualname__
    live = gymnasium.make(env_id)
    try:  # control: the env holds a handle that does not pickle, so a live instance cannot travel
        with pytest.raises(specpack.SpecPackError, match="handle"):
            specpack.capture(live)
    finally:
        live.close()
    pack = specpack.capture(env_id)  # the registration itself is carried, never a live instance
    assert pack.entry_point.by_value and "_make_held_env" in pack.entry_point.qualname
    here = _digest(gymnasium.make(env_id))
    path = tmp_path / "pack.pkl"
    path.write_bytes(pickle.dumps(pack))
    proc = run_python(["-c", FRESH_LOCAL, str(path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    length = {"LocalPartialPole-short-v0": 0.75, "LocalPartialPole-long-v0": 1.5}[env_id]
    assert got == {"digest": here, "length": length, "registered": False}  # the bound variant


def test_a_partial_of_a_local_function_builds_in_spawn_workers() -> None:
    env_id = "LocalPartialPole-long-v0"
    pack = specpack.capture(env_id)
    vec = specpack.make_vec(pack, 2, context="spawn")
    try:
        obs, _ = vec.reset(seed=[3, 4])
        for t in range(5):
            obs, *_ = vec.step(np.array([t % 2, 1 - t % 2]))
    finally:
        vec.close()
    lengths = {}
    for i, seed in enumerate((3, 4)):
        env = gymnasium.make(env_id)
        want, _ = env.reset(seed=seed)
        for t in range(5):
            want, *_ = env.step([t % 2, 1 - t % 2][i])
        lengths[i] = env.unwrapped.length
        env.close()
        assert obs[i].tobytes() == want.tobytes()
    assert lengths == {0: 1.5, 1: 1.5}


def test_the_audit_of_a_partial_of_a_local_function_rebuilds_the_registration(
        tmp_path: Path) -> None:
    # The audit once captured the live instance too, failed on its handle and reported
    # capture_error; the id's pack carries the registration itself, and that is what it judges.
    proc = run_python(["-m", "specpack", "audit", *partialenvs.LOCAL_IDS, "--import",
                       "partialenvs", "--steps", "20", "--json"], cwd=tmp_path, timeout=300)
    doc = json.loads(proc.stdout)
    for finding in doc["envs"]:
        assert finding["status"] == "identical", finding
        assert any("capture(env) of a live instance is not possible" in n and "handle" in n
                   for n in finding["notes"]), finding["notes"]
    assert proc.returncode == 0 and doc["portable"]
