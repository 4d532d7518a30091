"""Ids an importable module registers with non-importable callables (Meta-World's lambdas)."""

from __future__ import annotations

import pickle

import gymnasium
import pytest
import regpkg
from _helpers import run_python

import specpack


def test_lambda_registered_inside_a_function_travels_as_a_registry_reference() -> None:
    pack = specpack.capture("RegPole-v0", task="long")
    assert not pack.entry_point.by_value
    assert pack.entry_point.registered == "RegPole-v0" and pack.entry_point.module == "regpkg"
    assert any("registers under 'RegPole-v0'" in n for n in pack.notes)
    assert pack.make().unwrapped.length == 1.0


def test_registry_reference_rebuilds_in_a_fresh_interpreter(tmp_path) -> None:
    blob = pickle.dumps(specpack.capture("RegPole-v0", task="long"))
    (tmp_path / "pack.pkl").write_bytes(blob)
    out = run_python(
        ["-c", "import pickle; p = pickle.load(open('pack.pkl', 'rb')); "
               "e = p.make(); print(e.unwrapped.length, e.spec.max_episode_steps)"],
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1.0", "50"]


def test_control_the_same_lambda_cannot_be_carried_by_value() -> None:
    with pytest.raises(specpack.CaptureError, match="cannot be carried by value"):
        specpack.capture("RegPole-v0", by_value=True)


def test_callable_whose_module_does_not_register_the_id_is_not_referenced() -> None:
    def local_factory(**kw: object) -> gymnasium.Env:  # type: ignore[type-arg]
        return regpkg.TaskPole(**kw)  # type: ignore[arg-type]

    gymnasium.register("LocalOnly-v0", entry_point=local_factory)
    try:
        pack = specpack.capture("LocalOnly-v0")
        assert pack.entry_point.registered is None and pack.entry_point.by_value
    finally:
        gymnasium.registry.pop("LocalOnly-v0")


def test_vector_only_lambda_travels_as_a_registry_reference_and_builds_in_a_fresh_python(
        tmp_path) -> None:
    pack = specpack.capture("RegVec-v0", task="long")
    assert pack.vector and pack.entry_point.registered == "RegVec-v0"
    (tmp_path / "pack.pkl").write_bytes(pickle.dumps(pack))
    out = run_python(
        ["-c", "import pickle, specpack; p = pickle.load(open('pack.pkl', 'rb')); "
               "v = specpack.make_vec(p, 3); print(v.num_envs, v.envs[0].unwrapped.length)"],
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "1.0"]
