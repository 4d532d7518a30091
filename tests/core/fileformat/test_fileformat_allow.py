"""``allow=[...]`` admits modules, not whatever they import.

A ``$ref`` is ``module:qualname``, and a dotted qualname walks attributes: from an allowed
module (``gymnasium.envs.classic_control.cartpole``) ``gym.os.system`` reaches ``os.system``
and ``gym.make`` imports any module an id names. ``allow`` must judge what a reference
*resolves to*, not the module it starts from; the spec's ``entry_point`` and
``additional_wrappers`` strings name code too; and ``SpecPack.from_json`` refuses payloads
without ``trust=True`` like ``load`` does. Each attack leaves a marker file behind if it runs.
"""

from __future__ import annotations

import decimal
import json
import os
import shlex
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from _helpers import FLOAT_WRAPPER, TIME_LIMIT_REF, run_python

import specpack
from specpack import SpecPack, SpecPackError, UntrustedPackError

TESTS = Path(__file__).resolve().parents[2]
FIXTURES = TESTS / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import trustenvs  # noqa: E402

pytestmark = pytest.mark.integration

CARTPOLE = "gymnasium.envs.classic_control.cartpole"
ALLOW = ["gymnasium.envs.classic_control"]


def _cartpole_manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(specpack.capture("CartPole-v1").to_json())
    return data


def _evil_module(tmp_path: Path, marker: Path) -> str:
    """A module (in tmp_path/evil, not on sys.path) whose import creates ``marker``."""
    name = f"trust_evil_{uuid.uuid4().hex[:12]}"
    folder = tmp_path / "evil"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n\n\nclass Evil:\n    pass\n\n\n"
        "class EvilWrapper:\n    pass\n"
    )
    return name


# -- 16. attribute paths out of an allowed module -----------------------------------------


def _attack(kind: str, tmp_path: Path, marker: Path,
            monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], str]:
    """A CartPole manifest edited to run code outside ALLOW; and the qualname it abuses."""
    data = _cartpole_manifest()
    touch = {"command": f"touch {shlex.quote(str(marker))}"}
    if kind == "entry gym.os.system":
        data["entry_point"] = {"$ref": f"{CARTPOLE}:gym.os.system"}
        data["kwargs"] = touch
        return data, "gym.os.system"
    if kind == "entry np.f2py.os.system":  # numpy 2 has no np.os; f2py imports os
        data["entry_point"] = {"$ref": f"{CARTPOLE}:np.f2py.os.system"}
        data["kwargs"] = touch
        return data, "np.f2py.os.system"
    if kind == "entry gym.make":  # gymnasium.make('module:Id') imports any module
        evil = _evil_module(tmp_path, marker)
        monkeypatch.syspath_prepend(str(tmp_path / "evil"))
        data["entry_point"] = {"$ref": f"{CARTPOLE}:gym.make"}
        data["kwargs"] = {"id": f"{evil}:Evil-v0"}
        return data, "gym.make"
    if kind == "layer gym.wrappers.RecordVideo":  # a wrapper outside ALLOW that makes dirs
        data["kwargs"] = {"render_mode": "rgb_array"}
        data["layers"].insert(0, {
            "class": {"$ref": f"{CARTPOLE}:gym.wrappers.RecordVideo"},
            # a trigger, so that RecordVideo gets to os.makedirs(video_folder) without moviepy
            "kwargs": {"video_folder": str(marker),
                       "episode_trigger": {"$ref": f"{CARTPOLE}:math.isfinite"}},
        })
        return data, "gym.wrappers.RecordVideo"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", [
    "entry gym.os.system",
    "entry np.f2py.os.system",
    "entry gym.make",
    "layer gym.wrappers.RecordVideo",
])
def test_ref_walking_attributes_out_of_an_allowed_module_is_refused_and_runs_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    marker = tmp_path / "MARKER"
    data, qualname = _attack(kind, tmp_path, marker, monkeypatch)
    path = tmp_path / "attack.specpack"
    path.write_text(json.dumps(data))
    error: SpecPackError | None = None
    try:
        pack = specpack.load(path, allow=ALLOW)
        pack.make().close()
    except SpecPackError as e:
        error = e
    assert not marker.exists(), (
        f"load(allow={ALLOW}) + make() ran code outside allow through {CARTPOLE}:{qualname}")
    assert isinstance(error, UntrustedPackError), (
        f"expected UntrustedPackError naming {qualname}, got {error!r}")
    named = [qualname] + (["math.isfinite"] if "RecordVideo" in qualname else [])
    assert any(q in str(error) for q in named), str(error)


# -- 17. spec strings name code too ----------------------------------------------------------

SPEC_SCRIPT = '''
import json, sys
import specpack

path, allow, evil = sys.argv[1], sys.argv[2], sys.argv[3]
out = {"error": None, "untrusted": False, "message": ""}
try:
    specpack.load(path, allow=[allow])
except Exception as e:
    out.update(error=type(e).__name__, untrusted=isinstance(e, specpack.UntrustedPackError),
               message=str(e))
out["imported"] = evil in sys.modules
print(json.dumps(out))
'''


@pytest.mark.parametrize("field", ["entry_point", "additional_wrappers"])
def test_spec_strings_naming_modules_outside_allow_are_refused_at_load_importing_nothing(
        tmp_path: Path, field: str) -> None:
    marker = tmp_path / "MARKER"
    evil = _evil_module(tmp_path, marker)
    data = _cartpole_manifest()
    if field == "entry_point":
        data["spec"]["entry_point"] = f"{evil}:Evil"
    else:
        data["spec"]["additional_wrappers"] = {
            "$tuple": [{"$tuple": ["EvilWrapper", f"{evil}:EvilWrapper", {}]}]}
    path = tmp_path / "spec.specpack"
    path.write_text(json.dumps(data))
    specpack.load(path)  # well-formed: without allow it loads (nothing is imported at load)

    proc = run_python(["-c", SPEC_SCRIPT, str(path), "gymnasium", evil], cwd=tmp_path,
                      timeout=120, env={"PYTHONPATH": os.pathsep.join(
                          [str(tmp_path / "evil"), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not out["imported"] and not marker.exists(), out
    assert out["untrusted"], f"spec.{field} = {evil}... loaded with allow=['gymnasium']: {out}"
    assert evil in out["message"], out["message"]


# -- 18. from_json refuses payloads like load does -----------------------------------------


@pytest.mark.parametrize("payload", ["$code", "$object"])
def test_from_json_refuses_payloads_without_trust_and_loads_them_with_trust(
        payload: str) -> None:
    if payload == "$code":  # the env class itself travels by value
        pack = specpack.capture(trustenvs.Plain, by_value=True, scale=2)
        assert pack.entry_point.by_value
    else:  # a kwarg object travels as a pickle
        pack = specpack.capture(trustenvs.Plain, by_value=False, scale=2,
                                rate=decimal.Decimal("1.5"))
        assert not pack.entry_point.by_value
    text = pack.to_json()
    assert f'"{payload}"' in text
    for allow in (None, ["trustenvs"], ["trustenvs", "gymnasium"]):
        with pytest.raises(UntrustedPackError):
            SpecPack.from_json(text, allow=allow)
    again = SpecPack.from_json(text, trust=True)
    assert again == pack
    assert again.kwargs["scale"] == 2
    env = again.make()
    assert env.unwrapped.kw["scale"] == 2
    if payload == "$object":
        assert env.unwrapped.kw["rate"] == decimal.Decimal("1.5")
    env.close()


# -- 20. a module in allow admits env and wrapper classes and values, not functions --------

REGISTRATION = "gymnasium.envs.registration"

LOADER_SCRIPT = '''
import json, sys
import gymnasium
import specpack

paths, allow, evil = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
out = []
for path in paths:
    row = {"error": None, "message": ""}
    try:
        specpack.load(path, allow=allow).make().close()
    except Exception as e:
        row.update(error=type(e).__name__, message=str(e))
    out.append(row)
print(json.dumps({"calls": out, "registered": "Pwn-v0" in gymnasium.registry,
                  "imported": evil in sys.modules}))
'''


def _loader_files(tmp_path: Path, marker: Path, evil: str) -> list[str]:
    """Three files whose entry points are gymnasium's loaders, each a step of the attack:
    ``register`` an id whose entry point is ``os:system``, ``make`` it (which runs the shell
    command), and ``make`` an id naming a module outside the list (which imports it)."""
    attack = [
        ("register", {"id": "Pwn-v0", "entry_point": "os:system",
                      "kwargs": {"command": f"touch {shlex.quote(str(marker))}"}}),
        ("make", {"id": "Pwn-v0"}),
        ("make", {"id": f"{evil}:Evil-v0"}),
    ]
    paths = []
    for i, (function, kwargs) in enumerate(attack):
        data = _cartpole_manifest()
        data["entry_point"] = {"$ref": f"{REGISTRATION}:{function}"}
        data["kwargs"] = kwargs
        path = tmp_path / f"loader{i}.specpack"
        path.write_text(json.dumps(data))
        paths.append(str(path))
    return paths


def _run_loaders(tmp_path: Path, paths: list[str], allow: list[str], evil: str) -> Any:
    proc = run_python(["-c", LOADER_SCRIPT, json.dumps(paths), json.dumps(allow), evil],
                      cwd=tmp_path, timeout=120, env={"PYTHONPATH": os.pathsep.join(
                          [str(tmp_path / "evil"), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_gymnasium_register_and_make_as_entry_points_are_refused_under_a_module_allow(
        tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    evil = _evil_module(tmp_path, marker.with_name("EVIL_IMPORTED"))
    paths = _loader_files(tmp_path, marker, evil)
    out = _run_loaders(tmp_path, paths, ["gymnasium.envs"], evil)
    assert not marker.exists() and not out["registered"] and not out["imported"], out
    for (function, call) in zip(["register", "make", "make"], out["calls"]):
        assert call["error"] == "UntrustedPackError", out
        exact = f"{REGISTRATION}:{function}"
        assert f"{exact} is a function" in call["message"], call["message"]
        assert f"Add the exact entry {exact!r} to allow" in call["message"], call["message"]
    # control: the files do what they say once the functions are allowed by their exact names
    allow = ["gymnasium.envs", f"{REGISTRATION}:register", f"{REGISTRATION}:make"]
    out = _run_loaders(tmp_path, paths[:2], allow, evil)
    assert out["registered"] and marker.exists(), out


def _kwargs_pack(value: Any, allow: list[str]) -> SpecPack:
    data = _cartpole_manifest()
    data["kwargs"] = {"cfg": {"deep": [{"$tuple": [value]}]}}
    return SpecPack.from_json(json.dumps(data), allow=allow)


@pytest.mark.parametrize("ref, kind", [
    ("gymnasium.envs.classic_control.utils:verify_number_and_cast", "a function"),
    (f"{REGISTRATION}:EnvSpec", "a class that is not an env or wrapper class"),
    (f"{REGISTRATION}:registry.get", "a method"),
    (f"{REGISTRATION}:registry", None),  # a dict: a value, admitted
])
def test_a_callable_kwarg_from_an_allowed_module_needs_its_exact_entry(
        ref: str, kind: str | None) -> None:
    module, _, qualname = ref.partition(":")
    expected: Any = __import__(module, fromlist=["_"])
    for part in qualname.split("."):
        expected = getattr(expected, part)
    pack = _kwargs_pack({"$ref": ref}, ["gymnasium.envs"])  # the module is listed: loads
    if kind is None:
        assert pack.kwargs["cfg"]["deep"][0][0] is expected
        return
    for materialise in (lambda: dict(pack.kwargs), pack.make):
        with pytest.raises(UntrustedPackError) as info:
            materialise()
        assert f"{ref} is {kind}" in str(info.value), str(info.value)
        assert f"exact entry {ref!r}" in str(info.value), str(info.value)
    exact = _kwargs_pack({"$ref": ref}, ["gymnasium.envs", ref])
    assert exact.kwargs["cfg"]["deep"][0][0] == expected


def test_env_and_wrapper_classes_and_values_of_an_allowed_module_are_admitted() -> None:
    data = _cartpole_manifest()
    data["kwargs"] = {"render_mode": None}
    wrapper, low, high = FLOAT_WRAPPER
    data["layers"].insert(0, {"class": {"$ref": TIME_LIMIT_REF},
                              "kwargs": {"max_episode_steps": 7}})
    data["layers"].insert(0, {"class": {"$ref": f"gymnasium.wrappers:{wrapper}"},
                              "kwargs": {low: 0.0, high: {
                                  "$ref": f"{CARTPOLE}:CartPoleEnv.metadata"}}})
    pack = SpecPack.from_json(json.dumps(data), allow=[*ALLOW, "gymnasium.wrappers"])
    assert pack.layers[0].kwargs[high] is gymnasium_cartpole().CartPoleEnv.metadata
    data["layers"][0]["kwargs"][high] = 1.0
    env = SpecPack.from_json(json.dumps(data), allow=[*ALLOW, "gymnasium.wrappers"]).make()
    assert type(env).__name__ == wrapper
    assert type(env.unwrapped).__name__ == "CartPoleEnv"
    env.close()


def gymnasium_cartpole() -> Any:
    import gymnasium.envs.classic_control.cartpole as module

    return module


def test_a_registry_reference_to_a_lambda_needs_its_exact_entry() -> None:
    import regpkg  # noqa: F401 - registers RegPole-v0 with a lambda made inside a function

    pack = specpack.capture("RegPole-v0", task="long")
    ref = pack.entry_point
    assert ref.registered == "RegPole-v0"
    exact = f"regpkg:{ref.qualname}"
    with pytest.raises(UntrustedPackError) as info:
        SpecPack.from_json(pack.to_json(), allow=["regpkg"]).make()
    assert f"{exact} is a function" in str(info.value), str(info.value)
    assert f"exact entry {exact!r}" in str(info.value), str(info.value)
    env = SpecPack.from_json(pack.to_json(), allow=["regpkg", exact]).make()
    assert env.unwrapped.length == 1.0
    env.close()


def test_allow_entries_are_module_names_or_exact_references() -> None:
    text = _cartpole_manifest()
    for bad in ("my_pkg:", ":make_env", "my pkg", "my_pkg:make env", "my_pkg:a:b"):
        with pytest.raises(UntrustedPackError, match="or an exact reference such as"):
            SpecPack.from_json(json.dumps(text), allow=[bad])


def test_a_function_in_the_specs_wrapper_kwargs_is_refused_at_make() -> None:
    data = _cartpole_manifest()
    data["spec"]["additional_wrappers"] = {"$tuple": [{"$tuple": [
        "W", f"{CARTPOLE}:CartPoleEnv", {"f": {"$ref": f"{REGISTRATION}:register"}}]}]}
    pack = SpecPack.from_json(json.dumps(data), allow=["gymnasium.envs"])
    with pytest.raises(UntrustedPackError, match=f"{REGISTRATION}:register is a function"):
        pack.make()
